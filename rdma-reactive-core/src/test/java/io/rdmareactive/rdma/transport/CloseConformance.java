package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.device.RdmaDevices;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/** Close and dispose, from either end and mid-stream, and what a disposed connection still answers. */
public abstract class CloseConformance extends TransportSuite {

  /**
   * A cancel that reaches connect() after its connection got through (a take over a flatMap on
   * it) leaves the connection to whoever holds it: it stays open and sends.
   */
  @Test
  void aCancelAfterTheConnectionWasHandedOverLeavesItOpen() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    AtomicReference<RdmaConnection> held = new AtomicReference<>();
    StepVerifier.create(client(server).connect().doOnNext(held::set)
            .flatMapMany(c -> c.outbound().sendString(Mono.just("x")).then().thenMany(c.inbound().receiveString()))
            .take(1))
        .expectNext("x").expectComplete().verify(WAIT);
    RdmaConnection c = held.get();
    clients.add(c);
    StepVerifier.create(c.outbound().sendString(Mono.just("y")).then()).expectComplete().verify(WAIT);
    assertThat(c.isDisposed()).as("a connection its holder did not dispose").isFalse();
  }

  /**
   * Binds cancelled before, while or after they bound, and bindNow calls that give up at any
   * moment, lose no server: each is either handed over (and disposed here) or disposed by the
   * library, so the port is free again afterwards. A guard: where a cancel meets a bind depends on
   * timing, so a run covers the moments it happens to meet.
   */
  @Test
  void bindsCancelledAtAnyMomentLoseNoServer() {
    DisposableRdmaServer first = server().bindNow();
    int port = first.port();
    first.disposeNow(WAIT);
    List<DisposableRdmaServer> handed = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 20; i++) {
      Disposable binding = server().port(port).bind().doOnNext(handed::add).subscribe(null, e -> { });
      LockSupport.parkNanos(i * 100_000L); // so that cancels land before, during and after a bind
      binding.dispose();
      handed.forEach(DisposableRdmaServer::dispose);
    }
    for (int i = 0; i < 20; i++) {
      try {
        handed.add(server().port(port).bindNow(Duration.ofNanos(1 + i * 100_000L)));
      } catch (IllegalStateException | ConnectionException gaveUpOrStillBound) {
        // expected for most: the wait gave up (the server, if bound later, is disposed), or the port
        // is still held by the one before, which is being disposed
      }
      handed.forEach(DisposableRdmaServer::dispose);
    }
    AtomicReference<DisposableRdmaServer> again = new AtomicReference<>();
    await(() -> { // a bind given up on but still under way holds the port a moment, then frees it
      handed.forEach(DisposableRdmaServer::dispose);
      try {
        again.set(server().port(port).bindNow(WAIT));
        return true;
      } catch (ConnectionException e) {
        return false;
      }
    });
    servers.add(again.get());
  }

  /**
   * connectNow calls that give up at any moment lose no connection: one that comes after its wait
   * gave up is disposed, so every connection the server saw ends (a lost one would stay open).
   * A guard, as the bind test above.
   */
  @Test
  void connectNowGivingUpAtAnyMomentLosesNoConnection() {
    List<RdmaConnection> served = new CopyOnWriteArrayList<>();
    DisposableRdmaServer server = bind(server().doOnConnection(served::add).handle((in, out) -> out.send(in.receive())));
    for (int i = 0; i < 20; i++) {
      try {
        RdmaConnection c = client(server).connectNow(Duration.ofNanos(1 + i * 500_000L));
        c.dispose();
      } catch (IllegalStateException | ConnectionException gaveUp) {
        // the wait gave up: the connection, if it comes later, is disposed
      }
    }
    await(() -> served.stream().allMatch(RdmaConnection::isDisposed));
  }

  @Test
  void cancellingMidStreamFreesEverything() {
    DisposableRdmaServer server = bind(server().handle((in, out) ->
        out.send(Flux.<byte[], Long>generate(() -> 0L, (i, sink) -> {
          sink.next(number(i));
          return i + 1;
        }))));
    RdmaClient client = client(server);
    StepVerifier.create(client.connect().flatMapMany(c -> c.inbound().receiveBytes()
            .doFinally(s -> c.dispose())), 0)
        .thenRequest(50)
        .expectNextCount(50)
        .thenCancel()
        .verify(WAIT);
    // closeAndCheckNothingLeaked: the client's connection and, once it noticed, the server's are freed.
  }

  @Test
  void peerDisposeCompletesInboundAndErrorsPendingOutbound() {
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().doOnConnection(serverSide::set)
        .handle((in, out) -> out.sendString(Mono.just("before"))));
    RdmaConnection c = connect(client(server));
    Mono<List<String>> inbound = c.inbound().receiveString().collectList().cache();
    inbound.subscribe();
    long start = System.nanoTime();
    // The server's handler completes after its one message, which disposes its side.
    StepVerifier.create(c.outbound().send(Flux.never()))
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.RESET))
        .verify(WAIT);
    StepVerifier.create(inbound).expectNext(List.of("before")).expectComplete().verify(WAIT);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
    StepVerifier.create(serverSide.get().onDispose()).expectComplete().verify(WAIT);
    StepVerifier.create(c.outbound().sendString(Mono.just("after")))
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.RESET))
        .verify(WAIT);
  }

  @Test
  void clientDisposeErrorsTheServersPendingOutbound() {
    Sinks.One<Throwable> serverSend = Sinks.one();
    Sinks.Empty<Void> sending = Sinks.empty();
    DisposableRdmaServer server = bind(server().handle((in, out) ->
        out.send(Flux.never().doOnSubscribe(s -> sending.tryEmitEmpty())).doOnError(serverSend::tryEmitValue)));
    RdmaConnection c = connect(client(server));
    StepVerifier.create(sending.asMono()).expectComplete().verify(WAIT);
    c.dispose();
    StepVerifier.create(serverSend.asMono())
        .assertNext(e -> assertReason(e, ConnectionException.Reason.RESET))
        .expectComplete()
        .verify(WAIT);
  }

  /**
   * A send's subscriber that throws from onError (a Reactive Streams violation) as its connection
   * is disposed: the send queued behind it still fails, and the connection still closes and frees
   * everything.
   */
  @Test
  void aSendSubscriberThrowingFromOnErrorKeepsNoOtherSendNorTheCloseWaiting() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> in.receive().doOnNext(RdmaMessage::release).then()));
    RdmaConnection c = connect(client(server));
    Sinks.Empty<Void> firstSubscribed = Sinks.empty();
    c.outbound().send(Flux.never().doOnSubscribe(s -> firstSubscribed.tryEmitEmpty()))
        .subscribe(new CoreSubscriber<Void>() {
          @Override
          public void onSubscribe(Subscription s) { }

          @Override
          public void onNext(Void v) { }

          @Override
          public void onError(Throwable t) {
            throw new IllegalStateException("a send's subscriber failing on purpose");
          }

          @Override
          public void onComplete() { }
        });
    StepVerifier.create(firstSubscribed.asMono()).expectComplete().verify(WAIT);
    AtomicReference<SignalType> second = new AtomicReference<>();
    c.outbound().send(Flux.never()).doFinally(second::set).subscribe(null, e -> { });
    LockSupport.parkNanos(200_000_000L); // the drain takes it in behind the first
    c.dispose();
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
    await(() -> second.get() != null);
    assertThat(second.get()).isEqualTo(SignalType.ON_ERROR);
  }

  @Test
  void cancellingAConnectInProgressFreesEverything() {
    ConnectionProvider cp = fixture().connections();
    try (Listener listener = cp.listen(new InetSocketAddress(fixture().host(), 0), new EndpointOptions(4, 4, 0, new byte[0]))) {
      StepVerifier.create(client(listener.boundAddress().getPort()).connect())
          .expectSubscription()
          .thenAwait(Duration.ofMillis(100))
          .thenCancel()
          .verify(WAIT);
    }
    // closeAndCheckNothingLeaked: the half-made endpoint and its buffers are gone.
  }

  @Test
  void clientDisposeCompletesTheServersInbound() {
    Sinks.One<Long> serverInbound = Sinks.one();
    DisposableRdmaServer server = bind(server().handle((in, out) ->
        in.receive().doOnNext(RdmaMessage::release).count().doOnNext(serverInbound::tryEmitValue).then()));
    RdmaConnection c = connect(client(server));
    StepVerifier.create(c.outbound().sendString(Flux.just("a", "b", "c"))).expectComplete().verify(WAIT);
    c.dispose();
    StepVerifier.create(serverInbound.asMono()).expectNext(3L).expectComplete().verify(WAIT);
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
  }

  @Test
  void useAfterDisposeFailsWithResourceClosed() {
    DisposableRdmaServer server = bind(server());
    RdmaConnection c = connect(client(server));
    c.dispose();
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
    assertThat(c.isDisposed()).isTrue();
    StepVerifier.create(c.outbound().sendString(Mono.just("late")))
        .expectError(ResourceClosedException.class).verify(WAIT);
    StepVerifier.create(c.inbound().receive()).expectError(ResourceClosedException.class).verify(WAIT);
  }

  @Test
  void connectionHooksComposeInsteadOfReplacing() {
    var calls = new CopyOnWriteArrayList<String>();
    DisposableRdmaServer server = bind(server()
        .doOnConnection(c -> calls.add("server-connected-1")).doOnConnection(c -> calls.add("server-connected-2"))
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection conn = client(server)
        .doOnConnected(c -> calls.add("client-connected-1")).doOnConnected(c -> calls.add("client-connected-2"))
        .doOnDisconnected(c -> calls.add("client-disconnected-1")).doOnDisconnected(c -> calls.add("client-disconnected-2"))
        .connectNow();
    StepVerifier.create(conn.outbound().sendString(Mono.just("hi")).thenMany(conn.inbound().receiveString().take(1)))
        .expectNext("hi").verifyComplete();
    conn.dispose();
    StepVerifier.create(conn.onDispose()).verifyComplete();
    assertThat(calls).containsSubsequence("client-connected-1", "client-connected-2")
        .containsSubsequence("client-disconnected-1", "client-disconnected-2")
        .contains("server-connected-1", "server-connected-2");
  }

  /**
   * A server sends to a peer that promises buffers and never posts a receive (its QP retries RNR:
   * the rogue's count, which the CM applies to both QPs, times the kernel CM's 655 ms timer, so
   * its sends stay unacknowledged for seconds, on a device and in memory); the server is disposed, and its
   * connection waits for those sends within a long close timeout; then the peer disconnects. The
   * pending sends fail with {@code RESET}, as for any disconnect by the peer, not with the close
   * timeout's {@code TIMED_OUT} (whose branch is also the one that logs the timeout warning), and
   * the dispose ends without waiting for the timeout.
   */
  @Test
  void aPeersDisconnectDuringADisposeFailsPendingSendsWithResetNotTimedOut() {
    Duration closeTimeout = Duration.ofMinutes(5); // longer than WAIT: the dispose must not wait for it
    Sinks.One<Throwable> sendFailed = Sinks.one();
    Sinks.Empty<Void> sending = Sinks.empty();
    DisposableRdmaServer server = server().option(RdmaOption.CLOSE_TIMEOUT, closeTimeout)
        .option(RdmaOption.RNR_RETRY, 7)
        .handle((in, out) -> out.sendString(Flux.range(0, 4).map(i -> "to a peer that never reads " + i)
                .doOnSubscribe(s -> sending.tryEmitEmpty()))
            .then().doOnError(sendFailed::tryEmitValue).onErrorResume(e -> Mono.empty()))
        .bindNow();
    try {
      RoguePeer rogue = RoguePeer.connect(fixture().connections(),
          new InetSocketAddress(fixture().host(), server.port()), 8, 0, WAIT);
      try {
        StepVerifier.create(sending.asMono()).expectComplete().verify(WAIT);
        server.dispose(); // the connection's dispose now waits for its unacknowledged sends
      } finally {
        rogue.close(); // the peer disconnects during that wait
      }
      StepVerifier.create(sendFailed.asMono())
          .assertNext(e -> {
            assertThat(e).isInstanceOf(ConnectionException.class);
            assertThat(((ConnectionException) e).reason()).as("reason of %s", e)
                .isEqualTo(ConnectionException.Reason.RESET);
            assertThat(e.getMessage()).doesNotContain("close timeout");
          })
          .expectComplete()
          .verify(WAIT);
      StepVerifier.create(server.onDispose()).as("the dispose ends without waiting for the close timeout")
          .expectComplete().verify(WAIT);
    } finally {
      server.disposeNow(WAIT);
    }
  }
}
