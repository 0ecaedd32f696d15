package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.NativeCallException.EINVAL;
import static io.rdmareactive.rdma.NativeCallException.ENOMEM;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.LOC_PROT_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.REM_ACCESS_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.REM_INV_REQ_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.RETRY_EXC_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.RNR_RETRY_EXC_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.SUCCESS;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.WR_FLUSH_ERR;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.QueuePairAddress;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.ScatterGatherList;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A queue pair's state and its share of the wire: posting a send delivers it into the peer's
 * receive queue, memory and CQ at once, under fabric.lock; a SEND that finds no receive posted
 * waits there (RNR, with this QP's later work requests behind it: {@link SendBacklog}) until one
 * is, or its RNR retries run out.
 */
final class MemQueuePairState {
  final int qpn;
  final QueuePairType type;
  final MemContext context;
  final Fabric fabric;
  /** Null for XRC receive QPs, which have no PD. */
  final @Nullable MemProtectionDomain scope;
  final @Nullable MemCompletionQueue sendCq;
  final @Nullable MemCompletionQueue recvCq;
  final @Nullable MemSharedReceiveQueue srq;
  final @Nullable MemXrcDomainState xrcd;
  final int maxSendScatterGather;
  final int maxReceiveScatterGather;
  final int maxInlineData;
  final boolean signalAll;
  final MemWorkCompletion.Slots sendSlots;
  final MemWorkCompletion.Slots recvSlots;

  // guarded by fabric.lock
  QueuePairState state = QueuePairState.RESET;
  private int remoteQpn = -1;
  private int remoteAccess;
  private int rnrRetry;
  /** The responder's minimum RNR NAK timer (IB encoding): how long a sender stalled on this QP waits per retry. */
  private int minRnrTimer;
  final MemReceiveQueue receives;
  private final SendBacklog backlog = new SendBacklog(this);
  private int transferred;
  /** Where the last execute found no receive: the queue and its QP (scratch, like transferred). */
  private @Nullable MemReceiveQueue stalledOn;
  private @Nullable MemQueuePairState stalledTarget;
  /**
   * Unsignaled sends that completed successfully since the last send completion: each holds its
   * slot until the next send completion of this QP (signaled, failed or flushed) is polled.
   */
  private int silentSends;
  /** Handles on this QP (XRC receive QPs may be opened several times). */
  int handles = 1;

  MemQueuePairState(QueuePairType type, MemContext context, @Nullable MemProtectionDomain scope,
      @Nullable MemCompletionQueue sendCq, @Nullable MemCompletionQueue recvCq, @Nullable MemSharedReceiveQueue srq,
      @Nullable MemXrcDomainState xrcd, int maxSend, int maxReceive, int maxSendSge, int maxReceiveSge, int maxInline,
      boolean signalAll) {
    this.fabric = context.fabric;
    this.qpn = fabric.nextQpNumber();
    this.type = type;
    this.context = context;
    this.scope = scope;
    this.sendCq = sendCq;
    this.recvCq = recvCq;
    this.srq = srq;
    this.xrcd = xrcd;
    this.maxSendScatterGather = maxSendSge;
    this.maxReceiveScatterGather = maxReceiveSge;
    this.maxInlineData = maxInline;
    this.signalAll = signalAll;
    this.sendSlots = new MemWorkCompletion.Slots(maxSend);
    this.recvSlots = new MemWorkCompletion.Slots(maxReceive);
    this.receives = new MemReceiveQueue(fabric, recvSlots, scope);
  }

  QueuePairState state() {
    synchronized (fabric.lock) {
      return state;
    }
  }

  QueuePairAddress localAddress(QueuePairConnectOptions options) {
    return new QueuePairAddress(qpn, 0, context.queryGid(options.portNumber(), options.gidIndex()),
        options.localPacketSequenceNumber());
  }

  void connect(QueuePairAddress remote, QueuePairConnectOptions options) {
    MemContext.checkPort("ibv_modify_qp", options.portNumber());
    if (options.gidIndex() < 0 || options.gidIndex() >= MemContext.GID_TABLE_LENGTH) {
      throw Fabric.failure("ibv_modify_qp", EINVAL, "GID index " + options.gidIndex() + " is outside the table of "
          + MemContext.GID_TABLE_LENGTH);
    }
    if (options.rnrRetry() < 0 || options.rnrRetry() > RnrTimer.FOREVER || !RnrTimer.validTimer(options.minRnrTimer())) {
      throw Fabric.failure("ibv_modify_qp", EINVAL, "RNR retry " + options.rnrRetry() + " (0..7) or min RNR timer "
          + options.minRnrTimer() + " (0..31) out of range");
    }
    synchronized (fabric.lock) {
      if (state != QueuePairState.RESET && state != QueuePairState.INIT) {
        throw Fabric.failure("ibv_modify_qp", EINVAL, "QP " + qpn + " is in state " + state
            + "; connecting needs RESET or INIT");
      }
      remoteQpn = remote.qpNumber();
      remoteAccess = Access.mask(options.remoteAccess());
      rnrRetry = options.rnrRetry();
      minRnrTimer = options.minRnrTimer();
      state = type == QueuePairType.XRC_RECV ? QueuePairState.RTR : QueuePairState.RTS;
    }
  }

  void toError() {
    synchronized (fabric.lock) {
      toErrorLocked();
    }
  }

  /** RESET to INIT, as rdma_create_qp leaves a connected-mode QP (for MemConnectionEndpoint). */
  void toInit() {
    synchronized (fabric.lock) {
      if (state == QueuePairState.RESET) {
        state = QueuePairState.INIT;
      }
    }
  }

  void toErrorLocked() {
    if (state == QueuePairState.ERROR) {
      return;
    }
    state = QueuePairState.ERROR;
    backlog.flush();
    PostedReceive w;
    while ((w = receives.poll()) != null) {
      recvCq.add(new MemWorkCompletion(w.wrId(), WR_FLUSH_ERR, WorkCompletion.Opcode.RECV, 0, 0, false, qpn, 0, false, recvSlots));
    }
    failInbound();
  }

  /**
   * Senders stalled on their way here will get no receive from this QP (gone, or not ready):
   * their transport retries run out, as they would against a QP that no longer answers.
   */
  private void failInbound() {
    if (type == QueuePairType.XRC_RECV) {
      for (MemSharedReceiveQueue s : List.copyOf(fabric.xrcSrqs.values())) {
        if (s.xrcd == xrcd) {
          s.receives.failStalled(this, RETRY_EXC_ERR);
        }
      }
    } else {
      (srq != null ? srq.receives : receives).failStalled(this, RETRY_EXC_ERR);
    }
  }

  /**
   * The head waits on the queue the last execute found empty, within this QP's RNR retries; with
   * none, returns RNR_RETRY_EXC_ERR instead (and null when it waits). Holds fabric.lock.
   */
  WorkCompletion.@Nullable Status stall() {
    MemQueuePairState t = stalledTarget;
    MemReceiveQueue queue = stalledOn;
    stalledTarget = null; // a scratch field must not keep a QP that goes away
    stalledOn = null;
    if (rnrRetry == 0) {
      return RNR_RETRY_EXC_ERR;
    }
    backlog.stall(queue, t, rnrRetry == RnrTimer.FOREVER ? -1 : RnrTimer.budgetNanos(rnrRetry, t.minRnrTimer));
    return null;
  }

  void postReceive(ReceiveRequest request) {
    if (srq != null) {
      throw Fabric.failure("ibv_post_recv", EINVAL, "QP " + qpn + " receives through a shared receive queue; post there");
    }
    if (type == QueuePairType.XRC_SEND || type == QueuePairType.XRC_RECV) {
      throw Fabric.failure("ibv_post_recv", EINVAL, type + " QP " + qpn + " has no receive queue");
    }
    if (request.scatterGather().count() > maxReceiveScatterGather) {
      throw Fabric.failure("ibv_post_recv", EINVAL, request.scatterGather().count()
          + " scatter/gather entries exceed the QP's maximum of " + maxReceiveScatterGather);
    }
    PostedReceive w = PostedReceive.of(request);
    synchronized (fabric.lock) {
      if (state == QueuePairState.RESET) {
        throw Fabric.failure("ibv_post_recv", EINVAL, "QP " + qpn + " is in state RESET; receives need INIT or later");
      }
      if (recvSlots.full()) {
        throw Fabric.failure("ibv_post_recv", ENOMEM, "receive queue of QP " + qpn + " is full: " + recvSlots.used
            + " of " + recvSlots.capacity + " work requests outstanding (posted or completed but not polled)");
      }
      recvSlots.used++;
      if (state == QueuePairState.ERROR) {
        recvCq.add(new MemWorkCompletion(w.wrId(), WR_FLUSH_ERR, WorkCompletion.Opcode.RECV, 0, 0, false, qpn, 0, false, recvSlots));
      } else {
        receives.post(w);
      }
    }
  }

  void postSend(SendRequest request) {
    ScatterGatherList sgl = request.scatterGather();
    if (type == QueuePairType.XRC_RECV) {
      throw Fabric.failure("ibv_post_send", EINVAL, "XRC receive QP " + qpn + " has no send queue");
    }
    if (sgl.count() > maxSendScatterGather) {
      throw Fabric.failure("ibv_post_send", EINVAL, sgl.count() + " scatter/gather entries exceed the QP's maximum of "
          + maxSendScatterGather);
    }
    if ((request.flags() & SendRequest.INLINE) != 0 && sgl.totalLength() > maxInlineData) {
      throw Fabric.failure("ibv_post_send", EINVAL, "inline send of " + sgl.totalLength()
          + " bytes exceeds the QP's maximum inline data of " + maxInlineData);
    }
    if (request.opcode() == SendRequest.Opcode.BIND_MW) {
      // A closed window or region is refused here, as the native provider must (its struct is freed).
      if (!(request.window() instanceof MemMemoryWindow w) || !(request.bindRegion() instanceof MemMemoryRegion mr)) {
        throw new IllegalArgumentException("BIND_MW needs an in-memory window and region, got " + request.window()
            + " and " + request.bindRegion());
      }
      w.ensureOpen();
      mr.ensureOpen();
    }
    WorkCompletion.Opcode opcode = switch (request.opcode()) {
      case SEND, SEND_WITH_IMM -> WorkCompletion.Opcode.SEND;
      case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WorkCompletion.Opcode.RDMA_WRITE;
      case RDMA_READ -> WorkCompletion.Opcode.RDMA_READ;
      case BIND_MW -> WorkCompletion.Opcode.BIND_MW;
      case LOCAL_INV -> WorkCompletion.Opcode.LOCAL_INV;
    };
    synchronized (fabric.lock) {
      if (state == QueuePairState.RESET || state == QueuePairState.INIT || state == QueuePairState.RTR) {
        throw Fabric.failure("ibv_post_send", EINVAL, "QP " + qpn + " is in state " + state + "; sends need RTS");
      }
      if (sendSlots.full()) {
        throw Fabric.failure("ibv_post_send", ENOMEM, "send queue of QP " + qpn + " is full: " + sendSlots.used
            + " of " + sendSlots.capacity + " work requests outstanding (unsignaled, or completed but not polled)");
      }
      if (state != QueuePairState.RTS) {
        completeSend(request.wrId(), WR_FLUSH_ERR, opcode, 0);
        return;
      }
      if (!backlog.isEmpty()) { // RC: it waits behind the stalled send, holding its slot
        sendSlots.used++;
        backlog.add(request, opcode);
        return;
      }
      WorkCompletion.Status status = execute(request, null);
      if (status == null) { // no receive posted: RNR
        if (rnrRetry > 0) {
          sendSlots.used++;
          backlog.add(request, opcode);
        }
        status = stall();
        if (status == null) {
          return;
        }
      }
      finish(request, opcode, status);
    }
  }

  /** Completes an executed work request as its flags say; a failure moves the QP to ERROR. Holds fabric.lock. */
  void finish(SendRequest request, WorkCompletion.Opcode opcode, WorkCompletion.Status status) {
    if (status != SUCCESS) {
      completeSend(request.wrId(), status, opcode, 0);
      toErrorLocked();
    } else if (signalAll || request.isSignaled()) {
      completeSend(request.wrId(), SUCCESS, opcode, transferred);
    } else {
      sendSlots.used++;
      silentSends++;
    }
  }

  void completeSend(long wrId, WorkCompletion.Status status, WorkCompletion.Opcode opcode, int length) {
    sendSlots.used++;
    MemWorkCompletion c = new MemWorkCompletion(wrId, status, opcode, length, 0, false, qpn, 0, false, sendSlots);
    c.heldSlots += silentSends;
    silentSends = 0;
    sendCq.add(c);
  }

  /**
   * Carries out a send against the peer; returns the sender's completion status, or null when it
   * found no receive posted (stalledOn says where). {@code inline}: a held inline send's bytes.
   * Holds fabric.lock.
   */
  WorkCompletion.@Nullable Status execute(SendRequest r, @Nullable MemorySegment inline) {
    // The window operations are local: no peer takes part, none need be there.
    if (r.opcode() == SendRequest.Opcode.BIND_MW) {
      transferred = 0;
      return MemMemoryWindow.bind(fabric, this, r);
    }
    if (r.opcode() == SendRequest.Opcode.LOCAL_INV) {
      transferred = 0;
      return MemMemoryWindow.invalidate(fabric, scope, r.invalidateKey());
    }
    ScatterGatherList sgl = r.scatterGather();
    boolean read = r.opcode() == SendRequest.Opcode.RDMA_READ;
    MemorySegment[] local = new MemorySegment[inline != null ? 1 : sgl.count()];
    if (inline != null) {
      local[0] = inline;
    }
    for (int i = 0; inline == null && i < local.length; i++) {
      local[i] = MemMemoryRegion.resolve(fabric, sgl.localKey(i), sgl.address(i), sgl.length(i), scope,
          read ? Access.LOCAL_WRITE : null);
      if (local[i] == null) {
        return LOC_PROT_ERR;
      }
    }
    long total = sgl.totalLength();
    transferred = (int) Math.min(total, Integer.MAX_VALUE);
    MemQueuePairState t = fabric.queuePairs.get(remoteQpn);
    // A peer that is gone, not ready, or connected elsewhere never acknowledges: the sender's retries run out.
    if (t == null || (t.state != QueuePairState.RTR && t.state != QueuePairState.RTS) || t.remoteQpn != qpn
        || (type == QueuePairType.XRC_SEND) != (t.type == QueuePairType.XRC_RECV)) {
      return RETRY_EXC_ERR;
    }
    switch (r.opcode()) {
      case RDMA_READ -> {
        MemorySegment remote = (t.remoteAccess & Access.REMOTE_READ.bit()) == 0 ? null
            : remote(t, r.remoteKey(), r.remoteAddress(), total, Access.REMOTE_READ);
        if (remote == null) {
          t.toErrorLocked();
          return REM_ACCESS_ERR;
        }
        MemMemoryRegion.copy(new MemorySegment[] {remote}, local);
        return SUCCESS;
      }
      case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> {
        // A zero-byte write names no remote memory: its address and key are not checked (IBTA C9-88).
        MemorySegment remote = (t.remoteAccess & Access.REMOTE_WRITE.bit()) == 0 ? null
            : total == 0 ? MemorySegment.NULL
            : remote(t, r.remoteKey(), r.remoteAddress(), total, Access.REMOTE_WRITE);
        if (remote == null) {
          t.toErrorLocked();
          return REM_ACCESS_ERR;
        }
        if (r.opcode() == SendRequest.Opcode.RDMA_WRITE) {
          MemMemoryRegion.copy(local, new MemorySegment[] {remote});
          return SUCCESS;
        }
        return deliver(t, r, local, remote);
      }
      default -> {
        return deliver(t, r, local, null);
      }
    }
  }

  /** The target's memory a remote key names: a region's, or a window's bound through {@code t}. Holds fabric.lock. */
  private @Nullable MemorySegment remote(MemQueuePairState t, int rkey, long address, long length, Access needed) {
    MemorySegment m = MemMemoryRegion.resolve(fabric, rkey, address, length, t.scope, needed);
    return m != null ? m : MemMemoryWindow.resolve(fabric, rkey, address, length, t, needed);
  }

  /** A send, or the receive-consuming part of a write with immediate; null: no receive posted. Holds fabric.lock. */
  private WorkCompletion.@Nullable Status deliver(MemQueuePairState t, SendRequest r, MemorySegment[] local,
      @Nullable MemorySegment writeTarget) {
    MemReceiveQueue queue;
    MemCompletionQueue cq;
    if (type == QueuePairType.XRC_SEND) {
      MemSharedReceiveQueue s = fabric.xrcSrqs.get(r.remoteSrqNumber());
      if (s == null || s.xrcd != t.xrcd) {
        return REM_INV_REQ_ERR;
      }
      queue = s.receives;
      cq = s.cq;
    } else {
      queue = t.srq != null ? t.srq.receives : t.receives;
      cq = t.recvCq;
    }
    WorkCompletion.Status status = queue.land(t, cq, qpn, r, local, transferred, writeTarget);
    if (status == null) {
      stalledOn = queue; // the responder would answer RNR NAK: postSend decides whether to retry
      stalledTarget = t;
    }
    return status;
  }

  /** Unregisters from the fabric once its last handle closes. Holds fabric.lock. */
  void destroyLocked() {
    fabric.queuePairs.remove(qpn);
    state = QueuePairState.ERROR;
    backlog.flush();
    receives.clear();
    failInbound();
  }
}
