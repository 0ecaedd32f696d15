package io.rdmareactive.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The table of {@code scripts/benchmark-compare}: for every figure both revisions measured, the
 * median of each over its rounds, the ratio after/before, and each one's spread (max - min over
 * the median, across rounds). A change counts only when the ratio leaves 1 by more than the larger
 * spread: that spread is the run-to-run noise of this very run.
 *
 * <pre>Compare OUT ROUNDS</pre> reads {@code OUT/before-R/} and {@code OUT/after-R/} (figures-*.csv
 * for R = 1..ROUNDS) and {@code OUT/rev-*.txt}; writes {@code OUT/compare.md} and prints it.
 */
public final class Compare {
  private Compare() {}

  /** Runs the comparison (see the class comment for the arguments). */
  public static void main(String[] args) throws IOException {
    Path out = Path.of(args[0]);
    int rounds = Integer.parseInt(args[1]);
    Map<String, List<Figure>> before = rounds(out, "before", rounds);
    Map<String, List<Figure>> after = rounds(out, "after", rounds);
    StringBuilder md = new StringBuilder("# Before and after, one VM boot\n\n");
    md.append("before: ").append(Files.readString(out.resolve("rev-before.txt")).strip().replace('\n', ' '))
        .append("; after: ").append(Files.readString(out.resolve("rev-after.txt")).strip().replace('\n', ' '))
        .append("; ").append(rounds).append(" rounds each, alternating (before, after, before, ...)\n\n");
    if (Files.exists(out.resolve("reruns.txt"))) {
      md.append("Reruns: ").append(Files.readString(out.resolve("reruns.txt")).strip().replace("\n", "; ")).append("\n\n");
    }
    md.append("| figure | before (median) | after (median) | after/before | spread before | spread after | verdict |\n");
    md.append("|---|---|---|---|---|---|---|\n");
    int better = 0;
    int worse = 0;
    int same = 0;
    for (var e : before.entrySet()) {
      List<Figure> a = after.get(e.getKey());
      if (a == null) {
        continue;
      }
      Figure f = e.getValue().getFirst();
      double mb = median(e.getValue());
      double ma = median(a);
      double ratio = ma == mb ? 1 : ma / mb; // 0 against 0 (bytes copied) is the same, not NaN
      double sb = spread(e.getValue(), mb);
      double sa = spread(a, ma);
      double noise = Math.max(sb, sa);
      String verdict;
      if (Double.isNaN(ratio) || Math.abs(ratio - 1) <= noise) {
        verdict = "within noise";
        same++;
      } else if ((ratio > 1) == f.higherIsBetter()) {
        verdict = "better";
        better++;
      } else {
        verdict = "**worse**";
        worse++;
      }
      md.append(String.format(Locale.ROOT, "| %s, %s | %.4g %s | %.4g %s | %.3f | %.1f%% | %.1f%% | %s |%n",
          f.metric(), f.system(), mb, f.unit(), ma, f.unit(), ratio, 100 * sb, 100 * sa, verdict));
    }
    md.append(String.format(Locale.ROOT, "%n%d within noise, %d better, %d worse.%n", same, better, worse));
    Files.writeString(out.resolve("compare.md"), md);
    System.out.print(md);
  }

  private static Map<String, List<Figure>> rounds(Path out, String label, int rounds) throws IOException {
    Map<String, List<Figure>> byKey = new LinkedHashMap<>();
    for (int r = 1; r <= rounds; r++) {
      Path dir = out.resolve(label + "-" + r);
      if (!Files.isDirectory(dir)) {
        continue;
      }
      for (Figure f : Report.readFigures(dir).figures()) {
        byKey.computeIfAbsent(f.metric() + "|" + f.system(), k -> new ArrayList<>()).add(f);
      }
    }
    return byKey;
  }

  private static double median(List<Figure> fs) {
    double[] v = fs.stream().mapToDouble(Figure::value).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static double spread(List<Figure> fs, double median) {
    double max = fs.stream().mapToDouble(Figure::value).max().orElse(median);
    double min = fs.stream().mapToDouble(Figure::value).min().orElse(median);
    return median == 0 ? 0 : (max - min) / median;
  }
}
