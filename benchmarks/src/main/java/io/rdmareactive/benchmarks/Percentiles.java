package io.rdmareactive.benchmarks;

import java.util.Arrays;

/** Percentiles over recorded nanosecond samples. */
final class Percentiles {
  private final long[] sorted;

  Percentiles(long[] samples, int count) {
    sorted = Arrays.copyOf(samples, count);
    Arrays.sort(sorted);
  }

  /** The {@code p}-th percentile (0..100) in microseconds. */
  double micros(double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1_000.0;
  }
}
