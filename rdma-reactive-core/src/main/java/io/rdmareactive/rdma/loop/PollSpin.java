package io.rdmareactive.rdma.loop;

import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A loop's spin before it sleeps: polls the CQs with demand until one delivers, the loop has
 * something else to do, or the poll budget passes, with the idle strategy between empty rounds.
 * Loop thread only, as is the {@link CompletionEventLoop} that owns it.
 */
final class PollSpin {
  /** Empty polling rounds between clock reads in {@link #spin()}. */
  private static final int CLOCK_ROUNDS = 8;

  private final CompletionEventLoop loop;
  /** The loop's CQs, in the order they are polled. */
  private final List<CompletionRegistration> served;
  /** How long it polls after the last completion; negative: until something comes. */
  private final long pollBudgetNanos;
  private final @Nullable IdleStrategy idleStrategy;

  PollSpin(CompletionEventLoop loop, List<CompletionRegistration> served, long pollBudgetNanos,
      @Nullable IdleStrategy idleStrategy) {
    this.loop = loop;
    this.served = served;
    this.pollBudgetNanos = pollBudgetNanos;
    this.idleStrategy = idleStrategy;
  }

  /**
   * Polls the CQs with demand until one delivers (true) or the budget passes without any
   * (false: arm and sleep), as Netty's epoll loop spins before epoll_wait. CQs stay armed
   * meanwhile; an event for a completion polled here only costs an empty drain later. False at
   * once when no CQ has demand.
   */
  boolean spin() {
    // The clock is read once per CLOCK_ROUNDS empty rounds, for the budget and the timers alike:
    // in a VM whose clocksource has no vDSO path each System.nanoTime() is a system call, which
    // read every round would slow the polling itself. A timer or the budget's end is noticed at
    // most that many rounds late (microseconds, against timers of milliseconds and more).
    long start = pollBudgetNanos < 0 ? 0 : System.nanoTime();
    int rounds = 0;
    for (;;) {
      boolean demand = false;
      for (int i = 0; i < served.size(); i++) {
        CompletionRegistration r = served.get(i);
        if (r.hasDemand()) {
          demand = true;
          if (r.drain() > 0) {
            if (idleStrategy != null) {
              idleStrategy.reset();
            }
            return true;
          }
        }
      }
      if (loop.stopping || loop.pending()) {
        return true;
      }
      if (!demand) {
        return false;
      }
      if (++rounds % CLOCK_ROUNDS == 0) {
        long now = System.nanoTime();
        if (loop.timers.dueAt(now)) {
          return true;
        }
        if (pollBudgetNanos >= 0 && now - start >= pollBudgetNanos) {
          return false;
        }
      }
      idle();
    }
  }

  /** Between empty polling rounds; the idle strategy may park (BlockHound allows it here). */
  private void idle() {
    if (idleStrategy != null) {
      idleStrategy.idle(0);
    } else {
      Thread.onSpinWait();
    }
  }
}
