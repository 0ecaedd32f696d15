package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * A shared receive queue: plain (ibv_create_srq) or XRC (create_srq_ex with IBV_SRQT_XRC, whose
 * number comes from get_srq_num). Posting goes through {@code ops.post_srq_recv} with one reused
 * ibv_recv_wr, serialized by this SRQ's monitor.
 */
final class NativeSharedReceiveQueue extends AbstractRdmaResource implements SharedReceiveQueue, NativeContextBound {
  static final int IBV_SRQT_XRC = 1;
  // enum ibv_srq_init_attr_mask
  static final int MASK_TYPE = 1, MASK_PD = 1 << 1, MASK_XRCD = 1 << 2, MASK_CQ = 1 << 3;

  private final NativeContext context;
  final MemorySegment srq;
  private final int maxWr;
  private final int maxSge;
  private final int srqNumber;
  private final @Nullable NativeProtectionDomain xrcPd;
  private final @Nullable NativeCompletionQueue xrcCq;
  private final Arena arena = Arena.ofShared();
  private final RecvWr recvWr;
  private final MemorySegment badWr;

  private NativeSharedReceiveQueue(NativeContext context, AbstractRdmaResource parent, MemorySegment srq, int maxWr,
      int maxSge, int srqNumber, @Nullable NativeProtectionDomain xrcPd, @Nullable NativeCompletionQueue xrcCq) {
    super("SharedReceiveQueue[" + context.deviceName() + (srqNumber >= 0 ? " XRC #" + srqNumber : "") + "]", parent);
    this.context = context;
    this.srq = srq;
    this.maxWr = maxWr;
    this.maxSge = maxSge;
    this.srqNumber = srqNumber;
    this.xrcPd = xrcPd;
    this.xrcCq = xrcCq;
    recvWr = new RecvWr(arena, maxSge);
    badWr = arena.allocate(ADDRESS);
  }

  static NativeSharedReceiveQueue create(NativeProtectionDomain pd, SharedReceiveQueueOptions o) {
    NativeContext context = pd.context;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_SRQ_INIT_ATTR, 8);
      attr.set(JAVA_INT, SRQ_INIT_ATTR_ATTR_MAX_WR, o.maxWorkRequests());
      attr.set(JAVA_INT, SRQ_INIT_ATTR_ATTR_MAX_SGE, o.maxScatterGather());
      attr.set(JAVA_INT, SRQ_INIT_ATTR_ATTR_SRQ_LIMIT, o.limit());
      MemorySegment srq = Native.created("ibv_create_srq", Ibverbs.createSrq(pd.pd, attr));
      try {
        return new NativeSharedReceiveQueue(context, pd, srq, attr.get(JAVA_INT, SRQ_INIT_ATTR_ATTR_MAX_WR),
            attr.get(JAVA_INT, SRQ_INIT_ATTR_ATTR_MAX_SGE), -1, null, null);
      } catch (RuntimeException | Error e) {
        Ibverbs.destroySrq(srq);
        throw e;
      }
    }
  }

  /** An XRC SRQ in {@code xrcd}; its completions go to {@code cq}, whose depth it reserves. */
  static NativeSharedReceiveQueue createXrc(NativeXrcDomain xrcd, NativeProtectionDomain pd, NativeCompletionQueue cq,
      SharedReceiveQueueOptions o) {
    NativeContext context = xrcd.nativeContext();
    context.checkOwn(pd, "protection domain");
    context.checkOwn(cq, "CQ");
    MemorySegment fn = context.extendedOp(VERBS_CONTEXT_CREATE_SRQ_EX, "ibv_create_srq_ex");
    MemorySegment numFn = context.extendedOp(VERBS_CONTEXT_GET_SRQ_NUM, "ibv_get_srq_num");
    String owner = "XRC SRQ (" + o.maxWorkRequests() + " receive)";
    cq.reserve(o.maxWorkRequests(), owner);
    pd.acquireLease();
    cq.acquireLease();
    MemorySegment srq = null;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_SRQ_INIT_ATTR_EX, 8);
      attr.set(JAVA_INT, SRQ_INIT_ATTR_EX_ATTR_MAX_WR, o.maxWorkRequests());
      attr.set(JAVA_INT, SRQ_INIT_ATTR_EX_ATTR_MAX_SGE, o.maxScatterGather());
      attr.set(JAVA_INT, SRQ_INIT_ATTR_EX_ATTR_SRQ_LIMIT, o.limit());
      attr.set(JAVA_INT, SRQ_INIT_ATTR_EX_COMP_MASK,
          MASK_TYPE | MASK_PD | MASK_XRCD | MASK_CQ);
      attr.set(JAVA_INT, SRQ_INIT_ATTR_EX_SRQ_TYPE, IBV_SRQT_XRC);
      attr.set(ADDRESS, SRQ_INIT_ATTR_EX_PD, pd.pd);
      attr.set(ADDRESS, SRQ_INIT_ATTR_EX_XRCD, xrcd.xrcd);
      attr.set(ADDRESS, SRQ_INIT_ATTR_EX_CQ, cq.cq);
      srq = Native.created("ibv_create_srq_ex", InlineVerbs.createExtended(fn, context.ctx, attr));
      MemorySegment num = a.allocate(JAVA_INT);
      int rc = InlineVerbs.getSrqNum(numFn, srq, num);
      if (rc != 0) {
        throw Native.failure("ibv_get_srq_num", Native.errnoOf(rc));
      }
      return new NativeSharedReceiveQueue(context, xrcd, srq, attr.get(JAVA_INT, SRQ_INIT_ATTR_EX_ATTR_MAX_WR),
          attr.get(JAVA_INT, SRQ_INIT_ATTR_EX_ATTR_MAX_SGE), num.get(JAVA_INT, 0), pd, cq);
    } catch (RuntimeException | Error e) {
      if (srq != null) {
        Ibverbs.destroySrq(srq);
      }
      cq.unreserve(o.maxWorkRequests());
      cq.releaseLease();
      pd.releaseLease();
      throw e;
    }
  }

  @Override
  public NativeContext nativeContext() {
    return context;
  }

  @Override
  public int maxWorkRequests() {
    return maxWr;
  }

  @Override
  public int srqNumber() {
    return srqNumber;
  }

  @Override
  public synchronized void postReceive(ReceiveRequest r) {
    ensureOpen();
    int n = r.scatterGather().count();
    if (n > maxSge) {
      throw new IllegalArgumentException(n + " scatter entries exceed the " + maxSge + " this SRQ was created with");
    }
    recvWr.set(r);
    int rc;
    try {
      rc = InlineVerbs.post(context.postSrqRecvFn, srq, recvWr.segment(), badWr);
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
    if (rc != 0) {
      throw Native.failure("ibv_post_srq_recv", Math.abs(rc), this.toString());
    }
  }

  @Override
  protected void release() {
    Native.checkReturn(closeFunction(), Ibverbs.destroySrq(srq));
    if (xrcCq != null) {
      xrcCq.unreserve(maxWr);
      xrcCq.releaseLease();
    }
    if (xrcPd != null) {
      xrcPd.releaseLease();
    }
    arena.close();
  }

  @Override
  protected String closeFunction() {
    return "ibv_destroy_srq";
  }
}
