package io.rdmareactive.rdma.transport;

import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * One {@link RdmaOutbound#send} call: subscribes to its publisher, queues the items the sender
 * requested as credits allow, and signals the caller's {@code Mono<Void>}. The marker a channel
 * starts with carries the peer's hello instead of a publisher.
 */
final class SendSource implements CoreSubscriber<Object>, Subscription {
  private final ConnectionOperations channel;
  final @Nullable Publisher<?> publisher;
  final @Nullable CoreSubscriber<? super Void> actual;
  final Protocol.@Nullable Hello hello;
  /** Bounded: at most min(credits - 1, free send buffers) <= sendCount items are ever requested. */
  final Queue<Object> queue;
  volatile @Nullable Subscription upstream;
  volatile boolean upstreamDone;
  volatile @Nullable Throwable upstreamError;
  volatile boolean cancelled;
  final AtomicBoolean terminated = new AtomicBoolean();
  boolean subscribed;
  long requested;
  long polled;
  long lastSequence;

  SendSource(ConnectionOperations channel, @Nullable Publisher<?> publisher, @Nullable CoreSubscriber<? super Void> actual,
      Protocol.@Nullable Hello hello, int sendCount) {
    this.channel = channel;
    this.publisher = publisher;
    this.actual = actual;
    this.hello = hello;
    this.queue = Queues.get(Math.max(8, sendCount)).get();
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (Operators.validate(upstream, s)) {
      upstream = s;
      if (cancelled || terminated.get()) {
        s.cancel();
      }
      channel.drain();
    }
  }

  @Override
  public void onNext(Object item) {
    if (terminated.get()) {
      Operators.onDiscard(item, currentContext());
      release(item);
      return;
    }
    if (!queue.offer(item)) { // more than requested: a Reactive Streams violation upstream
      release(item);
      Subscription s = upstream;
      if (s != null) {
        s.cancel();
      }
      upstreamError = Exceptions.failWithOverflow("the publisher given to send() emitted more than requested");
      upstreamDone = true;
    }
    channel.drain();
  }

  @Override
  public void onError(Throwable t) {
    upstreamError = t;
    upstreamDone = true;
    channel.drain();
  }

  @Override
  public void onComplete() {
    upstreamDone = true;
    channel.drain();
  }

  @Override
  public Context currentContext() {
    return actual == null ? Context.empty() : actual.currentContext();
  }

  @Override
  public void request(long n) {
    // a Mono<Void>: nothing to request
  }

  @Override
  public void cancel() {
    cancelled = true;
    cancelUpstream();
    channel.drain();
  }

  void cancelUpstream() {
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
    clear();
  }

  private void clear() {
    Object o;
    while ((o = queue.poll()) != null) {
      release(o);
    }
  }

  /** Gives back an item that will not be sent: a message's buffer, an {@link OutboundMessage}'s memory. */
  static void release(Object item) {
    if (item instanceof RdmaMessage m) {
      m.release();
    } else if (item instanceof OutboundMessage o) {
      o.release();
    }
  }

  void complete() {
    if (terminated.compareAndSet(false, true) && actual != null) {
      actual.onComplete();
    }
  }

  void fail(Throwable t) {
    if (terminated.compareAndSet(false, true)) {
      cancelUpstream();
      if (actual != null && !cancelled) {
        actual.onError(t);
      }
    }
  }
}
