package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.LOC_LEN_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.LOC_PROT_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.REM_INV_REQ_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.REM_OP_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.SUCCESS;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A receive queue (a QP's own, or a shared one): its posted receives, which the SENDs that land
 * here consume in posting order, and the senders whose SEND found it empty and wait for a receive
 * (RNR), oldest first. Posting a receive resumes them there and then, on the poster's thread, as
 * a responder ends an RNR wait. Guarded by fabric.lock.
 */
final class MemReceiveQueue {
  private final Fabric fabric;
  /** The queue's occupancy: its posted receives and their completions not yet polled. */
  private final MemWorkCompletion.Slots slots;
  /** The PD its receives' keys must belong to (null: a queue that takes no receives). */
  private final @Nullable MemProtectionDomain scope;
  private final ArrayDeque<PostedReceive> posted = new ArrayDeque<>();
  private final ArrayDeque<SendBacklog> stalled = new ArrayDeque<>(0);

  MemReceiveQueue(Fabric fabric, MemWorkCompletion.Slots slots, @Nullable MemProtectionDomain scope) {
    this.fabric = fabric;
    this.slots = slots;
    this.scope = scope;
  }

  /** The oldest posted receive, taken; null when none is posted. */
  @Nullable PostedReceive poll() {
    return posted.poll();
  }

  /**
   * Lands a SEND of {@code length} bytes gathered from {@code local} by QP {@code sourceQp} (or
   * the notice of a write with immediate into {@code writeTarget}) for QP {@code t} in the oldest
   * receive, completing it on {@code cq}. Returns the sender's status, or null when no receive is
   * posted (the responder's RNR NAK). A receive that cannot take it fails, and {@code t} with it.
   */
  WorkCompletion.@Nullable Status land(MemQueuePairState t, MemCompletionQueue cq, int sourceQp, SendRequest r,
      MemorySegment[] local, int length, @Nullable MemorySegment writeTarget) {
    PostedReceive w = posted.poll();
    if (w == null) {
      return null;
    }
    boolean imm = r.opcode().hasImmediate();
    boolean solicited = (r.flags() & SendRequest.SOLICITED) != 0;
    if (writeTarget != null) {
      MemMemoryRegion.copy(local, new MemorySegment[] {writeTarget});
      cq.add(new MemWorkCompletion(w.wrId(), SUCCESS, WorkCompletion.Opcode.RECV_RDMA_WITH_IMM, length,
          r.immediateData(), true, t.qpn, sourceQp, solicited, slots));
      return SUCCESS;
    }
    if (length > w.capacity()) {
      cq.add(new MemWorkCompletion(w.wrId(), LOC_LEN_ERR, WorkCompletion.Opcode.RECV, 0, 0, false, t.qpn, sourceQp,
          solicited, slots));
      t.toErrorLocked();
      return REM_INV_REQ_ERR;
    }
    MemorySegment[] dst = new MemorySegment[w.addresses().length];
    for (int i = 0; i < dst.length; i++) {
      dst[i] = MemMemoryRegion.resolve(fabric, w.keys()[i], w.addresses()[i], w.lengths()[i], scope, Access.LOCAL_WRITE);
      if (dst[i] == null) {
        cq.add(new MemWorkCompletion(w.wrId(), LOC_PROT_ERR, WorkCompletion.Opcode.RECV, 0, 0, false, t.qpn, sourceQp,
            solicited, slots));
        t.toErrorLocked();
        return REM_OP_ERR;
      }
    }
    MemMemoryRegion.copy(local, dst);
    cq.add(new MemWorkCompletion(w.wrId(), SUCCESS, WorkCompletion.Opcode.RECV, length, imm ? r.immediateData() : 0,
        imm, t.qpn, sourceQp, solicited, slots));
    return SUCCESS;
  }

  /** Posts {@code w}, then resumes stalled senders, oldest first, while receives last. */
  void post(PostedReceive w) {
    posted.add(w);
    SendBacklog b;
    // Each resume leaves this queue (it may stall here again, at the end, once the receives run out).
    while (!posted.isEmpty() && (b = stalled.peek()) != null) {
      b.resume();
    }
  }

  /** Drops the posted receives (the queue is destroyed: nothing completes them). */
  void clear() {
    posted.clear();
  }

  void await(SendBacklog b) {
    stalled.add(b);
  }

  void leave(SendBacklog b) {
    stalled.remove(b);
  }

  /**
   * Fails the senders stalled here whose target is {@code target} (every one when it is null) with
   * {@code status}: the target QP or the queue is gone, so no receive will come for them.
   */
  void failStalled(@Nullable MemQueuePairState target, WorkCompletion.Status status) {
    List<SendBacklog> doomed = new ArrayList<>(stalled.size());
    for (SendBacklog b : stalled) {
      if (target == null || b.target() == target) {
        doomed.add(b);
      }
    }
    for (SendBacklog b : doomed) {
      b.fail(this, status); // one failure may end others' waits first: fail skips those
    }
  }
}
