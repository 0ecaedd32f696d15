package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A connection on its loop. The loop variants: a loop per connection, and loops that stop when
 * disposed. What a failure inside one connection's drain costs: that connection, closed and
 * freed through the normal close (verbs objects, buffers, the peer disconnected), and nothing else. Its loop and
 * the other connections on it keep running. The failures come from user callbacks, the way an
 * application would raise them: a handler or a send's subscriber throwing, an
 * {@link OutOfMemoryError} included. Also: a closed connection is not kept reachable by the
 * timers it cancelled. Provider-neutral: a nested suite of {@link TransportConformance}.
 */
public abstract class ConnectionLoopConformance extends TransportSuite {
  private final List<RdmaLoopResources> loops = new ArrayList<>();

  /** Runs before the suite's own close: the loops stop once the connections and servers on them are gone. */
  @AfterEach
  void stopLoops() {
    for (RdmaConnection c : clients) {
      c.dispose();
      c.onDispose().block(WAIT);
    }
    clients.clear();
    for (DisposableRdmaServer s : servers) {
      s.disposeNow(WAIT);
    }
    servers.clear();
    for (RdmaLoopResources l : loops) {
      l.disposeLater().block(WAIT);
    }
  }

  private RdmaLoopResources oneLoop(String name) {
    RdmaLoopResources l = RdmaLoopResources.create(name, 1);
    loops.add(l);
    return l;
  }

  /** A connection's echoes: one subscriber to its inbound for the whole test, as receive() allows. */
  private static final class Echoes {
    private final RdmaConnection connection;
    private final BlockingQueue<String> received = new LinkedBlockingQueue<>();

    Echoes(RdmaConnection connection) {
      this.connection = connection;
      connection.inbound().receiveString().subscribe(received::add, e -> {});
    }

    /** Sends {@code text} and waits for it to come back. */
    void echo(String text) {
      connection.outbound().sendString(Mono.just(text)).then().block(WAIT);
      try {
        assertThat(received.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the echo of %s", text).isEqualTo(text);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  /** The thread named {@code name} has ended (it may outlive its loop's stop signal by a moment). */
  private static void awaitNoThread(String name) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (threads(name) > 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(10_000_000);
    }
    assertThat(threads(name)).as("threads named %s", name).isZero();
  }

  private static long threads(String name) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name) && t.isAlive()).count();
  }

  /** An echo server whose handler throws {@code new OutOfMemoryError("test")} at the message "boom". */
  @Test
  void anOutOfMemoryErrorInAHandlerClosesAndFreesThatConnectionOnlyAndItsLoopKeepsServing() {
    List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();
    DisposableRdmaServer server = bind(server().runOn(oneLoop("contain-h")).doOnConnection(accepted::add)
        .handle((in, out) -> out.send(in.receive().doOnNext(m -> {
          if (m.toString(java.nio.charset.StandardCharsets.UTF_8).equals("boom")) {
            throw new OutOfMemoryError("test");
          }
        }))));
    Echoes neighbour = new Echoes(connect(client(server)));
    neighbour.echo("before");
    RdmaConnection victim = connect(client(server));
    new Echoes(victim).echo("fine");
    assertThat(accepted).hasSize(2);

    victim.outbound().sendString(Mono.just("boom")).subscribe(null, e -> {});
    StepVerifier.create(accepted.get(1).onDispose()).as("the failed connection closes").expectComplete().verify(WAIT);
    StepVerifier.create(victim.onDispose()).as("its peer is disconnected").expectComplete().verify(WAIT);
    assertThat(accepted.get(0).isDisposed()).as("the neighbour on the same loop").isFalse();
    neighbour.echo("after");
    assertThat(threads("contain-h-1")).as("the loop's thread").isEqualTo(1);
  }

  /** A send's subscriber that throws {@code new OutOfMemoryError("test")} when its send completes. */
  @Test
  void anOutOfMemoryErrorInASendCompletionCallbackClosesAndFreesThatConnectionOnly() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    RdmaLoopResources loop = oneLoop("contain-s");
    RdmaConnection neighbour = connect(client(server).runOn(loop));
    RdmaConnection victim = connect(client(server).runOn(loop));
    Echoes neighbourEchoes = new Echoes(neighbour);
    neighbourEchoes.echo("before");
    new Echoes(victim).echo("fine");

    victim.outbound().sendString(Mono.just("x")).then()
        .doOnSuccess(v -> {
          throw new OutOfMemoryError("test");
        })
        .subscribe(null, e -> {});
    StepVerifier.create(victim.onDispose()).as("the failed connection closes").expectComplete().verify(WAIT);
    assertThat(neighbour.isDisposed()).isFalse();
    neighbourEchoes.echo("after");
    assertThat(threads("contain-s-1")).as("the loop's thread").isEqualTo(1);
  }

  /**
   * A subscriber breaking the Reactive Streams rules, whose {@code onNext} throws (and whose
   * {@code onError} throws too): its connection is closed and freed, and the peer disconnected,
   * not marked closed with everything left behind.
   */
  @Test
  void aSubscriberThatThrowsFromEverySignalCostsItsConnectionWhichIsFreed() {
    List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();
    DisposableRdmaServer server = bind(server().runOn(oneLoop("contain-t")).doOnConnection(accepted::add)
        .handle((in, out) -> {
          in.receive().subscribe(new CoreSubscriber<RdmaMessage>() {
            @Override
            public void onSubscribe(Subscription s) {
              s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(RdmaMessage m) {
              throw new IllegalStateException("a subscriber failing on purpose");
            }

            @Override
            public void onError(Throwable t) {
              throw new IllegalStateException("a subscriber failing on purpose, again");
            }

            @Override
            public void onComplete() {}
          });
          return Mono.never();
        }));
    RdmaConnection victim = connect(client(server));
    victim.outbound().sendString(Mono.just("x")).subscribe(null, e -> {});
    StepVerifier.create(victim.onDispose()).as("the peer is disconnected").expectComplete().verify(WAIT);
    StepVerifier.create(accepted.getFirst().onDispose()).expectComplete().verify(WAIT);
    RdmaConnection next = connect(client(server));
    assertThat(next.isDisposed()).isFalse();
  }

  /**
   * Thread per connection is a loop of its own per connection: the connection's completions,
   * drains and timers run on it, and it stops when the connection is freed; disposeLater
   * completes once it has.
   */
  @Test
  void aConnectionOnALoopOfItsOwnRunsThereAndTheLoopStopsWithIt() {
    RdmaLoopResources perConnection = RdmaLoopResources.threadPerConnection(io.rdmareactive.rdma.verbs.IdleStrategy.backoff());
    java.util.Set<String> serverThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();
    DisposableRdmaServer server = bind(server().runOn(perConnection)
        .handle((in, out) -> out.send(in.receive().doOnNext(m -> serverThreads.add(Thread.currentThread().getName())))));
    RdmaConnection c = client(server).runOn(perConnection).option(RdmaOption.KEEPALIVE_INTERVAL, Duration.ofMillis(200))
        .connectNow();
    java.util.Set<String> clientThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();
    StepVerifier.create(c.outbound().sendString(Mono.just("own")).then()
            .thenMany(c.inbound().receiveString().doOnNext(m -> clientThreads.add(Thread.currentThread().getName())).take(1)))
        .expectNext("own")
        .expectComplete()
        .verify(WAIT);
    assertThat(perConnection.channelCount()).as("a channel per connection, both ends").isEqualTo(2);
    assertThat(serverThreads).singleElement().asString().startsWith("rdma-poll-");
    assertThat(clientThreads).singleElement().asString().startsWith("rdma-poll-").isNotEqualTo(serverThreads.iterator().next());
    LockSupport.parkNanos(Duration.ofMillis(600).toNanos()); // keepalive ticks on the connection's own loop
    assertThat(c.isDisposed()).isFalse();
    c.dispose();
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
    server.disposeNow(WAIT);
    servers.remove(server);
    StepVerifier.create(perConnection.disposeLater()).expectComplete().verify(WAIT);
    assertThat(perConnection.channelCount()).isZero();
    awaitNoThread(clientThreads.iterator().next());
    awaitNoThread(serverThreads.iterator().next());
  }

  /** Disposing loops that still serve a connection stops nothing until it goes; then disposeLater completes. */
  @Test
  void disposeLaterCompletesWhenTheLastConnectionHasGoneAndTheLoopsHaveStopped() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    RdmaLoopResources loop = RdmaLoopResources.create("contain-d", 2);
    RdmaConnection c = client(server).runOn(loop).connectNow();
    new Echoes(c).echo("up");
    reactor.core.publisher.Sinks.Empty<Void> stopped = reactor.core.publisher.Sinks.empty();
    loop.disposeLater().subscribe(null, stopped::tryEmitError, stopped::tryEmitEmpty);
    assertThatThrownBy(() -> client(server).runOn(loop).connectNow()).hasMessageContaining("disposed");
    assertThat(threads("contain-d-1") + threads("contain-d-2")).as("the loop still serving").isEqualTo(1);
    c.dispose();
    StepVerifier.create(stopped.asMono()).expectComplete().verify(WAIT);
    awaitNoThread("contain-d-1");
    awaitNoThread("contain-d-2");
    assertThat(loop.channelCount()).isZero();
  }

  /** A keepalive timer a day away, cancelled by the close, must not keep the connection reachable. */
  @Test
  void aClosedConnectionIsNotKeptReachableByTheTimersItCancelled() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    RdmaLoopResources loop = oneLoop("contain-k");
    Echoes neighbour = new Echoes(connect(client(server).runOn(loop))); // keeps the loop running
    WeakReference<RdmaConnection> closed = closedConnectionWithADayLongKeepalive(client(server).runOn(loop));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (closed.get() != null && System.nanoTime() < deadline) {
      System.gc();
      LockSupport.parkNanos(50_000_000);
    }
    assertThat(closed.get()).as("the closed connection, a day before its keepalive's deadline").isNull();
    neighbour.echo("still here");
  }

  private static WeakReference<RdmaConnection> closedConnectionWithADayLongKeepalive(RdmaClient client) {
    RdmaConnection c = client.option(RdmaOption.KEEPALIVE_INTERVAL, Duration.ofDays(1)).connectNow();
    new Echoes(c).echo("once");
    c.dispose();
    c.onDispose().block(WAIT);
    return new WeakReference<>(c);
  }
}
