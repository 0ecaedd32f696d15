package io.rdmareactive.rdma.transport;

import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A handler's inbound subscriber that never requests: its connection posts only the reserve
 * receives and grants a peer nothing more. Tests wait for {@link #subscribed()} before the peer
 * acts; the error that ends the connection is swallowed (tests read it elsewhere).
 */
public final class WithoutDemand extends BaseSubscriber<RdmaMessage> {
  private final Sinks.Empty<Void> subscribed = Sinks.empty();

  /** Completes once the subscription is in place. */
  public Mono<Void> subscribed() {
    return subscribed.asMono();
  }

  @Override
  protected void hookOnSubscribe(Subscription s) {
    subscribed.tryEmitEmpty(); // and no request, ever
  }

  @Override
  protected void hookOnError(Throwable e) {
    // the connection's end: the tests look at it through the connection
  }
}
