package io.rdmareactive.benchmarks;

import io.rdmareactive.rdma.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/**
 * The end-to-end run: in one process on one device, perftest (ib_send_lat, ib_send_bw,
 * ib_write_bw), this library and Reactor Netty TCP, each on the same metrics; prints the table
 * and writes results.md, results.csv and results.png.
 *
 * <pre>EndToEnd [--device rxe0] [--address 10.0.0.1] [--gid-index 1] [--out DIR] [--quick]
 *          [--provider auto|native|in-memory] [--only rdma]</pre>
 *
 * Latency is one way (half the round trip), as ib_send_lat reports it. This library runs twice,
 * "rdma-reactive (event)" and "rdma-reactive (busy-poll)", on the native provider when it can
 * establish connections here ({@code auto}), else on the in-memory one (then the header says so:
 * those figures are not RDMA). {@code --only rdma} skips perftest and TCP (development).
 */
public final class EndToEnd {
  private EndToEnd() {}

  private static boolean nativeConnections() {
    try {
      RdmaProvider p = RdmaDevices.provider("native");
      p.connections();
      return p.isAvailable();
    } catch (RuntimeException | LinkageError unavailable) {
      System.out.println("native provider unusable here (" + unavailable + "); using in-memory");
      return false;
    }
  }

  private static void progress(long t0) {
    System.out.printf(Locale.ROOT, "  -- %.0f s elapsed%n", (System.nanoTime() - t0) / 1e9);
  }

  public static void main(String[] args) throws Exception {
    String device = "rxe0", address = "10.0.0.1";
    int gidIndex = 1;
    Path out = Path.of("benchmarks/target/e2e");
    boolean quick = false;
    String provider = "auto";
    boolean onlyRdma = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--device" -> device = args[++i];
        case "--address" -> address = args[++i];
        case "--gid-index" -> gidIndex = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--quick" -> quick = true;
        case "--provider" -> provider = args[++i];
        case "--only" -> onlyRdma = "rdma".equals(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + " (usage: EndToEnd [--device D] [--address A] [--gid-index N] [--out DIR] [--quick]"
            + " [--provider auto|native|in-memory] [--only rdma])");
      }
    }
    int latIters = quick ? 2_000 : 10_000;
    int bwIters = quick ? 2_000 : 10_000;
    // The JVM figures run after a warm-up (JIT) and are sized down: under TCG a JVM round trip
    // costs ~10x perftest's, and the whole run must stay under 10 minutes.
    int jvmLatIters = quick ? 1_000 : 3_000;
    int jvmBwIters = quick ? 1_000 : 4_000;
    if ("auto".equals(provider)) {
      provider = nativeConnections() ? "native" : "in-memory";
    }
    Report report = new Report();
    Perftest perftest = new Perftest(device, address, gidIndex);
    TcpBench tcp = new TcpBench(address);
    List<RdmaBench> rdma = List.of(new RdmaBench(address, provider, false), new RdmaBench(address, provider, true));
    long t0 = System.nanoTime();
    Exception failed = null;

    try {
      run(report, perftest, tcp, rdma, onlyRdma, latIters, bwIters, jvmLatIters, jvmBwIters, t0);
    } catch (Exception e) {
      System.out.println("the run failed; writing the figures taken so far");
      e.printStackTrace(System.out);
      failed = e;
    }
    String header = "End-to-end run of " + LocalDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE_TIME)
        + " on " + device + " (" + address + "), " + Runtime.getRuntime().availableProcessors() + " CPUs, Java "
        + Runtime.version() + (System.getenv("RDMA_VM") != null && !"0".equals(System.getenv("RDMA_VM"))
            ? ", inside the Soft-RoCE VM (QEMU TCG)" : "") + "; rdma-reactive on the " + provider + " provider"
        + ("in-memory".equals(provider) ? " (NOT RDMA: the native provider cannot connect here yet)" : "")
        + "; " + (quick ? "quick run" : "full run") + (failed != null ? " (INCOMPLETE: " + failed + ")" : "") + ", " + Math.round((System.nanoTime() - t0) / 1e9) + " s";
    report.write(out, header);
    java.nio.file.Files.writeString(out.resolve("perftest.log"), perftest.log);
    System.out.println();
    System.out.println(report.table(header));
    System.out.println("wrote " + out.resolve("results.md") + ", results.csv, results.png");
    if (failed != null) {
      System.exit(1);
    }
  }

  private static void run(Report report, Perftest perftest, TcpBench tcp, List<RdmaBench> rdma, boolean onlyRdma,
      int latIters, int bwIters, int jvmLatIters, int jvmBwIters, long t0) throws Exception {
    int port = 18515;
    for (RdmaBench r : rdma) {
      r.pingPong(8, jvmLatIters, jvmLatIters); // warm-up: JIT, buffers, event loops
      r.stream(4096, jvmBwIters);
    }
    for (int size : new int[] {8, 4096}) {
      String label = size == 8 ? "8 B" : "4 KiB";
      if (!onlyRdma) {
        double[] lat = perftest.runRetrying("ib_send_lat", size, latIters, port++);
        // ib_send_lat columns: bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
        report.add(new Figure("latency p50 " + label, Report.REFERENCE, lat[4], "us", false));
        report.add(new Figure("latency p99 " + label, Report.REFERENCE, lat[7], "us", false));
      }
      for (RdmaBench r : rdma) {
        Percentiles p = r.pingPong(size, jvmLatIters / 2, jvmLatIters);
        report.add(new Figure("latency p50 " + label, r.name(), p.micros(50) / 2, "us", false));
        report.add(new Figure("latency p99 " + label, r.name(), p.micros(99) / 2, "us", false));
      }
      if (!onlyRdma) {
        tcp.pingPong(size, jvmLatIters / 2, jvmLatIters); // warm-up run: JIT and Netty pools
        Percentiles p = tcp.pingPong(size, jvmLatIters / 2, jvmLatIters);
        report.add(new Figure("latency p50 " + label, "reactor-netty-tcp", p.micros(50) / 2, "us", false));
        report.add(new Figure("latency p99 " + label, "reactor-netty-tcp", p.micros(99) / 2, "us", false));
      }
      progress(t0);
    }
    for (int size : new int[] {4096, 65536}) {
      String label = size == 4096 ? "4 KiB" : "64 KiB";
      int n = size == 65536 ? jvmBwIters / 4 : jvmBwIters;
      if (!onlyRdma) {
        // ib_*_bw columns: bytes iterations BW_peak[MB/s] BW_average[MB/s] MsgRate[Mpps]
        double[] send = perftest.runRetrying("ib_send_bw", size, bwIters, port++);
        report.add(new Figure("throughput " + label, Report.REFERENCE, send[3], "MB/s", true));
        double[] write = perftest.runRetrying("ib_write_bw", size, bwIters, port++);
        report.add(new Figure("throughput " + label, "perftest ib_write_bw", write[3], "MB/s", true));
      }
      for (RdmaBench r : rdma) {
        report.add(new Figure("throughput " + label, r.name(), r.stream(size, n)[0], "MB/s", true));
      }
      if (!onlyRdma) {
        tcp.stream(size, n);
        report.add(new Figure("throughput " + label, "reactor-netty-tcp", tcp.stream(size, n)[0], "MB/s", true));
      }
      progress(t0);
    }
    if (!onlyRdma) {
      double[] rate = perftest.runRetrying("ib_send_bw", 64, bwIters * 5, port++);
      report.add(new Figure("message rate 64 B", Report.REFERENCE, rate[4], "Mmsg/s", true));
    }
    for (RdmaBench r : rdma) {
      report.add(new Figure("message rate 64 B", r.name(), r.stream(64, jvmBwIters * 2)[1] / 1e6, "Mmsg/s", true));
    }
    if (!onlyRdma) {
      tcp.stream(64, jvmBwIters * 2);
      report.add(new Figure("message rate 64 B", "reactor-netty-tcp", tcp.stream(64, jvmBwIters * 2)[1] / 1e6,
          "Mmsg/s", true));
    }
    progress(t0);
  }
}
