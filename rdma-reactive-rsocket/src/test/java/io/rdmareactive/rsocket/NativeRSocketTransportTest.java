package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.TransportFixture;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * RSocket over the RDMA transports on librdmacm and rxe0 (scripts/softroce-vm; address
 * RDMA_TEST_ADDRESS, default 10.0.0.1); excluded from host runs by its tag. Leaks are checked as
 * received frames not released (the kernel's resource tracker is the native module's test code).
 */
@Tag("native")
class NativeRSocketTransportTest extends AbstractRSocketTransportTest {
  /** rxe0 at RDMA_TEST_ADDRESS (default 10.0.0.1); the kernel's counts are the native module's to check. */
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
}
