package io.rdmareactive.rdma.verbs;

import org.jspecify.annotations.Nullable;

/**
 * A CQ's depth, channel and completion vector. The depth bounds what may be outstanding: the
 * sum of the send and receive queue depths of the QPs (and SRQs) completing into it must not
 * exceed it, which {@link ProtectionDomain#createQueuePair} checks. As a work request holds its
 * queue slot until its completion is polled (see {@link QueuePair}), the CQ cannot overflow.
 */
public record CompletionQueueOptions(int depth, @Nullable CompletionChannel channel, int vector) {
  public CompletionQueueOptions {
    if (depth < 1) {
      throw new IllegalArgumentException("CQ depth must be >= 1, was " + depth);
    }
    if (vector < 0) {
      throw new IllegalArgumentException("completion vector must be >= 0, was " + vector);
    }
  }

  public static CompletionQueueOptions of(int depth) {
    return new CompletionQueueOptions(depth, null, 0);
  }

  public CompletionQueueOptions withChannel(@Nullable CompletionChannel channel) {
    return new CompletionQueueOptions(depth, channel, vector);
  }

  public CompletionQueueOptions withVector(int vector) {
    return new CompletionQueueOptions(depth, channel, vector);
  }
}
