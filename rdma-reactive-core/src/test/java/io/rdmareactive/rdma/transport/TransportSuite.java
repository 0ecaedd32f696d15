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

/**
 * What every transport conformance class shares: its provider's {@link TransportFixture}, servers
 * and clients that are closed after each test, and the check that each test ends with as many live
 * verbs objects as it started with.
 */
public abstract class TransportSuite {
  /** The provider under test and its tunings. */
  protected abstract TransportFixture fixture();

  protected static final Duration WAIT = Duration.ofSeconds(30);

  protected final List<DisposableRdmaServer> servers = new ArrayList<>();
  protected final List<RdmaConnection> clients = new ArrayList<>();

  protected RdmaServer server() {
    return RdmaServer.create().host(fixture().host()).port(0).option(RdmaOption.PROVIDER, fixture().provider())
        .option(RdmaOption.SHARED_RECEIVE_QUEUE, SHARED_RECEIVE_QUEUE)
        .option(RdmaOption.LOOP_PRIVATE_CONNECTIONS, LOOP_PRIVATE_CONNECTIONS);
  }

  /** The suites' SHARED_RECEIVE_QUEUE: RDMA_SHARED_RECEIVE_QUEUE, else the option's default. */
  protected static final boolean SHARED_RECEIVE_QUEUE = io.rdmareactive.rdma.conformance.TestSettings.sharedReceiveQueue()
      .orElse(RdmaOption.SHARED_RECEIVE_QUEUE.defaultValue());

  /** The suites' LOOP_PRIVATE_CONNECTIONS: RDMA_LOOP_PRIVATE_CONNECTIONS, else the option's default. */
  protected static final int LOOP_PRIVATE_CONNECTIONS = io.rdmareactive.rdma.conformance.TestSettings
      .loopPrivateConnections().orElse(RdmaOption.LOOP_PRIVATE_CONNECTIONS.defaultValue());

  protected RdmaClient client(DisposableRdmaServer server) {
    return client(server.port());
  }

  protected RdmaClient client(int port) {
    return RdmaClient.create().host(fixture().host()).port(port).option(RdmaOption.PROVIDER, fixture().provider())
        .option(RdmaOption.SHARED_RECEIVE_QUEUE, SHARED_RECEIVE_QUEUE)
        .option(RdmaOption.LOOP_PRIVATE_CONNECTIONS, LOOP_PRIVATE_CONNECTIONS).connectTimeout(Duration.ofSeconds(10));
  }

  protected DisposableRdmaServer bind(RdmaServer server) {
    DisposableRdmaServer s = server.bindNow();
    servers.add(s);
    return s;
  }

  protected RdmaConnection connect(RdmaClient client) {
    RdmaConnection c = client.connectNow();
    clients.add(c);
    return c;
  }

  @RegisterExtension
  final LeakCheck leakCheck = LeakCheck.settling(() -> fixture().liveResources(), WAIT);

  @AfterEach
  void closeAndCheckNothingLeaked() {
    for (RdmaConnection c : clients) {
      c.dispose();
      c.onDispose().block(WAIT);
    }
    for (DisposableRdmaServer s : servers) {
      s.disposeNow(WAIT);
    }
  }

  /**
   * On rxe a PD pinned past the last CM id means the last reference librdmacm dropped was a
   * device list's, which leaves librdmacm's own per-device PD allocated; the next id reuses it
   * and frees it with its last put. One more connection shows it is reclaimed, not leaked.
   */
  protected void oneMoreConnection() {
    DisposableRdmaServer after = bind(server().handle((in, out) -> out.send(in.receive())));
    RdmaConnection next = client(after).connectNow(WAIT);
    next.dispose();
    next.onDispose().block(WAIT);
  }

  /** Waits, at most {@link #WAIT}, for {@code condition}. */
  static void await(java.util.function.BooleanSupplier condition) {
    assertThat(waitFor(condition)).as("timed out waiting").isTrue();
  }

  /** Waits, at most {@link #WAIT}, for {@code condition}; whether it holds (the caller asserts what it waited for). */
  static boolean waitFor(java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() >= deadline) {
        return false;
      }
      LockSupport.parkNanos(1_000_000);
    }
    return true;
  }

  static byte[] random(int size, long seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  static byte[] number(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  static void assertReason(Throwable e, ConnectionException.Reason reason) {
    assertThat(e).isInstanceOf(ConnectionException.class);
    assertThat(((ConnectionException) e).reason()).as("reason of %s", e).isEqualTo(reason);
  }

  static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  /**
   * The heap in use after a full GC, the least of a few samples: the loops and the test's own
   * threads allocate meanwhile, and the least is the closest to what is retained.
   */
  static long retainedHeap() {
    java.lang.management.MemoryMXBean memory = java.lang.management.ManagementFactory.getMemoryMXBean();
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      least = Math.min(least, memory.getHeapMemoryUsage().getUsed());
    }
    return least;
  }

  static final long MiB = 1 << 20;

  static Object poll(java.util.concurrent.BlockingQueue<Object> q) {
    try {
      return q.poll(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  AtomicReference<RdmaConnection> rogueBreaksTheProtocol(java.util.function.Consumer<RoguePeer> act, String violation) {
    return rogueBreaksTheProtocol(8192, act, violation);
  }

  /**
   * A rogue peer connects to a server whose handler reads (its MAX_MESSAGE_SIZE {@code
   * maxMessage}), breaks the protocol as {@code act} does, and must lose its connection with a
   * typed error that names the violation; the server counts it and still serves a good client;
   * nothing leaks (checked after each test). Returns the victim's connection (the rogue's, not
   * the good client's).
   */
  AtomicReference<RdmaConnection> rogueBreaksTheProtocol(int maxMessage, java.util.function.Consumer<RoguePeer> act, String violation) {
    Sinks.One<Throwable> victimSaw = Sinks.one();
    Sinks.Empty<Void> reading = Sinks.empty();
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.MAX_MESSAGE_SIZE, maxMessage)
        // the rogue's connection only: the good client's, at the end, must not take its place
        .doOnConnection(c -> victim.compareAndSet(null, c))
        .handle((in, out) -> in.receive().doOnSubscribe(s -> reading.tryEmitEmpty()).doOnNext(RdmaMessage::release)
            .doOnError(victimSaw::tryEmitValue).onErrorResume(e -> Mono.empty()).then()));
    try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(), server.port()), 8, WAIT)) {
      // Misbehave once the victim's handler reads: its receive() then carries the typed error.
      StepVerifier.create(reading.asMono()).expectComplete().verify(WAIT);
      // ... and has posted receives for its demand and granted them: otherwise the rogue's sends
      // beyond the reserve could meet "receiver not ready" instead of the check under test. (On
      // the loop's shared receive queue every grant is backed, with a headroom, and the victim
      // lends beyond its reserve only once the rogue sends: nothing to wait for.)
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (!SHARED_RECEIVE_QUEUE && victim.get().statistics().creditUpdatesSent() == 0
          && System.nanoTime() < deadline) {
        LockSupport.parkNanos(1_000_000);
      }
      act.accept(rogue);
      try {
        StepVerifier.create(victimSaw.asMono())
            .assertNext(e -> assertThat(e).isInstanceOf(io.rdmareactive.rdma.ProtocolViolationException.class)
                .hasMessageContaining("broke the protocol").hasMessageContaining(violation))
            .expectComplete()
            .verify(WAIT);
      } catch (AssertionError e) {
        // What a failure on a loaded machine needs to be told apart: did the victim close, and what did it count?
        RdmaConnection v = victim.get();
        throw new AssertionError(e.getMessage() + "; the victim " + v + (v.isDisposed() ? " closed" : " did not close")
            + ", its statistics: " + v.statistics(), e);
      }
      StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
      assertThat(victim.get().statistics().creditViolations()).isEqualTo(1);
    }
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
    return victim;
  }
}
