package io.rdmareactive.benchmarks;

import com.sun.management.ThreadMXBean;
import io.rdmareactive.benchmarks.jmh.Pinger;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.transport.RdmaStatistics;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * What one 8 B ping-pong round trip of {@link RdmaBench#pingPong} costs, counted rather than
 * timed (scripts/latency-breakdown runs it in the VM, under strace): after a warm-up until the
 * JIT is quiet, it runs {@code --iterations} round trips between two marker system calls
 * ({@code stat} of {@code /LATENCY-PROBE-BEGIN} and {@code /LATENCY-PROBE-END}, so that strace's log
 * can be cut to the window) and writes, per round trip: both connections' statistics (doorbells,
 * signaled sends, completions polled, credit updates), the bytes each JVM thread allocated, the
 * CPU time each thread used (a thread other than the two completion threads doing work is a
 * hand-off), the threads the client's subscriber ran on, and the p50 round trip (timing: noise on
 * a loaded host), plus the JVM's thread ids and names, for the strace log's thread ids.
 *
 * <p>{@code --trace} turns the kernel's tracing on for the window only (the guest script sets up a
 * {@code function_graph} trace that {@link KernelTrace} reads).
 *
 * <pre>LatencyProbe --address A --provider native|in-memory --mode busy-poll|event --iterations N --out FILE [--profile] [--trace]</pre>
 */
final class LatencyProbe {
  private LatencyProbe() {}

  public static void main(String[] args) throws Exception {
    String address = "10.0.0.1";
    String provider = "native";
    boolean busyPoll = true;
    int iterations = 2_000;
    int size = 8;
    boolean profile = false;
    boolean trace = false;
    int serve = 0;
    int connect = 0;
    Path out = Path.of("latency-probe.txt");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--address" -> address = args[++i];
        case "--provider" -> provider = args[++i];
        case "--mode" -> busyPoll = switch (args[++i]) {
          case "busy-poll" -> true;
          case "event" -> false;
          default -> throw new IllegalArgumentException("--mode busy-poll|event, not " + args[i]);
        };
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--size" -> size = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--profile" -> profile = true;
        case "--trace" -> trace = true;
        case "--serve" -> serve = Integer.parseInt(args[++i]);
        case "--connect" -> connect = Integer.parseInt(args[++i]);
        case "--clock" -> { // what one System.nanoTime() costs here (a system call where the clock has no vDSO path)
          long sink = 0;
          for (int round = 0; round < 3; round++) {
            long t0 = System.nanoTime();
            for (int k = 0; k < 100_000; k++) {
              sink += System.nanoTime();
            }
            System.out.printf(Locale.ROOT, "nanotime_ns %.1f%n", (System.nanoTime() - t0) / 1e5);
          }
          System.exit(sink == 42 ? 1 : 0);
        }
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    LatencyProbe.Run run = new LatencyProbe.Run(address, provider, busyPoll, size);
    if (serve > 0) { // the echo alone, in a JVM of its own, until the file STOP appears
      run.serve(serve);
      System.exit(0);
    }
    List<String> lines = run.measure(iterations, profile ? out.resolveSibling(out.getFileName() + ".jfr") : null, connect,
        trace);
    Files.write(out, lines);
    lines.forEach(System.out::println);
    System.exit(0); // the loops' daemon threads need no wait
  }

  /** One connection pair and its ping-pong. */
  private static final class Run {
    private final String address;
    private final String provider;
    private final boolean busyPoll;
    private final int size;
    private final ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    private final Map<String, Integer> subscriberThreads = new TreeMap<>();

    Run(String address, String provider, boolean busyPoll, int size) {
      this.address = address;
      this.provider = provider;
      this.busyPoll = busyPoll;
      this.size = size;
    }

    private RdmaLoopResources loops() {
      return busyPoll ? RdmaLoopResources.threadPerConnection(IdleStrategy.spin()) : RdmaLoopResources.shared();
    }

    private DisposableRdmaServer echo(int port, AtomicReference<RdmaConnection> accepted) {
      return RdmaServer.create().host(address).port(port).option(RdmaOption.PROVIDER, provider)
          .runOn(loops()).option(RdmaOption.BUFFER_SIZE, 1024).option(RdmaOption.BUFFER_COUNT, 16)
          .option(RdmaOption.HANDSHAKE_TIMEOUT, Duration.ofSeconds(120)) // a cold JVM under TCG or strace
          .doOnConnection(accepted::set)
          .handle((in, out) -> out.send(in.receive())) // RdmaBench.pingPong's echo
          .bindNow(Duration.ofSeconds(300)); // under strace the JVM is slow to start
    }

    /** Serves the echo on {@code port} until a file {@code STOP} appears in the working directory (at most 10 minutes). */
    void serve(int port) throws InterruptedException {
      DisposableRdmaServer server = echo(port, new AtomicReference<>());
      System.out.println("serving on " + port);
      for (int i = 0; i < 3_000 && !new File("STOP").exists(); i++) {
        Thread.sleep(200);
      }
      server.disposeNow(Duration.ofSeconds(60));
    }

    /**
     * Measures {@code iterations} round trips against an echo in this JVM, or, {@code connect}
     * above 0, in another one on that port; with {@code jfr} set, JFR samples them too (see
     * {@link ProbeProfile}).
     */
    List<String> measure(int iterations, @Nullable Path jfr, int connect, boolean trace) throws Exception {
      AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
      @Nullable DisposableRdmaServer server = connect > 0 ? null : echo(0, accepted);
      RdmaConnection conn = RdmaClient.create().host(address).port(connect > 0 ? connect : server.port())
          .connectTimeout(Duration.ofSeconds(120)) // a cold JVM under TCG or strace
          .option(RdmaOption.PROVIDER, provider)
          .runOn(loops()).option(RdmaOption.BUFFER_SIZE, 1024).option(RdmaOption.BUFFER_COUNT, 16)
          .option(RdmaOption.HANDSHAKE_TIMEOUT, Duration.ofSeconds(120)) // a cold JVM under TCG or strace
          .connectNow(Duration.ofSeconds(300));
      Pinger<byte[]> pinger = new Pinger<>(new byte[size]);
      long[] state = new long[3]; // [0] rounds left, [1] start ns, [2] index
      long[] samples = new long[iterations];
      CountDownLatch[] done = new CountDownLatch[1];
      boolean[] recording = new boolean[1];
      Thread[] clientThread = new Thread[1];
      conn.inbound().receive().subscribe(m -> {
        long now = System.nanoTime();
        clientThread[0] = Thread.currentThread();
        m.release();
        if (recording[0]) {
          samples[(int) state[2]++] = now - state[1];
          subscriberThreads.merge(Thread.currentThread().getName(), 1, Integer::sum);
        }
        if (--state[0] == 0) {
          done[0].countDown();
          return;
        }
        state[1] = System.nanoTime();
        pinger.ping();
      }, Throwable::printStackTrace);
      conn.outbound().send(pinger).subscribe(null, e -> {
        if (!(e instanceof ResourceClosedException)) {
          e.printStackTrace();
        }
      });
      // Warm-up: rounds until one adds under 2% to the JIT's compilation time (as EndToEnd).
      var jit = ManagementFactory.getCompilationMXBean();
      long compiled = -1;
      for (int round = 0; round < 40; round++) {
        rounds(pinger, state, done, 5_000);
        long now = jit.getTotalCompilationTime();
        if (compiled >= 0 && now - compiled < 0.02 * now) {
          break;
        }
        compiled = now;
      }
      RdmaStatistics client0 = conn.statistics();
      @Nullable RdmaStatistics server0 = server == null ? null : accepted.get().statistics();
      Map<String, long[]> threads0 = threadFigures();
      state[2] = 0;
      recording[0] = true;
      ProbeProfile profile = jfr == null ? null : new ProbeProfile(Duration.ofMillis(1));
      PathBreakdown path = new PathBreakdown();
      path.start(clientThread[0]);
      new File("/LATENCY-PROBE-BEGIN").exists(); // the strace window's start
      tracing(trace, "1");
      long windowStart = System.nanoTime();
      rounds(pinger, state, done, iterations);
      long windowNanos = System.nanoTime() - windowStart;
      tracing(trace, "0");
      new File("/LATENCY-PROBE-END").exists();
      recording[0] = false;
      List<String> steps = path.stop(iterations);
      List<String> profiled = profile == null ? List.of() : profile.stop(jfr);
      RdmaStatistics client1 = conn.statistics();
      @Nullable RdmaStatistics server1 = server == null ? null : accepted.get().statistics();
      Map<String, long[]> threads1 = threadFigures();
      List<String> lines = new ArrayList<>();
      lines.add("# LatencyProbe " + provider + " " + (busyPoll ? "busy-poll" : "event") + ", " + size + " B, "
          + iterations + " round trips; figures per round trip");
      lines.add(String.format(Locale.ROOT, "p50_one_way_us %.2f", new Percentiles(samples, iterations).micros(50) / 2));
      // JFR takes a sample a millisecond per thread at most: fewer means time it could not attribute
      // (a critical downcall such as ibv_poll_cq runs native code in the Java thread state).
      lines.add(String.format(Locale.ROOT, "window_s %.3f wall_us_per_round_trip %.2f", windowNanos / 1e9,
          windowNanos / 1e3 / iterations));
      if (server != null) {
        lines.addAll(steps); // both sides' stamps are in this JVM only when the echo is
      }
      statistics(lines, "client", client0, client1, iterations);
      if (server0 != null && server1 != null) {
        statistics(lines, "server", server0, server1, iterations);
      } else {
        lines.add("# the echo ran in another JVM");
      }
      threads1.forEach((name, t1) -> {
        long[] t0 = threads0.getOrDefault(name, new long[3]);
        double alloc = (double) (t1[1] - t0[1]) / iterations;
        double cpuUs = (t1[2] - t0[2]) / 1e3 / iterations;
        if (alloc > 0 || cpuUs >= 0.01) {
          lines.add(String.format(Locale.ROOT, "thread %s alloc_bytes %.1f cpu_us %.2f", name.replace(' ', '_'), alloc, cpuUs));
        }
      });
      subscriberThreads.forEach((name, n) -> lines.add("subscriber_thread " + name.replace(' ', '_') + " " + n));
      lines.addAll(profiled);
      nativeThreadNames(lines);
      conn.dispose();
      conn.onDispose().block(Duration.ofSeconds(60));
      if (server != null) {
        server.disposeNow(Duration.ofSeconds(60));
      }
      return lines;
    }

    /** Turns the kernel's tracing on or off around the window ({@code --trace}; root, tracefs mounted). */
    private static void tracing(boolean trace, String on) throws IOException {
      if (trace) {
        Files.writeString(Path.of("/sys/kernel/tracing/tracing_on"), on);
      }
    }

    private static void rounds(Pinger<byte[]> pinger, long[] state, CountDownLatch[] done, int n)
        throws InterruptedException {
      done[0] = new CountDownLatch(1);
      state[0] = n;
      state[1] = System.nanoTime();
      pinger.ping();
      if (!done[0].await(5, TimeUnit.MINUTES)) {
        throw new IllegalStateException("ping-pong stopped with " + state[0] + " round trips left");
      }
    }

    /** Per live thread, by name: {id, allocated bytes, CPU ns}. */
    private Map<String, long[]> threadFigures() {
      Map<String, long[]> m = new TreeMap<>();
      for (long id : threads.getAllThreadIds()) {
        var info = threads.getThreadInfo(id);
        if (info != null) {
          m.put(info.getThreadName() + "#" + id,
              new long[] {id, threads.getThreadAllocatedBytes(id), threads.getThreadCpuTime(id)});
        }
      }
      return m;
    }

    private static void statistics(List<String> lines, String side, RdmaStatistics a, RdmaStatistics b, int n) {
      lines.add(String.format(Locale.ROOT,
          "%s messages_sent %.3f data_sends %.3f doorbells %.3f signaled_sends %.3f completions_polled %.3f"
              + " credit_updates_sent %.3f credit_updates_received %.3f",
          side, per(b.messagesSent() - a.messagesSent(), n), per(b.dataSends() - a.dataSends(), n),
          per(b.doorbells() - a.doorbells(), n), per(b.signaledSends() - a.signaledSends(), n),
          per(b.completionsPolled() - a.completionsPolled(), n),
          per(b.creditUpdatesSent() - a.creditUpdatesSent(), n),
          per(b.creditUpdatesReceived() - a.creditUpdatesReceived(), n)));
    }

    private static double per(long count, int n) {
      return (double) count / n;
    }

    /** The kernel's thread ids and names of this process: strace's log names threads by id. */
    private static void nativeThreadNames(List<String> lines) throws IOException {
      try (var tasks = Files.list(Path.of("/proc/self/task"))) {
        for (Path t : tasks.sorted().toList()) {
          lines.add("tid " + t.getFileName() + " " + Files.readString(t.resolve("comm")).strip().replace(' ', '_'));
        }
      }
    }
  }
}
