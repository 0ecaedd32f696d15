package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.RdmaDevices;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.Listener;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/** A server's limits: connections, pending handshakes, the hello, and connects racing its dispose. */
public abstract class LimitConformance extends TransportSuite {


  @Test
  void aServerAtItsConnectionLimitRefusesAndSaysWhy() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.MAX_CONNECTIONS, 2)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection a = connect(client(server));
    connect(client(server));
    StepVerifier.create(client(server).connect())
        .expectErrorSatisfies(e -> {
          assertReason(e, ConnectionException.Reason.REFUSED);
          assertThat(e).hasMessageContaining("MAX_CONNECTIONS");
        })
        .verify(WAIT);
    a.dispose();
    StepVerifier.create(a.onDispose()).verifyComplete();
    // Once the server has freed a's side, there is room again.
    RdmaConnection c = connectOnceThereIsRoom(server);
    StepVerifier.create(c.outbound().sendString(Mono.just("room")).thenMany(c.inbound().receiveString().take(1)))
        .expectNext("room").verifyComplete();
  }

  @Test
  void aConnectRequestWithoutHelloIsRefusedAndSaysWhy() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    ConnectionProvider cp = fixture().connections();
    var endpoint = cp.connect(new InetSocketAddress(fixture().host(), server.port()), new EndpointOptions(4, 4, 0, new byte[0]),
        WAIT).block(WAIT);
    try {
      StepVerifier.create(endpoint.establish())
          .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
          .verify(WAIT);
      assertThat(Protocol.Reject.decode(endpoint.remotePrivateData())).isEqualTo(Protocol.Reject.BAD_HELLO);
    } finally {
      endpoint.close();
    }
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("still")).thenMany(good.inbound().receiveString().take(1)))
        .expectNext("still").verifyComplete();
  }

  @Test
  void connectRequestsBeyondThePendingHandshakeLimitAreRefusedAndTheServerKeepsServing() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.MAX_PENDING_HANDSHAKES, 1)
        .option(RdmaOption.BUFFER_COUNT, 4).handle((in, out) -> out.send(in.receive())));
    AtomicInteger refused = new AtomicInteger();
    List<RdmaConnection> made = Flux.range(0, 16)
        .flatMap(i -> client(server).option(RdmaOption.BUFFER_COUNT, 4).connect()
            .onErrorResume(e -> {
              assertReason(e, ConnectionException.Reason.REFUSED);
              assertThat(e).hasMessageContaining("MAX_PENDING_HANDSHAKES");
              refused.incrementAndGet();
              return Mono.empty();
            }), 16)
        .collectList().block(WAIT);
    clients.addAll(made);
    assertThat(made.size() + refused.get()).isEqualTo(16);
    assertThat(made).isNotEmpty();
    RdmaConnection good = connectOnceThereIsRoom(server);
    StepVerifier.create(good.outbound().sendString(Mono.just("served")).thenMany(good.inbound().receiveString().take(1)))
        .expectNext("served").verifyComplete();
  }

  /**
   * Many connects race the server's dispose: each attempt either fails or yields a connection
   * that the dispose ends (the client sees the disconnect without disposing it), every connection
   * the server made is disposed, and the verbs objects return to their baseline (checked after
   * each test), so no connection escapes the dispose.
   */
  @Test
  void connectsRacingTheServersDisposeLeaveNoConnectionBehind() {
    int n = fixture().raceConnections();
    List<RdmaConnection> served = new java.util.concurrent.CopyOnWriteArrayList<>();
    Sinks.Empty<Void> firstServed = Sinks.empty();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_COUNT, 4)
        .option(RdmaOption.MAX_PENDING_HANDSHAKES, n)
        .doOnConnection(c -> {
          served.add(c);
          firstServed.tryEmitEmpty();
        })
        .handle((in, out) -> out.send(in.receive())));
    List<RdmaConnection> made = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicInteger failed = new AtomicInteger();
    Mono<Void> racing = Flux.range(0, n)
        .flatMap(i -> client(server).option(RdmaOption.BUFFER_COUNT, 4).connect()
            .doOnNext(made::add)
            .onErrorResume(e -> {
              failed.incrementAndGet();
              return Mono.empty();
            }), n)
        .then()
        .cache();
    racing.subscribe();
    StepVerifier.create(firstServed.asMono()).expectComplete().verify(WAIT);
    server.disposeNow(WAIT);
    StepVerifier.create(racing).expectComplete().verify(WAIT);
    clients.addAll(made);
    assertThat(made.size() + failed.get()).as("every attempt ended").isEqualTo(n);
    assertThat(made).as("at least the first connection was made").isNotEmpty();
    for (RdmaConnection c : made) {
      StepVerifier.create(c.onDispose()).as("a client connection the dispose should have ended")
          .expectComplete().verify(WAIT);
    }
    assertThat(served).as("server connections").allMatch(RdmaConnection::isDisposed);
    StepVerifier.create(server.onDispose()).expectComplete().verify(WAIT);
  }

  /** Connects, retrying while the server refuses (it frees a closed connection's side asynchronously). */
  RdmaConnection connectOnceThereIsRoom(DisposableRdmaServer server) {
    RdmaConnection c = Mono.defer(() -> client(server).connect())
        .retryWhen(reactor.util.retry.Retry.fixedDelay(100, Duration.ofMillis(100))
            .filter(e -> e instanceof ConnectionException ce && ce.reason() == ConnectionException.Reason.REFUSED))
        .block(WAIT);
    clients.add(c);
    return c;
  }
}
