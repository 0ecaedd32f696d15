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
 * message"): when a completion wakes the loop soon after its spin gave up, so that a spin a little
 * longer would have caught it, the budget grows to a quarter more than that whole wait (from the
 * spin's start), up to {@link #MAX_GROWTH} times the configured budget and at most
 * {@link #MAX_BUDGET_NANOS}; each completion that comes later than that halves it back toward the
 * configured one. So a request-response whose round trip outlasts the configured budget (large
 * messages, a slow handler, an emulated machine) stops arming, sleeping and waking per message. A
 * configured budget of 1 ms or more does not adapt.
 */
final class PollSpin {
  /** Empty polling rounds between clock reads in {@link #spin()}. */
  private static final int CLOCK_ROUNDS = 8;
  /** The most the budget grows to, in multiples of the configured one. */
  static final int MAX_GROWTH = 20;
  /** Cap on the grown budget (1 ms); a longer configured budget stays as it is. */
  static final long MAX_BUDGET_NANOS = 1_000_000;

  private final CompletionEventLoop loop;
  /** The loop's CQs, in the order they are polled. */
  private final List<CompletionRegistration> served;
  /** The configured budget: how long it polls after the last completion; negative: until something comes. */
  private final long pollBudgetNanos;
  /** The budget now: the configured one, grown while completions come soon after a spin gave up. */
  private long budgetNanos;
  /** What the budget may grow to: the configured one where it cannot adapt (busy, zero, 1 ms or more). */
  private final long maxBudgetNanos;
  /** When the last spin began, if it gave up because its budget passed (the loop sleeps then); -1 otherwise. */
  private long gaveUpSpinStart = -1;
  /** From that spin's start to the completion event that woke the loop, until its drain shows it delivered; -1: none. */
  private long wokeAfter = -1;
  private final @Nullable IdleStrategy idleStrategy;

  PollSpin(CompletionEventLoop loop, List<CompletionRegistration> served, long pollBudgetNanos,
      @Nullable IdleStrategy idleStrategy) {
    this.loop = loop;
    this.served = served;
    this.pollBudgetNanos = pollBudgetNanos;
    this.budgetNanos = pollBudgetNanos;
    this.maxBudgetNanos = pollBudgetNanos <= 0 || pollBudgetNanos >= MAX_BUDGET_NANOS ? pollBudgetNanos
        : Math.min(MAX_GROWTH * pollBudgetNanos, MAX_BUDGET_NANOS);
    this.idleStrategy = idleStrategy;
  }

  /** The budget the next spin has. */
  long budgetNanos() {
    return budgetNanos;
  }

  /** The loop's sleep ended with a completion event: times it from the spin that gave up, if one did. */
  void awoke() {
    wokeAfter = gaveUpSpinStart >= 0 ? System.nanoTime() - gaveUpSpinStart : -1;
    gaveUpSpinStart = -1;
  }

  /**
   * The loop drained the CQs that had events: if that delivered completions after a wake timed by
   * {@link #awoke}, the budget adapts to the wait. Not for an event whose completion a spin
   * already took (its drain delivers nothing), nor for a sleep the spin did not give up into.
   */
  void drained(int delivered) {
    if (wokeAfter >= 0) {
      if (delivered > 0) {
        adapt(wokeAfter);
      }
      wokeAfter = -1;
    }
  }

  /**
   * A completion came {@code waitedNanos} after a spin began and gave up: grows the budget to a
   * quarter more than that if the largest budget covers it, halves it back otherwise.
   */
  void adapt(long waitedNanos) {
    if (maxBudgetNanos == pollBudgetNanos) {
      return; // busy, no spin at all, or a budget of 1 ms or more: nothing to adapt
    }
    budgetNanos = waitedNanos <= maxBudgetNanos ? Math.min(maxBudgetNanos, waitedNanos + (waitedNanos >> 2))
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
    gaveUpSpinStart = -1;
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
          gaveUpSpinStart = start;
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
