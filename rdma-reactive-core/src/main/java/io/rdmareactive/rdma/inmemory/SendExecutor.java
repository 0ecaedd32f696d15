package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.LOC_PROT_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.REM_ACCESS_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.REM_INV_REQ_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.RETRY_EXC_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.SUCCESS;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.ScatterGatherList;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * A QP's share of the wire: carries out one of its work requests against the peer at once, into
 * the peer's memory, receive queue and CQ, as requester and responder together; keeps what the QP
 * reads after it (the bytes moved, where a SEND found no receive posted). Guarded by fabric.lock.
 */
final class SendExecutor {
  private final MemQueuePairState qp;
  /** Bytes the last execute moved: the length its success completion reports. */
  private int transferred;
  /** Where the last execute found no receive: the queue and its QP (scratch, like transferred). */
  private @Nullable MemReceiveQueue stalledOn;
  private @Nullable MemQueuePairState stalledTarget;

  SendExecutor(MemQueuePairState qp) {
    this.qp = qp;
  }

  /** Bytes the last execute moved. */
  int transferred() {
    return transferred;
  }

  /** The receive queue the last execute found empty; null when it found a receive. */
  @Nullable MemReceiveQueue stalledOn() {
    return stalledOn;
  }

  /** The QP that queue receives for. */
  @Nullable MemQueuePairState stalledTarget() {
    return stalledTarget;
  }

  /** Forgets the stall: a scratch field must not keep a QP that goes away. */
  void forgetStall() {
    stalledTarget = null;
    stalledOn = null;
  }

  /**
   * Carries out a send against the peer; returns the sender's completion status, or null when it
   * found no receive posted (stalledOn says where). {@code inline}: a held inline send's bytes.
   */
  WorkCompletion.@Nullable Status execute(SendRequest r, @Nullable MemorySegment inline) {
    Fabric fabric = qp.fabric;
    // The window operations are local: no peer takes part, none need be there.
    if (r.opcode() == SendRequest.Opcode.BIND_MW) {
      transferred = 0;
      return MemMemoryWindow.bind(fabric, qp, r);
    }
    if (r.opcode() == SendRequest.Opcode.LOCAL_INV) {
      transferred = 0;
      return MemMemoryWindow.invalidate(fabric, qp.scope, r.invalidateKey());
    }
    ScatterGatherList sgl = r.scatterGather();
    boolean read = r.opcode() == SendRequest.Opcode.RDMA_READ;
    MemorySegment[] local = new MemorySegment[inline != null ? 1 : sgl.count()];
    if (inline != null) {
      local[0] = inline;
    }
    for (int i = 0; inline == null && i < local.length; i++) {
      local[i] = MemMemoryRegion.resolve(fabric, sgl.localKey(i), sgl.address(i), sgl.length(i), qp.scope,
          read ? Access.LOCAL_WRITE : null);
      if (local[i] == null) {
        return LOC_PROT_ERR;
      }
    }
    long total = sgl.totalLength();
    transferred = (int) Math.min(total, Integer.MAX_VALUE);
    MemQueuePairState t = fabric.queuePairs.get(qp.remoteQpn);
    // A peer that is gone, not ready, or connected elsewhere never acknowledges: the sender's retries run out.
    if (t == null || (t.state != QueuePairState.RTR && t.state != QueuePairState.RTS) || t.remoteQpn != qp.qpn
        || (qp.type == QueuePairType.XRC_SEND) != (t.type == QueuePairType.XRC_RECV)) {
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

  /** The target's memory a remote key names: a region's, or a window's bound through {@code t}. */
  private @Nullable MemorySegment remote(MemQueuePairState t, int rkey, long address, long length, Access needed) {
    MemorySegment m = MemMemoryRegion.resolve(qp.fabric, rkey, address, length, t.scope, needed);
    return m != null ? m : MemMemoryWindow.resolve(qp.fabric, rkey, address, length, t, needed);
  }

  /** A send, or the receive-consuming part of a write with immediate; null: no receive posted. */
  private WorkCompletion.@Nullable Status deliver(MemQueuePairState t, SendRequest r, MemorySegment[] local,
      @Nullable MemorySegment writeTarget) {
    MemReceiveQueue queue;
    MemCompletionQueue cq;
    if (qp.type == QueuePairType.XRC_SEND) {
      MemSharedReceiveQueue s = qp.fabric.xrcSrqs.get(r.remoteSrqNumber());
      if (s == null || s.xrcd != t.xrcd) {
        return REM_INV_REQ_ERR;
      }
      queue = s.receives;
      cq = s.cq;
    } else {
      queue = t.srq != null ? t.srq.receives : t.receives;
      cq = t.recvCq;
    }
    WorkCompletion.Status status = queue.land(t, cq, qp.qpn, r, local, transferred, writeTarget);
    if (status == null) {
      stalledOn = queue; // the responder would answer RNR NAK: postSend decides whether to retry
      stalledTarget = t;
    }
    return status;
  }
}
