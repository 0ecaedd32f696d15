package io.rdmareactive.rdma.loop;

import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A loop's spin before it sleeps: polls the CQs with demand until one delivers, the loop has
 * something else to do, or the poll budget passes, with the idle strategy between empty rounds.
 * Loop thread only, as is the {@link CompletionEventLoop} that owns it.
 *
 * <p>The budget adapts (issue 12's "ping-pong under load does not pay a kernel wakeup per
 * message"): when a sleep ends with a completion soon after the spin gave up, so that a spin a
 * little longer would have caught it, the budget grows to a quarter more than that whole wait, up
 * to {@link #MAX_GROWTH} times the configured budget and at most {@link #MAX_BUDGET_NANOS}; a
 * longer sleep halves it back toward the configured one. So a request-response whose round trip
 * outlasts the configured budget (large messages, a slow handler, an emulated machine) stops
 * arming, sleeping and waking per message, and a loop gone quiet spins only its configured budget
 * again within a few sleeps.
 */
final class PollSpin {
  /** Empty polling rounds between clock reads in {@link #spin()}. */
  private static final int CLOCK_ROUNDS = 8;

  private final CompletionEventLoop loop;
  /** The loop's CQs, in the order they are polled. */
  private final List<CompletionRegistration> served;
  /** The most the budget grows to, in multiples of the configured one. */
  static final int MAX_GROWTH = 20;
  /** The most the budget grows to whatever the configured one (1 ms); never below the configured one. */
  static final long MAX_BUDGET_NANOS = 1_000_000;

  /** The configured budget: how long it polls after the last completion; negative: until something comes. */
  private final long pollBudgetNanos;
  /** The budget now: the configured one, grown while sleeps end soon after the spin gave up. */
  private long budgetNanos;
  private final long maxBudgetNanos;
  private final @Nullable IdleStrategy idleStrategy;

  PollSpin(CompletionEventLoop loop, List<CompletionRegistration> served, long pollBudgetNanos,
      @Nullable IdleStrategy idleStrategy) {
    this.loop = loop;
    this.served = served;
    this.pollBudgetNanos = pollBudgetNanos;
    this.budgetNanos = pollBudgetNanos;
    this.maxBudgetNanos = Math.max(pollBudgetNanos, Math.min(MAX_GROWTH * pollBudgetNanos, MAX_BUDGET_NANOS));
    this.idleStrategy = idleStrategy;
  }

  /** The budget the next spin has. */
  long budgetNanos() {
    return budgetNanos;
  }

  /**
   * The loop slept {@code sleptNanos} after a spin that found nothing and woke to a completion
   * event: grows the budget if a longer spin (within the largest budget) would have caught it,
   * halves it back toward the configured one otherwise.
   */
  void woke(long sleptNanos) {
    if (pollBudgetNanos <= 0) {
      return; // busy (never sleeps) or no spin at all: nothing to adapt
    }
    long waited = budgetNanos + sleptNanos;
    budgetNanos = waited <= maxBudgetNanos ? Math.min(maxBudgetNanos, waited + (waited >> 2))
        : Math.max(pollBudgetNanos, budgetNanos >> 1);
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
        if (pollBudgetNanos >= 0 && now - start >= budgetNanos) {
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
