package io.rdmareactive.rdma.conformance;

import java.util.Optional;

/**
 * The one place the suites read their settings from the environment (scripts/softroce-vm and
 * scripts/test-all set them), so that each has one name, one default and one description.
 */
public final class TestSettings {
  private TestSettings() {}

  /** {@code RDMA_TEST_ADDRESS}: the address of the RDMA interface tests listen and connect on (the VM's rxe0). */
  public static String testAddress() {
    return env("RDMA_TEST_ADDRESS").orElse("10.0.0.1");
  }

  /** {@code RDMA_DEVICE}: the device under test; empty: the first one the provider lists. */
  public static Optional<String> device() {
    return env("RDMA_DEVICE");
  }

  /** {@code RDMA_VM=1}: running inside scripts/softroce-vm, whose rxe link may be taken down by a test. */
  public static boolean inSoftRoceVm() {
    return "1".equals(System.getenv("RDMA_VM"));
  }

  /** {@code RDMA_SCALE_CONNECTIONS}: how many connections the scale tests open (default 1000). */
  public static int scaleConnections() {
    return Integer.parseInt(env("RDMA_SCALE_CONNECTIONS").orElse("1000"));
  }

  /**
   * {@code RDMA_ROGUE_MESSAGES}: how many messages the rogue-peer heap tests send; {@code fallback}
   * (the suite's own count for its target) when unset.
   */
  public static long rogueMessages(long fallback) {
    return env("RDMA_ROGUE_MESSAGES").map(Long::parseLong).orElse(fallback);
  }

  /**
   * {@code RDMA_SHARED_RECEIVE_QUEUE} ({@code true} or {@code false}): the SHARED_RECEIVE_QUEUE
   * option of the conformance suites' servers and clients; empty: the option's default.
   * scripts/test-all runs the suites both ways.
   */
  public static Optional<Boolean> sharedReceiveQueue() {
    return env("RDMA_SHARED_RECEIVE_QUEUE").map(Boolean::parseBoolean);
  }

  /**
   * {@code RDMA_LOOP_PRIVATE_CONNECTIONS}: the LOOP_PRIVATE_CONNECTIONS option of the conformance
   * suites' servers and clients; empty: the option's default. scripts/test-all runs the suites
   * with its default and, in the pass with the SRQ off, with 0, so that every send borrows the pool.
   */
  public static Optional<Integer> loopPrivateConnections() {
    return env("RDMA_LOOP_PRIVATE_CONNECTIONS").map(Integer::parseInt);
  }

  /** System property {@code rdma.test.pace} (default true): whether stream tests pace their producers. */
  public static boolean pace() {
    return !"false".equals(System.getProperty("rdma.test.pace"));
  }

  private static Optional<String> env(String name) {
    return Optional.ofNullable(System.getenv(name)).filter(v -> !v.isBlank());
  }
}
