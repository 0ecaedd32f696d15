package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairAddress;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.ReceiveBatch;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.ScatterGatherList;
import io.rdmareactive.rdma.verbs.SendBatch;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * A queue pair: posting and its lifetime. {@link QueuePairFactory} creates it, {@link
 * QueuePairTransitions} moves it between states, a {@link WorkRequestLedger} keeps its work
 * requests within the depth its CQs reserved. Posting fills one native ibv_send_wr (or
 * ibv_recv_wr) flyweight owned by this QP and calls {@code ops.post_send}/{@code post_recv}:
 * nothing is allocated per post. Posts on one QP are serialized by the QP's monitor, which also
 * keeps close from destroying the QP under a post in progress.
 */
final class NativeQueuePair extends AbstractRdmaResource implements QueuePair, NativeContextBound {
  /** enum ibv_wc_opcode: receive opcodes have this bit. */
  private static final int IBV_WC_RECV = 1 << 7;

  /**
   * The CQs and SRQ a QP uses, and the depth it reserved on each. {@code receiveCompletions} is
   * where receive completions arrive (an adopted QP's one CQ holds both reservations).
   */
  record Queues(@Nullable NativeCompletionQueue send, @Nullable NativeCompletionQueue receive,
      @Nullable NativeSharedReceiveQueue srq, @Nullable NativeCompletionQueue receiveCompletions, int sendReserved,
      int receiveReserved) {
    static final Queues NONE = new Queues(null, null, null, null, 0, 0);
  }

  /** What the provider granted (scatter/gather entries, inline bytes) and the ledger's capacities. */
  record Limits(int maxSendSge, int maxRecvSge, int maxInline, int sendCapacity, int recvCapacity, boolean signalAll) {
    static final Limits NONE = new Limits(0, 0, 0, 0, 0, false);
  }

  /** How an adopted QP is freed, and the C function named in errors. */
  interface AdoptedDestroy {
    void destroy();

    String function();
  }

  private final NativeContext context;
  final MemorySegment qp;
  private final QueuePairType type;
  private final int qpNumber;
  private final Queues queues;
  private final Limits limits;
  private final WorkRequestLedger ledger;
  /**
   * The scratch structs below, freed with this object by the GC, not at close: closing a shared
   * arena is a handshake with every JVM thread, which closing a thousand connections at once on a
   * few loops made the loops' main work (under TCG, 3-10 ms each, so completions waited behind
   * closes for seconds). They never leave this class, and every use checks that it is open.
   */
  private final Arena arena = Arena.ofAuto();
  // Flyweights: one send wr + sges, one recv wr + sges, one bad_wr slot, reused by every post.
  private final SendWr sendWr;
  private final RecvWr recvWr;
  private final MemorySegment badWr;
  /** The flyweights of chained posts (batches), made on first use. */
  private final PostChains chains = new PostChains(arena);
  // (made in the constructor, after the ledger)
  private final ListPost<SendRequest> sendList;
  private final ListPost<ReceiveRequest> receiveList;
  /** Frees a QP created by someone else (rdma_destroy_qp); null: ibv_destroy_qp. */
  private final @Nullable AdoptedDestroy adoptedDestroy;

  NativeQueuePair(NativeContext context, AbstractRdmaResource parent, MemorySegment qp, QueuePairType type,
      Queues queues, Limits limits, @Nullable AdoptedDestroy adoptedDestroy) {
    super("QueuePair[" + type + " " + context.deviceName() + "]", parent);
    this.context = context;
    this.qp = qp.reinterpret(SIZEOF_QP);
    this.type = type;
    this.qpNumber = this.qp.get(JAVA_INT, QP_QP_NUM);
    this.queues = queues;
    this.limits = limits;
    this.adoptedDestroy = adoptedDestroy;
    ledger = new WorkRequestLedger(this, limits.sendCapacity(), limits.recvCapacity(), limits.signalAll(),
        queues.srq() != null);
    sendWr = new SendWr(arena, limits.maxSendSge());
    recvWr = new RecvWr(arena, limits.maxRecvSge());
    badWr = arena.allocate(ADDRESS);
    sendList = new QueuePairLists.Sends(this, chains, ledger, limits.maxSendSge());
    receiveList = new QueuePairLists.Receives(this, chains, ledger, limits.maxRecvSge());
  }

  /** See {@link QueuePairFactory#adopt}. */
  static NativeQueuePair adopt(NativeProtectionDomain pd, MemorySegment qp, NativeCompletionQueue cq,
      @Nullable NativeSharedReceiveQueue srq, int sendDepth, int recvDepth, int maxSendSge, int maxRecvSge, int maxInline,
      AdoptedDestroy destroy) {
    return QueuePairFactory.adopt(pd, qp, cq, srq, sendDepth, recvDepth, maxSendSge, maxRecvSge, maxInline, destroy);
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
    return limits.maxInline();
  }

  @Override
  public synchronized QueuePairState state() {
    ensureOpen();
    return QueuePairTransitions.state(qp, this);
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
    QueuePairTransitions.connect(context, qp, type, remote, o, this);
  }

  @Override
  public synchronized void toError() {
    ensureOpen();
    QueuePairTransitions.toError(qp, this);
  }

  @Override
  public synchronized void postSend(SendRequest r) {
    ensureOpen();
    postOne(r);
  }

  /** One ibv_post_send of {@code r} alone, under this QP's monitor. */
  private void postOne(SendRequest r) {
    checkSend(r);
    long posted = ledger.beginSend(r.wrId(), r.flags());
    int rc;
    try {
      fill(sendWr, r).next(MemorySegment.NULL);
      rc = InlineVerbs.postSend(context.postSendFn, qp, sendWr.segment(), badWr, context.postsInKernel());
    } catch (RuntimeException | Error e) {
      ledger.abortSend(posted);
      throw e;
    }
    if (rc != 0) {
      ledger.abortSend(posted);
      throw Native.failure("ibv_post_send", Math.abs(rc), this.toString());
    }
    bound(r);
  }

  /** One ibv_post_send of the batch as a chained list (see {@link ListPost}). */
  @Override
  public synchronized void postSend(SendBatch batch) {
    ensureOpen();
    if (batch.size() == 1) {
      // A lone request (an isolated message, most request-response traffic) is posted as one:
      // no chain to link and walk, no bad_wr to search; the same checks, ledger and errors.
      batch.posted(0);
      postOne(batch.get(0));
      batch.posted(1);
      return;
    }
    try {
      sendList.post(batch, this, badWr);
    } finally {
      bound(batch, batch.posted());
    }
  }

  /** What the provider would refuse, refused here first with a typed error. */
  void checkSend(SendRequest r) {
    if (type == QueuePairType.XRC_RECV) {
      throw new IllegalStateException(this + " is receive-only");
    }
    if (type == QueuePairType.UD) {
      throw new UnsupportedOperationException("UD sends need an address handle, which this API does not expose yet");
    }
    ScatterGatherList sgl = r.scatterGather();
    int n = sgl.count();
    if (n > limits.maxSendSge()) {
      throw new IllegalArgumentException(n + " gather entries exceed the " + limits.maxSendSge()
          + " this QP was created with");
    }
    if ((r.flags() & SendRequest.INLINE) != 0) {
      long len = sgl.totalLength();
      if (len > limits.maxInline()) {
        throw new MessageTooLargeException(len, limits.maxInline());
      }
    }
    if (r.opcode() == SendRequest.Opcode.RDMA_READ && type == QueuePairType.UC) {
      throw new IllegalArgumentException("UC QPs cannot RDMA_READ");
    }
    if (r.opcode() == SendRequest.Opcode.BIND_MW) {
      // Their structs go to the provider: a closed one's is freed memory.
      if (!(r.window() instanceof NativeMemoryWindow w) || !(r.bindRegion() instanceof NativeMemoryRegion mr)) {
        throw new IllegalArgumentException("BIND_MW needs a native window and region, got " + r.window() + " and "
            + r.bindRegion());
      }
      w.ensureOpen();
      mr.ensureOpen();
    }
  }

  /** The binds among the first {@code posted} requests of {@code batch} were posted: their windows take their keys. */
  private static void bound(SendBatch batch, int posted) {
    for (int i = 0; i < posted; i++) {
      bound(batch.get(i));
    }
  }

  private static void bound(SendRequest r) {
    if (r.opcode() == SendRequest.Opcode.BIND_MW && r.window() instanceof NativeMemoryWindow w) {
      w.bound(r.bindKey());
    }
  }

  SendWr fill(SendWr wr, SendRequest r) {
    ScatterGatherList sgl = r.scatterGather();
    SendRequest.Opcode op = r.opcode();
    wr.sges().set(sgl);
    wr.wrId(r.wrId()).numSge(sgl.count()).opcode(op.code()).sendFlags(r.flags())
        .immediateData(op.hasImmediate() ? r.immediateData() : 0)
        .rdma(op.isRdma() ? r.remoteAddress() : 0L, op.isRdma() ? r.remoteKey() : 0)
        .xrcRemoteSrqNumber(type == QueuePairType.XRC_SEND ? r.remoteSrqNumber() : 0);
    if (op == SendRequest.Opcode.LOCAL_INV) {
      wr.invalidateRkey(r.invalidateKey());
    } else if (op == SendRequest.Opcode.BIND_MW
        && r.window() instanceof NativeMemoryWindow w && r.bindRegion() instanceof NativeMemoryRegion mr) {
      wr.bindMw(w.mw, r.bindKey(), mr.mr, r.bindAddress(), r.bindLength(), r.bindAccess());
    }
    return wr;
  }

  @Override
  public synchronized void postReceive(ReceiveRequest r) {
    ensureOpen();
    postOne(r);
  }

  /** One ibv_post_recv of {@code r} alone, under this QP's monitor. */
  private void postOne(ReceiveRequest r) {
    checkReceive(r);
    long posted = ledger.beginReceive();
    int rc;
    try {
      recvWr.set(r).next(MemorySegment.NULL);
      rc = InlineVerbs.post(context.postRecvFn, qp, recvWr.segment(), badWr);
    } catch (RuntimeException | Error e) {
      ledger.abortReceive(posted);
      throw e;
    }
    if (rc != 0) {
      ledger.abortReceive(posted);
      throw Native.failure("ibv_post_recv", Math.abs(rc), this.toString());
    }
  }

  /** One ibv_post_recv of the batch as a chained list (see {@link ListPost}). */
  @Override
  public synchronized void postReceive(ReceiveBatch batch) {
    ensureOpen();
    if (batch.size() == 1) { // as postSend(SendBatch): a lone request goes alone
      batch.posted(0);
      postOne(batch.get(0));
      batch.posted(1);
      return;
    }
    receiveList.post(batch, this, badWr);
  }

  void checkReceive(ReceiveRequest r) {
    if (queues.srq() != null) {
      throw new IllegalStateException(this + " receives through its SRQ: post receives there");
    }
    if (type == QueuePairType.XRC_SEND || type == QueuePairType.XRC_RECV) {
      throw new IllegalStateException(this + " has no receive queue: XRC receives go to an XRC SRQ");
    }
    int n = r.scatterGather().count();
    if (n > limits.maxRecvSge()) {
      throw new IllegalArgumentException(n + " scatter entries exceed the " + limits.maxRecvSge()
          + " this QP was created with");
    }
  }

  void registerOnCqs() {
    NativeCompletionQueue send = queues.send();
    NativeCompletionQueue receives = queues.receiveCompletions();
    if (send != null) {
      send.register(this);
    }
    if (receives != null && receives != send) {
      receives.register(this);
    }
  }

  /**
   * A completion of this QP was polled from {@code cq} (by its poller, before the handler sees
   * it): the ledger frees the slots of the work requests it retires.
   */
  void completed(NativeCompletionQueue cq, int status, int opcode, long wrId) {
    ledger.completed(cq == queues.send(), cq == queues.receiveCompletions(), status, (opcode & IBV_WC_RECV) != 0,
        wrId);
  }

  @Override
  protected void release() {
    AdoptedDestroy d = adoptedDestroy;
    if (d != null) {
      d.destroy();
    } else {
      Native.checkReturn(closeFunction(), Ibverbs.destroyQp(qp));
    }
    NativeCompletionQueue send = queues.send();
    NativeCompletionQueue receive = queues.receive();
    NativeCompletionQueue receives = queues.receiveCompletions();
    NativeSharedReceiveQueue srq = queues.srq();
    if (send != null) {
      send.unregister(this);
    }
    if (receives != null) {
      receives.unregister(this);
    }
    if (send != null) {
      send.unreserve(queues.sendReserved());
      send.releaseLease();
    }
    if (receive != null) {
      receive.unreserve(queues.receiveReserved());
      receive.releaseLease();
    }
    if (srq != null) {
      srq.releaseLease();
    }
  }

  @Override
  protected String closeFunction() {
    AdoptedDestroy d = adoptedDestroy;
    return d != null ? d.function() : "ibv_destroy_qp";
  }

  /** The SRQ this QP receives through, if any. */
  @Nullable SharedReceiveQueue sharedReceiveQueue() {
    return queues.srq();
  }
}
