package io.rdmareactive.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * reference of the same metric, a CSV, and a PNG chart of those ratios.
 */
final class Report {
  static final String REFERENCE = "perftest";
  private final List<Figure> figures = new ArrayList<>();

  void add(Figure f) {
    figures.add(f);
    System.out.printf(Locale.ROOT, "  %-28s %-22s %12.2f %s%n", f.metric(), f.system(), f.value(), f.unit());
  }

  List<Figure> figures() {
    return figures;
  }

  /** Ratio to the reference, oriented so that 1.0 means "as good as perftest" and higher is better. */
  double ratio(Figure f) {
    for (Figure ref : figures) {
      if (ref.metric().equals(f.metric()) && ref.system().equals(REFERENCE)) {
        double r = f.higherIsBetter() ? f.value() / ref.value() : ref.value() / f.value();
        return Double.isFinite(r) ? r : Double.NaN;
      }
    }
    return Double.NaN;
  }

  String table(String header) {
    StringBuilder sb = new StringBuilder(header).append("\n\n");
    sb.append("| metric | system | value | unit | vs perftest |\n|---|---|---:|---|---:|\n");
    for (Figure f : figures) {
      double r = ratio(f);
      sb.append(String.format(Locale.ROOT, "| %s | %s | %.2f | %s | %s |%n", f.metric(), f.system(), f.value(),
          f.unit(), Double.isNaN(r) ? "n/a" : String.format(Locale.ROOT, "%.2fx", r)));
    }
    sb.append("\nRatios read \"fraction of perftest\": for latency perftest/ours, for rates ours/perftest; 1.00x = parity.\n");
    return sb.toString();
  }

  void write(Path dir, String header) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("results.md"), table(header));
    StringBuilder csv = new StringBuilder("metric,system,value,unit,ratio_to_perftest\n");
    for (Figure f : figures) {
      csv.append(String.format(Locale.ROOT, "%s,%s,%.4f,%s,%.4f%n", f.metric(), f.system(), f.value(), f.unit(), ratio(f)));
    }
    Files.writeString(dir.resolve("results.csv"), csv);
    chart(dir.resolve("results.png"));
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
