package io.rdmareactive.samples.rsocket;

/** One element of the {@code ticks} stream (JSON on the wire, by Spring's RSocket strategies). */
public record Tick(long sequence, String text) {}
