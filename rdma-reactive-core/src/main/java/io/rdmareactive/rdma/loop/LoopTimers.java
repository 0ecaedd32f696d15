package io.rdmareactive.rdma.loop;

import java.time.Duration;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * A loop's one-shot timers: added from any thread, kept in a deadline heap that only the loop's
 * thread touches, and run there when due. A cancelled timer drops its task at once, so what it
 * would run (a connection, say) does not stay reachable until its deadline.
 */
final class LoopTimers {
  private final ConcurrentLinkedQueue<Timer> added = new ConcurrentLinkedQueue<>();
  private final PriorityQueue<Timer> heap = new PriorityQueue<>(); // the loop's thread only
  /** Timers scheduled and neither run nor cancelled. */
  private final AtomicInteger live = new AtomicInteger();

  /** Any thread: a timer for {@code task} after {@code delay}; the loop takes it on its next round. */
  Disposable add(Runnable task, Duration delay) {
    Timer t = new Timer(task, System.nanoTime() + Math.max(0, delay.toNanos()));
    live.incrementAndGet();
    added.add(t);
    return t;
  }

  /** Whether timers were added since the loop last took them. */
  boolean anyAdded() {
    return !added.isEmpty();
  }

  /** Timers scheduled and neither run nor cancelled. */
  int live() {
    return live.get();
  }

  /** The loop's thread: moves the timers added meanwhile into the heap. */
  void takeAdded() {
    Timer t;
    while ((t = added.poll()) != null) {
      heap.add(t);
    }
  }

  /** The loop's thread: hands each due timer's task to {@code runner}, unless it was cancelled. */
  void runDue(Consumer<Runnable> runner) {
    Timer t;
    while ((t = heap.peek()) != null && t.deadline - System.nanoTime() <= 0) {
      heap.poll();
      Runnable task = t.task;
      if (task != null && t.claim()) {
        runner.accept(task);
      }
    }
  }

  /** The loop's thread: nanoseconds until the next timer, at most {@code max}; 0 when one is due. */
  long nanosToNext(long max) {
    Timer t = heap.peek();
    return t == null ? max : Math.max(0, Math.min(max, t.deadline - System.nanoTime()));
  }

  /** The loop's thread: whether a timer is due at {@code now} (a {@link System#nanoTime()} reading). */
  boolean dueAt(long now) {
    Timer t = heap.peek();
    return t != null && t.deadline - now <= 0;
  }

  /** The loop ends: pending timers never run. */
  void clear() {
    heap.clear();
    added.clear();
  }

  /** A one-shot timer; pending until it runs or is cancelled, whichever claims it first. */
  private final class Timer implements Disposable, Comparable<Timer> {
    private static final int PENDING = 0;
    private static final int DONE = 1;
    /** Null once run or cancelled: a cancelled entry waits in the heap for its deadline, holding nothing. */
    volatile @Nullable Runnable task;
    final long deadline;
    private final AtomicInteger state = new AtomicInteger(PENDING);

    Timer(Runnable task, long deadline) {
      this.task = task;
      this.deadline = deadline;
    }

    /** Whether this caller took it from pending (to run it or to cancel it). */
    boolean claim() {
      if (state.compareAndSet(PENDING, DONE)) {
        task = null; // what it would run must not stay reachable till the deadline
        live.decrementAndGet();
        return true;
      }
      return false;
    }

    @Override
    public void dispose() {
      claim();
    }

    @Override
    public boolean isDisposed() {
      return state.get() != PENDING;
    }

    @Override
    public int compareTo(Timer o) {
      return Long.compare(deadline - o.deadline, 0);
    }
  }
}
