package io.rdmareactive.rdma.rdmacore;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The RC queue pair a CM endpoint gets (struct ibv_qp_init_attr for rdma_create_ep and
 * rdma_create_qp). librdmacm creates the send and receive CQs, each with its own completion
 * channel, sized to the work-request depths.
 */
record CmQueuePairOptions(int maxSendWorkRequests, int maxReceiveWorkRequests, int maxSendScatterGather,
    int maxReceiveScatterGather, int maxInlineData, boolean signalAll) {

  CmQueuePairOptions {
    if (maxSendWorkRequests < 1 || maxReceiveWorkRequests < 1 || maxSendScatterGather < 1
        || maxReceiveScatterGather < 1 || maxInlineData < 0) {
      throw new IllegalArgumentException("queue pair depths and scatter/gather sizes must be >= 1 and "
          + "max inline data >= 0, were " + maxSendWorkRequests + "/" + maxReceiveWorkRequests + ", "
          + maxSendScatterGather + "/" + maxReceiveScatterGather + ", " + maxInlineData);
    }
  }

  /** {@code depth} work requests each way, one SGE each, no inline data, every send signaled. */
  static CmQueuePairOptions of(int depth) {
    return new CmQueuePairOptions(depth, depth, 1, 1, 0, true);
  }

  CmQueuePairOptions withMaxInlineData(int bytes) {
    return new CmQueuePairOptions(maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather,
        maxReceiveScatterGather, bytes, signalAll);
  }

  CmQueuePairOptions withSignalAll(boolean all) {
    return new CmQueuePairOptions(maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather,
        maxReceiveScatterGather, maxInlineData, all);
  }

  /** A struct ibv_qp_init_attr in {@code arena}; {@code context} becomes qp_context. */
  MemorySegment toNative(Arena arena, MemorySegment context) {
    return new QpInitAttr(arena).context(context)
        .capabilities(maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather, maxReceiveScatterGather,
            maxInlineData)
        .type((int) CmLayout.IBV_QPT_RC, signalAll)
        .segment();
  }

  /** The capabilities ibv_create_qp wrote back into {@code attr}. */
  static CmQueuePairOptions fromNative(MemorySegment attr) {
    QpInitAttr a = new QpInitAttr(attr);
    return new CmQueuePairOptions(Math.max(1, a.maxSendWr()), Math.max(1, a.maxRecvWr()), Math.max(1, a.maxSendSge()),
        Math.max(1, a.maxRecvSge()), Math.max(0, a.maxInlineData()), a.signalAll());
  }
}
