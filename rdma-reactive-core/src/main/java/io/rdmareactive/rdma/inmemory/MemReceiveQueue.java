package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A receive queue (a QP's own, or a shared one): its posted receives, consumed in posting order,
 * and the senders whose SEND found it empty and wait for a receive (RNR), oldest first. Posting a
 * receive resumes them there and then, on the poster's thread, as a responder ends an RNR wait.
 * Guarded by fabric.lock.
 */
final class MemReceiveQueue {
  private final ArrayDeque<PostedReceive> posted = new ArrayDeque<>();
  private final ArrayDeque<SendBacklog> stalled = new ArrayDeque<>(0);

  /** The oldest posted receive, taken; null when none is posted. */
  @Nullable PostedReceive poll() {
    return posted.poll();
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
