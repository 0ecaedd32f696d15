package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.SendBatch;
import io.rdmareactive.rdma.verbs.SendRequest;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A connection's send work requests: what one drain makes (data, credit updates, keepalive
 * probes) is queued here and posted at the drain's end as one chained list, one doorbell (on rxe
 * one system call instead of one per request), and the ledger of those posted.
 *
 * <p>Selective signaling: only the last request of each post asks for a completion, and one in
 * {@link #SIGNAL_INTERVAL} within a long post, and any that fills the send queue to its depth.
 * Completions of one send queue come in posting order, so one completion retires every request
 * posted before it too (they succeeded, or they would have completed themselves, with an error);
 * each is handed to the {@link Retirement} in order, so buffers are freed in order. A QP in ERROR
 * flushes every posted request, signaled or not, each with its own completion, which retires it
 * alone. To tell which request a completion is for, each request's id carries its sequence number
 * (modulo 2^16, more than any send queue's depth) in bits 48-63, above the tag and index the
 * {@link CompletionDispatcher} reads. A request that was queued but never posted (a partial post,
 * a disconnect before the drain's end) is retired as failed in its turn, so the ledger is exact
 * whatever the post did.
 *
 * <p>An inline send's bytes are copied into the work request by the post itself, so its send
 * buffer goes back at once ({@link Retirement#inlinePosted}) rather than at its completion.
 *
 * <p>Plain state driven from the connection's drain.
 */
final class SendDoorbell {
  /** At most this many requests per post: a longer drain rings more than once (eRPC and UCX post 16). */
  static final int MAX_POST_LIST = 32;
  /** At least one request in this many asks for a completion, within one long post. */
  static final int SIGNAL_INTERVAL = 16;
  private static final int SEQUENCE_SHIFT = 48;
  private static final long ID_MASK = (1L << SEQUENCE_SHIFT) - 1;

  /** Where retired requests go: the parts that posted them. */
  interface Retirement {
    /**
     * The request with id {@code wrId} (as queued, without the sequence) completed, in posting
     * order; {@code bufferGone}: it was inline and its buffer went back when it was posted.
     */
    void sendRetired(long wrId, boolean success, boolean bufferGone);

    /** The inline request {@code wrId} was posted: its bytes are in the work request, its buffer is free. */
    void inlinePosted(long wrId);
  }

  private final QueuePair qp;
  private final int depth;
  private final ConnectionCounters counters;
  private final SendBatch batch;
  // The ledger, by sequence number: 'retired' is the next to retire, 'flushed' the first still in
  // the batch, 'queued' the next to queue. Entries between retired and flushed are posted or
  // marked unposted.
  private final long[] ids;
  private final boolean[] unposted;
  private final boolean[] inline;
  private final int mask;
  private long retired;
  private long flushed;
  private long queued;
  private int sinceSignaled;
  private @Nullable Retirement owner;
  /** The signaled zero-length RDMA WRITE that retires the unsignaled end of a partial post. */
  private final SendRequest retirer = new SendRequest();

  SendDoorbell(QueuePair qp, int depth, ConnectionCounters counters) {
    this.qp = qp;
    this.depth = depth;
    this.counters = counters;
    // a send from registered memory gathers its ranges
    batch = new SendBatch(Math.min(depth, MAX_POST_LIST), EndpointOptions.SEND_SCATTER_GATHER);
    int ring = Integer.highestOneBit(Math.max(2, depth) * 2 - 1);
    ids = new long[ring];
    unposted = new boolean[ring];
    inline = new boolean[ring];
    mask = ring - 1;
  }

  /** Where retired requests go (the connection's dispatcher, made after the parts that queue). */
  void retireTo(Retirement owner) {
    this.owner = owner;
  }

  /** Requests queued or posted and not yet retired. */
  int outstanding() {
    return (int) (queued - retired);
  }

  /**
   * Queues a copy of {@code r} (its flags decide inline; signaling is decided when posted).
   * A full batch is posted first.
   */
  void queue(SendRequest r) {
    long id = enter(r.wrId(), r.flags()); // first: a full batch is posted before this one joins it
    batch.add().set(r).wrId(id);
  }

  /**
   * Queues a send of one range, filled in place in the batch: what {@link #queue} does without a
   * request to copy (every message's data send, so it is the hot path).
   */
  void queueSend(long wrId, SendRequest.Opcode opcode, MemoryRegion region, long offset, int length, int flags,
      int immediate) {
    batch.add(enter(wrId, flags), opcode).gather(region, offset, length).flags(flags).immediate(immediate);
  }

  /** Enters request {@code wrId} in the ledger, a full batch posted first; returns the id to post it with. */
  private long enter(long wrId, int flags) {
    if (batch.size() == batch.capacity()) {
      flush();
    }
    long seq = queued++;
    int slot = (int) seq & mask;
    ids[slot] = wrId;
    unposted[slot] = false;
    inline[slot] = (flags & SendRequest.INLINE) != 0;
    return wrId | (seq & 0xFFFF) << SEQUENCE_SHIFT;
  }

  /**
   * Posts what is queued as one list. On a partial post the requests not taken are retired as
   * failed in their turn, and the post's exception is rethrown: the connection fails with it.
   */
  void flush() {
    int n = batch.size();
    if (n == 0) {
      return;
    }
    Retirement owner = Objects.requireNonNull(this.owner);
    long first = flushed;
    signal(n, first - retired);
    flushed = first + n;
    counters.doorbell();
    try {
      qp.postSend(batch);
    } catch (Throwable e) { // rethrown as it is: the post throws nothing checked
      settle(owner, first, n);
      throw e;
    }
    settle(owner, first, n);
  }

  /**
   * Marks which of the {@code n} queued requests ask for a completion; {@code inFlight}: those
   * posted before them and not yet retired.
   */
  private void signal(int n, long inFlight) {
    for (int i = 0; i < n; i++) {
      SendRequest r = batch.get(i);
      boolean signal = i == n - 1 || ++sinceSignaled >= SIGNAL_INTERVAL || inFlight + i + 1 >= depth;
      r.flags(signal ? r.flags() | SendRequest.SIGNALED : r.flags() & ~SendRequest.SIGNALED);
      if (signal) {
        sinceSignaled = 0;
        counters.sendSignaled();
      }
    }
  }

  /**
   * After the post of the {@code n} requests from sequence {@code first}: gives inline ones' buffers
   * back, and marks those the post did not take, retiring them as failed (a separate method, not a
   * finally block, which javac would copy into both exits of the hot {@link #flush}).
   */
  private void settle(Retirement owner, long first, int n) {
    int taken = batch.posted();
    boolean lastTakenSignaled = taken > 0 && batch.get(taken - 1).isSignaled();
    batch.clear();
    for (long s = first; s < first + n; s++) {
      int slot = (int) s & mask;
      if (s >= first + taken) {
        unposted[slot] = true;
      } else if (inline[slot]) {
        owner.inlinePosted(ids[slot]);
      }
    }
    if (taken < n) {
      partialPost(owner, taken > 0 && !lastTakenSignaled);
    }
  }

  /** A post took only part of the list: retires the rest as failed, after a retirer if what was taken ends unsignaled. */
  private void partialPost(Retirement owner, boolean needsRetirer) {
    if (needsRetirer) {
      postRetirer();
    }
    retireUnposted(owner);
  }

  /**
   * A partial post left its posted part ending unsignaled: nothing would ever retire those that
   * succeed. A signaled zero-length RDMA WRITE (no credit, no remote memory: IBTA C9-88) after
   * them does; if the QP takes not even that, it is broken and flushes what it holds.
   */
  private void postRetirer() {
    long seq = queued++;
    flushed = queued;
    int slot = (int) seq & mask;
    ids[slot] = CompletionDispatcher.RETIRER;
    inline[slot] = false;
    unposted[slot] = false;
    retirer.reset(CompletionDispatcher.RETIRER | (seq & 0xFFFF) << SEQUENCE_SHIFT, SendRequest.Opcode.RDMA_WRITE)
        .remote(0, 0).flags(SendRequest.SIGNALED);
    try {
      counters.doorbell();
      counters.sendSignaled();
      qp.postSend(retirer);
    } catch (RuntimeException e) {
      unposted[slot] = true; // the connection fails with the first post's exception already
    }
  }

  /** Disconnected before the drain's end: what is queued is never posted (into a QP in ERROR it would only flush). */
  void discard() {
    Retirement owner = Objects.requireNonNull(this.owner);
    int n = batch.size();
    batch.clear();
    for (long s = flushed; s < flushed + n; s++) {
      unposted[(int) s & mask] = true;
    }
    flushed += n;
    retireUnposted(owner);
  }

  /**
   * A send completion with {@code wrId} was polled: retires, in order, every request up to the one
   * it is for. False when it is for none outstanding (a provider bug: nothing is retired).
   */
  boolean completed(long wrId, boolean success) {
    Retirement owner = Objects.requireNonNull(this.owner);
    long offset = ((wrId >>> SEQUENCE_SHIFT) - retired) & 0xFFFF;
    long target = retired + offset;
    if (target >= flushed || unposted[(int) target & mask]) {
      return false;
    }
    while (retired <= target) {
      int slot = (int) retired & mask;
      boolean ok = !unposted[slot] && (retired < target || success);
      retired++;
      owner.sendRetired(ids[slot], ok, inline[slot] && !unposted[slot]);
    }
    retireUnposted(owner);
    return true;
  }

  /** The id a completion carries, as it was queued (without the sequence). */
  static long queuedId(long wrId) {
    return wrId & ID_MASK;
  }

  /** Retires, as failed, the unposted requests at the head: none will complete to retire them. */
  private void retireUnposted(Retirement owner) {
    while (retired < flushed && unposted[(int) retired & mask]) {
      int slot = (int) retired & mask;
      retired++;
      owner.sendRetired(ids[slot], false, false);
    }
  }
}
