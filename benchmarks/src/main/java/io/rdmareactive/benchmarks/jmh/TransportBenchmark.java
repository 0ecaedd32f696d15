package io.rdmareactive.benchmarks.jmh;

import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaMessage;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import reactor.core.publisher.Flux;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * The transport's message path (ConnectionOperations: credits, header in the immediate data, buffer
 * copy, completion handling, inbound emission and release) over a provider's connections:
 * {@code pingPong}, one round trip per op, the server echoing on its completion thread; and
 * {@code stream}, one-way messages from an endless generator, per message. Allocation per op
 * includes the provider's own (the in-memory provider allocates a completion object per work
 * request: see {@link VerbsBenchmark} for that share).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TransportBenchmark {
  static final int STREAM_BATCH = 256;

  @Param("in-memory")
  public String provider;
  @Param("127.0.0.1")
  public String host;
  @Param({"event", "busy-poll"})
  public String completions;
  @Param("64")
  public int size;

  private DisposableRdmaServer server;
  private RdmaConnection client;
  private Pinger<byte[]> pinger;
  private volatile long received;
  private long expected;

  private RdmaLoopResources loops() {
    return completions.equals("busy-poll") ? RdmaLoopResources.threadPerConnection(IdleStrategy.yielding())
        : RdmaLoopResources.shared();
  }

  @Setup(Level.Trial)
  public void setUp(BenchmarkParams params) {
    boolean ping = params.getBenchmark().endsWith("pingPong");
    server = io.rdmareactive.rdma.transport.RdmaServer.create().host(host).port(0)
        .option(RdmaOption.PROVIDER, provider).runOn(loops())
        .handle((in, out) -> ping
            ? out.send(in.receive()) // echo on the completion thread; sending a received message releases it
            : in.receive().doOnNext(m -> {
              m.release();
              received = received + 1; // one completion thread per connection
            }).then())
        .bindNow();
    client = RdmaClient.create().host(host).port(server.port()).option(RdmaOption.PROVIDER, provider)
        .runOn(loops()).connectNow(Duration.ofSeconds(30));
    byte[] payload = new byte[size];
    if (ping) {
      pinger = new Pinger<>(payload);
      client.inbound().receive().subscribe(m -> {
        m.release();
        received = received + 1;
      }, e -> {});
      client.outbound().send(pinger).subscribe(null, e -> {});
    } else {
      client.outbound().send(Flux.<byte[]>generate(s -> s.next(payload))).subscribe(null, e -> {});
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    client.dispose();
    client.onDispose().block(Duration.ofSeconds(30));
    server.disposeNow();
  }

  /** One request/reply round trip. */
  @Benchmark
  public long pingPong() {
    long want = ++expected;
    pinger.ping();
    while (received < want) {
      Thread.onSpinWait();
    }
    return want;
  }

  /** One-way messages, flow-controlled by credits; time and allocation per message. */
  @Benchmark
  @OperationsPerInvocation(STREAM_BATCH)
  public long stream() {
    expected = Math.max(expected, received) + STREAM_BATCH;
    while (received < expected) {
      Thread.onSpinWait();
    }
    return expected;
  }
}
