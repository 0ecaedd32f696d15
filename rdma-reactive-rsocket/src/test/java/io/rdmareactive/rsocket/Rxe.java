package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.TransportFixture;
import java.util.Map;

/**
 * rxe0 at RDMA_TEST_ADDRESS (default 10.0.0.1) for the RSocket tests that run in the Soft-RoCE VM
 * (scripts/softroce-vm), with or without a check of the kernel's resource counts.
 */
final class Rxe implements TransportFixture {
  /** Leaks are checked as received frames not released only (the kernel's counts are the native module's to check). */
  static final Rxe UNCOUNTED = new Rxe(false);
  /** The kernel's counts on the device compared before and after each test too. */
  static final Rxe COUNTED = new Rxe(true);

  private final boolean counted;

  private Rxe(boolean counted) {
    this.counted = counted;
  }

  @Override
  public String provider() {
    return "native";
  }

  @Override
  public String host() {
    return System.getenv().getOrDefault("RDMA_TEST_ADDRESS", "10.0.0.1");
  }

  /** The kernel's counts on the device (only this JVM uses rxe0 in the VM): MRs and PDs included. */
  @Override
  public Map<String, Integer> liveResources() {
    return counted ? kernelCounts() : Map.of();
  }

  /** {@code rdma resource show}'s summary ("0: rxe0: pd 1 cq 2 qp 1 cm_id 0 mr 0 ctx 0"), but contexts (kept open by the provider). */
  private static Map<String, Integer> kernelCounts() {
    try {
      Process p = new ProcessBuilder("rdma", "resource", "show").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError("rdma resource show failed:\n" + out);
      }
      Map<String, Integer> counts = new java.util.TreeMap<>();
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\b([a-z_]+) (\\d+)").matcher(out);
      while (m.find()) {
        if (!m.group(1).equals("ctx")) {
          counts.merge(m.group(1), Integer.parseInt(m.group(2)), Integer::sum);
        }
      }
      return counts;
    } catch (java.io.IOException e) {
      throw new AssertionError("the 'rdma' tool (iproute2) is needed for the leak check", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
