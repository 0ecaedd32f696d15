package io.rdmareactive.rdma.conformance;

import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a provider supplies to run the conformance suites: how to open a device, which optional
 * features it has, and a view of its live verbs objects. Every test checks that it left no more
 * live objects than it found.
 */
public abstract class ConformanceHooks {
  /** Opens a fresh context on the device under test; the test closes it. */
  protected abstract RdmaContext openContext();

  /** Whether the device has XRC (mlx5: yes; rxe: no, and the suite then expects EOPNOTSUPP). */
  protected abstract boolean supportsXrc();

  /** Whether the device has thread and parent domains (mlx5: yes; rxe: no). */
  protected abstract boolean supportsThreadDomains();

  /**
   * Whether a memory window's key opens only the range it was bound to. False on rxe (Linux 6.1,
   * the VM's kernel): its responder checks a window's READ against the whole region under it, so
   * the suite there asserts that defect instead, and fails once a kernel fixes it.
   */
  protected boolean windowsEnforceTheirRange() {
    return true;
  }

  /** GID index for CM-less connects (RoCE needs the right one; in-memory takes any). */
  protected int gidIndex() {
    return 0;
  }

  /**
   * Live verbs objects by type (in-memory: its counters; native: {@code rdma resource show}).
   * Compared before and after each test, so a provider that cannot tell returns an empty map.
   */
  protected abstract Map<String, Integer> liveResources();

  @RegisterExtension
  final LeakCheck leakCheck = LeakCheck.strict(this::liveResources);
}
