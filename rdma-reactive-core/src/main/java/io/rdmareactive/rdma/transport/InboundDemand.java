package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ResourceClosedException;
import java.util.concurrent.atomic.AtomicBoolean;
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
  private final ConnectionOperations connection;
  final AtomicLong requested = new AtomicLong();
  private final AtomicBoolean subscribed = new AtomicBoolean();
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
        if (!subscribed.compareAndSet(false, true)) {
          Operators.error(actual, new IllegalStateException("receive() of " + connection
              + " allows one subscriber, and it has one"));
          return;
        }
        if (connection.disposeRequested()) {
          Operators.error(actual, new ResourceClosedException(connection.toString()));
          return;
        }
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
        connection.drain();
      }
    };
  }
}
