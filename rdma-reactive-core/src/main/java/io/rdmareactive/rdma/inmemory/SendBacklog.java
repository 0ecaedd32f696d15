package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.ScatterGatherList;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * A QP's send queue behind an RNR stall: the work request that found no posted receive (the head)
 * and those posted after it, which RC executes in posting order once the head is delivered; each
 * keeps its send-queue slot while it waits. Also the stall itself: the receive queue and target QP
 * it waits on and, for finite RNR retries, its deadline. Guarded by fabric.lock.
 */
final class SendBacklog {
  /** A held work request: a copy (the caller reuses its request), and an inline send's bytes as posted. */
  record Held(SendRequest request, WorkCompletion.Opcode opcode, @Nullable MemorySegment inline) {
  }

  private final MemQueuePairState qp;
  private final ArrayDeque<Held> held = new ArrayDeque<>(0);
  private @Nullable MemReceiveQueue waitingOn;
  private @Nullable MemQueuePairState target;
  private @Nullable ScheduledFuture<?> deadline;
  /** Counts stalls and their ends, so that a deadline acts only on the stall it was set for. */
  private int stalls;

  SendBacklog(MemQueuePairState qp) {
    this.qp = qp;
  }

  boolean isEmpty() {
    return held.isEmpty();
  }

  /** The QP the head waits to reach; null when it does not wait. */
  @Nullable MemQueuePairState target() {
    return target;
  }

  /** Holds {@code r} (copied; an inline send's bytes too, as the device takes them at posting). */
  void add(SendRequest r, WorkCompletion.Opcode opcode) {
    boolean inline = (r.flags() & SendRequest.INLINE) != 0 && r.opcode() != SendRequest.Opcode.RDMA_READ;
    held.add(new Held(new SendRequest(Math.max(1, r.scatterGather().count())).set(r), opcode,
        inline ? inlineCopy(r.scatterGather()) : null));
  }

  /** The gathered bytes, or null when a key does not resolve (the send then fails as it would have). */
  private @Nullable MemorySegment inlineCopy(ScatterGatherList sgl) {
    MemorySegment data = MemorySegment.ofArray(new byte[(int) sgl.totalLength()]);
    long at = 0;
    for (int i = 0; i < sgl.count(); i++) {
      MemorySegment s = MemMemoryRegion.resolve(qp.fabric, sgl.localKey(i), sgl.address(i), sgl.length(i), qp.scope,
          null);
      if (s == null) {
        return null;
      }
      MemorySegment.copy(s, 0, data, at, s.byteSize());
      at += s.byteSize();
    }
    return data;
  }

  /**
   * The head found {@code queue} empty on its way to {@code target}: it waits there, for
   * {@code budgetNanos} at most (negative: until a receive comes or a QP leaves its state).
   */
  void stall(MemReceiveQueue queue, MemQueuePairState target, long budgetNanos) {
    waitingOn = queue;
    this.target = target;
    queue.await(this);
    if (budgetNanos >= 0) {
      int stall = ++stalls;
      Fabric fabric = qp.fabric;
      deadline = RnrTimer.schedule(() -> {
        synchronized (fabric.lock) {
          if (stalls == stall && waitingOn != null) {
            fail(waitingOn, WorkCompletion.Status.RNR_RETRY_EXC_ERR);
          }
        }
      }, budgetNanos);
    }
  }

  /**
   * A receive was posted where the head waits: the held work requests run in order, completing as
   * if delivered at posting, until one stalls again or none is left.
   */
  void resume() {
    detach();
    Held h;
    // Taken off before it runs, so that a failure it causes here (which flushes what is held) does
    // not complete it twice.
    while (qp.state == QueuePairState.RTS && (h = held.poll()) != null) {
      qp.sendSlots.used--; // held, its slot was counted; finish and completeSend count it again
      WorkCompletion.Status status = qp.executor.execute(h.request(), h.inline());
      if (status == null) {
        held.addFirst(h);
        qp.sendSlots.used++;
        qp.stall(); // rnrRetry > 0: a backlog forms only then
        return;
      }
      qp.finish(h.request(), h.opcode(), status);
    }
  }

  /** The wait on {@code queue} ends in failure: the head fails with {@code status}, the QP goes to ERROR. */
  void fail(MemReceiveQueue queue, WorkCompletion.Status status) {
    if (waitingOn != queue) {
      return; // resumed or failed meanwhile
    }
    detach();
    Held h = held.poll();
    qp.sendSlots.used--;
    qp.completeSend(h.request().wrId(), status, h.opcode(), 0);
    qp.toErrorLocked(); // which flushes the rest
  }

  /** Every held work request completes with WR_FLUSH_ERR, in order (the QP left RTS or is destroyed). */
  void flush() {
    detach();
    Held h;
    while ((h = held.poll()) != null) {
      qp.sendSlots.used--;
      qp.completeSend(h.request().wrId(), WorkCompletion.Status.WR_FLUSH_ERR, h.opcode(), 0);
    }
  }

  /** Ends the wait, if any: leaves the queue and drops the deadline. */
  private void detach() {
    stalls++;
    if (waitingOn != null) {
      waitingOn.leave(this);
      waitingOn = null;
      target = null;
    }
    if (deadline != null) {
      deadline.cancel(false);
      deadline = null;
    }
  }
}
