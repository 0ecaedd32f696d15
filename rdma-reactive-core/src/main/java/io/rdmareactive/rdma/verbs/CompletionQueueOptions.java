package io.rdmareactive.rdma.verbs;

import org.jspecify.annotations.Nullable;

/**
 * A CQ's depth, channel and completion vector. The depth bounds what may be outstanding: the
 * sum of the send and receive queue depths of the QPs (and SRQs) completing into it must not
 * exceed it, which {@link ProtectionDomain#createQueuePair} checks. As a work request holds its
 * queue slot until its completion is polled (see {@link QueuePair}), the CQ cannot overflow.
 */
public record CompletionQueueOptions(int depth, @Nullable CompletionChannel channel, int vector) {
  /** Checks that the depth is at least 1 and the vector not negative. */
  public CompletionQueueOptions {
    if (depth < 1) {
      throw new IllegalArgumentException("CQ depth must be >= 1, was " + depth);
    }
    if (vector < 0) {
      throw new IllegalArgumentException("completion vector must be >= 0, was " + vector);
    }
  }

  /** A CQ of {@code depth} entries, without a channel, on vector 0. */
  public static CompletionQueueOptions of(int depth) {
    return new CompletionQueueOptions(depth, null, 0);
  }

  /** A copy whose events go to {@code channel} (null: none). */
  public CompletionQueueOptions withChannel(@Nullable CompletionChannel channel) {
    return new CompletionQueueOptions(depth, channel, vector);
  }

  /** A copy on completion vector {@code vector} (the device's interrupt line). */
  public CompletionQueueOptions withVector(int vector) {
    return new CompletionQueueOptions(depth, channel, vector);
  }
}
