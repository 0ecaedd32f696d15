package io.rdmareactive.benchmarks;

/**
 * One measured figure of the end-to-end run. {@code higherIsBetter} decides how the ratio to the
 * perftest reference reads (latency: lower is better).
 */
record Figure(String metric, String system, double value, String unit, boolean higherIsBetter) {}
