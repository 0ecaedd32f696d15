package io.rdmareactive.rdma.nativ;

import io.rdmareactive.rdma.transport.AbstractCloseConformanceTest;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/** The close conformance tests over librdmacm and rxe0 (scripts/softroce-vm); leaks checked in the kernel. */
@Tag("native")
class NativeCloseTest extends AbstractCloseConformanceTest {
  @BeforeAll
  static void warmUp() {
    NativeTestSupport.deviceName(); // skips, saying why, where there is no device
    NativeConnectionProviderTest.openCmDeviceContext();
  }

  @Override
  protected String provider() {
    return NativeProvider.NAME;
  }

  @Override
  protected String host() {
    return NativeConnectionProviderTest.HOST;
  }

  @Override
  protected Map<String, Integer> liveResources() {
    return KernelResources.live();
  }
}
