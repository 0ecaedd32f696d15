package io.rdmareactive.rdma.inmemory;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The clock of finite RNR retries: one daemon thread for the process, started by the first stall
 * that has a deadline and ended after a second without one. A timer, not a check at the next post
 * or poll, because a consumer blocked on its completion channel calls neither: a real device
 * reports the exhausted retries by itself, and so must this.
 */
final class RnrTimer {
  /**
   * IBTA's encoding of the responder's minimum RNR NAK timer (ibv_qp_attr.min_rnr_timer, 0..31),
   * in units of 10 microseconds: 0 is the longest, 655.36 ms; 1 is 0.01 ms, 12 is 0.64 ms.
   */
  private static final int[] TIMER_10US = {65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384,
      512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};

  /** RNR retry count meaning "retry for ever". */
  static final int FOREVER = 7;

  private static final ScheduledThreadPoolExecutor TIMER = timer();

  private RnrTimer() {
  }

  private static ScheduledThreadPoolExecutor timer() {
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
      Thread th = new Thread(r, "in-memory-rnr-timer");
      th.setDaemon(true); // a stalled send must not keep the JVM alive
      return th;
    });
    t.setKeepAliveTime(1, TimeUnit.SECONDS);
    t.allowCoreThreadTimeOut(true); // no thread while nothing waits (the worker stays while a task is queued)
    t.setRemoveOnCancelPolicy(true); // a resumed send's task goes at once, with its reference to the QP
    return t;
  }

  /** Whether {@code code} is a valid min_rnr_timer value. */
  static boolean validTimer(int code) {
    return code >= 0 && code < TIMER_10US.length;
  }

  /** How long a sender with {@code rnrRetry} retries (1..6) waits for a responder with timer {@code code}. */
  static long budgetNanos(int rnrRetry, int code) {
    return rnrRetry * TIMER_10US[code] * 10_000L;
  }

  /** Runs {@code task} once after {@code nanos}, on the timer's thread. */
  static ScheduledFuture<?> schedule(Runnable task, long nanos) {
    return TIMER.schedule(task, nanos, TimeUnit.NANOSECONDS);
  }
}
