package io.rdmareactive.benchmarks;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The end-to-end run's output: a Markdown table with each figure's ratio to the perftest
 * reference of the same metric, the targets judged against it, a comparison with the
 * previous run in the same folder (its "shape"), a CSV, and a PNG chart of the ratios.
 */
final class Report {
  static final String REFERENCE = "perftest";
  static final String WRITE_BW = "perftest ib_write_bw";
  static final String READ_BW = "perftest ib_read_bw";
  /** A figure this close to its target's threshold may land on either side of it from run to run. */
  static final double BORDERLINE = 0.10;
  /** Two runs have the same shape when every ratio moved by less than this fraction. */
  static final double SAME_SHAPE = 0.25;
  private static final List<String> METRICS = List.of("latency p50 8 B", "latency p99 8 B", "latency p50 4 KiB",
      "latency p99 4 KiB", "throughput 4 KiB", "throughput 64 KiB", EndToEnd.DEFAULTS_METRIC, EndToEnd.ZERO_COPY_METRIC,
      "message rate 64 B",
      EndToEnd.SENDER_COMPLETIONS, EndToEnd.RECEIVER_COMPLETIONS, EndToEnd.ZERO_COPY_COPIED, EndToEnd.RENDEZVOUS_METRIC,
      EndToEnd.RENDEZVOUS_COPIED);
  private static final List<String> SYSTEMS = List.of(REFERENCE, WRITE_BW, READ_BW, "rdma-reactive (event)",
      "rdma-reactive (busy-poll)", "reactor-netty-tcp", "rsocket over rdma-reactive (event)", "rsocket over tcp");

  private final List<Figure> figures = new ArrayList<>();
  /** The phase each figure read from a figures file came from: its ratio is read against the perftest beside it. */
  private final Map<Figure, String> phaseOf = new IdentityHashMap<>();
  private Readings readings = new Readings(List.of());

  void add(Figure f) {
    figures.add(f);
    System.out.printf(Locale.ROOT, "  %-28s %-26s %12s %s%n", f.metric(), f.system(), num(f.value()), f.unit());
  }

  List<Figure> figures() {
    return figures;
  }

  /** One phase's raw figures (metric,system,value,unit,higherIsBetter), written at once so a crash leaves none. */
  void writeFigures(Path file) throws IOException {
    StringBuilder sb = new StringBuilder();
    for (Figure f : figures) {
      sb.append(String.format(Locale.ROOT, "%s,%s,%s,%s,%s%n", f.metric(), f.system(), Double.toString(f.value()),
          f.unit(), f.higherIsBetter()));
    }
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, sb);
    Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * Every phase's figures in {@code dir} ({@code figures-*.csv}), in the table's order; perftest's
   * readings ({@link Readings}) as one reference row per figure, their median.
   */
  static Report readFigures(Path dir) throws IOException {
    Report r = new Report();
    r.readings = new Readings(Readings.order(dir));
    Map<String, Figure> firstReference = new LinkedHashMap<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "figures-*.csv")) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        String phase = name.substring("figures-".length(), name.length() - ".csv".length());
        for (String line : Files.readAllLines(f)) {
          String[] c = columns(line);
          if (c != null) {
            Figure fig = new Figure(c[0], c[1], Double.parseDouble(c[2]), c[3], Boolean.parseBoolean(c[4]));
            if (Readings.isReading(phase)) {
              r.readings.add(phase, fig);
              firstReference.putIfAbsent(c[0] + "|" + fig.system(), fig);
            } else {
              r.figures.add(fig);
              r.phaseOf.put(fig, phase);
            }
          }
        }
      }
    }
    r.figures.addAll(r.readings.merged(List.copyOf(firstReference.values())));
    r.figures.sort(Comparator.comparingInt((Figure f) -> rank(METRICS, f.metric()))
        .thenComparingInt(f -> rank(SYSTEMS, f.system())));
    return r;
  }

  /**
   * A figures or results CSV line's five columns (metric, system, value, unit, and the figure's
   * direction or its ratio), or null for a shorter line. Split from the right: a metric may hold a
   * comma ("completions per message 64 B, sender"), and a split into exactly five dropped those.
   */
  private static String @org.jspecify.annotations.Nullable [] columns(String line) {
    String[] c = line.split(",");
    int n = c.length;
    return n < 5 ? null : new String[] {String.join(",", java.util.Arrays.copyOf(c, n - 4)), c[n - 4], c[n - 3],
        c[n - 2], c[n - 1]};
  }

  private static int rank(List<String> order, String s) {
    int i = order.indexOf(s);
    return i < 0 ? order.size() : i;
  }

  /** Moves the last run's results to {@code dir/previous}, so this run's report can compare with them. */
  static void previous(Path dir) throws IOException {
    Path prev = Files.createDirectories(dir.resolve("previous"));
    for (String name : List.of("results.md", "results.csv", "results.png")) {
      EndToEnd.moveAside(dir.resolve(name), prev.resolve(name));
    }
    Files.deleteIfExists(dir.resolve(Readings.ORDER_FILE));
    try (DirectoryStream<Path> old = Files.newDirectoryStream(dir, "figures-*.csv")) {
      for (Path f : old) {
        Files.delete(f);
      }
    }
  }

  /**
   * Ratio to the reference, oriented so that 1.0 means "as good as perftest" and higher is better:
   * against the perftest readings beside the figure's phase where the run has several, else
   * against the reference row.
   */
  double ratio(Figure f) {
    double ref = reference(f);
    double r = f.higherIsBetter() ? f.value() / ref : ref / f.value();
    return Double.isFinite(r) ? r : Double.NaN;
  }

  /** The perftest figure {@code f} is read against: the readings beside its phase, else the reference row; NaN: none. */
  double reference(Figure f) {
    String phase = phaseOf.get(f);
    double ref = phase == null ? Double.NaN : readings.beside(phase, f.metric(), REFERENCE);
    for (int i = 0; i < figures.size() && Double.isNaN(ref); i++) {
      Figure r = figures.get(i);
      if (r.metric().equals(f.metric()) && r.system().equals(REFERENCE)) {
        ref = r.value();
      }
    }
    return ref;
  }

  /**
   * What the shape comparison compares: the ratio to perftest, or, in a run without perftest
   * (--only rdma), the figure itself oriented so that higher is better.
   */
  private double score(Figure f) {
    double r = ratio(f);
    double s = !Double.isNaN(r) || f.system().equals(REFERENCE) ? r : f.higherIsBetter() ? f.value() : 1 / f.value();
    return Double.isFinite(s) ? s : Double.NaN;
  }

  /** Four significant digits, never in exponent form (0.04 Mmsg/s said too little). */
  static String num(double v) {
    if (!Double.isFinite(v)) {
      return "n/a";
    }
    return new java.math.BigDecimal(v).round(new java.math.MathContext(4)).stripTrailingZeros().toPlainString();
  }

  static String x(double r) {
    return Double.isNaN(r) ? "n/a" : String.format(Locale.ROOT, "%.2fx", r);
  }

  String table(String header) {
    StringBuilder sb = new StringBuilder(header).append("\n\n");
    sb.append("| metric | system | value | unit | perftest beside it | vs perftest |\n|---|---|---:|---|---:|---:|\n");
    for (Figure f : figures) {
      double ref = f.system().startsWith(REFERENCE) ? Double.NaN : reference(f);
      sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s |%n", f.metric(), f.system(), num(f.value()),
          f.unit(), Double.isNaN(ref) ? "" : num(ref), x(ratio(f))));
    }
    sb.append("\nRatios read \"fraction of perftest\" (the perftest beside the figure's phase where the run has several readings): for latency perftest/ours, for rates ours/perftest; 1.00x = parity.\n");
    return sb.toString();
  }

  /** target -> "met"/"missed", with the figures behind it (see {@link Targets}). */
  Map<String, String> verdicts() {
    return Targets.verdicts(this);
  }

  private String targets() {
    StringBuilder sb = new StringBuilder("\n### Targets\n\n| target | verdict (better mode) |\n|---|---|\n");
    verdicts().forEach((t, v) -> sb.append("| ").append(t).append(" | ").append(v).append(" |\n"));
    return sb.toString();
  }

  /** This run beside the previous one in {@code dir/previous}: every ratio, and whether the shape held. */
  private String shape(Path dir) throws IOException {
    Path prevCsv = dir.resolve("previous/results.csv");
    if (!Files.exists(prevCsv)) {
      return "\n### Against the previous run\n\nNo previous run in " + dir + ".\n";
    }
    Map<String, Double> prev = new LinkedHashMap<>();
    Map<String, String> prevValue = new LinkedHashMap<>();
    for (String line : Files.readAllLines(prevCsv)) {
      String[] c = columns(line);
      if (c != null && !c[0].equals("metric")) {
        String key = c[0] + "|" + c[1];
        double r = Double.parseDouble(c[4]);
        boolean higherIsBetter = !c[0].startsWith("latency") && !c[0].contains(" per message ");
        double v = Double.parseDouble(c[2]);
        prevValue.put(key, num(v) + " " + c[3]);
        double s = Double.isNaN(r) && !c[1].equals(REFERENCE) ? (higherIsBetter ? v : 1 / v) : r;
        prev.put(key, Double.isFinite(s) ? s : Double.NaN); // 1 / 0 bytes copied compares as nothing
      }
    }
    Path prevMd = dir.resolve("previous/results.md");
    String when = Files.exists(prevMd) ? Files.readAllLines(prevMd).get(0) : "(no header)";
    StringBuilder rows = new StringBuilder();
    int compared = 0, moved = 0;
    String worst = "";
    double worstChange = 0;
    for (Figure f : figures) {
      Double p = prev.get(f.metric() + "|" + f.system());
      double r = score(f);
      if (f.system().equals(REFERENCE) || p == null || p.isNaN() || Double.isNaN(r)) {
        continue;
      }
      double change = r / p - 1;
      boolean counts = !f.metric().startsWith("latency p99"); // tails under emulation: shown, not judged
      compared += counts ? 1 : 0;
      if (counts && Math.abs(change) >= SAME_SHAPE) {
        moved++;
      }
      if (counts && Math.abs(change) > Math.abs(worstChange)) {
        worstChange = change;
        worst = f.metric() + ", " + f.system();
      }
      boolean ratios = !Double.isNaN(ratio(f));
      rows.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %+.0f%% |%n", f.metric(), f.system(),
          ratios ? x(p) : prevValue.get(f.metric() + "|" + f.system()),
          ratios ? x(r) : num(f.value()) + " " + f.unit(),
          change * 100));
    }
    List<String> flips = flips(prev);
    List<String> verdictChanges = new ArrayList<>();
    List<String> borderlineChanges = new ArrayList<>();
    Map<String, String> prevVerdicts = previousVerdicts(dir);
    verdicts().forEach((t, v) -> {
      String before = prevVerdicts.get(t);
      String word = v.substring(0, v.indexOf(':') < 0 ? v.length() : v.indexOf(':'));
      if (before != null && !before.startsWith(word)) {
        boolean noise = before.contains("borderline") || v.contains("borderline");
        (noise ? borderlineChanges : verdictChanges).add(t + " (" + before + " -> " + v + ")");
      }
    });
    StringBuilder sb = new StringBuilder("\n### Against the previous run\n\nPrevious: ").append(when).append("\n\n");
    boolean same = compared > 0 && flips.isEmpty() && verdictChanges.isEmpty();
    sb.append(compared == 0 ? "Nothing to compare." : same ? "**Same shape**" : "**Shape changed**")
        .append(": the shape is which system is ahead on each metric, where the gap was ")
        .append(String.format(Locale.ROOT, "%.0f%%", SAME_SHAPE * 100))
        .append(" or more, and which targets are met (p50 latencies and rates; p99s are shown, not judged: under"
            + " emulation the tail is the host's scheduling). ")
        .append(flips.isEmpty() ? "No system changed places." : "Changed places: " + String.join("; ", flips) + ".")
        .append(' ')
        .append(verdictChanges.isEmpty() ? "Target verdicts unchanged" : "Verdicts changed: " + String.join("; ", verdictChanges))
        .append(borderlineChanges.isEmpty() ? "." : (verdictChanges.isEmpty() ? " but for" : "; and")
            + " a borderline figure on the other side of its threshold (not judged): " + String.join("; ", borderlineChanges) + ".")
        .append(String.format(Locale.ROOT, " %d of %d ratios moved by %.0f%% or more; the largest change is %+.0f%% (%s).%n%n",
            moved, compared, SAME_SHAPE * 100, worstChange * 100, worst));
    sb.append("Compared: the ratio to perftest (or, without perftest figures, the figure itself, latency"
        + " inverted), this run against the previous one.\n\n");
    sb.append("| metric | system | previous | this run | change |\n|---|---|---:|---:|---:|\n").append(rows);
    return sb.toString();
  }

  /**
   * Pairs of systems that changed places on a metric although one of the two runs had them at
   * least {@link #SAME_SHAPE} apart (closer pairs are a tie, and may swap).
   */
  private List<String> flips(Map<String, Double> prev) {
    List<String> flips = new ArrayList<>();
    for (String m : METRICS) {
      if (m.startsWith("latency p99")) {
        continue;
      }
      // the systems under comparison; perftest's ib_write_bw is a second reference, not a contender
      List<Figure> fs = figures.stream().filter(f -> f.metric().equals(m) && !f.system().startsWith(REFERENCE)).toList();
      for (int i = 0; i < fs.size(); i++) {
        for (int j = i + 1; j < fs.size(); j++) {
          Figure a = fs.get(i), b = fs.get(j);
          Double pa = prev.get(m + "|" + a.system()), pb = prev.get(m + "|" + b.system());
          double ta = score(a), tb = score(b);
          if (pa == null || pb == null || Double.isNaN(pa + pb + ta + tb)) {
            continue;
          }
          boolean clearBefore = Math.max(pa, pb) / Math.min(pa, pb) >= 1 + SAME_SHAPE;
          boolean clearNow = Math.max(ta, tb) / Math.min(ta, tb) >= 1 + SAME_SHAPE;
          if ((clearBefore || clearNow) && (pa > pb) != (ta > tb)) {
            flips.add(m + ": " + a.system() + " vs " + b.system());
          }
        }
      }
    }
    return flips;
  }

  /** The previous run's target verdicts, from its results.md. */
  private static Map<String, String> previousVerdicts(Path dir) throws IOException {
    Map<String, String> v = new LinkedHashMap<>();
    Path md = dir.resolve("previous/results.md");
    if (Files.exists(md)) {
      for (String line : Files.readAllLines(md)) {
        for (Targets.Target t : Targets.TARGETS) {
          if (line.startsWith("| " + t.name() + " | ")) {
            v.put(t.name(), line.substring(t.name().length() + 5, line.length() - 2));
          }
        }
      }
    }
    return v;
  }

  void write(Path dir, String header) throws IOException {
    Files.createDirectories(dir);
    List<Figure> references = figures.stream().filter(f -> f.system().startsWith(REFERENCE)).toList();
    Files.writeString(dir.resolve("results.md"), table(header) + readings.table(references) + targets() + shape(dir));
    StringBuilder csv = new StringBuilder("metric,system,value,unit,ratio_to_perftest\n");
    for (Figure f : figures) {
      csv.append(String.format(Locale.ROOT, "%s,%s,%.4f,%s,%.4f%n", f.metric(), f.system(), f.value(), f.unit(), ratio(f)));
    }
    Files.writeString(dir.resolve("results.csv"), csv);
    chart(dir.resolve("results.png"));
  }

  /**
   * Publishes a run: {@code Report RUN_DIR DOCS_DIR} (scripts/benchmark, on the host after the
   * VM) makes the run's {@code results.md} the current results file {@code DOCS_DIR/results.md},
   * which the documents link to instead of quoting figures, and moves the file it replaces, a
   * dated run, to the top of {@code DOCS_DIR/history.md}. Quick and incomplete runs are not
   * published: they would replace a full run's figures with fewer.
   */
  public static void main(String[] args) throws IOException {
    Path run = Path.of(args[0]).resolve("results.md");
    Path docs = Path.of(args[1]);
    String results = Files.readString(run);
    String first = results.lines().findFirst().orElse("");
    if (!first.contains("full run") || first.contains("INCOMPLETE") || first.contains("a phase failed")) {
      System.out.println("Report: not published (not a complete full run): " + first);
      return;
    }
    Path current = docs.resolve("results.md");
    Path history = docs.resolve("history.md");
    String marker = "<!-- written by scripts/benchmark (Report), do not edit -->";
    if (Files.exists(current) && Files.readString(current).contains(marker)) { // else a placeholder, no run
      String old = Files.readString(current);
      String title = "# Benchmark history\n\nEarlier runs of `scripts/benchmark`, newest first, each as its report wrote it."
          + " The current run is [results.md](results.md).\n";
      String past = Files.exists(history) ? Files.readString(history).substring(title.length()) : "";
      // The replaced run's own header line ("> End-to-end run of <date> ...") becomes its heading.
      String replaced = old.substring(old.indexOf(marker) + marker.length() + 1).replaceFirst("^> ", "");
      Files.writeString(history, title + "\n## " + replaced.strip() + "\n" + past);
    }
    Files.writeString(current, "# Current benchmark results\n\n" + marker + "\n" + results);
    System.out.println("Report: published " + run + " as " + current + "; the run it replaces moved to " + history);
  }

  private void chart(Path png) throws IOException {
    Map<String, Map<String, Double>> bySystem = new LinkedHashMap<>();
    List<String> metrics = new ArrayList<>();
    for (Figure f : figures) {
      if (!metrics.contains(f.metric())) {
        metrics.add(f.metric());
      }
      bySystem.computeIfAbsent(f.system(), s -> new LinkedHashMap<>()).put(f.metric(), ratio(f));
    }
    CategoryChart chart = new CategoryChartBuilder().width(1200).height(600)
        .title("rdma-reactive vs perftest (1.0 = perftest; higher is better)")
        .xAxisTitle("metric").yAxisTitle("fraction of perftest").build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    chart.getStyler().setXAxisLabelRotation(20);
    for (var e : bySystem.entrySet()) {
      List<Double> ys = new ArrayList<>();
      for (String m : metrics) {
        Double v = e.getValue().get(m);
        ys.add(v == null || v.isNaN() ? 0.0 : v);
      }
      chart.addSeries(e.getKey(), metrics, ys);
    }
    BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
  }
}
