package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.conformance.LeakCheck;
import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * A device port going down under a bound server with connections open, one idle and one
 * mid-stream: every connection on the device fails with a {@link ConnectionException} naming
 * IBV_EVENT_PORT_ERR within a bounded time, closing completes, nothing is left behind, and no
 * provider thread stays. The in-memory provider raises the event itself
 * ({@link io.rdmareactive.rdma.inmemory.InMemoryProvider#portDown}); the native test sets the
 * Soft-RoCE netdev down, in a VM boot of its own (no RC connection works there afterwards).
 */
public abstract class AbstractPortDownTest {
  /** The provider under test. */
  protected abstract TransportFixture fixture();
  protected static final Duration WAIT = Duration.ofSeconds(60);

  /** The device whose port 1 {@link #portDown()} takes down. */
  protected abstract String device();

  /** Takes port 1 of {@link #device()} down. */
  protected abstract void portDown() throws Exception;

  /** How long the connections may take to notice. */
  protected Duration noticeBound() {
    return Duration.ofSeconds(10);
  }

  @RegisterExtension
  final LeakCheck leakCheck = LeakCheck.settling(() -> fixture().liveResources(), WAIT);

  @Test
  void aPortGoingDownFailsEveryConnectionOnItNamingTheEvent() throws Exception {
    long threadsBefore = providerThreads();
    String event = "IBV_EVENT_PORT_ERR on " + device() + " port 1";
    Sinks.Many<Throwable> serverSaw = Sinks.many().replay().all();
    DisposableRdmaServer server = RdmaServer.create().host(fixture().host()).port(0).option(RdmaOption.PROVIDER, fixture().provider())
        .handle((in, out) -> out.send(in.receive()).doOnError(e -> serverSaw.emitNext(e, Sinks.EmitFailureHandler
            .busyLooping(WAIT)))).bindNow();
    RdmaConnection idle = null;
    RdmaConnection streaming = null;
    Disposable sending = null;
    try {
      idle = client(server.port());
      streaming = client(server.port());
      // One subscription for good: cancelling a receive (take(1), say) would close the connection.
      Sinks.One<String> idleEcho = Sinks.one();
      Sinks.One<Throwable> idleSaw = Sinks.one();
      idle.inbound().receiveString().subscribe(idleEcho::tryEmitValue, idleSaw::tryEmitValue);
      StepVerifier.create(idle.outbound().sendString(Mono.just("idle")).then(idleEcho.asMono()))
          .expectNext("idle").expectComplete().verify(WAIT);

      Sinks.One<Throwable> streamSaw = Sinks.one();
      AtomicLong echoed = new AtomicLong();
      streaming.inbound().receiveString().subscribe(m -> echoed.incrementAndGet(), streamSaw::tryEmitValue);
      sending = streaming.outbound().sendString(Flux.interval(Duration.ofMillis(2)).onBackpressureDrop().map(i -> "m" + i)).then()
          .subscribe(null, e -> {}); // the receive side reports the failure
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (echoed.get() < 20 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(echoed.get()).as("echoes before the port goes down").isGreaterThanOrEqualTo(20);

      long start = System.nanoTime();
      portDown();
      long returned = System.nanoTime();
      // Each failure as it came, for a failure's message: which end was late, or failed otherwise.
      Queue<String> came = new ConcurrentLinkedQueue<>();
      Flux<Throwable> failures = Flux.merge(idleSaw.asMono().map(e -> named("idle client", e)),
          streamSaw.asMono().map(e -> named("streaming client", e)),
          serverSaw.asFlux().take(2).map(e -> named("server", e)))
          .doOnNext(e -> came.add((System.nanoTime() - start) / 1_000_000 + " ms: " + e.getMessage()));
      // Both ends of both connections are on the device: the server's two fail as the clients do.
      try {
        StepVerifier.create(failures)
            .thenConsumeWhile(e -> {
              assertNamesTheEvent(e.getCause(), event);
              return true;
            })
            .expectComplete()
            .verify(WAIT);
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "; the failures as they came, from taking the port down: " + came, e);
      }
      long end = System.nanoTime();
      Duration noticed = Duration.ofNanos(end - start);
      System.out.println("port down (" + fixture().provider() + "): idle, streaming and server connections failed with "
          + event + " within " + noticed.toMillis() + " ms of taking the port down ("
          + Duration.ofNanos(end - returned).toMillis() + " ms after that returned)");
      assertThat(noticed).as("time to notice (taking the port down took %d ms); the failures as they came: %s",
          (returned - start) / 1_000_000, came).isLessThan(noticeBound());
      StepVerifier.create(idle.onDispose()).expectComplete().verify(WAIT);
      StepVerifier.create(streaming.onDispose()).expectComplete().verify(WAIT);
    } finally {
      if (sending != null) {
        sending.dispose();
      }
      for (RdmaConnection c : new RdmaConnection[] {idle, streaming}) {
        if (c != null) {
          c.dispose();
          c.onDispose().block(WAIT);
        }
      }
      server.disposeNow(WAIT);
    }
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (providerThreads() > threadsBefore && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(providerThreads()).as("provider threads (rdma-cm-*, rdma-async-*) after closing").isEqualTo(threadsBefore);
  }

  /** {@code e} wrapped with the connection it failed: its message says which end it was. */
  private static Throwable named(String end, Throwable e) {
    return new Exception(end + ": " + e, e);
  }

  private static void assertNamesTheEvent(Throwable e, String event) {
    assertThat(e).isInstanceOf(ConnectionException.class).hasMessageContaining(event);
    assertThat(((ConnectionException) e).reason()).as("reason of %s", e).isEqualTo(ConnectionException.Reason.RESET);
  }

  private RdmaConnection client(int port) {
    return RdmaClient.create().host(fixture().host()).port(port).option(RdmaOption.PROVIDER, fixture().provider())
        .connectTimeout(Duration.ofSeconds(20)).connectNow();
  }

  private static long providerThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("rdma-cm-") || t.getName().startsWith("rdma-async-")).count();
  }
}
