package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.ListenLimits;
import io.rdmareactive.rdma.spi.Listener;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * What a server and its listener refuse, and that they refuse it before they build anything for
 * the request (issue 24, findings 3 and 4): the hello, the limits and the retry counts are checked
 * on the connect request itself; requests nobody takes wait in a bounded queue with a deadline;
 * and a peer allowed to make the server's sends retry forever is found out by the keepalive.
 * "Built" is counted by the provider: endpoints its listeners made for connect requests
 * ({@link TransportFixture#endpointsBuiltForRequests()}).
 */
public abstract class AdmissionConformance extends TransportSuite {
  /** Endpoints built for connect requests so far, as the fixture counts them (skips where it cannot). */
  private long built() {
    long n = fixture().endpointsBuiltForRequests();
    org.junit.jupiter.api.Assumptions.assumeTrue(n >= 0,
        "skipped: " + fixture().provider() + "'s fixture cannot count the endpoints built for connect requests");
    return n;
  }

  private ConnectionProvider connections() {
    return fixture().connections();
  }

  private String host() {
    return fixture().host();
  }

  @Override
  protected RdmaServer server() {
    return super.server().option(RdmaOption.BUFFER_COUNT, 4);
  }

  @Override
  protected RdmaClient client(DisposableRdmaServer server) {
    return super.client(server).option(RdmaOption.BUFFER_COUNT, 4);
  }

  /** A raw endpoint (no hello) connecting to {@code address}: refused, with what the reject said. */
  private Protocol.Reject refusedRaw(InetSocketAddress address, EndpointOptions options) {
    Endpoint ep = connections().connect(address, options, WAIT).block(WAIT);
    try {
      StepVerifier.create(ep.establish())
          .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
          .verify(WAIT);
      return Protocol.Reject.decode(ep.remotePrivateData());
    } finally {
      ep.close();
    }
  }

  @Test
  void aRequestWithoutHelloIsRefusedBeforeAnythingIsBuiltForIt() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    InetSocketAddress address = new InetSocketAddress(host(), server.port());
    long before = built();
    for (int i = 0; i < 3; i++) {
      assertThat(refusedRaw(address, new EndpointOptions(4, 4, 0, new byte[0]))).isEqualTo(Protocol.Reject.BAD_HELLO);
    }
    assertThat(built() - before).as("endpoints built for 3 requests without a hello").isZero();
    connect(client(server));
    assertThat(built() - before).as("endpoints built for a good client").isEqualTo(1);
  }

  /**
   * A peer of another wire protocol version (a v2 hello, an earlier release's) is refused before
   * anything is built for it, with a reject of its own kind that carries this side's version, so
   * that both ends can name both.
   */
  @Test
  void aRequestOfAnotherProtocolVersionIsRefusedNamingTheVersions() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    InetSocketAddress address = new InetSocketAddress(host(), server.port());
    byte[] hello = new Protocol.Hello(RoguePeer.BUFFER, 8, 1 << 20).encode();
    for (int version : new int[] {1, 2, Protocol.VERSION + 1}) {
      hello[4] = (byte) version;
      Endpoint ep = connections().connect(address, new EndpointOptions(4, 4, 0, hello), WAIT).block(WAIT);
      try {
        StepVerifier.create(ep.establish())
            .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
            .verify(WAIT);
        assertThat(Protocol.Reject.decode(ep.remotePrivateData())).isEqualTo(Protocol.Reject.WRONG_VERSION);
        assertThat(Protocol.versionOf(ep.remotePrivateData())).isEqualTo(Protocol.VERSION);
      } finally {
        ep.close();
      }
    }
    assertThat(Protocol.versionMismatch(2)).isEqualTo("peer speaks wire protocol v2, this side v" + Protocol.VERSION);
    connect(client(server));
  }

  /**
   * A server of an earlier version refuses this side's hello as it refuses any it cannot read,
   * with a reject in its own version (played here by a listener whose requests all time out with
   * a v2 reject): the client's REFUSED names both versions rather than that server's reason.
   */
  @Test
  void aServerOfAnotherProtocolVersionIsNamedInTheClientsRefusal() {
    byte[] v2Reject = Protocol.Reject.BAD_HELLO.encode();
    v2Reject[4] = 2;
    try (Listener listener = connections().listen(new InetSocketAddress(host(), 0),
        new EndpointOptions(4, 4, 0, new byte[0]), new ListenLimits(1, Duration.ofMillis(200), v2Reject))) {
      StepVerifier.create(client(listener.boundAddress().getPort()).connect())
          .expectErrorSatisfies(e -> {
            assertReason(e, ConnectionException.Reason.REFUSED);
            assertThat(e).hasMessageContaining("peer speaks wire protocol v2, this side v" + Protocol.VERSION);
          })
          .verify(WAIT);
    }
  }

  @Test
  void requestsBeyondMaxConnectionsAreRefusedBeforeAnythingIsBuiltForThem() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.MAX_CONNECTIONS, 1)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection first = connect(client(server));
    long before = built();
    for (int i = 0; i < 3; i++) {
      StepVerifier.create(client(server).connect())
          .expectErrorSatisfies(e -> {
            assertReason(e, ConnectionException.Reason.REFUSED);
            assertThat(e).hasMessageContaining("MAX_CONNECTIONS");
          })
          .verify(WAIT);
    }
    assertThat(built() - before).as("endpoints built for 3 requests over the limit").isZero();
    StepVerifier.create(first.outbound().sendString(Mono.just("served")).thenMany(first.inbound().receiveString().take(1)))
        .expectNext("served").verifyComplete();
  }

  /**
   * The CM applies the initiator's retry counts to the server's QP: a request for more than the
   * server's RETRY_COUNT / RNR_RETRY (7, forever, here) is refused, the reject naming the options,
   * and nothing is built for it. A client of this library fails with a REFUSED that names them.
   */
  @Test
  void aRequestForMoreRetriesThanTheServerAllowsIsRefusedNamingTheOptions() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    InetSocketAddress address = new InetSocketAddress(host(), server.port());
    long before = built();
    assertThatThrownBy(() -> RoguePeer.connect(connections(), address, 8, 0, 7, 7, WAIT))
        .satisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED));
    StepVerifier.create(client(server).option(RdmaOption.RNR_RETRY, 7).connect())
        .expectErrorSatisfies(e -> {
          assertReason(e, ConnectionException.Reason.REFUSED);
          assertThat(e).hasMessageContaining("RNR_RETRY");
        })
        .verify(WAIT);
    assertThat(built() - before).as("endpoints built for requests asking for 7 retries").isZero();
    byte[] hello = new Protocol.Hello(RoguePeer.BUFFER, 8, 1 << 20).encode();
    assertThat(refusedRaw(address, new EndpointOptions(4, 4, 0, hello).withRetries(6, 7)))
        .isEqualTo(Protocol.Reject.TOO_MANY_RETRIES);
    assertThat(refusedRaw(address, new EndpointOptions(4, 4, 0, hello).withRetries(7, 6)))
        .isEqualTo(Protocol.Reject.TOO_MANY_RETRIES);
  }

  /**
   * The acceptance for finding 4: a rogue asking for retry 7 and RNR retry 7, which posts
   * no receives, against a server that allows both (so it is not refused) and sets a keepalive.
   * The server's send cannot complete (on hardware the QP retries RNR forever): the keepalive
   * sees sends outstanding without progress for an interval and fails the connection, and the
   * send fails, well within 60 s. Where the provider has no RNR retry the send fails at once.
   */
  @Test
  void aPeerAllowedToRetryForeverThatPostsNoReceivesFailsTheServersSendByTheKeepalive() {
    Sinks.One<Throwable> sendFailed = Sinks.one();
    Sinks.Empty<Void> sending = Sinks.empty();
    DisposableRdmaServer server = bind(server().option(RdmaOption.RETRY_COUNT, 7).option(RdmaOption.RNR_RETRY, 7)
        .option(RdmaOption.KEEPALIVE_INTERVAL, fixture().keepaliveInterval())
        .handle((in, out) -> out.sendString(Flux.range(0, 10).map(i -> "to a peer that never reads " + i)
                .doOnSubscribe(s -> sending.tryEmitEmpty()))
            .then().doOnError(sendFailed::tryEmitValue).onErrorResume(e -> Mono.empty())));
    try (RoguePeer rogue = RoguePeer.connect(connections(), new InetSocketAddress(host(), server.port()), 8, 0, 7, 7,
        WAIT)) {
      StepVerifier.create(sending.asMono()).expectComplete().verify(WAIT);
      long start = System.nanoTime();
      StepVerifier.create(sendFailed.asMono())
          .assertNext(e -> {
            assertReason(e, ConnectionException.Reason.RESET);
            if (fixture().retriesReceiverNotReady()) {
              assertThat(e).hasMessageContaining("keepalive");
            }
          })
          .expectComplete()
          .verify(Duration.ofSeconds(60));
      System.out.println(fixture().provider() + ": a send to a peer retrying forever failed after "
          + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms (keepalive " + fixture().keepaliveInterval() + ")");
    }
  }

  /**
   * Requests nobody takes wait in the listener's queue: past its cap they are refused at once,
   * past its deadline when their time is up, each with the limits' reject data, and nothing is
   * built for any of them.
   */
  @Test
  void aListenerRefusesRequestsBeyondItsBacklogAndPastTheirDeadline() {
    byte[] busy = Protocol.Reject.TOO_MANY_HANDSHAKES.encode();
    long before = built();
    try (Listener listener = connections().listen(new InetSocketAddress(host(), 0),
        new EndpointOptions(4, 4, 0, new byte[0]), new ListenLimits(2, Duration.ofSeconds(2), busy))) {
      List<Endpoint> waiting = new ArrayList<>();
      try {
        List<Mono<Void>> attempts = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
          Endpoint ep = connections().connect(listener.boundAddress(), new EndpointOptions(4, 4, 0, new byte[0]), WAIT)
              .block(WAIT);
          waiting.add(ep);
          Mono<Void> attempt = ep.establish().cache();
          attempt.subscribe(null, e -> {});
          attempts.add(attempt);
        }
        long start = System.nanoTime();
        // Both wait (nobody subscribed); a third finds the queue full.
        assertThat(refusedRaw(listener.boundAddress(), new EndpointOptions(4, 4, 0, new byte[0])))
            .isEqualTo(Protocol.Reject.TOO_MANY_HANDSHAKES);
        for (int i = 0; i < 2; i++) {
          StepVerifier.create(attempts.get(i))
              .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
              .verify(WAIT);
          assertThat(Protocol.Reject.decode(waiting.get(i).remotePrivateData()))
              .isEqualTo(Protocol.Reject.TOO_MANY_HANDSHAKES);
        }
        System.out.println(fixture().provider() + ": requests waiting past a 2 s deadline refused after "
            + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
      } finally {
        waiting.forEach(Endpoint::close);
      }
    }
    assertThat(built() - before).as("endpoints built for requests nobody took").isZero();
  }

  /**
   * Without demand, a listener with the default limits still answers a request: refused after
   * {@link ListenLimits#DEFAULTS}' 10 s deadline, not left to the initiator's own timeout.
   */
  @Test
  void aRequestNobodyTakesIsRefusedAfterTheDefaultDeadline() {
    try (Listener listener = connections().listen(new InetSocketAddress(host(), 0),
        new EndpointOptions(4, 4, 0, new byte[0]))) {
      Endpoint ep = connections().connect(listener.boundAddress(), new EndpointOptions(4, 4, 0, new byte[0]), WAIT)
          .block(WAIT);
      try {
        StepVerifier.create(ep.establish())
            .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
            .verify(WAIT);
      } finally {
        ep.close();
      }
    }
  }
}
