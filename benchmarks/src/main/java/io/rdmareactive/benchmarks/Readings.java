package io.rdmareactive.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * perftest's readings across one run, and which of them each phase's figures are compared with.
 *
 * <p>Why: the emulated device's speed drifts within one VM boot (session 21 saw {@code ib_send_bw}
 * 64 KiB at 28-54 MB/s from one run to the next, and 35 to 69 MB/s over one boot), so one perftest
 * phase minutes before the JVM phases put that drift into every ratio. scripts/lib/benchmark-guest
 * runs perftest again between this library's phases ({@code --reading N}); a phase's figures are
 * then read against the geometric mean of the readings just before and just after it, and the
 * readings' spread says how far the device itself moved during the run. The reference rows of the
 * table are each figure's median over the readings.
 *
 * <p>A phase's place in the run comes from {@value #ORDER_FILE}, which {@link EndToEnd} appends
 * each phase to as it ends. The phases after the last reading (the TCP ones) read against it
 * alone. With one reading, or without that file, every phase reads against the one (median)
 * reference, as before.
 */
final class Readings {
  /** The phases of the run, one per line, in the order they ended. */
  static final String ORDER_FILE = "order.txt";

  /** The phases in run order, as their figures files name them ({@code perftest-2}, {@code rdma-event}). */
  private final List<String> order;
  /** Reading (a perftest phase's name) -> "metric|system" -> value. */
  private final Map<String, Map<String, Double>> readings = new LinkedHashMap<>();

  Readings(List<String> order) {
    this.order = order;
  }

  /** The run order in {@code dir}, or none. */
  static List<String> order(Path dir) throws IOException {
    Path f = dir.resolve(ORDER_FILE);
    // distinct: a phase that wrote its figures but failed on its way out (a hang at exit) runs again
    return Files.exists(f) ? Files.readAllLines(f).stream().map(String::strip).filter(s -> !s.isEmpty()).distinct()
        .toList() : List.of();
  }

  /** Records that {@code phase} ended, in {@code dir}'s run order. */
  static void ended(Path dir, String phase) throws IOException {
    Files.writeString(dir.resolve(ORDER_FILE), phase + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  /** Whether a figures file of {@code phase} is one of perftest's readings. */
  static boolean isReading(String phase) {
    return phase.equals(Report.REFERENCE) || phase.matches(Report.REFERENCE + "-[0-9]+");
  }

  /** Which reading {@code phase} is: 1 for {@code perftest}, N for {@code perftest-N}. */
  private static int number(String phase) {
    return phase.equals(Report.REFERENCE) ? 1 : Integer.parseInt(phase.substring(Report.REFERENCE.length() + 1));
  }

  /** The figures file name of perftest's reading {@code n} (the first keeps the name it always had). */
  static String phaseName(int n) {
    return n <= 1 ? Report.REFERENCE : Report.REFERENCE + "-" + n;
  }

  void add(String reading, Figure f) {
    readings.computeIfAbsent(reading, r -> new LinkedHashMap<>()).put(f.metric() + "|" + f.system(), f.value());
  }

  /** Each reference figure's median over the readings, as the table's reference row shows it. */
  List<Figure> merged(List<Figure> firstOfEach) {
    List<Figure> out = new ArrayList<>();
    for (Figure f : firstOfEach) {
      out.add(new Figure(f.metric(), f.system(), median(values(f.metric(), f.system())), f.unit(), f.higherIsBetter()));
    }
    return out;
  }

  /**
   * The reference for {@code metric} beside {@code phase}: the geometric mean of {@code system}'s
   * readings just before and just after it in the run, or the one there is; NaN when the run order
   * does not place the phase between readings (then the merged reference applies).
   */
  double beside(String phase, String metric, String system) {
    int at = order.indexOf(phase);
    if (at < 0 || readings.size() < 2) {
      return Double.NaN;
    }
    double before = Double.NaN, after = Double.NaN;
    for (int i = at - 1; i >= 0 && Double.isNaN(before); i--) {
      before = value(order.get(i), metric, system);
    }
    for (int i = at + 1; i < order.size() && Double.isNaN(after); i++) {
      after = value(order.get(i), metric, system);
    }
    return Double.isNaN(before) ? after : Double.isNaN(after) ? before : Math.sqrt(before * after);
  }

  private double value(String phase, String metric, String system) {
    Map<String, Double> r = readings.get(phase);
    Double v = r == null ? null : r.get(metric + "|" + system);
    return v == null ? Double.NaN : v;
  }

  private List<Double> values(String metric, String system) {
    List<Double> vs = new ArrayList<>();
    for (Map<String, Double> r : readings.values()) {
      Double v = r.get(metric + "|" + system);
      if (v != null && Double.isFinite(v)) {
        vs.add(v);
      }
    }
    return vs;
  }

  private static double median(List<Double> vs) {
    if (vs.isEmpty()) {
      return Double.NaN;
    }
    List<Double> s = new ArrayList<>(vs);
    s.sort(null);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : Math.sqrt(s.get(n / 2 - 1) * s.get(n / 2));
  }

  /** The readings' table: each reference figure per reading, in run order, and its spread (max / min - 1). */
  String table(List<Figure> references) {
    if (readings.size() < 2) {
      return "";
    }
    List<String> names = order.stream().filter(readings::containsKey).toList();
    if (names.size() != readings.size()) { // no run order: by reading number
      names = readings.keySet().stream().sorted(java.util.Comparator.comparingInt(Readings::number)).toList();
    }
    StringBuilder sb = new StringBuilder("\n### perftest across the run\n\n")
        .append("perftest ran ").append(readings.size()).append(" times, between this library's phases (run order: ")
        .append(String.join(", ", order)).append("). Each figure of a phase is read against the geometric mean of")
        .append(" the readings just before and after it; the reference rows above are the medians. The spread is")
        .append(" how far the device itself moved during the run.\n\n| metric | system |");
    names.forEach(n -> sb.append(' ').append(n).append(" |"));
    sb.append(" spread |\n|---|---|").append("---:|".repeat(names.size() + 1)).append('\n');
    for (Figure f : references) {
      java.util.DoubleSummaryStatistics vs = values(f.metric(), f.system()).stream().mapToDouble(Double::doubleValue)
          .summaryStatistics();
      if (vs.getCount() == 0) {
        continue; // a reference from elsewhere (scripts/benchmark-pair's host-to-host), not a reading
      }
      sb.append("| ").append(f.metric()).append(" | ").append(f.system()).append(" |");
      for (String n : names) {
        sb.append(' ').append(Report.num(value(n, f.metric(), f.system()))).append(" |");
      }
      double spread = vs.getMax() / vs.getMin() - 1;
      sb.append(Double.isFinite(spread) ? String.format(Locale.ROOT, " %.0f%% |%n", spread * 100) : " n/a |\n");
    }
    return sb.toString();
  }
}
