package io.rdmareactive.rdma.verbs;

import org.jspecify.annotations.Nullable;

/**
 * What a QP is created with (struct ibv_qp_init_attr(_ex)). The send and receive CQs must be
 * deep enough for {@code maxSendWorkRequests} and {@code maxReceiveWorkRequests}; with an SRQ the
 * receive side comes from it. XRC send QPs need no receive side and no SRQ.
 */
public record QueuePairOptions(QueuePairType type, CompletionQueue sendCompletionQueue,
    @Nullable CompletionQueue receiveCompletionQueue, @Nullable SharedReceiveQueue sharedReceiveQueue,
    int maxSendWorkRequests, int maxReceiveWorkRequests, int maxSendScatterGather,
    int maxReceiveScatterGather, int maxInlineData, boolean signalAll) {

  /** Checks that no capacity is negative. */
  public QueuePairOptions {
    if (maxSendWorkRequests < 0 || maxReceiveWorkRequests < 0 || maxSendScatterGather < 0
        || maxReceiveScatterGather < 0 || maxInlineData < 0) {
      throw new IllegalArgumentException("queue pair capacities must be >= 0");
    }
  }

  /** An RC QP with one CQ for both directions and {@code depth} work requests each way. */
  public static QueuePairOptions reliable(CompletionQueue cq, int depth) {
    return new QueuePairOptions(QueuePairType.RC, cq, cq, null, depth, depth, 1, 1, 0, false);
  }

  /** A copy of transport type {@code type}. */
  public QueuePairOptions withType(QueuePairType type) {
    return new QueuePairOptions(type, sendCompletionQueue, receiveCompletionQueue, sharedReceiveQueue,
        maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather, maxReceiveScatterGather,
        maxInlineData, signalAll);
  }

  /** A copy completing receives on {@code cq} (null: none, for XRC_SEND). */
  public QueuePairOptions withReceiveCompletionQueue(@Nullable CompletionQueue cq) {
    return new QueuePairOptions(type, sendCompletionQueue, cq, sharedReceiveQueue,
        maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather, maxReceiveScatterGather,
        maxInlineData, signalAll);
  }

  /** A copy taking receives from {@code srq} (then it has no receive queue of its own). */
  public QueuePairOptions withSharedReceiveQueue(@Nullable SharedReceiveQueue srq) {
    return new QueuePairOptions(type, sendCompletionQueue, receiveCompletionQueue, srq,
        maxSendWorkRequests, srq == null ? maxReceiveWorkRequests : 0, maxSendScatterGather,
        maxReceiveScatterGather, maxInlineData, signalAll);
  }

  /** A copy holding {@code send} send and {@code receive} receive work requests. */
  public QueuePairOptions withDepth(int send, int receive) {
    return new QueuePairOptions(type, sendCompletionQueue, receiveCompletionQueue, sharedReceiveQueue,
        send, receive, maxSendScatterGather, maxReceiveScatterGather, maxInlineData, signalAll);
  }

  /** A copy with room for {@code send} and {@code receive} scatter/gather entries per request. */
  public QueuePairOptions withScatterGather(int send, int receive) {
    return new QueuePairOptions(type, sendCompletionQueue, receiveCompletionQueue, sharedReceiveQueue,
        maxSendWorkRequests, maxReceiveWorkRequests, send, receive, maxInlineData, signalAll);
  }

  /** A copy accepting {@code bytes} of inline data per send. */
  public QueuePairOptions withMaxInlineData(int bytes) {
    return new QueuePairOptions(type, sendCompletionQueue, receiveCompletionQueue, sharedReceiveQueue,
        maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather, maxReceiveScatterGather,
        bytes, signalAll);
  }

  /** A copy that reports every send's completion ({@code true}) or only signaled ones. */
  public QueuePairOptions withSignalAll(boolean signalAll) {
    return new QueuePairOptions(type, sendCompletionQueue, receiveCompletionQueue, sharedReceiveQueue,
        maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather, maxReceiveScatterGather,
        maxInlineData, signalAll);
  }
}
