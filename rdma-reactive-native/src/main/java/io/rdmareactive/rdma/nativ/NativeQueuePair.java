package io.rdmareactive.rdma.nativ;

import static io.rdmareactive.rdma.nativ.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairAddress;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.ScatterGatherList;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.jspecify.annotations.Nullable;

/**
 * A queue pair (ibv_create_qp, create_qp_ex, ibv_open_qp). Posting fills one native ibv_send_wr
 * (or ibv_recv_wr) and its sge array owned by this QP and calls {@code ops.post_send}/{@code
 * post_recv}: nothing is allocated per post. Posts on one QP are serialized by the QP's monitor,
 * which also keeps close from destroying the QP under a post in progress.
 *
 * <p>A work request holds its queue slot until its completion is polled ({@link
 * NativeCompletionQueue} reports each polled completion here), not until the provider writes it
 * (rxe frees the slot then), so posting beyond the depth the CQ reserved fails with ENOMEM before
 * reaching the provider and the CQ cannot overflow. Work requests are numbered in posting order;
 * completions of one work queue arrive in that order, so a polled send completion retires every
 * send up to its own, the unsignaled ones before it included (verbs semantics). A ring remembers
 * each outstanding send's wr_id and whether it was signaled, to find the one a completion is for.
 */
final class NativeQueuePair extends AbstractRdmaResource implements QueuePair, NativeContextBound {
  // enum ibv_qp_attr_mask
  static final int QP_STATE = 1, ACCESS_FLAGS = 1 << 3, PKEY_INDEX = 1 << 4, PORT = 1 << 5, QKEY = 1 << 6,
      AV = 1 << 7, PATH_MTU = 1 << 8, TIMEOUT = 1 << 9, RETRY_CNT = 1 << 10, RNR_RETRY = 1 << 11,
      RQ_PSN = 1 << 12, MAX_QP_RD_ATOMIC = 1 << 13, MIN_RNR_TIMER = 1 << 15, SQ_PSN = 1 << 16,
      MAX_DEST_RD_ATOMIC = 1 << 17, DEST_QPN = 1 << 20;
  static final int IBV_QP_INIT_ATTR_PD = 1, IBV_QP_INIT_ATTR_XRCD = 1 << 1;
  static final int IBV_QP_OPEN_ATTR_NUM = 1, IBV_QP_OPEN_ATTR_XRCD = 1 << 1, IBV_QP_OPEN_ATTR_TYPE = 1 << 3;
  static final int UD_QKEY = 0x11111111;
  /** enum ibv_wc_opcode: receive opcodes have this bit. */
  private static final int IBV_WC_RECV = 1 << 7;

  private final NativeContext context;
  final MemorySegment qp;
  private final QueuePairType type;
  private final int qpNumber;
  private final @Nullable NativeCompletionQueue sendCq;
  private final @Nullable NativeCompletionQueue recvCq;
  private final @Nullable NativeSharedReceiveQueue srq;
  private final int sendReserved;
  private final int recvReserved;
  private final int maxSendSge;
  private final int maxRecvSge;
  private final int maxInline;
  private final boolean signalAll;
  /** Where receive completions arrive (an adopted QP's one CQ holds both reservations). */
  private final @Nullable NativeCompletionQueue recvCompletions;
  // Send accounting: numbers 1..sendPosted were posted (written under this monitor only),
  // 1..sendRetired have been polled (written by the send CQ's poller only). Outstanding is the
  // difference and stays within sendCapacity, so ring entries of outstanding sends are never reused.
  private final int sendCapacity;
  private final long[] sendWrIds;
  private final boolean[] sendSignaled;
  private final int sendMask;
  private volatile long sendPosted;
  private volatile long sendRetired;
  // Receives always complete, in order: counting is enough.
  private final int recvCapacity;
  private volatile long recvPosted;
  private volatile long recvRetired;
  private final Arena arena = Arena.ofShared();
  // Flyweights: one send wr + sges, one recv wr + sges, one bad_wr slot, reused by every post.
  private final SendWr sendWr;
  private final RecvWr recvWr;
  private final MemorySegment badWr;
  /** Frees a QP created by someone else (rdma_destroy_qp); null: ibv_destroy_qp. */
  private final @Nullable AdoptedDestroy adoptedDestroy;

  /** How an adopted QP is freed, and the C function named in errors. */
  interface AdoptedDestroy {
    void destroy();

    String function();
  }

  private NativeQueuePair(NativeContext context, AbstractRdmaResource parent, MemorySegment qp, QueuePairType type,
      @Nullable NativeCompletionQueue sendCq, @Nullable NativeCompletionQueue recvCq,
      @Nullable NativeSharedReceiveQueue srq, int sendReserved, int recvReserved, int maxSendSge, int maxRecvSge,
      int maxInline, int sendCapacity, int recvCapacity, boolean signalAll) {
    this(context, parent, qp, type, sendCq, recvCq, srq, sendReserved, recvReserved, maxSendSge, maxRecvSge,
        maxInline, sendCapacity, recvCapacity, signalAll, recvCq, null);
  }

  private NativeQueuePair(NativeContext context, AbstractRdmaResource parent, MemorySegment qp, QueuePairType type,
      @Nullable NativeCompletionQueue sendCq, @Nullable NativeCompletionQueue recvCq,
      @Nullable NativeSharedReceiveQueue srq, int sendReserved, int recvReserved, int maxSendSge, int maxRecvSge,
      int maxInline, int sendCapacity, int recvCapacity, boolean signalAll,
      @Nullable NativeCompletionQueue recvCompletions, @Nullable AdoptedDestroy adoptedDestroy) {
    super("QueuePair[" + type + " " + context.deviceName() + "]", parent);
    this.adoptedDestroy = adoptedDestroy;
    this.context = context;
    this.qp = qp.reinterpret(SIZEOF_QP);
    this.type = type;
    this.qpNumber = this.qp.get(JAVA_INT, QP_QP_NUM);
    this.sendCq = sendCq;
    this.recvCq = recvCq;
    this.srq = srq;
    this.sendReserved = sendReserved;
    this.recvReserved = recvReserved;
    this.maxSendSge = maxSendSge;
    this.maxRecvSge = maxRecvSge;
    this.maxInline = maxInline;
    this.signalAll = signalAll;
    this.recvCompletions = recvCompletions;
    this.sendCapacity = sendCapacity;
    this.recvCapacity = recvCapacity;
    int ring = Integer.highestOneBit(Math.max(1, sendCapacity) * 2 - 1); // a power of two >= sendCapacity
    sendWrIds = new long[ring];
    sendSignaled = new boolean[ring];
    sendMask = ring - 1;
    sendWr = new SendWr(arena, maxSendSge);
    recvWr = new RecvWr(arena, maxRecvSge);
    badWr = arena.allocate(ADDRESS);
  }

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
      NativeQueuePair q = new NativeQueuePair(context, pd, qp, type, scq, rcq, srq, o.maxSendWorkRequests(),
          recvDepth, sendSge, recvSge, inline, o.maxSendWorkRequests(), recvDepth, o.signalAll());
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
   * QP reserves its depths on the CQ and leases it as any other does; {@code destroy} frees it.
   * On failure nothing is reserved and the caller still owns (and frees) {@code qp}.
   */
  static NativeQueuePair adopt(NativeProtectionDomain pd, MemorySegment qp, NativeCompletionQueue cq, int sendDepth,
      int recvDepth, int maxSendSge, int maxRecvSge, int maxInline, AdoptedDestroy destroy) {
    NativeContext context = pd.context;
    context.checkOwn(cq, "CQ");
    cq.reserve(sendDepth + recvDepth, "adopted RC QP (" + sendDepth + " send, " + recvDepth + " receive)");
    try {
      cq.acquireLease();
    } catch (RuntimeException e) {
      cq.unreserve(sendDepth + recvDepth);
      throw e;
    }
    try {
      // rdma_create_qp was given sq_sig_all = 0.
      NativeQueuePair q = new NativeQueuePair(context, pd, qp, QueuePairType.RC, cq, null, null,
          sendDepth + recvDepth, 0, maxSendSge, maxRecvSge, maxInline, sendDepth, recvDepth, false, cq, destroy);
      q.registerOnCqs();
      return q;
    } catch (RuntimeException | Error e) {
      cq.unreserve(sendDepth + recvDepth);
      cq.releaseLease();
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
      MemorySegment qp = Native.created("ibv_create_qp_ex", Ibverbs.createExtended(fn, context.ctx, attr));
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
      MemorySegment qp = Native.created("ibv_open_qp", Ibverbs.createExtended(fn, context.ctx, attr));
      return wrapXrcReceive(context, xrcd, qp);
    }
  }

  private static NativeQueuePair wrapXrcReceive(NativeContext context, NativeXrcDomain xrcd, MemorySegment qp) {
    try {
      return new NativeQueuePair(context, xrcd, qp, QueuePairType.XRC_RECV, null, null, null, 0, 0, 0, 0, 0, 0, 0,
          false);
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

  @Override
  public NativeContext nativeContext() {
    return context;
  }

  @Override
  public int qpNumber() {
    return qpNumber;
  }

  @Override
  public QueuePairType type() {
    return type;
  }

  /** Largest inline payload the provider granted. */
  int maxInlineData() {
    return maxInline;
  }

  @Override
  public synchronized QueuePairState state() {
    ensureOpen();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_QP_ATTR, 8);
      MemorySegment init = a.allocate(SIZEOF_QP_INIT_ATTR, 8);
      int rc = Ibverbs.queryQp(qp, attr, QP_STATE, init);
      if (rc != 0) {
        throw Native.failure("ibv_query_qp", Native.errnoOf(rc), toString());
      }
      return QueuePairState.of(attr.get(JAVA_INT, QP_ATTR_QP_STATE));
    }
  }

  @Override
  public QueuePairAddress localAddress(QueuePairConnectOptions options) {
    ensureOpen();
    PortAttributes port = context.queryPort(options.portNumber());
    byte[] gid = context.queryGid(options.portNumber(), options.gidIndex());
    return new QueuePairAddress(qpNumber, port.lid(), gid, options.localPacketSequenceNumber() & 0xFFFFFF);
  }

  @Override
  public synchronized void connect(QueuePairAddress remote, QueuePairConnectOptions o) {
    ensureOpen();
    PortAttributes port = context.queryPort(o.portNumber());
    int mtu = Math.max(1, Math.min(o.pathMtu(), port.activeMtu()));
    byte[] gid = remote.gid();
    boolean global = port.linkLayer() == PortAttributes.LinkLayer.ETHERNET || !allZero(gid);
    int access = Access.mask(o.remoteAccess());
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_QP_ATTR, 8);
      // RESET -> INIT
      attr.set(JAVA_INT, QP_ATTR_QP_STATE, QueuePairState.INIT.ordinal());
      attr.set(JAVA_SHORT, QP_ATTR_PKEY_INDEX, (short) 0);
      attr.set(JAVA_BYTE, QP_ATTR_PORT_NUM, (byte) o.portNumber());
      int mask = QP_STATE | PKEY_INDEX | PORT;
      if (type == QueuePairType.UD) {
        attr.set(JAVA_INT, QP_ATTR_QKEY, UD_QKEY);
        mask |= QKEY;
      } else {
        attr.set(JAVA_INT, QP_ATTR_QP_ACCESS_FLAGS,
            type == QueuePairType.UC ? access & ~Access.REMOTE_READ.bit() & ~Access.REMOTE_ATOMIC.bit() : access);
        mask |= ACCESS_FLAGS;
      }
      modify(attr, mask, "INIT");
      // INIT -> RTR
      attr.fill((byte) 0);
      attr.set(JAVA_INT, QP_ATTR_QP_STATE, QueuePairState.RTR.ordinal());
      mask = QP_STATE;
      if (type != QueuePairType.UD) {
        attr.set(JAVA_INT, QP_ATTR_PATH_MTU, mtu);
        attr.set(JAVA_INT, QP_ATTR_DEST_QP_NUM, remote.qpNumber());
        attr.set(JAVA_INT, QP_ATTR_RQ_PSN, remote.packetSequenceNumber() & 0xFFFFFF);
        attr.set(JAVA_SHORT, QP_ATTR_AH_ATTR_DLID, (short) remote.lid());
        attr.set(JAVA_BYTE, QP_ATTR_AH_ATTR_PORT_NUM, (byte) o.portNumber());
        if (global) {
          attr.set(JAVA_BYTE, QP_ATTR_AH_ATTR_IS_GLOBAL, (byte) 1);
          MemorySegment.copy(gid, 0, attr, JAVA_BYTE, QP_ATTR_AH_ATTR_GRH_DGID, 16);
          attr.set(JAVA_BYTE, QP_ATTR_AH_ATTR_GRH_SGID_INDEX, (byte) o.gidIndex());
          attr.set(JAVA_BYTE, QP_ATTR_AH_ATTR_GRH_HOP_LIMIT, (byte) 64);
        }
        mask |= AV | PATH_MTU | DEST_QPN | RQ_PSN;
        if (type != QueuePairType.UC) {
          attr.set(JAVA_BYTE, QP_ATTR_MAX_DEST_RD_ATOMIC, (byte) o.maxReadAtomic());
          attr.set(JAVA_BYTE, QP_ATTR_MIN_RNR_TIMER, (byte) o.minRnrTimer());
          mask |= MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
        }
      }
      modify(attr, mask, "RTR");
      if (type == QueuePairType.XRC_RECV) {
        return; // a receive-only target QP stops at RTR
      }
      // RTR -> RTS
      attr.fill((byte) 0);
      attr.set(JAVA_INT, QP_ATTR_QP_STATE, QueuePairState.RTS.ordinal());
      attr.set(JAVA_INT, QP_ATTR_SQ_PSN, o.localPacketSequenceNumber() & 0xFFFFFF);
      mask = QP_STATE | SQ_PSN;
      if (type == QueuePairType.RC || type == QueuePairType.XRC_SEND) {
        attr.set(JAVA_BYTE, QP_ATTR_TIMEOUT, (byte) o.timeout());
        attr.set(JAVA_BYTE, QP_ATTR_RETRY_CNT, (byte) o.retryCount());
        attr.set(JAVA_BYTE, QP_ATTR_RNR_RETRY, (byte) o.rnrRetry());
        attr.set(JAVA_BYTE, QP_ATTR_MAX_RD_ATOMIC, (byte) o.maxReadAtomic());
        mask |= TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC;
      }
      modify(attr, mask, "RTS");
    }
  }

  private static boolean allZero(byte[] b) {
    for (byte x : b) {
      if (x != 0) {
        return false;
      }
    }
    return true;
  }

  private void modify(MemorySegment attr, int mask, String target) {
    int rc = Ibverbs.modifyQp(qp, attr, mask);
    if (rc != 0) {
      throw Native.failure("ibv_modify_qp", Native.errnoOf(rc), this + " to " + target);
    }
  }

  @Override
  public synchronized void toError() {
    ensureOpen();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_QP_ATTR, 8);
      attr.set(JAVA_INT, QP_ATTR_QP_STATE, QueuePairState.ERROR.ordinal());
      modify(attr, QP_STATE, "ERROR");
    }
  }

  @Override
  public synchronized void postSend(SendRequest r) {
    ensureOpen();
    if (type == QueuePairType.XRC_RECV) {
      throw new IllegalStateException(this + " is receive-only");
    }
    if (type == QueuePairType.UD) {
      throw new UnsupportedOperationException("UD sends need an address handle, which this API does not expose yet");
    }
    ScatterGatherList sgl = r.scatterGather();
    int n = sgl.count();
    if (n > maxSendSge) {
      throw new IllegalArgumentException(n + " gather entries exceed the " + maxSendSge + " this QP was created with");
    }
    int flags = r.flags();
    if ((flags & SendRequest.INLINE) != 0) {
      long len = sgl.totalLength();
      if (len > maxInline) {
        throw new MessageTooLargeException(len, maxInline);
      }
    }
    SendRequest.Opcode op = r.opcode();
    if (op == SendRequest.Opcode.RDMA_READ && type == QueuePairType.UC) {
      throw new IllegalArgumentException("UC QPs cannot RDMA_READ");
    }
    long posted = sendPosted;
    long outstanding = posted - sendRetired;
    if (outstanding >= sendCapacity) {
      throw Native.failure("ibv_post_send", NativeCallException.ENOMEM, "send queue of " + this + " is full: "
          + outstanding + " of " + sendCapacity + " work requests outstanding (posted, completion not yet polled)");
    }
    sendWr.sges().set(sgl);
    sendWr.wrId(r.wrId()).numSge(n).opcode(op.code()).sendFlags(flags)
        .immediateData(op.hasImmediate() ? r.immediateData() : 0)
        .rdma(op.isRdma() ? r.remoteAddress() : 0L, op.isRdma() ? r.remoteKey() : 0)
        .xrcRemoteSrqNumber(type == QueuePairType.XRC_SEND ? r.remoteSrqNumber() : 0);
    // Published before the call: the completion may be polled before post_send returns.
    int slot = (int) (posted + 1) & sendMask;
    sendWrIds[slot] = r.wrId();
    sendSignaled[slot] = signalAll || (flags & SendRequest.SIGNALED) != 0;
    sendPosted = posted + 1;
    int rc;
    try {
      rc = Ibverbs.post(context.postSendFn, qp, sendWr.segment(), badWr);
    } catch (Throwable t) {
      sendPosted = posted;
      throw new IllegalStateException(t);
    }
    if (rc != 0) {
      sendPosted = posted;
      throw Native.failure("ibv_post_send", Math.abs(rc), this.toString());
    }
  }

  @Override
  public synchronized void postReceive(ReceiveRequest r) {
    ensureOpen();
    if (srq != null) {
      throw new IllegalStateException(this + " receives through its SRQ: post receives there");
    }
    if (type == QueuePairType.XRC_SEND || type == QueuePairType.XRC_RECV) {
      throw new IllegalStateException(this + " has no receive queue: XRC receives go to an XRC SRQ");
    }
    ScatterGatherList sgl = r.scatterGather();
    int n = sgl.count();
    if (n > maxRecvSge) {
      throw new IllegalArgumentException(n + " scatter entries exceed the " + maxRecvSge + " this QP was created with");
    }
    long posted = recvPosted;
    long outstanding = posted - recvRetired;
    if (outstanding >= recvCapacity) {
      throw Native.failure("ibv_post_recv", NativeCallException.ENOMEM, "receive queue of " + this + " is full: "
          + outstanding + " of " + recvCapacity + " work requests outstanding (posted, completion not yet polled)");
    }
    recvWr.set(r);
    recvPosted = posted + 1;
    int rc;
    try {
      rc = Ibverbs.post(context.postRecvFn, qp, recvWr.segment(), badWr);
    } catch (Throwable t) {
      recvPosted = posted;
      throw new IllegalStateException(t);
    }
    if (rc != 0) {
      recvPosted = posted;
      throw Native.failure("ibv_post_recv", Math.abs(rc), this.toString());
    }
  }

  private void registerOnCqs() {
    if (sendCq != null) {
      sendCq.register(this);
    }
    if (recvCompletions != null && recvCompletions != sendCq) {
      recvCompletions.register(this);
    }
  }

  /**
   * A completion of this QP was polled from {@code cq} (by its poller, before the handler sees
   * it): frees the slots of the work requests it retires. The opcode is only meaningful on
   * success; an error completion (flushes included) is matched by wr_id against the sends it may
   * be for, and is a receive's otherwise. Retiring never passes what was posted, so the counts
   * never go negative; a completion whose work request cannot be told errs towards retiring
   * fewer, which keeps the CQ bound.
   */
  void completed(NativeCompletionQueue cq, int status, int opcode, long wrId) {
    boolean sends = cq == sendCq;
    boolean receives = cq == recvCompletions;
    if (sends && receives) {
      if (status == 0) {
        receives = (opcode & IBV_WC_RECV) != 0;
      } else {
        receives = sendMatching(wrId) < 0 && (srq != null || recvPosted > recvRetired);
      }
      sends = !receives;
    }
    if (receives) {
      long retired = recvRetired;
      if (srq == null && retired < recvPosted) {
        recvRetired = retired + 1;
      }
    } else if (sends) {
      long retired = sendRetired;
      if (retired < sendPosted) {
        long upTo = status == 0 ? firstSignaledSend() : sendMatching(wrId);
        sendRetired = upTo > retired ? upTo : retired + 1;
      }
    }
  }

  /** The number of the first outstanding signaled send, which a successful completion is for; -1 if none. */
  private long firstSignaledSend() {
    long posted = sendPosted;
    for (long n = sendRetired + 1; n <= posted; n++) {
      if (sendSignaled[(int) n & sendMask]) {
        return n;
      }
    }
    return -1;
  }

  /**
   * The number of the first outstanding send with {@code wrId} up to the first signaled one (a
   * completion cannot be for a later send: the signaled one completes first); -1 if none.
   */
  private long sendMatching(long wrId) {
    long posted = sendPosted;
    for (long n = sendRetired + 1; n <= posted; n++) {
      int slot = (int) n & sendMask;
      if (sendWrIds[slot] == wrId) {
        return n;
      }
      if (sendSignaled[slot]) {
        break;
      }
    }
    return -1;
  }

  @Override
  protected void release() {
    AdoptedDestroy d = adoptedDestroy;
    if (d != null) {
      d.destroy();
    } else {
      Native.checkReturn(closeFunction(), Ibverbs.destroyQp(qp));
    }
    if (sendCq != null) {
      sendCq.unregister(this);
    }
    if (recvCompletions != null) {
      recvCompletions.unregister(this);
    }
    if (sendCq != null) {
      sendCq.unreserve(sendReserved);
      sendCq.releaseLease();
    }
    if (recvCq != null) {
      recvCq.unreserve(recvReserved);
      recvCq.releaseLease();
    }
    if (srq != null) {
      srq.releaseLease();
    }
    arena.close();
  }

  @Override
  protected String closeFunction() {
    AdoptedDestroy d = adoptedDestroy;
    return d != null ? d.function() : "ibv_destroy_qp";
  }

  /** The SRQ this QP receives through, if any. */
  @Nullable SharedReceiveQueue sharedReceiveQueue() {
    return srq;
  }
}
