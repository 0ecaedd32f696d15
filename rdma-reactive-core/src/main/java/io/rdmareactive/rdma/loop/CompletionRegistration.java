package io.rdmareactive.rdma.loop;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * One CQ served by one loop for one {@link CompletionHandler}. Its monitor guards every touch of
 * the CQ (poll, arm, acknowledge) and the move to done, so that once {@link #cancel()} returned
 * nothing touches the CQ again and its lease is given back. A handler is never called while
 * holding it, bar {@link CompletionHandler#onCompletion}, which only copies.
 */
public final class CompletionRegistration {
  /** Events are acknowledged (a mutex in libibverbs) once this many have been taken. */
  static final int ACK_BATCH = 16;

  final CompletionEventLoop loop;
  final CompletionQueue cq;
  private final CompletionHandler handler;
  private final int batch;
  private volatile boolean done; // written under the monitor
  final AtomicBoolean scheduled = new AtomicBoolean();
  private boolean armed; // loop thread only
  private int unackedEvents; // guarded by the monitor

  CompletionRegistration(CompletionEventLoop loop, CompletionQueue cq, CompletionHandler handler, int batch) {
    this.loop = loop;
    this.cq = cq;
    this.handler = handler;
    this.batch = batch;
  }

  /** The loop that serves this CQ. */
  public CompletionEventLoop loop() {
    return loop;
  }

  boolean isDone() {
    return done;
  }

  /** Any thread: the handler has demand again; the loop polls at its next round. */
  public void requestDrain() {
    if (!done && scheduled.compareAndSet(false, true)) {
      loop.ready.add(this);
      loop.wakeup();
    }
  }

  /**
   * On the loop's thread: polls now, as the loop would on the CQ's next event, so that a deadline
   * which finds the loop behind counts what the CQ already holds. False, polling nothing, on any
   * other thread or once cancelled.
   */
  public boolean pollNow() {
    if (done || !loop.inLoop()) {
      return false;
    }
    drain();
    return true;
  }

  /** Any thread: stops polling, acknowledges the events taken and gives the CQ back. Whether this call did it. */
  public boolean cancel() {
    return finish();
  }

  /** Ends the registration with {@code error}, after giving everything back. */
  void terminate(Throwable error) {
    if (finish()) {
      handler.onError(error);
    }
  }

  boolean finish() {
    synchronized (this) {
      if (done) {
        return false;
      }
      done = true;
      acknowledgePending();
    }
    if (cq instanceof AbstractRdmaResource r) {
      r.releaseLease();
      r.releaseConsumer(this);
    }
    loop.deregister(this);
    return true;
  }

  /** Holds the monitor. */
  private void acknowledgePending() {
    if (unackedEvents > 0) {
      int n = unackedEvents;
      unackedEvents = 0;
      try {
        cq.acknowledgeEvents(n);
      } catch (RuntimeException ignored) {
        // the CQ is going away with the registration; nothing left to keep consistent
      }
    }
  }

  /** The loop took an event for this CQ: one arm was consumed. Loop thread. */
  void onEvent() {
    synchronized (this) {
      if (done) {
        try {
          cq.acknowledgeEvents(1);
        } catch (RuntimeException ignored) {
          // the CQ was closed after the registration ended
        }
        return;
      }
      if (++unackedEvents >= ACK_BATCH) {
        acknowledgePending();
      }
    }
    armed = false;
  }

  /** Whether the handler has demand (a loop's poll budget polls only those). */
  boolean hasDemand() {
    return !done && handler.demand() > 0;
  }

  /** Polls at most {@code max}; -1 once done. */
  private int poll(int max) {
    synchronized (this) {
      if (done) {
        return -1;
      }
      return cq.poll(max, handler);
    }
  }

  /**
   * Serves the handler's demand: polls until empty, arms (event mode), polls again. Loop thread.
   * Returns how many completions it delivered (the loop's poll budget keeps spinning while drains
   * deliver). A handler or a poll that throws, an Error included, ends this registration only.
   */
  int drain() {
    if (scheduled.get()) {
      // Cleared only when set: a busy loop's spin drains every round, and a volatile write is a
      // full fence. A request that sets it after this read queues this registration again.
      scheduled.set(false);
    }
    int delivered = 0;
    try {
      for (;;) {
        if (done) {
          return delivered;
        }
        long r = handler.demand();
        if (r <= 0) {
          return delivered; // completions wait in the CQ; requestDrain() schedules the next drain
        }
        int n = poll((int) Math.min(batch, r));
        if (n < 0) {
          return delivered;
        }
        if (n > 0) {
          delivered += n;
          handler.onCompletions(n);
          continue;
        }
        if (armed || !loop.arms()) {
          return delivered; // empty and armed: the next completion raises an event
        }
        synchronized (this) {
          if (done) {
            return delivered;
          }
          cq.requestNotification(false);
        }
        armed = true; // and poll once more: a completion may have come before the arm
      }
    } catch (Throwable t) {
      terminate(t);
      return delivered;
    }
  }

  @Override
  public String toString() {
    return "completions of " + cq + " on " + loop.getName();
  }

  /** For {@link CompletionStreams#isStreaming}: the consumer that holds {@code cq}, or null. */
  static @Nullable Object consumerOf(CompletionQueue cq) {
    return cq instanceof AbstractRdmaResource r ? r.consumer() : null;
  }
}
