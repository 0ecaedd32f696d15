package io.rdmareactive.rdma.inmemory;

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

  @Nullable Held peek() {
    return held.peek();
  }

  @Nullable Held poll() {
    return held.poll();
  }

  /** The QP the head waits to reach; null when it does not wait. */
  @Nullable MemQueuePairState target() {
    return target;
  }

  /** Holds {@code r} (copied; an inline send's bytes too, as the device takes them at posting). */
  void add(SendRequest r, WorkCompletion.Opcode opcode) {
    MemorySegment inline = (r.flags() & SendRequest.INLINE) != 0 ? inlineCopy(r.scatterGather()) : null;
    held.add(new Held(new SendRequest(Math.max(1, r.scatterGather().count())).set(r), opcode, inline));
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

  /** A receive was posted where the head waits: it is retried, and what follows runs in order. */
  void resume() {
    detach();
    qp.runBacklog();
  }

  /** The wait on {@code queue} ends in failure: the head fails with {@code status}, the QP with it. */
  void fail(MemReceiveQueue queue, WorkCompletion.Status status) {
    if (waitingOn != queue) {
      return; // resumed or failed meanwhile
    }
    detach();
    qp.failBacklog(status);
  }

  /** Ends the wait, if any: leaves the queue and drops the deadline. */
  void detach() {
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
