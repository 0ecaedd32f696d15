package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ResourceClosedException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * A connection's inbound subscriber and its demand, counted in messages: what any thread may set
 * (a subscribe, a request, a cancel), each only recorded before the drain is called. The drain
 * ({@link InboundReceiver}) reads it and clears the subscriber once it is done with it.
 */
final class InboundDemand {
  /** No subscriber has come, and the connection is not closed. */
  private static final int NONE = 0;
  /** A subscriber is inside its onSubscribe, not yet where the drain signals it: a close waits. */
  private static final int SUBSCRIBING = 1;
  /** The one subscriber came (or was refused with an error): the drain signals it, if any. */
  private static final int SUBSCRIBED = 2;
  /** Closed before any subscriber came: one may still come, late, and get the end at once. */
  private static final int CLOSED = 3;

  private final ConnectionOperations connection;
  final AtomicLong requested = new AtomicLong();
  private final AtomicInteger state = new AtomicInteger(NONE);
  volatile @Nullable CoreSubscriber<? super RdmaMessage> subscriber;
  volatile boolean cancelled;

  InboundDemand(ConnectionOperations connection) {
    this.connection = connection;
  }

  /** The inbound Flux: one subscriber, whose demand posts receives. */
  Flux<RdmaMessage> receive() {
    return new Flux<>() {
      @Override
      public void subscribe(CoreSubscriber<? super RdmaMessage> actual) {
        if (!state.compareAndSet(NONE, SUBSCRIBING) && !state.compareAndSet(CLOSED, SUBSCRIBED)) {
          Operators.error(actual, new IllegalStateException("receive() of " + connection
              + " allows one subscriber, and it has one"));
          return;
        }
        try {
          if (connection.disposeRequested()) {
            Operators.error(actual, new ResourceClosedException(connection.toString()));
            return;
          }
          start(actual);
        } finally {
          state.set(SUBSCRIBED); // a close that waited for this goes on, in the drain below
          connection.drain();
        }
      }
    };
  }

  /**
   * The close's turn (the drain's, before it frees the connection and completes its onDispose):
   * false while a subscriber is inside its onSubscribe, where the drain cannot signal it yet. The
   * close then waits for the drain that the subscribe makes once the subscriber is in, so that it
   * gets the connection's end (its error, say) before the onDispose that cancels a server's
   * handler: with the cancel first, the error was lost.
   */
  boolean closing() {
    for (;;) {
      int s = state.get();
      if (s == SUBSCRIBING) {
        return false;
      }
      if (s != NONE || state.compareAndSet(NONE, CLOSED)) {
        return true;
      }
    }
  }

  /** Hands {@code actual} its subscription, then makes it the subscriber the drain signals. */
  private void start(CoreSubscriber<? super RdmaMessage> actual) {
    actual.onSubscribe(new Subscription() {
      @Override
      public void request(long n) {
        if (Operators.validate(n)) {
          for (;;) { // not getAndUpdate: its lambda would capture n, an allocation per request
            long r = requested.get();
            if (r == Long.MAX_VALUE || requested.compareAndSet(r, Operators.addCap(r, n))) {
              break;
            }
          }
          connection.drain();
        }
      }

      @Override
      public void cancel() {
        cancelled = true;
        connection.drain();
      }
    });
    subscriber = actual;
  }
}
