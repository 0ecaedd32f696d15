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

/** Liveness: every wait has a deadline, close timers run on the loop, and keepalives find vanished peers. */
public abstract class LivenessConformance extends TransportSuite {

  /**
   * A peer that promises buffers and never posts a receive, against a server that sends to it
   * with RNR retries set to forever: the server's dispose still ends within the close timeout
   * (plus the flush), and the handler's send fails with TIMED_OUT. Where the provider has no RNR
   * retry, the send fails at once (RESET) and the dispose is prompt anyway.
   */
  @Test
  void aPeerThatNeverPostsReceivesCannotHoldTheServersDisposePastTheCloseTimeout() {
    Duration closeTimeout = Duration.ofSeconds(2);
    Sinks.One<Throwable> sendFailed = Sinks.one();
    Sinks.Empty<Void> sending = Sinks.empty();
    DisposableRdmaServer server = bind(server().option(RdmaOption.CLOSE_TIMEOUT, closeTimeout)
        .option(RdmaOption.RNR_RETRY, 7)
        .handle((in, out) -> out.sendString(Flux.range(0, 10).map(i -> "to a peer that never reads " + i)
                .doOnSubscribe(s -> sending.tryEmitEmpty()))
            .then().doOnError(sendFailed::tryEmitValue).onErrorResume(e -> Mono.empty())));
    try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(), server.port()), 8, 0,
        WAIT)) {
      StepVerifier.create(sending.asMono()).expectComplete().verify(WAIT);
      long start = System.nanoTime();
      server.disposeNow(WAIT);
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      StepVerifier.create(sendFailed.asMono())
          .assertNext(e -> assertReason(e, fixture().retriesReceiverNotReady() ? ConnectionException.Reason.TIMED_OUT
              : ConnectionException.Reason.RESET))
          .expectComplete()
          .verify(WAIT);
      if (fixture().retriesReceiverNotReady()) {
        assertThat(took).as("dispose waited for the close timeout, then went on")
            .isGreaterThanOrEqualTo(closeTimeout.minusMillis(200)).isLessThan(WAIT);
      }
    }
  }

  /**
   * Every close schedules its flush deadline (and may retry freeing): that work goes to the
   * connection's loop, never to a Reactor scheduler such as parallel, and the close completes
   * there or on the caller, not on a parallel-* thread.
   */
  @Test
  void closeTimersRunOnTheConnectionsLoopNotOnReactorSchedulers() {
    List<String> scheduledByTransport = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<String> closedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
    reactor.core.scheduler.Schedulers.onScheduleHook("close-timers", task -> {
      for (StackTraceElement e : new Throwable().getStackTrace()) {
        if (e.getClassName().startsWith(ConnectionCloser.class.getName())
            || e.getClassName().startsWith(ConnectionOperations.class.getName())) { // the connection engine
          scheduledByTransport.add(Thread.currentThread().getName() + " at " + e);
          break;
        }
      }
      return task;
    });
    try {
      DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
      for (int i = 0; i < 5; i++) {
        RdmaConnection c = client(server).connectNow();
        StepVerifier.create(c.outbound().sendString(Mono.just("x" + i)).thenMany(c.inbound().receiveString().take(1)))
            .expectNext("x" + i).verifyComplete();
        c.onDispose().doOnSuccess(v -> closedOn.add(Thread.currentThread().getName())).subscribe();
        c.dispose();
        c.onDispose().block(WAIT);
      }
    } finally {
      reactor.core.scheduler.Schedulers.resetOnScheduleHook("close-timers");
    }
    assertThat(scheduledByTransport).as("transport work scheduled on a Reactor scheduler").isEmpty();
    assertThat(closedOn).hasSize(5).noneMatch(name -> name.startsWith("parallel-"));
  }

  /**
   * A peer that vanishes without a disconnect (its QP in ERROR, as a dead host or path looks)
   * leaves an idle connection that only a keepalive can find dead: the victim sends nothing and
   * reads nothing, yet its connection fails with a RESET that names the keepalive, and is freed.
   */
  @Test
  void anIdleConnectionWhosePeerVanishedFailsByItsKeepalive() {
    Sinks.One<Throwable> victimSaw = Sinks.one();
    Sinks.Empty<Void> subscribed = Sinks.empty();
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    // The probe's retries are the connecting side's RETRY_COUNT (the rogue's 3): an accepting QP
    // takes its count from the connect request. At 7 rxe would retry forever.
    DisposableRdmaServer server = bind(server().option(RdmaOption.KEEPALIVE_INTERVAL, fixture().keepaliveInterval())
        .doOnConnection(victim::set)
        .handle((in, out) -> {
          // No demand: no credit update goes to the peer, so only a probe can find it gone.
          in.receive().subscribe(new reactor.core.publisher.BaseSubscriber<RdmaMessage>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
              subscribed.tryEmitEmpty();
            }

            @Override
            protected void hookOnError(Throwable e) {
              victimSaw.tryEmitValue(e);
            }
          });
          return Mono.never();
        }));
    try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(), server.port()), 8, WAIT)) {
      StepVerifier.create(subscribed.asMono()).expectComplete().verify(WAIT);
      rogue.vanish();
      long start = System.nanoTime();
      try {
        StepVerifier.create(victimSaw.asMono())
            .assertNext(e -> {
              assertReason(e, ConnectionException.Reason.RESET);
              assertThat(e).hasMessageContaining("keepalive");
            })
            .expectComplete()
            .verify(WAIT);
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "; the victim's statistics: " + victim.get().statistics(), e);
      }
      System.out.println("keepalive: a vanished peer noticed after "
          + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms (interval " + fixture().keepaliveInterval() + ")");
      StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
    }
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
  }

  /**
   * Keepalives on both ends of a connection idle for many intervals cost nothing visible: no
   * error, no message, no protocol violation, and it still echoes afterwards.
   */
  @Test
  void keepalivesKeepAnIdleConnectionToALivePeerUp() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.KEEPALIVE_INTERVAL, fixture().keepaliveInterval())
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.KEEPALIVE_INTERVAL, fixture().keepaliveInterval()));
    StepVerifier.create(c.outbound().sendString(Mono.just("before")).thenMany(c.inbound().receiveString().take(2)))
        .expectNext("before")
        .thenAwait(fixture().keepaliveInterval().multipliedBy(6))
        .then(() -> {
          assertThat(c.isDisposed()).as("disposed while idle with keepalives").isFalse();
          c.outbound().sendString(Mono.just("after")).subscribe();
        })
        .expectNext("after")
        .expectComplete()
        .verify(WAIT);
    assertThat(c.statistics().creditViolations()).isZero();
    assertThat(c.statistics().messagesReceived()).as("the probes are no messages").isEqualTo(2);
  }
}
