package io.rdmareactive.rdma.nativ;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

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
    MemorySegment a = arena.allocate(VerbsLayout.SIZEOF_QP_INIT_ATTR, 8);
    a.set(ADDRESS, VerbsLayout.QP_INIT_ATTR_QP_CONTEXT, context);
    a.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_WR, maxSendWorkRequests);
    a.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_WR, maxReceiveWorkRequests);
    a.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_SGE, maxSendScatterGather);
    a.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_SGE, maxReceiveScatterGather);
    a.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_INLINE_DATA, maxInlineData);
    a.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_QP_TYPE, (int) CmLayout.IBV_QPT_RC);
    a.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_SQ_SIG_ALL, signalAll ? 1 : 0);
    return a;
  }

  /** The capabilities ibv_create_qp wrote back into {@code attr}. */
  static CmQueuePairOptions fromNative(MemorySegment attr) {
    return new CmQueuePairOptions(
        Math.max(1, attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_WR)),
        Math.max(1, attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_WR)),
        Math.max(1, attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_SGE)),
        Math.max(1, attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_SGE)),
        Math.max(0, attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_INLINE_DATA)),
        attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_SQ_SIG_ALL) != 0);
  }
}
