package io.rdmareactive.samples.rsocket;

import io.rdmareactive.spring.boot.RdmaRSocketRequesters;
import org.springframework.messaging.rsocket.RSocketRequester;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Calls the controller's routes through an {@link RSocketRequester}; which transport it connected
 * with is the caller's choice ({@link #connect}), the calls are the same.
 */
public final class GreetingClient implements AutoCloseable {
  private final RSocketRequester requester;

  public GreetingClient(RSocketRequester requester) {
    this.requester = requester;
  }

  /** Over RDMA with Boot's builder and the {@code rdma.*} options, or over TCP with Boot's builder. */
  public static GreetingClient connect(boolean rdma, RdmaRSocketRequesters requesters, String host, int port) {
    return new GreetingClient(rdma ? requesters.requester(host, port) : requesters.builder().tcp(host, port));
  }

  public Mono<String> greet(String name) {
    return requester.route("greet").data(name).retrieveMono(String.class);
  }

  public Flux<Tick> ticks(int count) {
    return requester.route("ticks").data(count).retrieveFlux(Tick.class);
  }

  @Override
  public void close() {
    requester.dispose();
  }
}
