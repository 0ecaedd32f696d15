package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.conformance.TestSettings;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * The native provider's fixture: the device under test, the leak checks on the kernel's view of
 * this JVM's verbs objects ({@link KernelResources}), and helpers of the device tests.
 */
final class NativeTestSupport {
  static final Duration TIMEOUT = Duration.ofSeconds(20); // the Soft-RoCE VM runs under TCG: slow

  private NativeTestSupport() {}

  /** The kernel's counts of this JVM's verbs objects, the same after each test as before it. */
  static LeakCheck strictLeakCheck() {
    return LeakCheck.strict(KernelResources::live);
  }

  /** No kind of this JVM's kernel objects above its count before, within a minute (connections close asynchronously). */
  static LeakCheck settlingLeakCheck() {
    return LeakCheck.settling(KernelResources::live, Duration.ofSeconds(60));
  }

  /** The device under test: $RDMA_DEVICE, else the first one listed. */
  static String deviceName() {
    List<RdmaProvider.DeviceInfo> devices = new NativeProvider().devices();
    Assumptions.assumeFalse(devices.isEmpty(), "no RDMA device on this host (run in scripts/softroce-vm)");
    return TestSettings.device().orElse(devices.getFirst().name());
  }

  static RdmaContext open() {
    return new NativeProvider().open(deviceName());
  }

  /** Index of the first IPv4-mapped GID of port 1 (RoCE), else of the first non-zero one. */
  static int usableGidIndex(RdmaContext ctx) {
    PortAttributes port = ctx.queryPort(1);
    int firstNonZero = -1;
    for (int i = 0; i < port.gidTableLength(); i++) {
      byte[] gid;
      try {
        gid = ctx.queryGid(1, i);
      } catch (NativeCallException e) {
        continue; // empty slot
      }
      if (isIpv4Mapped(gid)) {
        return i;
      }
      if (firstNonZero < 0 && !isZero(gid)) {
        firstNonZero = i;
      }
    }
    assertThat(firstNonZero).as("port 1 has a non-zero GID").isGreaterThanOrEqualTo(0);
    return firstNonZero;
  }

  static boolean isIpv4Mapped(byte[] gid) {
    for (int i = 0; i < 10; i++) {
      if (gid[i] != 0) {
        return false;
      }
    }
    return gid[10] == (byte) 0xff && gid[11] == (byte) 0xff;
  }

  static boolean isZero(byte[] gid) {
    for (byte b : gid) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }

  /** Polls until {@code n} completions arrived (or fails after {@link #TIMEOUT}). */
  static List<WorkCompletion> await(CompletionQueue cq, int n) {
    List<WorkCompletion> out = new ArrayList<>();
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (out.size() < n) {
      cq.poll(n - out.size(), wc -> out.add(wc.toWorkCompletion()));
      if (out.size() < n) {
        assertThat(System.nanoTime()).as("waiting for %d completions, got %s", n, out).isLessThan(deadline);
        Thread.onSpinWait();
      }
    }
    return out;
  }

  /** Asserts no completion arrives within {@code quiet}. */
  static void assertNoCompletion(CompletionQueue cq, Duration quiet) throws InterruptedException {
    Thread.sleep(quiet.toMillis());
    List<WorkCompletion> extra = new ArrayList<>();
    cq.poll(16, wc -> extra.add(wc.toWorkCompletion()));
    assertThat(extra).as("unexpected completions").isEmpty();
  }
}
