package io.rdmareactive.benchmarks;

import java.io.IOException;
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
    System.out.println("  " + tool + " " + size + " B failed three times: see perftest.log");
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
}
