package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** What the kernel's RDMA resource tracker lists ({@code rdma resource show}, iproute2) for this JVM. */
final class KernelResources {
  private static final Pattern PID = Pattern.compile(" pid (\\d+) ");
  private static final Pattern COUNT = Pattern.compile("\\b([a-z_]+) (\\d+)");
  /** Always counted; other kinds the kernel's summary names (srq, ctx, ...) are added when present. */
  private static final List<String> KINDS = List.of("pd", "cq", "qp", "mr", "cm_id");

  private KernelResources() {}

  /** Live objects of this JVM by kind (every kind listed, zero included). */
  static Map<String, Integer> live() {
    Set<String> kinds = new LinkedHashSet<>(KINDS);
    kinds.addAll(summaryKinds());
    Map<String, Integer> out = new TreeMap<>();
    for (String kind : kinds) {
      out.put(kind, ofThisProcess(kind).size());
    }
    return out;
  }

  /**
   * This JVM's open RDMA CM event channels: its descriptors on {@code /dev/infiniband/rdma_cm}
   * (rdma_create_event_channel opens one each; CM ids are counted by {@link #live()} as cm_id).
   */
  static int cmEventChannels() {
    try (var fds = Files.list(Path.of("/proc/self/fd"))) {
      return (int) fds.filter(fd -> {
        try {
          return Files.readSymbolicLink(fd).toString().equals("/dev/infiniband/rdma_cm");
        } catch (IOException e) {
          return false; // closed while listing (the listing's own descriptor, say)
        }
      }).count();
    } catch (IOException e) {
      throw new AssertionError("cannot list /proc/self/fd", e);
    }
  }

  /**
   * Lines of {@code rdma resource show <kind>} created by this JVM. The kernel records the creating
   * thread (its tid): a line is ours when that thread is one of ours, or has ended (an ended
   * process has its resources destroyed, so an ended tid with live resources was a thread of ours).
   */
  static List<String> ofThisProcess(String kind) {
    return show(kind).lines().filter(KernelResources::ownedByThisProcess).toList();
  }

  /** Kinds named in the per-device summary ("0: rxe0: pd 1 cq 2 qp 1 cm_id 0 mr 0 ctx 0"). */
  private static Set<String> summaryKinds() {
    Set<String> out = new LinkedHashSet<>();
    for (String line : show(null).lines().toList()) {
      int colon = line.indexOf(": ", line.indexOf(':') + 1);
      Matcher m = COUNT.matcher(colon < 0 ? line : line.substring(colon + 2));
      while (m.find()) {
        out.add(m.group(1));
      }
    }
    return out;
  }

  private static boolean ownedByThisProcess(String line) {
    Matcher m = PID.matcher(line + " ");
    if (!m.find()) {
      return false;
    }
    String tid = m.group(1);
    return Files.exists(Path.of("/proc/self/task", tid)) || !Files.exists(Path.of("/proc", tid));
  }

  private static String show(@Nullable String kind) {
    ProcessBuilder pb = kind == null ? new ProcessBuilder("rdma", "resource", "show")
        : new ProcessBuilder("rdma", "resource", "show", kind);
    try {
      Process p = pb.redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as("rdma resource show %s:\n%s", kind, out).isZero();
      return out;
    } catch (IOException e) {
      throw new AssertionError("the 'rdma' tool (iproute2) is needed for the leak check", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
