package io.rdmareactive.rdma.nativ;

import io.rdmareactive.rdma.transport.AbstractTransportConformanceTest;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The transport conformance suite over librdmacm and rxe0 (scripts/softroce-vm; address
 * RDMA_TEST_ADDRESS, default 10.0.0.1). Leaks are checked in the kernel's resource tracker.
 */
@Tag("native")
class NativeTransportTest extends AbstractTransportConformanceTest {
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

  /** rxe retries RNR as hardware does (forever at RNR_RETRY 7). */
  @Override
  protected boolean retriesReceiverNotReady() {
    return true;
  }

  /** The VM runs Java ~13x slower than the host (TCG): a shorter sequence checks the same ordering. */
  @Override
  protected int sequenceLength() {
    return 2_000;
  }

  /** Under TCG a timer tick and a probe's round trip take far longer than on the host. */
  @Override
  protected java.time.Duration keepaliveInterval() {
    return java.time.Duration.ofSeconds(1);
  }

  /** Fewer connections for the loop tests under TCG; the scale test below has the full count. */
  @Override
  protected int loopConnections() {
    return 50;
  }

  /** 1,000 connections (both ends in this JVM, 2,000 QPs on rxe0); RDMA_SCALE_CONNECTIONS overrides. */
  @Override
  protected int scaleConnections() {
    return Integer.parseInt(System.getenv().getOrDefault("RDMA_SCALE_CONNECTIONS", "1000"));
  }
}
