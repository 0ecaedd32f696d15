package io.rdmareactive.rdma.nativ;

import io.rdmareactive.rdma.transport.AbstractListenerConformanceTest;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The listener's refusals over librdmacm and rxe0 (scripts/softroce-vm): endpoints built are the
 * provider's own count, leaks are checked in the kernel's resource tracker.
 */
@Tag("native")
class NativeListenerTest extends AbstractListenerConformanceTest {
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

  @Override
  protected long endpointsBuiltForRequests() {
    return NativeConnectionProvider.INSTANCE.passiveEndpointsBuilt();
  }

  /** rxe retries RNR as hardware does (forever at RNR_RETRY 7). */
  @Override
  protected boolean retriesReceiverNotReady() {
    return true;
  }

  /** Under TCG a timer tick and a round trip take far longer than on the host. */
  @Override
  protected Duration keepaliveInterval() {
    return Duration.ofSeconds(1);
  }
}
