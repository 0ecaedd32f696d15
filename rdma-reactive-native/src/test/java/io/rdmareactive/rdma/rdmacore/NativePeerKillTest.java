package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaInbound;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaOutbound;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * A peer process killed with SIGKILL mid-stream ({@link TransportPeer} in a second JVM), as client
 * and as server: the survivor's inbound terminates and its pending outbound fails promptly, never
 * hangs, and every verbs object of the connection is freed, the dead process's included (the
 * kernel destroys its QP and cm_id, which disconnects the survivor; failing that, the survivor's
 * RC retries end in an error completion). Soft-RoCE VM (rxe0, 10.0.0.1).
 */
@Tag("native")
class NativePeerKillTest {
  @RegisterExtension
  final LeakCheck leakCheck = NativeTestSupport.settlingLeakCheck();

  private static final String HOST = NativeConnectionProviderTest.HOST;
  private static final Duration WAIT = Duration.ofSeconds(30);
  /** A JVM starting under TCG takes a while. */
  private static final Duration PEER_START = Duration.ofSeconds(120);
  /** Disconnect or RC retry exhaustion (timeout 14 x retry 7, a few seconds), with TCG's slowness on top. */
  private static final Duration PROMPT = Duration.ofSeconds(60);
  private static final long FLOWING = 200;

  private Process peer;
  private final BlockingQueue<String> peerOutput = new LinkedBlockingQueue<>();

  @BeforeAll
  static void warmUp() {
    NativeTestSupport.deviceName(); // skips, saying why, where there is no device
    NativeConnectionProviderTest.openCmDeviceContext();
  }

  /** Before the leak check looks: a dead peer's objects count as ours until the kernel frees them. */
  @AfterEach
  void killThePeer() throws InterruptedException {
    if (peer != null && peer.isAlive()) {
      peer.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void aKilledClientEndsTheServersConnection() throws Exception {
    AtomicLong received = new AtomicLong();
    Sinks.One<SignalType> inboundEnd = Sinks.one();
    Sinks.One<Throwable> outboundError = Sinks.one();
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    DisposableRdmaServer server = RdmaServer.create().host(HOST).port(0)
        .option(RdmaOption.PROVIDER, NativeProvider.NAME)
        .doOnConnection(serverSide::set)
        .handle((in, out) -> survive(in, out, received, inboundEnd, outboundError))
        .bindNow();
    try {
      peer = startPeer("client", HOST, Integer.toString(server.port()));
      awaitLine("CONNECTED");
      awaitFlowing(received);
      RdmaConnection conn = serverSide.get();
      assertThat(conn).isNotNull();
      Duration took = kill(inboundEnd, outboundError);
      System.out.printf("killed client: the server's connection ended %d ms after SIGKILL; %s%n", took.toMillis(),
          conn.statistics());
      StepVerifier.create(conn.onDispose()).expectComplete().verify(WAIT);
    } finally {
      server.disposeNow(WAIT);
    }
  }

  @Test
  void aKilledServerEndsTheClientsConnection() throws Exception {
    peer = startPeer("server", HOST);
    String listening = awaitLine("LISTENING ");
    int port = Integer.parseInt(listening.substring("LISTENING ".length()).trim());
    RdmaConnection conn = RdmaClient.create().host(HOST).port(port).option(RdmaOption.PROVIDER, NativeProvider.NAME)
        .connectTimeout(Duration.ofSeconds(30)).connectNow();
    try {
      AtomicLong received = new AtomicLong();
      Sinks.One<SignalType> inboundEnd = Sinks.one();
      Sinks.One<Throwable> outboundError = Sinks.one();
      survive(conn.inbound(), conn.outbound(), received, inboundEnd, outboundError).subscribe(null, e -> {});
      awaitFlowing(received);
      Duration took = kill(inboundEnd, outboundError);
      System.out.printf("killed server: the client's connection ended %d ms after SIGKILL; %s%n", took.toMillis(),
          conn.statistics());
      // Nobody disposed it: the peer's end did.
      StepVerifier.create(conn.onDispose()).expectComplete().verify(WAIT);
    } finally {
      conn.dispose();
      conn.onDispose().block(WAIT);
    }
  }

  /** The survivor: streams numbers out and counts what comes in, recording how each side ends. */
  private static Mono<Void> survive(RdmaInbound in, RdmaOutbound out, AtomicLong received,
      Sinks.One<SignalType> inboundEnd, Sinks.One<Throwable> outboundError) {
    Mono<Void> sending = out.send(Flux.<byte[], Long>generate(() -> 0L, (i, sink) -> {
      sink.next(ByteBuffer.allocate(8).putLong(i).array());
      return i + 1;
    })).doOnError(outboundError::tryEmitValue).onErrorComplete();
    Mono<Void> receiving = in.receive().doOnNext(m -> {
      received.incrementAndGet();
      m.release();
    }).doFinally(inboundEnd::tryEmitValue).onErrorComplete().then();
    return Mono.when(sending, receiving);
  }

  /** SIGKILLs the peer once data flows; the survivor's inbound and outbound must end within {@link #PROMPT}. */
  private Duration kill(Sinks.One<SignalType> inboundEnd, Sinks.One<Throwable> outboundError) throws Exception {
    long start = System.nanoTime();
    peer.destroyForcibly();
    assertThat(peer.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the peer died").isTrue();
    assertThat(peer.exitValue()).as("killed by SIGKILL").isEqualTo(128 + 9);
    StepVerifier.create(inboundEnd.asMono())
        .assertNext(s -> assertThat(s).as("inbound ends").isIn(SignalType.ON_COMPLETE, SignalType.ON_ERROR))
        .expectComplete()
        .verify(PROMPT);
    // The stream is endless: it can only end with an error.
    StepVerifier.create(outboundError.asMono())
        .assertNext(e -> assertThat(e).as("pending outbound fails").isNotNull())
        .expectComplete()
        .verify(PROMPT);
    return Duration.ofNanos(System.nanoTime() - start);
  }

  private static void awaitFlowing(AtomicLong received) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (received.get() < FLOWING && System.nanoTime() < deadline) {
      LockSupport.parkNanos(10_000_000);
    }
    assertThat(received.get()).as("messages from the peer before the kill").isGreaterThanOrEqualTo(FLOWING);
  }

  private Process startPeer(String... args) throws Exception {
    Process p = new ProcessBuilder(TransportPeer.command(args)).redirectErrorStream(true).start();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          peerOutput.add(line);
        }
      } catch (java.io.IOException ignored) {
        // the peer died: its output ends here
      }
    }, "peer-output");
    reader.setDaemon(true);
    reader.start();
    return p;
  }

  private String awaitLine(String prefix) throws InterruptedException {
    StringBuilder seen = new StringBuilder();
    long deadline = System.nanoTime() + PEER_START.toNanos();
    while (System.nanoTime() < deadline) {
      String line = peerOutput.poll(100, TimeUnit.MILLISECONDS);
      if (line != null) {
        if (line.startsWith(prefix)) {
          return line;
        }
        seen.append(line).append('\n');
      } else if (!peer.isAlive() && peerOutput.isEmpty()) {
        break;
      }
    }
    throw new AssertionError("the peer printed no '" + prefix + "' (alive: " + peer.isAlive() + "); output:\n" + seen);
  }
}
