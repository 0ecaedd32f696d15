package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.transport.AbstractConnectionLoopTest;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/** Drain failure containment over librdmacm and rxe0; leaks checked in the kernel's resource tracker. */
@Tag("native")
class NativeConnectionLoopTest extends AbstractConnectionLoopTest {
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
