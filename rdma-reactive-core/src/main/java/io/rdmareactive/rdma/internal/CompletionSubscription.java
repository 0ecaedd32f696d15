package io.rdmareactive.rdma.internal;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import io.rdmareactive.rdma.WorkCompletionException;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionHandler;
import io.rdmareactive.rdma.verbs.WorkCompletionView;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;
import org.reactivestreams.Subscription;

/**
 * One subscriber's stream over one CQ. Its monitor guards every touch of the CQ (poll, arm,
 * acknowledge) and the move to done, so that once {@link #finish()} returned nothing touches
 * the CQ again and its lease may go. Subscriber signals are never sent while holding it.
 */
final class CompletionSubscription implements Subscription, WorkCompletionHandler {
  /** Events are acknowledged (a mutex in libibverbs) once this many have been taken. */
  static final int ACK_BATCH = 16;
  private static final AtomicInteger POLL_THREADS = new AtomicInteger();

  final CoreSubscriber<? super WorkCompletion> actual;
  final CompletionQueue cq;
  private final CompletionStreamOptions options;
  private final CompletionStreamOptions.Mode mode;
  private final WorkCompletion[] buffer;
  private int buffered; // poller thread only
  /** Copies completions itself: no record per item (null for plain subscribers). */
  private final @Nullable CompletionViewSubscriber viewer;
  /** View path with failOnError: the first failed completion of this poll, after which none is copied. */
  private @Nullable WorkCompletion failedInPoll; // poller thread only
  final AtomicLong requested = new AtomicLong();
  private volatile boolean done; // written under the monitor
  @Nullable AbstractRdmaResource lease;

  // event mode
  private volatile @Nullable CompletionEventLoop loop;
  final AtomicBoolean scheduled = new AtomicBoolean();
  boolean armed; // loop thread only
  private int unackedEvents; // guarded by the monitor

  // busy-poll mode
  private volatile @Nullable Thread poller;

  CompletionSubscription(CoreSubscriber<? super WorkCompletion> actual, CompletionQueue cq,
      CompletionStreamOptions options, CompletionStreamOptions.Mode mode) {
    this.actual = actual;
    this.cq = cq;
    this.options = options;
    this.mode = mode;
    this.viewer = actual instanceof CompletionViewSubscriber v ? v : null;
    this.buffer = viewer != null ? new WorkCompletion[0] : new WorkCompletion[options.batch()];
  }

  void start() {
    if (done) {
      return; // cancelled in onSubscribe
    }
    if (mode == CompletionStreamOptions.Mode.EVENT) {
      CompletionEventLoop l = CompletionEventLoop.register(this, Objects.requireNonNull(cq.channel()));
      loop = l;
      if (done) {
        l.deregister(this); // a cancel raced with registering and found no loop to leave
      }
    } else {
      Thread t = new Thread(this::busyPoll, "rdma-poll-" + POLL_THREADS.incrementAndGet());
      t.setDaemon(true);
      poller = t;
      t.start();
    }
  }

  boolean isDone() {
    return done;
  }

  @Override
  public void request(long n) {
    if (n <= 0) {
      terminate(Exceptions.nullOrNegativeRequestException(n));
      return;
    }
    for (;;) { // not getAndUpdate: its lambda would capture n, an allocation per request
      long r = requested.get();
      if (r == Long.MAX_VALUE || requested.compareAndSet(r, Operators.addCap(r, n))) {
        break;
      }
    }
    schedule();
  }

  private void schedule() {
    CompletionEventLoop l = loop;
    if (l != null) {
      if (scheduled.compareAndSet(false, true)) {
        l.schedule(this);
      }
    } else {
      Thread t = poller;
      if (t != null) {
        LockSupport.unpark(t);
      }
    }
  }

  @Override
  public void cancel() {
    finish();
    Thread t = poller;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /** Ends the stream with {@code error}, after releasing everything. */
  void terminate(Throwable error) {
    if (finish()) {
      actual.onError(error);
    }
  }

  /**
   * Stops touching the CQ, acknowledges the events taken and releases the lease. Returns whether
   * this call did it (the first one does).
   */
  boolean finish() {
    synchronized (this) {
      if (done) {
        return false;
      }
      done = true;
      acknowledgePending();
    }
    AbstractRdmaResource r = lease;
    if (r != null) {
      r.releaseLease();
    }
    CompletionStreams.ACTIVE.remove(cq, this);
    CompletionEventLoop l = loop;
    if (l != null) {
      l.deregister(this);
    }
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
        // the CQ is going away with the stream; nothing left to keep consistent
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
          // the CQ was closed after the stream ended
        }
        return;
      }
      if (++unackedEvents >= ACK_BATCH) {
        acknowledgePending();
      }
    }
    armed = false;
  }

  @Override
  public void onCompletion(WorkCompletionView completion) {
    CompletionViewSubscriber v = viewer;
    if (v == null) {
      buffer[buffered++] = completion.toWorkCompletion();
      return;
    }
    if (failedInPoll != null) {
      return; // the stream ends at the failed one; what follows is dropped, as with records
    }
    if (options.failOnError() && completion.status() != WorkCompletion.Status.SUCCESS) {
      failedInPoll = completion.toWorkCompletion();
      return;
    }
    v.copyCompletion(completion);
    buffered++;
  }

  /** Polls at most {@code max}; -1 once done. Poller thread. */
  private int pollBatch(int max) {
    synchronized (this) {
      if (done) {
        return -1;
      }
      buffered = 0;
      return cq.poll(max, this);
    }
  }

  /** Emits the {@code n} buffered completions; false when the stream ended meanwhile. */
  private boolean emit(int n) {
    CompletionViewSubscriber v = viewer;
    if (v != null) {
      int copied = buffered;
      WorkCompletion failed = failedInPoll;
      failedInPoll = null;
      if (done) {
        return false;
      }
      if (copied > 0) {
        v.onCompletions(copied);
      }
      if (failed != null) {
        terminate(new WorkCompletionException(failed));
        return false;
      }
      return !done;
    }
    for (int i = 0; i < n; i++) {
      WorkCompletion wc = buffer[i];
      buffer[i] = null;
      if (done) {
        clear(i + 1, n);
        return false;
      }
      if (options.failOnError() && !wc.isSuccess()) {
        clear(i + 1, n);
        terminate(new WorkCompletionException(wc));
        return false;
      }
      actual.onNext(wc);
    }
    return !done;
  }

  private void clear(int from, int to) {
    for (int i = from; i < to; i++) {
      buffer[i] = null;
    }
  }

  private void produced(long r, int n) {
    if (r != Long.MAX_VALUE) {
      requested.addAndGet(-n);
    }
  }

  /**
   * Event mode: serve demand; poll until empty, arm, poll again. Loop thread. Returns how many
   * completions it delivered (the loop's poll budget keeps spinning while drains deliver).
   */
  int drain() {
    scheduled.set(false);
    int delivered = 0;
    try {
      for (;;) {
        if (done) {
          return delivered;
        }
        long r = requested.get();
        if (r == 0) {
          return delivered; // completions wait in the CQ; request() schedules the next drain
        }
        int n = pollBatch((int) Math.min(options.batch(), r));
        if (n < 0) {
          return delivered;
        }
        if (n > 0) {
          delivered += n;
          if (!emit(n)) {
            return delivered;
          }
          produced(r, n);
          continue;
        }
        if (armed) {
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
      Exceptions.throwIfJvmFatal(t);
      terminate(Operators.onOperatorError(t, actual.currentContext()));
      return delivered;
    }
  }

  /** Whether the subscriber has outstanding demand (the loop's poll budget polls only those). */
  boolean hasDemand() {
    return !done && requested.get() > 0;
  }

  /** Busy-poll mode: the body of this stream's own thread. */
  private void busyPoll() {
    IdleStrategy idle = options.idleStrategy().copy();
    try {
      while (!done) {
        long r = requested.get();
        if (r == 0) {
          idle.reset();
          LockSupport.park(this); // request() and cancel() unpark
          continue;
        }
        int n = pollBatch((int) Math.min(options.batch(), r));
        if (n < 0) {
          return;
        }
        if (n > 0) {
          if (!emit(n)) {
            return;
          }
          produced(r, n);
        }
        idle.idle(n);
      }
    } catch (Throwable t) {
      Exceptions.throwIfJvmFatal(t);
      terminate(Operators.onOperatorError(t, actual.currentContext()));
    }
  }

  @Override
  public String toString() {
    return "completions of " + cq;
  }
}
