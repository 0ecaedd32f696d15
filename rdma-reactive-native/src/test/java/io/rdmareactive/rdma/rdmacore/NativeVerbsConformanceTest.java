package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.conformance.AbstractVerbsConformanceTest;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * The verbs conformance suite on a real device through {@link NativeProvider} (rxe0 in
 * scripts/softroce-vm). rxe has neither XRC nor thread/parent domains, so there the suite checks
 * that they fail with {@link io.rdmareactive.rdma.UnsupportedByDeviceException} (EOPNOTSUPP).
 * Every test also checks the kernel's view of this JVM's verbs objects before and after.
 */
@Tag("native")
class NativeVerbsConformanceTest extends AbstractVerbsConformanceTest {
  private int gidIndex = -1;

  @Override
  protected RdmaContext openContext() {
    RdmaContext ctx = NativeTestSupport.open();
    if (gidIndex < 0) {
      gidIndex = NativeTestSupport.usableGidIndex(ctx);
    }
    return ctx;
  }

  @Override
  protected int gidIndex() {
    return gidIndex;
  }

  @Override
  protected boolean supportsXrc() {
    return hasHardwareFeatures();
  }

  @Override
  protected boolean supportsThreadDomains() {
    return hasHardwareFeatures();
  }

  /** mlx5 has XRC and thread/parent domains; rxe (and siw) have neither. */
  static boolean hasHardwareFeatures() {
    return NativeTestSupport.deviceName().startsWith("mlx5");
  }

  /** rxe checks a window's READ against its region's range, not the window's (rxe_resp.c, check_rkey). */
  @Override
  protected boolean windowsEnforceTheirRange() {
    return !NativeTestSupport.deviceName().startsWith("rxe");
  }

  @Override
  protected Map<String, Integer> liveResources() {
    return KernelResources.live();
  }
}
