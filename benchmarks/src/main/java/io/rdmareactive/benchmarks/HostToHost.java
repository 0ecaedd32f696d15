package io.rdmareactive.benchmarks;

import io.rdmareactive.benchmarks.jmh.Pinger;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaMessage;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Flux;

/**
 * The benchmark's rows across a wire: perftest (busy-polling and {@code -e} event mode) and this
 * library (event and busy-poll) between the two guests of scripts/softroce-vm-pair. Guest a serves
 * (perftest servers, one by one, and two transport servers), guest b measures and writes the
 * figures, named "... host-to-host", to {@code OUT/figures-host-to-host.csv}, which the report
 * reads beside the single-VM phases. The guests step together through ready files in
 * {@code RDMA_PAIR_DIR}.
 * <pre>HostToHost OUT</pre>
 */
public final class HostToHost {
  private static final int SIZE = 8;
  private static final int STREAM = 65536;
  private static final Duration WAIT = Duration.ofMinutes(5);
  private static final int EVENT_PORT = 7700;
  private static final int BUSY_PORT = 7701;
  /** Message kinds, the first byte of each: echo it, or count it (the last asks for an acknowledgement). */
  private static final byte ECHO = 'E';
  private static final byte SINK = 'S';
  private static final byte LAST = 'L';

  private final boolean serving = "a".equals(System.getenv("RDMA_PAIR_ROLE"));
  private final Path dir = Path.of(System.getenv("RDMA_PAIR_DIR"));
  private final String self = System.getenv("RDMA_PAIR_SELF");
  private final String peer = System.getenv("RDMA_PAIR_PEER");
  private final Report report = new Report();
  private final StringBuilder log = new StringBuilder();

  private HostToHost() {}

  public static void main(String[] args) throws Exception {
    new HostToHost().run(Path.of(args[0]));
    System.exit(0); // the loops' threads are not daemons
  }

  private void run(Path out) throws Exception {
    perftest("ib_send_lat", "perftest host-to-host", List.of("-s", "8", "-n", "5000"), 18600);
    perftest("ib_send_lat", "perftest -e host-to-host", List.of("-s", "8", "-n", "5000", "-e"), 18601);
    perftest("ib_send_bw", "perftest host-to-host", List.of("-s", Integer.toString(STREAM), "-n", "1000"), 18602);
    if (serving) {
      DisposableRdmaServer event = server(EVENT_PORT, false);
      DisposableRdmaServer busy = server(BUSY_PORT, true);
      step("transport-servers-up");
      step("transport-measured");
      event.disposeNow(WAIT);
      busy.disposeNow(WAIT);
      return;
    }
    step("transport-servers-up");
    transport("rdma-reactive (event) host-to-host", EVENT_PORT, false);
    transport("rdma-reactive (busy-poll) host-to-host", BUSY_PORT, true);
    step("transport-measured");
    report.writeFigures(out.resolve("figures-host-to-host.csv"));
    Files.writeString(out.resolve("perftest-host-to-host.log"), log);
    System.out.println(report.table("Host to host (two Soft-RoCE guests, UDP wire on loopback)"));
  }

  /** One perftest measurement: guest a's server, then guest b's client against it, its result line parsed. */
  private void perftest(String tool, String system, List<String> opts, int port) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(tool, "-d", "rxe0", "-x", "1", "-F", "-p", Integer.toString(port)));
    cmd.addAll(opts);
    if (serving) {
      Process server = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      step(tool + port + "-listening");
      boolean ended = server.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      server.destroyForcibly();
      step(tool + port + "-done");
      if (!ended) {
        throw new IllegalStateException(tool + " server did not end");
      }
      return;
    }
    step(tool + port + "-listening");
    Thread.sleep(1_500); // the server must listen before the client connects; perftest has no readiness signal
    cmd.add(peer);
    Process client = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String output = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    client.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    log.append("$ ").append(String.join(" ", cmd)).append('\n').append(output);
    step(tool + port + "-done");
    int size = Integer.parseInt(opts.get(1));
    double[] v = Perftest.parse(tool, size, output);
    if (tool.equals("ib_send_lat")) {
      // ib_send_lat columns: bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
      report.add(new Figure("latency p50 " + EndToEnd.label(size), system, v[4], "us", false));
      report.add(new Figure("latency p99 " + EndToEnd.label(size), system, v[7], "us", false));
    } else {
      report.add(new Figure("throughput " + EndToEnd.label(size), system, v[3], "MB/s", true));
    }
  }

  private RdmaLoopResources loops(boolean busyPoll) {
    return busyPoll ? RdmaLoopResources.threadPerConnection(IdleStrategy.backoff()) : RdmaLoopResources.shared();
  }

  /** Echoes what says ECHO, counts what says SINK, and acknowledges the LAST of a stream. */
  private DisposableRdmaServer server(int port, boolean busyPoll) {
    return RdmaServer.create().host(self).port(port).option(RdmaOption.PROVIDER, "native").runOn(loops(busyPoll))
        .option(RdmaOption.BUFFER_SIZE, STREAM).option(RdmaOption.BUFFER_COUNT, 32)
        .handle((in, out) -> out.send(in.receive().<Object>handle((m, sink) -> {
          byte kind = m.asByteBuffer().get(0);
          if (kind == ECHO) {
            sink.next(m); // sending a received message releases it
          } else {
            m.release();
            if (kind == LAST) {
              sink.next(new byte[] {LAST});
            }
          }
        }))).bindNow(WAIT);
  }

  /** Guest b: ping-pong latency and one-way throughput against guest a's server on {@code port}. */
  private void transport(String system, int port, boolean busyPoll) throws Exception {
    RdmaConnection conn = connect(port, busyPoll);
    try {
      PingPong x = new PingPong(conn);
      for (int round = 0; round < 3; round++) { // warm-up: the JIT under TCG takes a while
        x.run(2_000);
        stream(port, busyPoll, 200);
      }
      Percentiles lat = x.run(5_000);
      report.add(new Figure("latency p50 " + EndToEnd.label(SIZE), system, lat.micros(50) / 2, "us", false));
      report.add(new Figure("latency p99 " + EndToEnd.label(SIZE), system, lat.micros(99) / 2, "us", false));
    } finally {
      close(conn);
    }
    int count = 1_000;
    double seconds = stream(port, busyPoll, count);
    report.add(new Figure("throughput " + EndToEnd.label(STREAM), system, (double) STREAM * count / seconds / 1e6,
        "MB/s", true));
  }

  private RdmaConnection connect(int port, boolean busyPoll) {
    return RdmaClient.create().host(peer).port(port).option(RdmaOption.PROVIDER, "native")
        .runOn(loops(busyPoll)).option(RdmaOption.BUFFER_SIZE, STREAM).option(RdmaOption.BUFFER_COUNT, 32)
        .connectNow(WAIT);
  }

  private static void close(RdmaConnection conn) {
    conn.dispose();
    conn.onDispose().block(WAIT);
  }

  /**
   * {@code count} messages of {@link #STREAM} bytes one way, on a connection of their own (a
   * connection's sends go out one after another, and the ping-pong's never ends); seconds until
   * the server acknowledged the last.
   */
  private double stream(int port, boolean busyPoll, int count) throws InterruptedException {
    RdmaConnection conn = connect(port, busyPoll);
    try {
      CountDownLatch acked = new CountDownLatch(1);
      conn.inbound().receive().subscribe(m -> {
        m.release();
        acked.countDown();
      }, e -> acked.countDown());
      byte[] payload = new byte[STREAM];
      payload[0] = SINK;
      byte[] last = payload.clone();
      last[0] = LAST;
      long start = System.nanoTime();
      conn.outbound().send(Flux.range(0, count).map(i -> i == count - 1 ? last : payload)).subscribe();
      if (!acked.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("stream got no answer within " + WAIT);
      }
      return (System.nanoTime() - start) / 1e9;
    } finally {
      close(conn);
    }
  }

  /** Ping-pong on one connection: each echo, on the connection's thread, sends the next ping. */
  private static final class PingPong {
    private final Pinger<byte[]> pinger = new Pinger<>(new byte[] {ECHO, 0, 0, 0, 0, 0, 0, 0});
    private volatile CountDownLatch done = new CountDownLatch(0);
    private long[] samples = new long[0];
    private int round;
    private int rounds;
    private long sentAt;

    PingPong(RdmaConnection conn) {
      conn.inbound().receive().subscribe(this::reply, e -> done.countDown());
      conn.outbound().send(pinger).subscribe(null, e -> {
        if (!(e instanceof ResourceClosedException)) {
          e.printStackTrace();
        }
      });
    }

    private void reply(RdmaMessage m) {
      long now = System.nanoTime();
      m.release();
      samples[round] = now - sentAt;
      if (++round == rounds) {
        done.countDown();
        return;
      }
      sentAt = System.nanoTime();
      pinger.ping(); // on this completion thread: posts the next SEND right here
    }

    Percentiles run(int n) throws InterruptedException {
      samples = new long[n];
      round = 0;
      rounds = n;
      done = new CountDownLatch(1);
      sentAt = System.nanoTime();
      pinger.ping();
      if (!done.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("ping-pong stopped after " + round + " of " + n);
      }
      return new Percentiles(samples, n);
    }
  }

  /** Says this guest reached {@code name} and waits for the other guest to reach it too. */
  private void step(String name) throws IOException, InterruptedException {
    String me = serving ? "a" : "b";
    String other = serving ? "b" : "a";
    Files.writeString(dir.resolve("bench-" + name + "." + me), "");
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!Files.exists(dir.resolve("bench-" + name + "." + other))) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("guest " + other + " did not reach " + name + " within " + WAIT);
      }
      Thread.sleep(100);
    }
  }
}
