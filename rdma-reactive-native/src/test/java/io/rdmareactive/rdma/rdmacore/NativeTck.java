package io.rdmareactive.rdma.rdmacore;

import org.testng.SkipException;

/** What the native TCK classes share: timeouts for the Soft-RoCE VM, and the device check. */
final class NativeTck {
  /** The VM runs Java ~13x slower than the host (TCG): 5x the host's TCK timeouts. */
  static final long TIMEOUT_MILLIS = 5_000;
  static final long NO_SIGNAL_MILLIS = 1_000;
  /** How long after a cancel the publisher may still hold its subscriber (rule 3.13; the TCK's default is 300). */
  static final long GC_TIMEOUT_MILLIS = 3_000;

  private NativeTck() {}

  /**
   * Skips the class, saying why, where there is no RDMA device (TestNG's own skip: JUnit's
   * assumptions, which {@link NativeTestSupport#deviceName()} uses, would fail a TestNG test).
   */
  static void requireDevice() {
    if (new NativeProvider().devices().isEmpty()) {
      throw new SkipException("no RDMA device on this host (run in scripts/softroce-vm)");
    }
  }
}
