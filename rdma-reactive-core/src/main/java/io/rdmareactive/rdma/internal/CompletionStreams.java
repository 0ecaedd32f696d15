package io.rdmareactive.rdma.internal;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * Builds completion streams over a CQ's raw verbs.
 *
 * <p>Event mode: every completion channel gets one event-loop thread ({@code rdma-cq-N}, a
 * {@link reactor.core.scheduler.NonBlocking} daemon, so BlockHound reports blocking calls made in
 * {@code onNext} there, as on Netty's loops). It waits on the channel, takes events, acknowledges
 * them in batches and serves every CQ of that channel; CQs on different channels are served by
 * different threads, which is how completions are steered. A stream polls no more than its
 * subscriber's outstanding demand, in the race-free order poll until empty, arm, poll again; at
 * zero demand it stops polling and the completions wait in the CQ. {@code request(n)} only
 * schedules a drain on the loop thread (and wakes it through {@link
 * io.rdmareactive.rdma.verbs.CompletionChannel#wakeup()}), never polls on the caller's thread.
 *
 * <p>Busy-poll mode: a thread of its own per stream ({@code rdma-poll-N}), polling while there
 * is demand with the options' idle strategy between empty polls, parked while there is none.
 *
 * <p>Either way a subscribed stream holds a lease on the CQ (when it is an {@link
 * AbstractRdmaResource}), so closing the CQ under it fails with
 * {@link io.rdmareactive.rdma.ResourceBusyException}; cancelling, an error or the failure of a
 * poll stop the polling, acknowledge the events taken and release the lease before the
 * canceller returns or the error is signalled. One subscriber at a time per CQ; polled
 * completions are copied out of the provider's view only for items that will be emitted.
 */
public final class CompletionStreams {
  /** The CQs with a live stream, by identity. */
  static final Map<CompletionQueue, CompletionSubscription> ACTIVE =
      Collections.synchronizedMap(new IdentityHashMap<>());

  private CompletionStreams() {}

  public static Flux<WorkCompletion> completions(CompletionQueue cq, CompletionStreamOptions options) {
    return new CompletionFlux(cq, options);
  }

  /**
   * Makes {@code channel}'s event loop a transport loop: its thread is named {@code threadName}
   * and it polls the CQs with demand for {@code pollBudget} after the last completion before it
   * arms the channel and sleeps (null: never sleeps while it serves a stream, a busy-polling
   * loop), with {@code idleStrategy} between empty rounds (null: a spin-wait hint).
   */
  public static void configureLoop(CompletionChannel channel, String threadName, @Nullable Duration pollBudget,
      @Nullable IdleStrategy idleStrategy) {
    CompletionEventLoop.configure(channel, threadName, pollBudget == null ? -1 : pollBudget.toNanos(), idleStrategy);
  }

  /** Drops what {@link #configureLoop} set, once the channel is closed. */
  public static void forgetLoop(CompletionChannel channel) {
    CompletionEventLoop.forget(channel);
  }

  /**
   * Runs {@code task} once after {@code delay} on the thread of the transport loop that serves
   * {@code cq}'s channel (see {@link #configureLoop}), or, for a CQ on no such loop (a
   * thread-per-connection stream), on one named fallback thread, {@code rdma-timer}. Either way
   * a non-blocking thread: the task must not block. Dispose the result to cancel it.
   */
  public static Disposable schedule(CompletionQueue cq, Runnable task, Duration delay) {
    CompletionChannel channel = cq.channel();
    Disposable d = channel == null ? null : CompletionEventLoop.schedule(channel, task, delay.toNanos());
    return d != null ? d : CompletionEventLoop.fallbackTimer().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Hands {@code task} to the transport loop that serves {@code cq} when the caller is another
   * thread, as Reactor Netty hands work to a channel's event loop: true when it was handed over,
   * false when the caller should run it now (it is that loop, or {@code cq} is on no transport
   * loop, as with a thread per connection).
   */
  public static boolean runOnLoop(CompletionQueue cq, Runnable task) {
    CompletionChannel channel = cq.channel();
    if (channel == null || CompletionEventLoop.inLoop(channel)) {
      return false;
    }
    return CompletionEventLoop.schedule(channel, task, 0) != null;
  }

  /**
   * On the transport loop that serves {@code cq}: polls its stream now, as the loop would on the
   * CQ's next event, so that a deadline which finds the loop behind (closing many connections at
   * once) counts what the CQ already holds before it gives up on it. False, polling nothing, on
   * any other thread or without a subscribed stream.
   */
  public static boolean pollNow(CompletionQueue cq) {
    CompletionChannel channel = cq.channel();
    CompletionSubscription s = ACTIVE.get(cq);
    if (channel == null || s == null || !CompletionEventLoop.inLoop(channel)) {
      return false;
    }
    s.drain();
    return true;
  }

  /** Whether {@code cq} has a subscribed completion stream now. */
  public static boolean isStreaming(CompletionQueue cq) {
    return ACTIVE.containsKey(cq);
  }

  private static final class CompletionFlux extends Flux<WorkCompletion> {
    private final CompletionQueue cq;
    private final CompletionStreamOptions options;

    CompletionFlux(CompletionQueue cq, CompletionStreamOptions options) {
      this.cq = cq;
      this.options = options;
    }

    @Override
    public void subscribe(CoreSubscriber<? super WorkCompletion> actual) {
      CompletionStreamOptions.Mode mode = options.effectiveMode(cq.channel());
      if (mode == CompletionStreamOptions.Mode.EVENT && cq.channel() == null) {
        Operators.error(actual, new IllegalArgumentException(
            "EVENT mode needs a CQ with a completion channel; " + cq + " has none"));
        return;
      }
      CompletionSubscription s = new CompletionSubscription(actual, cq, options, mode);
      if (ACTIVE.putIfAbsent(cq, s) != null) {
        Operators.error(actual, new IllegalStateException(
            cq + " already has a completion stream subscriber; a CQ has one consumer at a time"));
        return;
      }
      try {
        if (cq instanceof AbstractRdmaResource r) {
          r.acquireLease(); // on subscription, not assembly: fails here if the CQ is closed
          s.lease = r;
        }
      } catch (RuntimeException e) {
        ACTIVE.remove(cq, s);
        Operators.error(actual, e);
        return;
      }
      actual.onSubscribe(s);
      s.start();
    }
  }
}
