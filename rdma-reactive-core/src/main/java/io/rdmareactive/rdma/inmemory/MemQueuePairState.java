package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.NativeCallException.EINVAL;
import static io.rdmareactive.rdma.NativeCallException.ENOMEM;
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
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A queue pair's state and its posting: a send posted is carried out against the peer at once,
 * under fabric.lock ({@link SendExecutor}); a SEND that finds no receive posted waits there (RNR,
 * with this QP's later work requests behind it: {@link SendBacklog}) until one is, or its RNR
 * retries run out.
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
  /** The QP this one is connected to; -1 before connect. */
  int remoteQpn = -1;
  /** What this QP lets its peer do to its memory ({@link Access} bits): checked by the peer's executor. */
  int remoteAccess;
  private int rnrRetry;
  /** The responder's minimum RNR NAK timer (IB encoding): how long a sender stalled on this QP waits per retry. */
  private int minRnrTimer;
  final MemReceiveQueue receives;
  private final SendBacklog backlog = new SendBacklog(this);
  /** Carries out this QP's work requests against its peer. */
  final SendExecutor executor = new SendExecutor(this);
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
    MemQueuePairState t = executor.stalledTarget();
    MemReceiveQueue queue = executor.stalledOn();
    executor.forgetStall();
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
      WorkCompletion.Status status = executor.execute(request, null);
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
      completeSend(request.wrId(), SUCCESS, opcode, executor.transferred());
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

  /** Unregisters from the fabric once its last handle closes. Holds fabric.lock. */
  void destroyLocked() {
    fabric.queuePairs.remove(qpn);
    state = QueuePairState.ERROR;
    backlog.flush();
    receives.clear();
    failInbound();
  }
}
