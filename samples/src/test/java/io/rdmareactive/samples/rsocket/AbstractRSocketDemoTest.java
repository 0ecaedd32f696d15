package io.rdmareactive.samples.rsocket;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rsocket.boot.RdmaRSocketServerFactory;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.rsocket.netty.NettyRSocketServerFactory;
import org.springframework.boot.rsocket.server.RSocketServerFactory;
import reactor.test.StepVerifier;

/** The RSocket demo: the same controller and client, the transport chosen by the first argument only. */
abstract class AbstractRSocketDemoTest {
  private final String transport;
  private final Duration timeout;
  private final List<String> args;

  /**
   * @param transport the demo's first argument, tcp or rdma
   * @param args Spring properties selecting the provider and address under test
   */
  AbstractRSocketDemoTest(String transport, Duration timeout, String... args) {
    this.transport = transport;
    this.timeout = timeout;
    this.args = List.of(args);
  }

  @Test
  void requestResponseAndRequestStreamWithBackpressure() {
    String[] all = Stream.concat(Stream.of(transport), args.stream()).toArray(String[]::new);
    RSocketDemo.withClient(all, (ctx, client) -> {
      Class<?> expected = transport.equals("rdma") ? RdmaRSocketServerFactory.class : NettyRSocketServerFactory.class;
      assertThat(ctx.getBean(RSocketServerFactory.class)).isExactlyInstanceOf(expected);
      StepVerifier.create(client.greet("RDMA")).expectNext("Hello, RDMA!").expectComplete().verify(timeout);
      // REQUEST_N from the requester: 2, a pause with nothing more, then the rest.
      StepVerifier.create(client.ticks(500), 2)
          .expectNext(new Tick(0, "tick 0"), new Tick(1, "tick 1"))
          .expectNoEvent(Duration.ofMillis(200))
          .thenRequest(Long.MAX_VALUE)
          .expectNextCount(497)
          .expectNext(new Tick(499, "tick 499"))
          .expectComplete()
          .verify(timeout);
      StepVerifier.create(client.ticks(-1)).expectErrorSatisfies(e -> assertThat(e)
          .hasMessageContaining("count must not be negative: -1")).verify(timeout);
    });
  }
}
