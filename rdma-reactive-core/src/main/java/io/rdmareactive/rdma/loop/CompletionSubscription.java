package io.rdmareactive.rdma.loop;

import io.rdmareactive.rdma.WorkCompletionException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionView;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;

/**
 * One subscriber's verbs completion stream over one CQ: a {@link CompletionHandler} on a loop,
 * which copies each polled completion into a record and emits it. Event mode joins the loop that
 * waits on the CQ's channel (a transport loop's, or one of its own that ends once idle); busy-poll
 * mode gets a loop of its own ({@code rdma-poll-N}) that never arms the CQ.
 */
final class CompletionSubscription implements Subscription, CompletionHandler {
  private static final AtomicInteger EVENT_THREADS = new AtomicInteger();
  private static final AtomicInteger POLL_THREADS = new AtomicInteger();

  private final CoreSubscriber<? super WorkCompletion> actual;
  private final CompletionQueue cq;
  private final CompletionStreamOptions options;
  private final WorkCompletion[] buffer;
  private int buffered; // loop thread only
  private final AtomicLong requested = new AtomicLong();
  private final AtomicBoolean terminated = new AtomicBoolean();
  private volatile @Nullable CompletionRegistration registration;
  private volatile boolean cancelled;

  CompletionSubscription(CoreSubscriber<? super WorkCompletion> actual, CompletionQueue cq,
      CompletionStreamOptions options) {
    this.actual = actual;
    this.cq = cq;
    this.options = options;
    this.buffer = new WorkCompletion[options.batch()];
  }

  /** Registers with the loop that will serve it; fails (before any signal) when the CQ is taken or closed. */
  void attach(CompletionStreamOptions.Mode mode) {
    CompletionRegistration r;
    if (mode == CompletionStreamOptions.Mode.EVENT) {
      r = joinChannelLoop(java.util.Objects.requireNonNull(cq.channel()));
    } else {
      CompletionEventLoop loop = CompletionEventLoop.forStreams("rdma-poll-" + POLL_THREADS.incrementAndGet(), null, -1,
          options.idleStrategy());
      r = loop.register(cq, this, options.batch());
      loop.start();
    }
    registration = r;
  }

  /** The loop that waits on {@code channel}: the one the channel names, else a new one that ends once idle. */
  private CompletionRegistration joinChannelLoop(CompletionChannel channel) {
    for (;;) {
      AbstractRdmaResource slot = channel instanceof AbstractRdmaResource a ? a : null;
      if (slot != null && slot.consumer() instanceof CompletionEventLoop loop) {
        CompletionRegistration r = loop.register(cq, this, options.batch());
        if (r != null) {
          return r;
        }
        Thread.onSpinWait(); // it ended just now: its place frees at once
        continue;
      }
      CompletionEventLoop loop = CompletionEventLoop.forStreams("rdma-cq-" + EVENT_THREADS.incrementAndGet(), channel,
          0, null);
      if (slot != null && !slot.claimConsumer(loop)) {
        continue; // another stream's loop came first: join it
      }
      CompletionRegistration r = loop.register(cq, this, options.batch()); // before it starts, so it is not idle
      loop.start();
      if (r == null) {
        throw new IllegalStateException("a new loop refused " + cq);
      }
      return r;
    }
  }

  @Override
  public void request(long n) {
    if (n <= 0) {
      cancel();
      signalError(Exceptions.nullOrNegativeRequestException(n));
      return;
    }
    for (;;) { // not getAndUpdate: its lambda would capture n, an allocation per request
      long r = requested.get();
      if (r == Long.MAX_VALUE || requested.compareAndSet(r, Operators.addCap(r, n))) {
        break;
      }
    }
    CompletionRegistration reg = registration;
    if (reg != null) {
      reg.requestDrain();
    }
  }

  @Override
  public void cancel() {
    cancelled = true;
    CompletionRegistration reg = registration;
    if (reg != null) {
      reg.cancel();
    }
  }

  @Override
  public long demand() {
    return cancelled ? 0 : requested.get();
  }

  @Override
  public void onCompletion(WorkCompletionView completion) {
    buffer[buffered++] = completion.toWorkCompletion();
  }

  @Override
  public void onCompletions(int count) {
    int n = buffered;
    buffered = 0;
    long r = requested.get();
    for (int i = 0; i < n; i++) {
      WorkCompletion wc = buffer[i];
      buffer[i] = null;
      if (cancelled) {
        clear(i + 1, n);
        return;
      }
      if (options.failOnError() && !wc.isSuccess()) {
        clear(i + 1, n);
        cancel();
        signalError(new WorkCompletionException(wc));
        return;
      }
      actual.onNext(wc);
    }
    if (r != Long.MAX_VALUE) {
      requested.addAndGet(-n);
    }
  }

  private void clear(int from, int to) {
    for (int i = from; i < to; i++) {
      buffer[i] = null;
    }
  }

  @Override
  public void onError(Throwable error) {
    clear(0, buffer.length);
    buffered = 0;
    signalError(Operators.onOperatorError(error, actual.currentContext()));
  }

  private void signalError(Throwable error) {
    if (terminated.compareAndSet(false, true)) {
      actual.onError(error);
    }
  }

  @Override
  public String toString() {
    return "completions of " + cq;
  }
}
