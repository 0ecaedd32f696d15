package io.rdmareactive.rdma.transport;

import java.lang.invoke.VarHandle;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * One {@link RdmaOutbound#send} call: subscribes to its publisher, queues the items the sender
 * requested as credits allow, and signals the caller's {@code Mono<Void>}. The marker a connection
 * starts with carries the peer's hello instead of a publisher.
 *
 * <p>The queue has one producer (the publisher's {@code onNext}) and one consumer, the connection's
 * drain: only the drain polls it, to send or to release what will not go. A cancel on any thread
 * only records itself and wakes the drain; an item that arrives after the drain let go of this
 * source (a publisher may still emit after a cancel, Reactive Streams rule 2.8) hands the source
 * back to the drain, which releases it. So every item is released exactly once, and never while
 * it is being copied.
 */
final class SendSource implements CoreSubscriber<Object>, Subscription {
  private final ConnectionOperations connection;
  final @Nullable Publisher<?> publisher;
  final @Nullable CoreSubscriber<? super Void> actual;
  final Protocol.@Nullable Hello hello;
  /**
   * Bounded: items are requested for the SENDs that credits and free send buffers allow, as many
   * per SEND as coalesce into one, and never more than {@link #capacity} outstanding.
   */
  final Queue<Object> queue;
  /** Most items requested and not yet polled: room for a few full batches per drain. */
  final int capacity;
  volatile @Nullable Subscription upstream;
  volatile boolean upstreamDone;
  volatile @Nullable Throwable upstreamError;
  volatile boolean cancelled;
  final AtomicBoolean terminated = new AtomicBoolean();
  boolean subscribed;
  long requested;
  long polled;
  long lastSequence;
  /** SENDs the last item polled took: how many items the credits cover (drain state). */
  long sendsPerItem = 1;
  /** Items of the last one's size that coalesce into one SEND (drain state). */
  long itemsPerSend = 1;
  /** The size those two were worked out for; -1 before the first item (drain state). */
  long lastSize = -1;

  SendSource(ConnectionOperations connection, @Nullable Publisher<?> publisher, @Nullable CoreSubscriber<? super Void> actual,
      Protocol.@Nullable Hello hello, int sendCount) {
    this.connection = connection;
    this.publisher = releasingDiscards(publisher);
    this.actual = actual;
    this.hello = hello;
    this.capacity = 4 * Math.max(8, sendCount);
    this.queue = Queues.get(capacity).get();
  }

  /**
   * Items to request now that the credits and send buffers allow {@code sends} SENDs (drain
   * state). Counted in SENDs, not items: an item of n fragments takes n credits. Items are asked
   * for as many as the last one's size says the credits cover (one until one was seen, at least
   * one when the sends allow any), so what waits here is about the credits' worth of bytes, not
   * the credits times MAX_MESSAGE_SIZE that a peer granting and then withholding could pile up.
   * Messages that coalesce are asked for as many as fit in the SENDs (to the queue's bound).
   */
  long wanted(long sends) {
    long per = sendsPerItem;
    long items = sends <= 0 ? 0 : polled == 0 ? 1 : Math.max(1, per == 1 ? sends : sends / per) * itemsPerSend;
    return Math.min(items, capacity) - (requested - polled);
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (Operators.validate(upstream, s)) {
      upstream = s;
      if (cancelled || terminated.get()) {
        s.cancel();
      }
      connection.drain();
    }
  }

  @Override
  public void onNext(Object item) {
    if (!queue.offer(item)) { // more than requested: a Reactive Streams violation upstream
      release(item); // never queued: this thread still owns it
      Subscription s = upstream;
      if (s != null) {
        s.cancel();
      }
      upstreamError = Exceptions.failWithOverflow("the publisher given to send() emitted more than requested");
      upstreamDone = true;
    } else {
      // Pairs with the drain's terminate-then-clear (Dekker): either that clear sees the item, or
      // this read sees the termination and the source goes back to the drain, which clears it.
      VarHandle.fullFence();
      if (terminated.get()) {
        connection.handBack(this);
      }
    }
    connection.drain();
  }

  @Override
  public void onError(Throwable t) {
    upstreamError = t;
    upstreamDone = true;
    connection.drain();
  }

  @Override
  public void onComplete() {
    upstreamDone = true;
    connection.drain();
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
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
    connection.drain(); // which terminates this source and releases what it queued: the queue is the drain's
  }

  /** Drain only: the drain lets go of this source; what it queued, or queues later, is released. */
  void terminate() {
    terminated.set(true);
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
    clear();
  }

  /** Drain only (the queue's one consumer): releases every queued item. */
  void clear() {
    Object o;
    while ((o = queue.poll()) != null) {
      release(o);
    }
  }

  /**
   * {@code publisher} releasing the received messages and registered memory that its own
   * operators discard (a {@code filter}, a {@code publishOn} queue at a cancel): they were given to
   * send() all the same, and a view held there would keep its receive buffer. Chained onto a
   * discard hook the caller set (Reactor's doOnDiscard composes); both release idempotently, on
   * any thread. Other items, and publishers that are not Reactor's, are as they were.
   */
  private static @Nullable Publisher<?> releasingDiscards(@Nullable Publisher<?> publisher) {
    if (publisher instanceof Flux<?> f) {
      return f.doOnDiscard(Object.class, SendSource::releaseDiscarded);
    }
    if (publisher instanceof Mono<?> m) {
      return m.doOnDiscard(Object.class, SendSource::releaseDiscarded);
    }
    return publisher;
  }

  private static void releaseDiscarded(Object item) {
    if (item instanceof RdmaMessage || item instanceof RegisteredMessage) { // not a user's OutboundMessage: exactly once
      release(item);
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

  /**
   * Drain only: fails every source {@code sources} holds, in order, also when a subscriber throws
   * from onError (a Reactive Streams violation): the first such exception is rethrown once every
   * source has ended, so that the drain still fails the connection for it, and no source is left
   * without its end.
   */
  static void failAll(Queue<SendSource> sources, Throwable t) {
    RuntimeException thrown = null;
    SendSource s;
    while ((s = sources.poll()) != null) {
      try {
        s.fail(t);
      } catch (RuntimeException e) {
        if (thrown == null) {
          thrown = e;
        } else {
          thrown.addSuppressed(e);
        }
      }
    }
    if (thrown != null) {
      throw thrown;
    }
  }

  /** Drain only: lets go of this source and signals {@code t}, unless it ended already or was cancelled. */
  void fail(Throwable t) {
    if (!terminated.get()) {
      terminate();
      if (actual != null && !cancelled) {
        actual.onError(t);
      }
    }
  }
}
