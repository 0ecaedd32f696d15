package io.rdmareactive.rsocket.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rsocket.RdmaClientTransport;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.util.DefaultPayload;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.springframework.boot.rsocket.server.RSocketServer;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class RdmaRSocketServerFactoryTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  @Test
  void servesOverRdmaWithBootsCustomizersAndStopsFreeingEverything() {
    Map<String, Integer> before = new InMemoryProvider().liveObjects();
    AtomicInteger customized = new AtomicInteger();
    RdmaRSocketServerFactory factory = new RdmaRSocketServerFactory(
        RdmaServer.create().host("127.0.0.1").port(0).option(RdmaOption.PROVIDER, InMemoryProvider.NAME));
    factory.addServerCustomizers(s -> customized.incrementAndGet());
    RSocketServer server = factory.create(SocketAcceptor.forRequestResponse(p -> {
      String data = p.getDataUtf8();
      p.release();
      return Mono.just(DefaultPayload.create("boot " + data));
    }));
    assertThat(customized).hasValue(1);
    assertThat(server.address()).as("not started").isNull();
    server.start();
    try {
      int port = server.address().getPort();
      assertThat(port).isPositive();
      RSocket rsocket = RSocketConnector.create()
          .connect(RdmaClientTransport.create(RdmaClient.create().host("127.0.0.1").port(port)
              .option(RdmaOption.PROVIDER, InMemoryProvider.NAME)))
          .block(WAIT);
      StepVerifier.create(rsocket.requestResponse(DefaultPayload.create("hi")).map(p -> {
            String s = p.getDataUtf8();
            p.release();
            return s;
          }))
          .expectNext("boot hi")
          .expectComplete()
          .verify(WAIT);
      rsocket.dispose();
      rsocket.onClose().onErrorComplete().block(WAIT);
    } finally {
      server.stop();
    }
    assertThat(server.address()).as("stopped").isNull();
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!new InMemoryProvider().liveObjects().equals(before) && System.nanoTime() < deadline) {
      LockSupport.parkNanos(5_000_000);
    }
    assertThat(new InMemoryProvider().liveObjects()).isEqualTo(before);
  }
}
