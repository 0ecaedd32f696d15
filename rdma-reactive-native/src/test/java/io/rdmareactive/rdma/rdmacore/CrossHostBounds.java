package io.rdmareactive.rdma.rdmacore;

import java.time.Duration;

/**
 * The times within which a connection notices a lost peer on Soft-RoCE, from its settings
 * (docs/reliability-network.md derives them):
 *
 * <pre>
 *   ack timeout T = 4.096 us x 2^t    (t: the QP's local ACK timeout, which the kernel's CM sets
 *                                       to the RoCE packet lifetime + 1; 18 + 1 on Linux 6.1: 2.15 s)
 *   retries     R = RETRY_COUNT of the connecting side
 *   busy:  a send not acknowledged fails after   (R + 1) x T
 *   idle:  a keepalive probe goes out within     2 x KEEPALIVE_INTERVAL of the last sign of the peer
 *          and fails after                        (R + 1) x T, so:   2 x K + (R + 1) x T
 * </pre>
 */
final class CrossHostBounds {
  /** The exponent t the CM gives RoCE QPs on the guest kernel (CMA_IBOE_PACKET_LIFETIME 18, plus 1). */
  static final int ACK_TIMEOUT_EXPONENT = 19;
  static final Duration ACK_TIMEOUT = Duration.ofNanos(4096L << ACK_TIMEOUT_EXPONENT);
  /** Scheduling under TCG on a shared host: the loop's poll, the JVM, the barrier's 100 ms steps. */
  static final Duration SLACK = Duration.ofSeconds(5);

  private CrossHostBounds() {}

  /** How long unacknowledged sends retry before they fail: (R + 1) x T. */
  static Duration retries(int retryCount) {
    return ACK_TIMEOUT.multipliedBy(retryCount + 1L);
  }

  /** How long an idle connection with a keepalive takes at most to notice: 2 x K + (R + 1) x T. */
  static Duration keepalive(Duration interval, int retryCount) {
    return interval.multipliedBy(2).plus(retries(retryCount));
  }
}
