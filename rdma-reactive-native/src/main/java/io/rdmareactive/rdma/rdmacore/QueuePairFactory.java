package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePairType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * Creates queue pairs: ibv_create_qp on a PD, create_qp_ex and ibv_open_qp in an XRC domain, and
 * adoption of a QP librdmacm created. CQ depth is reserved before the QP exists, so a rejected QP
 * never reaches the provider; every failure path gives back what it took.
 */
final class QueuePairFactory {
  static final int IBV_QP_INIT_ATTR_PD = 1, IBV_QP_INIT_ATTR_XRCD = 1 << 1;
  static final int IBV_QP_OPEN_ATTR_NUM = 1, IBV_QP_OPEN_ATTR_XRCD = 1 << 1, IBV_QP_OPEN_ATTR_TYPE = 1 << 3;

  private QueuePairFactory() {}

  /** A QP on {@code pd} (a plain PD or a parent domain): RC, UC, UD or XRC_SEND. */
  static NativeQueuePair create(NativeProtectionDomain pd, QueuePairOptions o) {
    NativeContext context = pd.context;
    QueuePairType type = o.type();
    if (type == QueuePairType.XRC_RECV) {
      throw new IllegalArgumentException("XRC receive QPs are created by an XrcDomain (createReceiveQueuePair)");
    }
    NativeCompletionQueue scq = nativeCq(context, o.sendCompletionQueue(), "send CQ");
    NativeSharedReceiveQueue srq = null;
    if (o.sharedReceiveQueue() != null) {
      if (!(o.sharedReceiveQueue() instanceof NativeSharedReceiveQueue s)) {
        throw new IllegalArgumentException("SRQ " + o.sharedReceiveQueue() + " is not a native one");
      }
      context.checkOwn(s, "SRQ");
      srq = s;
    }
    boolean xrcSend = type == QueuePairType.XRC_SEND;
    NativeCompletionQueue rcq = xrcSend ? null
        : o.receiveCompletionQueue() == null ? scq : nativeCq(context, o.receiveCompletionQueue(), "receive CQ");
    int recvDepth = xrcSend || srq != null ? 0 : o.maxReceiveWorkRequests();
    if (xrcSend && srq != null) {
      throw new IllegalArgumentException("an XRC send QP has no receive side: it takes no SRQ");
    }
    String owner = type + " QP (" + o.maxSendWorkRequests() + " send, " + recvDepth + " receive)";
    // Reserve CQ depth first: a rejected QP never reaches ibv_create_qp.
    if (rcq == scq) {
      scq.reserve(o.maxSendWorkRequests() + recvDepth, owner);
    } else {
      scq.reserve(o.maxSendWorkRequests(), owner);
      if (rcq != null) {
        try {
          rcq.reserve(recvDepth, owner);
        } catch (RuntimeException e) {
          scq.unreserve(o.maxSendWorkRequests());
          throw e;
        }
      }
    }
    scq.acquireLease();
    if (rcq != null) {
      rcq.acquireLease();
    }
    if (srq != null) {
      srq.acquireLease();
    }
    MemorySegment qp = null;
    try (Arena a = Arena.ofConfined()) {
      QpInitAttr attr = new QpInitAttr(a)
          .queues(scq.cq, rcq == null ? MemorySegment.NULL : rcq.cq, srq == null ? MemorySegment.NULL : srq.srq)
          .capabilities(o.maxSendWorkRequests(), recvDepth, o.maxSendScatterGather(),
              recvDepth == 0 ? 0 : o.maxReceiveScatterGather(), o.maxInlineData())
          .type(type.code(), o.signalAll());
      // ibv_create_qp_ex with comp_mask == PD is ibv_create_qp (XRC_SEND included).
      qp = Native.created("ibv_create_qp", Ibverbs.createQp(pd.pd, attr.segment()));
      // The provider writes back the capacities it granted (inline data may be rounded up).
      int inline = attr.maxInlineData();
      int sendSge = attr.maxSendSge();
      int recvSge = attr.maxRecvSge();
      NativeQueuePair q = new NativeQueuePair(context, pd, qp, type,
          new NativeQueuePair.Queues(scq, rcq, srq, rcq, o.maxSendWorkRequests(), recvDepth),
          new NativeQueuePair.Limits(sendSge, recvSge, inline, o.maxSendWorkRequests(), recvDepth, o.signalAll()), null);
      q.registerOnCqs();
      return q;
    } catch (RuntimeException | Error e) {
      if (qp != null) {
        Ibverbs.destroyQp(qp);
      }
      scq.unreserve(o.maxSendWorkRequests());
      scq.releaseLease();
      if (rcq != null) {
        rcq.unreserve(recvDepth);
        rcq.releaseLease();
      }
      if (srq != null) {
        srq.releaseLease();
      }
      throw e;
    }
  }

  /**
   * Takes on an RC {@code qp} that was created elsewhere (rdma_create_qp) on {@code pd} with
   * {@code cq} as both its send and receive CQ and the granted capabilities given here. The
   * QP reserves its depths on the CQ and leases it (and {@code srq}, when it takes its receives
   * from one) as any other does; {@code destroy} frees it. With an SRQ, {@code recvDepth} is the
   * receive completions the CQ must hold for it, and the QP has no receive queue to post to. On
   * failure nothing is reserved and the caller still owns (and frees) {@code qp}.
   */
  static NativeQueuePair adopt(NativeProtectionDomain pd, MemorySegment qp, NativeCompletionQueue cq,
      @Nullable NativeSharedReceiveQueue srq, int sendDepth, int recvDepth, int maxSendSge, int maxRecvSge,
      int maxInline, NativeQueuePair.AdoptedDestroy destroy) {
    NativeContext context = pd.context;
    context.checkOwn(cq, "CQ");
    if (srq != null) {
      context.checkOwn(srq, "SRQ");
    }
    cq.reserve(sendDepth + recvDepth, "adopted RC QP (" + sendDepth + " send, " + recvDepth + " receive)");
    try {
      cq.acquireLease();
    } catch (RuntimeException e) {
      cq.unreserve(sendDepth + recvDepth);
      throw e;
    }
    try {
      if (srq != null) {
        srq.acquireLease();
      }
    } catch (RuntimeException e) {
      cq.unreserve(sendDepth + recvDepth);
      cq.releaseLease();
      throw e;
    }
    try {
      // rdma_create_qp was given sq_sig_all = 0.
      NativeQueuePair q = new NativeQueuePair(context, pd, qp, QueuePairType.RC,
          new NativeQueuePair.Queues(cq, null, srq, cq, sendDepth + recvDepth, 0),
          new NativeQueuePair.Limits(maxSendSge, maxRecvSge, maxInline, sendDepth, srq != null ? 0 : recvDepth, false),
          destroy);
      q.registerOnCqs();
      return q;
    } catch (RuntimeException | Error e) {
      cq.unreserve(sendDepth + recvDepth);
      cq.releaseLease();
      if (srq != null) {
        srq.releaseLease();
      }
      throw e;
    }
  }

  /** An XRC receive (target) QP in {@code xrcd}: create_qp_ex with IBV_QPT_XRC_RECV. */
  static NativeQueuePair createXrcReceive(NativeXrcDomain xrcd) {
    NativeContext context = xrcd.nativeContext();
    MemorySegment fn = context.extendedOp(VERBS_CONTEXT_CREATE_QP_EX, "ibv_create_qp_ex");
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_QP_INIT_ATTR_EX, 8);
      attr.set(JAVA_INT, QP_INIT_ATTR_EX_QP_TYPE, QueuePairType.XRC_RECV.code());
      attr.set(JAVA_INT, QP_INIT_ATTR_EX_COMP_MASK, IBV_QP_INIT_ATTR_XRCD);
      attr.set(ADDRESS, QP_INIT_ATTR_EX_XRCD, xrcd.xrcd);
      MemorySegment qp = Native.created("ibv_create_qp_ex", InlineVerbs.createExtended(fn, context.ctx, attr));
      return wrapXrcReceive(context, xrcd, qp);
    }
  }

  /** Opens the XRC receive QP {@code qpNumber} of {@code xrcd} (ibv_open_qp). */
  static NativeQueuePair open(NativeXrcDomain xrcd, int qpNumber) {
    NativeContext context = xrcd.nativeContext();
    MemorySegment fn = context.extendedOp(VERBS_CONTEXT_OPEN_QP, "ibv_open_qp");
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_QP_OPEN_ATTR, 8);
      attr.set(JAVA_INT, QP_OPEN_ATTR_COMP_MASK, IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE);
      attr.set(JAVA_INT, QP_OPEN_ATTR_QP_NUM, qpNumber);
      attr.set(ADDRESS, QP_OPEN_ATTR_XRCD, xrcd.xrcd);
      attr.set(JAVA_INT, QP_OPEN_ATTR_QP_TYPE, QueuePairType.XRC_RECV.code());
      MemorySegment qp = Native.created("ibv_open_qp", InlineVerbs.createExtended(fn, context.ctx, attr));
      return wrapXrcReceive(context, xrcd, qp);
    }
  }

  private static NativeQueuePair wrapXrcReceive(NativeContext context, NativeXrcDomain xrcd, MemorySegment qp) {
    try {
      return new NativeQueuePair(context, xrcd, qp, QueuePairType.XRC_RECV, NativeQueuePair.Queues.NONE,
          NativeQueuePair.Limits.NONE, null);
    } catch (RuntimeException | Error e) {
      Ibverbs.destroyQp(qp);
      throw e;
    }
  }

  private static NativeCompletionQueue nativeCq(NativeContext context, CompletionQueue cq, String what) {
    if (!(cq instanceof NativeCompletionQueue n)) {
      throw new IllegalArgumentException(what + " " + cq + " is not a native CQ");
    }
    context.checkOwn(n, what);
    return n;
  }
}
