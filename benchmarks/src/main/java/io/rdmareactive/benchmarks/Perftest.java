package io.rdmareactive.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a perftest tool (ib_send_lat, ib_send_bw, ib_write_bw, ib_read_bw) as server and client on one device
 * and parses the client's result line. Both run on the same device and address: rxe cannot reach
 * a second rxe device on the same kernel.
 */
final class Perftest {
  private final String device;
  private final String address;
  private final int gidIndex;
  /** Every tool's raw output, kept beside the results. */
  final StringBuilder log = new StringBuilder();

  Perftest(String device, String address, int gidIndex) {
    this.device = device;
    this.address = address;
    this.gidIndex = gidIndex;
  }

  /**
   * {@link #run} with retries: under TCG on a busy host perftest's clock calibration can fail
   * ("Correlation coefficient r^2 < 0.9", then inf). After three failures the figures are NaN
   * (the table says n/a) and the run goes on.
   */
  double[] runRetrying(String tool, int size, int iterations, int port) throws InterruptedException {
    for (int attempt = 0; attempt < 3; attempt++) {
      try {
        double[] v = run(tool, size, iterations, port + 100 * attempt);
        boolean finite = true;
        for (double d : v) {
          finite &= Double.isFinite(d);
        }
        if (finite) {
          return v;
        }
        log.append("!! non-finite result, retrying\n");
      } catch (IOException e) {
        log.append("!! ").append(e.getMessage()).append('\n');
      }
    }
    System.out.println("  " + tool + " " + size + " B failed three times: see perftest.log, or perftest-N.log for reading N");
    double[] nan = new double[9];
    java.util.Arrays.fill(nan, Double.NaN);
    return nan;
  }

  /** The numeric columns of the client's result line for one message size. */
  double[] run(String tool, int size, int iterations, int port) throws IOException, InterruptedException {
    List<String> common = List.of(tool, "-d", device, "-x", Integer.toString(gidIndex), "-s", Integer.toString(size),
        "-n", Integer.toString(iterations), "-p", Integer.toString(port), "-F");
    Process server = new ProcessBuilder(common).redirectErrorStream(true).start();
    try {
      Thread.sleep(1_500); // the server must listen before the client connects; perftest has no readiness signal
      List<String> clientCmd = new ArrayList<>(common);
      clientCmd.add(address);
      Process client = new ProcessBuilder(clientCmd).redirectErrorStream(true).start();
      String out = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!client.waitFor(120, TimeUnit.SECONDS) || client.exitValue() != 0) {
        throw new IOException(tool + " client failed (exit " + (client.isAlive() ? "timeout" : client.exitValue())
            + "):\n" + out);
      }
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
      String serverOut = new String(server.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      log.append("$ ").append(String.join(" ", clientCmd)).append('\n').append(out)
          .append("-- server --\n").append(serverOut).append('\n');
      double[] c = parse(tool, size, out);
      // For send bandwidth the receiving side (the server) reports the figure; the sender may print 0.
      double[] s = c;
      if (tool.endsWith("_bw")) {
        try {
          s = parse(tool, size, serverOut);
        } catch (IOException serverPrintedNoResult) {
          // ib_write_bw's passive side sees no completions and prints none
        }
      }
      return c.length > 3 && s.length > 3 && s[3] > c[3] ? s : c;
    } finally {
      server.destroyForcibly();
    }
  }

  static double[] parse(String tool, int size, String output) throws IOException {
    for (String line : output.split("\n")) {
      String[] cols = line.trim().split("\\s+");
      if (cols.length >= 4 && cols[0].equals(Integer.toString(size))) {
        double[] values = new double[cols.length];
        try {
          for (int i = 0; i < cols.length; i++) {
            values[i] = Double.parseDouble(cols[i]);
          }
          return values;
        } catch (NumberFormatException notAResultLine) {
          // headers and warnings also start with numbers sometimes; keep looking
        }
      }
    }
    throw new IOException("no result line for " + size + " bytes in " + tool + " output:\n" + output);
  }

  /**
   * The perftest phase: ib_send_lat, ib_send_bw, ib_write_bw and ib_read_bw on every metric of the
   * run, each the median of the run's trials; the raw output goes to {@code perftest.log}, or
   * {@code perftest-N.log} for reading N.
   */
  static void measure(Report report, EndToEnd.Settings s, EndToEnd.Sizes n) throws Exception {
    Perftest perftest = new Perftest(s.device(), s.address(), s.gidIndex());
    int port = 18515;
    try {
      for (int size : EndToEnd.LATENCY_SIZES) {
        int p = port;
        port += n.trials();
        double[] lat = EndToEnd.median(n.trials(), new PortTrial(p, q -> perftest.runRetrying("ib_send_lat", size, n.latIters(), q)));
        // ib_send_lat columns: bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
        report.add(new Figure("latency p50 " + EndToEnd.label(size), Report.REFERENCE, lat[4], "us", false));
        report.add(new Figure("latency p99 " + EndToEnd.label(size), Report.REFERENCE, lat[7], "us", false));
      }
      for (int size : EndToEnd.STREAM_SIZES) {
        // ib_*_bw columns: bytes iterations BW_peak[MB/s] BW_average[MB/s] MsgRate[Mpps]
        // 64 KiB x 10,000 would take ~10 s a run under TCG: fewer, still seconds of streaming
        int iters = size >= 65536 ? n.bwIters() / 3 : n.bwIters();
        int p = port;
        port += 3 * n.trials();
        double[] send = EndToEnd.median(n.trials(), new PortTrial(p, q -> perftest.runRetrying("ib_send_bw", size, iters, q)));
        report.add(new Figure("throughput " + EndToEnd.label(size), Report.REFERENCE, send[3], "MB/s", true));
        double[] write = EndToEnd.median(n.trials(),
            new PortTrial(p + n.trials(), q -> perftest.runRetrying("ib_write_bw", size, iters, q)));
        report.add(new Figure("throughput " + EndToEnd.label(size), Report.WRITE_BW, write[3], "MB/s", true));
        double[] read = EndToEnd.median(n.trials(),
            new PortTrial(p + 2 * n.trials(), q -> perftest.runRetrying("ib_read_bw", size, iters, q)));
        report.add(new Figure("throughput " + EndToEnd.label(size), Report.READ_BW, read[3], "MB/s", true));
        if (size == EndToEnd.DEFAULTS_SIZE) { // the same reference for the library's default-options and zero-copy rows
          report.add(new Figure(EndToEnd.DEFAULTS_METRIC, Report.REFERENCE, send[3], "MB/s", true));
          report.add(new Figure(EndToEnd.ZERO_COPY_METRIC, Report.REFERENCE, send[3], "MB/s", true));
        }
      }
      // The rendezvous row's reference is a READ stream of its size: what the receiver's READs can reach.
      int rp = port;
      port += n.trials();
      double[] read1m = EndToEnd.median(n.trials(), new PortTrial(rp,
          q -> perftest.runRetrying("ib_read_bw", EndToEnd.RENDEZVOUS_SIZE, Math.max(100, n.bwIters() / 30), q)));
      report.add(new Figure(EndToEnd.RENDEZVOUS_METRIC, Report.REFERENCE, read1m[3], "MB/s", true));
      double[] rate = EndToEnd.median(n.trials(),
          new PortTrial(port, q -> perftest.runRetrying("ib_send_bw", EndToEnd.RATE_SIZE, n.bwIters() * 5, q)));
      report.add(new Figure("message rate " + EndToEnd.label(EndToEnd.RATE_SIZE), Report.REFERENCE, rate[4], "Mmsg/s", true));
    } finally {
      Files.writeString(s.out().resolve(Readings.phaseName(s.reading()) + ".log"), perftest.log);
    }
  }

  /** A perftest trial on its own port (a new port per run: the last run's may linger in TIME_WAIT). */
  private static final class PortTrial implements EndToEnd.Trial {
    private int port;
    private final PortRun run;

    PortTrial(int port, PortRun run) {
      this.port = port;
      this.run = run;
    }

    @Override
    public double[] get() throws Exception {
      return run.run(port++);
    }
  }

  private interface PortRun {
    double[] run(int port) throws Exception;
  }
}
