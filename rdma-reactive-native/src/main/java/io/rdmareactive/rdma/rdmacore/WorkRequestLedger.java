package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.NativeCallException;

/**
 * The work-request slots of one queue pair. A work request holds its queue slot until its
 * completion is polled ({@link NativeCompletionQueue} reports each polled completion), not until
 * the provider writes it (rxe frees the slot then), so posting beyond the depth the CQ reserved
 * fails with ENOMEM before reaching the provider and the CQ cannot overflow.
 *
 * <p>Work requests are numbered in posting order; completions of one work queue arrive in that
 * order, so a polled send completion retires every send up to its own, the unsignaled ones before
 * it included (verbs semantics). A ring remembers each outstanding send's wr_id and whether it was
 * signaled, to find the one a completion is for. Receives always complete, in order: counting is
 * enough. Posting is serialized by the QP's monitor; retiring runs on the CQ's poller.
 */
final class WorkRequestLedger {
  private final Object owner;
  private final boolean signalAll;
  private final boolean sharedReceives;
  // Numbers 1..sendPosted were posted (written under the QP's monitor only), 1..sendRetired have
  // been polled (written by the send CQ's poller only). Outstanding is the difference and stays
  // within sendCapacity, so ring entries of outstanding sends are never reused.
  private final int sendCapacity;
  private final long[] sendWrIds;
  private final boolean[] sendSignaled;
  private final int sendMask;
  private volatile long sendPosted;
  private volatile long sendRetired;
  private final int recvCapacity;
  private volatile long recvPosted;
  private volatile long recvRetired;

  /**
   * @param owner the QP, named in errors
   * @param sharedReceives whether receives go through an SRQ (their completions are not counted here)
   */
  WorkRequestLedger(Object owner, int sendCapacity, int recvCapacity, boolean signalAll, boolean sharedReceives) {
    this.owner = owner;
    this.sendCapacity = sendCapacity;
    this.recvCapacity = recvCapacity;
    this.signalAll = signalAll;
    this.sharedReceives = sharedReceives;
    int ring = Integer.highestOneBit(Math.max(1, sendCapacity) * 2 - 1); // a power of two >= sendCapacity
    sendWrIds = new long[ring];
    sendSignaled = new boolean[ring];
    sendMask = ring - 1;
  }

  /**
   * Takes a send slot for {@code wrId}, published before the post: its completion may be polled
   * before post_send returns. Returns the number to give {@link #abortSend} if the post fails.
   *
   * @throws NativeCallException ENOMEM when every slot is outstanding
   */
  long beginSend(long wrId, int flags) {
    long posted = sendPosted;
    long outstanding = posted - sendRetired;
    if (outstanding >= sendCapacity) {
      throw Native.failure("ibv_post_send", NativeCallException.ENOMEM, "send queue of " + owner + " is full: "
          + outstanding + " of " + sendCapacity + " work requests outstanding (posted, completion not yet polled)");
    }
    int slot = (int) (posted + 1) & sendMask;
    sendWrIds[slot] = wrId;
    sendSignaled[slot] = signalAll || (flags & io.rdmareactive.rdma.verbs.SendRequest.SIGNALED) != 0;
    sendPosted = posted + 1;
    return posted;
  }

  /** Gives back the slot {@link #beginSend} took ({@code posted}: what it returned). */
  void abortSend(long posted) {
    sendPosted = posted;
  }

  /** Takes a receive slot; returns the number to give {@link #abortReceive} if the post fails. */
  long beginReceive() {
    long posted = recvPosted;
    long outstanding = posted - recvRetired;
    if (outstanding >= recvCapacity) {
      throw Native.failure("ibv_post_recv", NativeCallException.ENOMEM, "receive queue of " + owner + " is full: "
          + outstanding + " of " + recvCapacity + " work requests outstanding (posted, completion not yet polled)");
    }
    recvPosted = posted + 1;
    return posted;
  }

  void abortReceive(long posted) {
    recvPosted = posted;
  }

  /**
   * A completion was polled that is a send's, a receive's, or (a QP with one CQ for both) either:
   * frees the slots of the work requests it retires. The opcode is only meaningful on success; an
   * error completion (flushes included) is matched by wr_id against the sends it may be for, and
   * is a receive's otherwise. Retiring never passes what was posted, so the counts never go
   * negative; a completion whose work request cannot be told errs towards retiring fewer, which
   * keeps the CQ bound.
   */
  void completed(boolean sends, boolean receives, int status, boolean receiveOpcode, long wrId) {
    if (sends && receives) {
      if (status == 0) {
        receives = receiveOpcode;
      } else {
        receives = sendMatching(wrId) < 0 && (sharedReceives || recvPosted > recvRetired);
      }
      sends = !receives;
    }
    if (receives) {
      long retired = recvRetired;
      if (!sharedReceives && retired < recvPosted) {
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
}
