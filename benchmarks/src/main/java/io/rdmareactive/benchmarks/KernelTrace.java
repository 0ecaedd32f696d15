package io.rdmareactive.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a kernel {@code function_graph} trace of an 8 B ping-pong on rxe (filter
 * {@code ib_uverbs_write} and {@code rxe_cq_post}, options {@code funcgraph-abstime} and
 * {@code funcgraph-proc}; scripts/lib/latency-breakdown-guest takes it) and splits each side's one
 * way into the device's part and the process's part, with no clock read in the process itself:
 *
 * <ul>
 *   <li>{@code write}: one doorbell {@code write()} (ibv_post_send on rxe), in the kernel. rxe runs
 *       the whole exchange inside it: the requester, the loopback, the peer's responder (which
 *       posts the peer's receive completion), the ACK and this side's send completion.
 *   <li>{@code cqe_at}: from the write's entry to the first {@code rxe_cq_post} inside it, the
 *       peer's receive completion: the device's share of one way.
 *   <li>{@code reaction}: from that completion to the peer's next write's entry, when the peer was
 *       not itself inside a write then: its poll finding the completion, its handling, its next
 *       post up to the system call. The process's share of one way.
 * </ul>
 *
 * <p>Busy-poll only: an event-mode loop arms its CQ with a {@code write()} of its own, which this
 * would count as a doorbell. The guest script sets {@code trace_clock} to {@code global}, so that
 * timestamps from the two CPUs compare.
 *
 * <pre>KernelTrace TRACE...</pre> prints one line per thread of the two busiest (medians, µs).
 */
final class KernelTrace {
  private static final Pattern LINE = Pattern.compile(
      "^\\s*([\\d.]+)\\s*\\|\\s*(\\d+)\\)\\s+(\\S+)\\s+\\|\\s*[!#+*@$ ]?\\s*([\\d.]+)?\\s*(?:us)?\\s*\\|\\s*(.*)$");

  private KernelTrace() {}

  /** One write: entry and exit (µs), and the first completion posted inside it (NaN if none). */
  private record Write(double entry, double exit, double cqe) {}

  /** Each thread's writes, the trace lines that fit no write, and the writes dropped for a stalled clock. */
  private record Parsed(Map<String, List<Write>> writes, int unmatched, int stalled) {}

  public static void main(String[] args) throws IOException {
    for (String file : args) {
      System.out.println("# " + Path.of(file).getFileName());
      report(parse(Path.of(file))).forEach(System.out::println);
    }
  }

  /**
   * Each thread's writes, keyed by the trace's task column (name and thread id): a write may return
   * on another CPU than it entered on, and only its own thread runs inside it.
   */
  private static Parsed parse(Path trace) throws IOException {
    Map<String, List<Write>> writes = new LinkedHashMap<>();
    Map<String, double[]> open = new HashMap<>(); // task -> {entry, cqe}
    int unmatched = 0;
    int stalled = 0;
    for (String line : Files.readAllLines(trace)) {
      Matcher m = LINE.matcher(line);
      if (!m.matches()) {
        continue;
      }
      double ts = Double.parseDouble(m.group(1)) * 1e6;
      String task = m.group(3);
      String call = m.group(5).strip();
      if (call.startsWith("ib_uverbs_write") && call.endsWith("{")) {
        if (open.put(task, new double[] {ts, Double.NaN}) != null) {
          unmatched++; // a write that never returned in the trace
        }
      } else if (call.startsWith("rxe_cq_post")) {
        double[] w = open.get(task);
        if (w == null) {
          unmatched++;
        } else if (Double.isNaN(w[1])) {
          w[1] = ts;
        }
      } else if (call.startsWith("}")) {
        double[] w = open.remove(task);
        if (w == null) {
          unmatched++;
        } else if (ts <= w[0] || w[1] <= w[0]) {
          // The guest's trace clock stalls at times (one value over hundreds of lines, under TCG):
          // a doorbell write takes tens of µs, so a write that took none is dropped.
          stalled++;
        } else {
          writes.computeIfAbsent(task, k -> new ArrayList<>()).add(new Write(w[0], ts, w[1]));
        }
      } else if (call.startsWith("ib_uverbs_write")) {
        unmatched++; // a write with nothing traced inside it: not a doorbell of this exchange
      }
    }
    return new Parsed(writes, unmatched, stalled);
  }

  private static List<String> report(Parsed parsed) {
    Map<String, List<Write>> writes = parsed.writes();
    List<String> tasks = writes.keySet().stream()
        .sorted((a, b) -> Integer.compare(writes.get(b).size(), writes.get(a).size())).limit(2).toList();
    List<String> lines = new ArrayList<>();
    if (tasks.size() < 2) {
      lines.add("fewer than two threads wrote: " + writes.keySet());
      return lines;
    }
    for (String task : tasks) {
      List<Write> own = writes.get(task);
      List<Write> peer = writes.get(tasks.get(task.equals(tasks.get(0)) ? 1 : 0));
      double[] peerEntries = peer.stream().mapToDouble(Write::entry).toArray();
      double[] write = new double[own.size()];
      double[] cqeAt = new double[own.size()];
      double[] reaction = new double[own.size()];
      double[] cqeAtPeerIdle = new double[own.size()];
      double[] cqeAtPeerBusy = new double[own.size()];
      int n = 0;
      int c = 0;
      int idle = 0;
      int busy = 0;
      int overlapped = 0;
      for (int i = 0; i < own.size(); i++) {
        Write w = own.get(i);
        write[i] = w.exit() - w.entry();
        if (Double.isNaN(w.cqe())) {
          continue;
        }
        cqeAt[c++] = w.cqe() - w.entry();
        // The device's part depends on whether the peer was still in the kernel (its own write)
        // when this write began: both programs are compared within each case.
        int k = firstAfter(peerEntries, w.entry());
        if (k > 0 && peer.get(k - 1).exit() > w.entry()) {
          cqeAtPeerBusy[busy++] = w.cqe() - w.entry();
        } else {
          cqeAtPeerIdle[idle++] = w.cqe() - w.entry();
        }
        int j = firstAfter(peerEntries, w.cqe());
        if (j >= peer.size()) {
          continue;
        }
        if (j > 0 && peer.get(j - 1).exit() > w.cqe()) {
          overlapped++; // the peer was still in its own write: its reaction includes that wait
        } else {
          reaction[n++] = peer.get(j).entry() - w.cqe();
        }
      }
      double[] rtt = new double[Math.max(0, own.size() - 1)];
      for (int i = 0; i + 1 < own.size(); i++) {
        rtt[i] = own.get(i + 1).entry() - own.get(i).entry();
      }
      lines.add(String.format(Locale.ROOT,
          "%s writes %d write_us %.1f round_trip_us %.1f cqe_at_us %.1f (peer in user space: %.1f, n %d; peer in a write:"
              + " %.1f, n %d) peer_reaction_us %.1f (n %d; %d with the peer still in a write)",
          task, own.size(), median(write, write.length), median(rtt, rtt.length), median(cqeAt, c),
          median(cqeAtPeerIdle, idle), idle, median(cqeAtPeerBusy, busy), busy, median(reaction, n), n, overlapped));
    }
    lines.add("lines that fit no write: " + parsed.unmatched() + "; writes dropped for a stalled clock: " + parsed.stalled());
    return lines;
  }

  /** The first index whose value is at least {@code t} (the trace's clock has microseconds only). */
  private static int firstAfter(double[] sorted, double t) {
    int lo = 0;
    int hi = sorted.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (sorted[mid] < t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  private static double median(double[] v, int n) {
    if (n == 0) {
      return Double.NaN;
    }
    double[] s = Arrays.copyOf(v, n);
    Arrays.sort(s);
    return s[n / 2];
  }
}
