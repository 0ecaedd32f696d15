package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Hands work completions from the loop's poll of the CQ to the connection's drain without an
 * object per completion: a single-producer, single-consumer ring of their fields. The connection sizes
 * it to its work requests, so it can only overflow when a provider reports more completions than
 * there were work requests.
 */
final class CompletionRing {
  /** What the drain does with each completion. */
  interface Handler {
    /** {@code failed} is the completion's record when it failed (for its exception), else null. */
    void onCompletion(long wrId, WorkCompletion.Status status, int byteLength, boolean hasImmediate,
        int immediateData, @Nullable WorkCompletion failed);
  }

  private final int mask;
  private final long[] wrId;
  private final int[] status;
  private final int[] length;
  private final int[] immediate;
  private final @Nullable WorkCompletion[] failed;
  private long written; // producer only
  private final AtomicLong published = new AtomicLong();
  private final AtomicLong consumed = new AtomicLong();

  /** A ring for at least {@code capacity} outstanding completions. */
  CompletionRing(int capacity) {
    int size = Integer.highestOneBit(Math.max(2, capacity) * 2 - 1);
    mask = size - 1;
    wrId = new long[size];
    status = new int[size];
    length = new int[size];
    immediate = new int[size];
    failed = new WorkCompletion[size];
  }

  /** Producer: stores one completion, unpublished; false, storing nothing, when the ring is full. */
  boolean offer(long wrId, WorkCompletion.Status status, int length, boolean hasImmediate, int immediate,
      @Nullable WorkCompletion failed) {
    long w = written;
    if (w - consumed.getAcquire() > mask) {
      return false;
    }
    int i = (int) w & mask;
    this.wrId[i] = wrId;
    this.status[i] = status.ordinal() | (hasImmediate ? 1 << 16 : 0);
    this.length[i] = length;
    this.immediate[i] = immediate;
    this.failed[i] = failed;
    written = w + 1;
    return true;
  }

  /** Producer: makes what was offered visible to the consumer. */
  void publish() {
    published.setRelease(written);
  }

  /**
   * Consumer: hands each published completion to {@code handler}, in order, once: it is taken out
   * of the ring before the handler runs, so a handler that throws (a user callback failing
   * inside it) never sees it again, and what it already gave back is not given back twice.
   */
  void drainTo(Handler handler) {
    long end = published.getAcquire();
    for (long c = consumed.get(); c < end; c++) {
      int i = (int) c & mask;
      WorkCompletion f = failed[i];
      failed[i] = null;
      int s = status[i];
      long id = wrId[i];
      int len = length[i];
      int imm = immediate[i];
      consumed.setRelease(c + 1); // the slot may be reused from here: its fields are read
      handler.onCompletion(id, WorkCompletion.Status.of(s & 0xFFFF), len, (s & 1 << 16) != 0, imm, f);
    }
  }

  /** Consumer: drops every published completion unseen (the connection is closed). */
  void discard() {
    long end = published.getAcquire();
    for (long c = consumed.get(); c < end; c++) {
      failed[(int) c & mask] = null;
    }
    consumed.setRelease(end);
  }
}
