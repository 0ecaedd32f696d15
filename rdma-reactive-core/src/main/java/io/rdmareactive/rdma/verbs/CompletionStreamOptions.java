package io.rdmareactive.rdma.verbs;

import org.jspecify.annotations.Nullable;

/**
 * How a completion stream waits: {@code EVENT} sleeps on the CQ's channel (one named event-loop
 * thread per channel), {@code BUSY_POLL} spins a named thread of its own with {@code idleStrategy}
 * between empty polls, trading a core for latency. {@code batch} bounds one poll call.
 */
public record CompletionStreamOptions(Mode mode, IdleStrategy idleStrategy, int batch,
    boolean failOnError) {

  /** How the stream learns of completions. */
  public enum Mode {
    /** EVENT when the CQ has a completion channel, otherwise BUSY_POLL. */
    AUTO,
    /** Sleep on the CQ's completion channel between completions. */
    EVENT,
    /** Poll without sleeping, with the idle strategy between empty polls. */
    BUSY_POLL}

  /** Checks that {@code batch} is at least 1. */
  public CompletionStreamOptions {
    if (batch < 1) {
      throw new IllegalArgumentException("batch must be >= 1, was " + batch);
    }
  }

  /** AUTO mode, back-off idle strategy, batches of 32, error completions delivered as items. */
  public static CompletionStreamOptions defaults() {
    return new CompletionStreamOptions(Mode.AUTO, IdleStrategy.backoff(), 32, false);
  }

  /** A copy with {@code mode}. */
  public CompletionStreamOptions withMode(Mode mode) {
    return new CompletionStreamOptions(mode, idleStrategy, batch, failOnError);
  }

  /** A copy with {@code idleStrategy}, used between empty polls in BUSY_POLL mode. */
  public CompletionStreamOptions withIdleStrategy(IdleStrategy idleStrategy) {
    return new CompletionStreamOptions(mode, idleStrategy, batch, failOnError);
  }

  /** A copy polling at most {@code batch} completions per call. */
  public CompletionStreamOptions withBatch(int batch) {
    return new CompletionStreamOptions(mode, idleStrategy, batch, failOnError);
  }

  /** When true, a completion with an error status ends the stream with a WorkCompletionException. */
  public CompletionStreamOptions withFailOnError(boolean failOnError) {
    return new CompletionStreamOptions(mode, idleStrategy, batch, failOnError);
  }

  /** The mode used for a CQ on {@code channel} (null: none): AUTO resolved. */
  public Mode effectiveMode(@Nullable CompletionChannel channel) {
    return mode != Mode.AUTO ? mode : channel != null ? Mode.EVENT : Mode.BUSY_POLL;
  }
}
