package io.rdmareactive.samples;

import io.rdmareactive.rdma.verbs.IdleStrategy;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Sinks;

/**
 * Ping-pong message latency over the transport, in the manner of perftest's {@code ib_send_lat}:
 * the client sends a message, the server echoes it, the client sends the next once the echo
 * arrived; each sample is half the round trip. Prints
 * {@code #bytes #iterations p50 p99 p99.9 t_min t_max t_avg} in microseconds.
 *
 * <pre>
 *   Latency [options]              both sides in this process (server and client on --bind)
 *   Latency [options] --server     the server only: echoes one client, exits when it disconnects
 *   Latency [options] HOST         the client only, against a server on HOST
 *
 *   -s, --size BYTES        message size (default 2)
 *   -n, --iters N           measured iterations (default 1000)
 *       --warmup N          unmeasured iterations first (default 100)
 *   -p, --port PORT         port (default 18515, perftest's)
 *       --bind HOST         the server's address (default 10.0.0.1, the Soft-RoCE VM's rxe0)
 *   -B, --busy-poll         busy-poll completions (a spinning thread per connection)
 *       --provider NAME     auto, native or in-memory (default: the RDMA_PROVIDER selection)
 * </pre>
 *
 * Each in-memory connection lives in one JVM: use the default (both) mode with it.
 */
public final class Latency {
  /**
   * The first ping leaves from the caller's thread and the reply's next ping from the receiving
   * thread; when a reply is fast enough they overlap, and a unicast sink refuses the second emission
   * (FAIL_NON_SERIALIZED), which would drop a ping and stall the exchange: retry instead.
   */
  private static final reactor.core.publisher.Sinks.EmitFailureHandler RETRY_NON_SERIALIZED =
      (signal, result) -> result == reactor.core.publisher.Sinks.EmitResult.FAIL_NON_SERIALIZED;

  private Latency() {}

  /** The parsed command line. */
  record Options(int size, int iterations, int warmup, int port, String bind, boolean busyPoll, String provider,
      boolean server, String host) {
    static Options parse(String[] args) {
      int size = 2, iterations = 1000, warmup = 100, port = 18_515;
      String bind = "10.0.0.1", provider = "default", host = null;
      boolean busyPoll = false, server = false;
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        switch (a) {
          case "-s", "--size" -> size = positive(a, value(args, ++i, a));
          case "-n", "--iters" -> iterations = positive(a, value(args, ++i, a));
          case "--warmup" -> warmup = Integer.parseInt(value(args, ++i, a));
          case "-p", "--port" -> port = SampleArgs.port(value(args, ++i, a));
          case "--bind" -> bind = value(args, ++i, a);
          case "-B", "--busy-poll" -> busyPoll = true;
          case "--provider" -> provider = value(args, ++i, a);
          case "--server" -> server = true;
          case "-h", "--help" -> throw new IllegalArgumentException("usage: Latency [-s bytes] [-n iters] "
              + "[--warmup n] [-p port] [--bind host] [-B] [--provider auto|native|in-memory] [--server | HOST]");
          default -> {
            if (a.startsWith("-") || host != null) {
              throw new IllegalArgumentException("unknown option '" + a + "' (--help lists them)");
            }
            host = a;
          }
        }
      }
      if (server && host != null) {
        throw new IllegalArgumentException("--server takes no HOST (it listens on --bind)");
      }
      if (warmup < 0) {
        throw new IllegalArgumentException("--warmup must be >= 0, was " + warmup);
      }
      return new Options(size, iterations, warmup, port, bind, busyPoll, provider, server, host);
    }

    private static String value(String[] args, int i, String option) {
      if (i >= args.length) {
        throw new IllegalArgumentException(option + " needs a value");
      }
      return args[i];
    }

    private static int positive(String option, String v) {
      int n = Integer.parseInt(v);
      if (n < 1) {
        throw new IllegalArgumentException(option + " must be >= 1, was " + n);
      }
      return n;
    }
  }

  public static void main(String[] args) throws InterruptedException {
    Options o;
    try {
      o = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    String provider = SampleArgs.provider(o.provider());
    RdmaLoopResources resources = o.busyPoll() ? RdmaLoopResources.threadPerConnection(IdleStrategy.spin())
        : RdmaLoopResources.shared();
    DisposableRdmaServer server = null;
    CountDownLatch served = new CountDownLatch(1);
    if (o.host() == null) {
      server = RdmaServer.create().host(o.bind()).port(o.port()).option(RdmaOption.PROVIDER, provider)
          .option(RdmaOption.BUFFER_SIZE, Math.max(64, Math.min(o.size(), 1 << 24)))
          .runOn(resources)
          .doOnDisconnected(c -> served.countDown())
          .handle((in, out) -> out.send(in.receive()))
          .bindNow();
      System.err.println("latency server (" + provider + (o.busyPoll() ? ", busy-poll" : "") + ") on "
          + server.address());
    }
    int exit = 0;
    if (o.server()) {
      served.await();
    } else {
      String host = o.host() != null ? o.host() : o.bind();
      exit = client(o, host, provider, resources) ? 0 : 1;
    }
    if (server != null) {
      server.disposeNow(Duration.ofSeconds(10));
    }
    System.exit(exit);
  }

  /** Runs the ping-pong and prints the result line; false when it failed. */
  static boolean client(Options o, String host, String provider, RdmaLoopResources resources)
      throws InterruptedException {
    RdmaConnection c = RdmaClient.create().host(host).port(o.port()).option(RdmaOption.PROVIDER, provider)
        .option(RdmaOption.BUFFER_SIZE, Math.max(64, Math.min(o.size(), 1 << 24)))
        .runOn(resources).connectNow();
    try {
      long[] samples = run(c, o.size(), o.warmup(), o.iterations());
      if (samples == null) {
        return false;
      }
      System.out.println("-".repeat(96));
      System.out.printf("  Send latency (rdma-reactive, provider %s, %s completions), one way = RTT/2%n", provider,
          o.busyPoll() ? "busy-poll" : "event");
      System.out.println(format(o.size(), samples));
      System.out.println("-".repeat(96));
      return true;
    } finally {
      c.dispose();
      c.onDispose().block(Duration.ofSeconds(10));
    }
  }

  /** One-way latencies in nanoseconds (sorted), or null on failure or timeout. */
  static long[] run(RdmaConnection c, int size, int warmup, int iterations) throws InterruptedException {
    byte[] payload = new byte[size];
    Arrays.fill(payload, (byte) 'x');
    long[] samples = new long[iterations];
    int total = warmup + iterations;
    Sinks.Many<byte[]> pings = Sinks.many().unicast().onBackpressureBuffer();
    CountDownLatch done = new CountDownLatch(1);
    Throwable[] failure = new Throwable[1];
    // Touched by the receiving thread only, after the first send from this one (ordered by the exchange).
    long[] state = new long[2]; // [0] send time, [1] messages received
    c.outbound().send(pings.asFlux()).subscribe(null, e -> {
      failure[0] = e;
      done.countDown();
    });
    c.inbound().receive().subscribe(m -> {
      long now = System.nanoTime();
      m.release();
      int i = (int) state[1]++;
      if (i >= warmup) {
        samples[i - warmup] = (now - state[0]) / 2;
      }
      if (i + 1 < total) {
        state[0] = System.nanoTime();
        pings.emitNext(payload, RETRY_NON_SERIALIZED);
      } else {
        done.countDown();
      }
    }, e -> {
      failure[0] = e;
      done.countDown();
    });
    state[0] = System.nanoTime();
    pings.emitNext(payload, RETRY_NON_SERIALIZED);
    if (!done.await(Math.max(60, total / 1000), TimeUnit.SECONDS)) {
      System.err.println("latency: timed out after " + state[1] + " of " + total + " round trips");
      return null;
    }
    if (failure[0] != null) {
      System.err.println("latency: failed after " + state[1] + " round trips: " + failure[0]);
      return null;
    }
    pings.tryEmitComplete();
    Arrays.sort(samples);
    return samples;
  }

  /** The result line: {@code #bytes #iterations p50 p99 p99.9 t_min t_max t_avg} (usec). */
  static String format(int size, long[] sorted) {
    double avg = Arrays.stream(sorted).average().orElse(0);
    String header = String.format(Locale.ROOT, " %-7s %-12s %-11s %-11s %-13s %-13s %-13s %-11s", "#bytes",
        "#iterations", "p50[usec]", "p99[usec]", "p99.9[usec]", "t_min[usec]", "t_max[usec]", "t_avg[usec]").stripTrailing() + System.lineSeparator();
    return header + String.format(Locale.ROOT, " %-7d %-12d %-11.2f %-11.2f %-13.2f %-13.2f %-13.2f %.2f", size,
        sorted.length, us(percentile(sorted, 0.50)), us(percentile(sorted, 0.99)), us(percentile(sorted, 0.999)),
        us(sorted[0]), us(sorted[sorted.length - 1]), avg / 1000.0);
  }

  static long percentile(long[] sorted, double p) {
    int i = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }

  private static double us(long nanos) {
    return nanos / 1000.0;
  }
}
