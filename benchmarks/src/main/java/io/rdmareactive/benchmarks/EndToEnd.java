package io.rdmareactive.benchmarks;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/**
 * The end-to-end run: in one process on one device, perftest (ib_send_lat, ib_send_bw,
 * ib_write_bw), this library and Reactor Netty TCP, each on the same metrics; prints the table
 * and writes results.md, results.csv and results.png.
 *
 * <pre>EndToEnd [--device rxe0] [--address 10.0.0.1] [--gid-index 1] [--out DIR] [--quick]</pre>
 *
 * Latency is one way (half the round trip), as ib_send_lat reports it.
 */
public final class EndToEnd {
  private EndToEnd() {}

  public static void main(String[] args) throws Exception {
    String device = "rxe0", address = "10.0.0.1";
    int gidIndex = 1;
    Path out = Path.of("benchmarks/target/e2e");
    boolean quick = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--device" -> device = args[++i];
        case "--address" -> address = args[++i];
        case "--gid-index" -> gidIndex = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--quick" -> quick = true;
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + " (usage: EndToEnd [--device D] [--address A] [--gid-index N] [--out DIR] [--quick])");
      }
    }
    int latIters = quick ? 2_000 : 10_000;
    int bwIters = quick ? 2_000 : 10_000;
    Report report = new Report();
    Perftest perftest = new Perftest(device, address, gidIndex);
    TcpBench tcp = new TcpBench(address);
    int port = 18515;

    for (int size : new int[] {8, 4096}) {
      String label = size == 8 ? "8 B" : "4 KiB";
      double[] lat = perftest.run("ib_send_lat", size, latIters, port++);
      // ib_send_lat columns: bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
      report.add(new Figure("latency p50 " + label, Report.REFERENCE, lat[4], "us", false));
      report.add(new Figure("latency p99 " + label, Report.REFERENCE, lat[7], "us", false));
      tcp.pingPong(size, latIters / 2, latIters); // warm-up run: JIT and Netty pools
      Percentiles p = tcp.pingPong(size, latIters / 2, latIters);
      report.add(new Figure("latency p50 " + label, "reactor-netty-tcp", p.micros(50) / 2, "us", false));
      report.add(new Figure("latency p99 " + label, "reactor-netty-tcp", p.micros(99) / 2, "us", false));
    }
    for (int size : new int[] {4096, 65536}) {
      String label = size == 4096 ? "4 KiB" : "64 KiB";
      // ib_*_bw columns: bytes iterations BW_peak[MB/s] BW_average[MB/s] MsgRate[Mpps]
      double[] send = perftest.run("ib_send_bw", size, bwIters, port++);
      report.add(new Figure("throughput " + label, Report.REFERENCE, send[3], "MB/s", true));
      double[] write = perftest.run("ib_write_bw", size, bwIters, port++);
      report.add(new Figure("throughput " + label, "perftest ib_write_bw", write[3], "MB/s", true));
      tcp.stream(size, bwIters);
      report.add(new Figure("throughput " + label, "reactor-netty-tcp", tcp.stream(size, bwIters)[0], "MB/s", true));
    }
    double[] rate = perftest.run("ib_send_bw", 64, bwIters * 5, port++);
    report.add(new Figure("message rate 64 B", Report.REFERENCE, rate[4], "Mmsg/s", true));
    tcp.stream(64, bwIters * 5);
    report.add(new Figure("message rate 64 B", "reactor-netty-tcp", tcp.stream(64, bwIters * 5)[1] / 1e6, "Mmsg/s", true));

    String header = "End-to-end run of " + LocalDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE_TIME)
        + " on " + device + " (" + address + "), " + Runtime.getRuntime().availableProcessors() + " CPUs, Java "
        + Runtime.version() + (System.getenv("RDMA_VM") != null && !"0".equals(System.getenv("RDMA_VM"))
            ? ", inside the Soft-RoCE VM (QEMU TCG)" : "");
    report.write(out, header);
    java.nio.file.Files.writeString(out.resolve("perftest.log"), perftest.log);
    System.out.println();
    System.out.println(report.table(header));
    System.out.println("wrote " + out.resolve("results.md") + ", results.csv, results.png");
  }
}
