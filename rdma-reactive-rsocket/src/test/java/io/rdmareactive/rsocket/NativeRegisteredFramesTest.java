package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.TransportFixture;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * RSocket frames from registered memory on librdmacm and rxe0 (scripts/softroce-vm; address
 * RDMA_TEST_ADDRESS, default 10.0.0.1); excluded from host runs by its tag. The kernel's resource
 * counts (MRs of the slab and the buffers) are read by the VM phase before and after.
 */
@Tag("native")
class NativeRegisteredFramesTest extends AbstractRegisteredFramesTest {
  private static final TransportFixture RXE = new TransportFixture() {
    @Override
    public String provider() {
      return "native";
    }

    @Override
    public String host() {
      return System.getenv().getOrDefault("RDMA_TEST_ADDRESS", "10.0.0.1");
    }

    @Override
    public Map<String, Integer> liveResources() {
      return Map.of();
    }
  };

  @Override
  protected TransportFixture fixture() {
    return RXE;
  }

  @Override
  protected int count() {
    return 50;
  }
}
