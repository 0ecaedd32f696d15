package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.ReceiveBatch;
import org.jspecify.annotations.Nullable;

/**
 * A connection's receive posts: the receives one pass of its drain posts go as chained lists (one
 * {@code ibv_post_recv} per {@link SendDoorbell#MAX_POST_LIST}) rather than one call each. A
 * partial post gives the buffers it did not take back to the free list, so the count of posted
 * receives stays exact; its error is kept for {@link #throwIfFailed}. Plain state driven from the
 * connection's drain.
 */
final class ReceiveDoorbell {
  private final QueuePair qp;
  private final RegisteredBuffers buffers;
  private final int bufferSize;
  private final ReceiveBatch batch;
  private @Nullable RuntimeException failure;

  ReceiveDoorbell(QueuePair qp, RegisteredBuffers buffers, int bufferSize, int receiveCount) {
    this.qp = qp;
    this.buffers = buffers;
    this.bufferSize = bufferSize;
    batch = new ReceiveBatch(Math.min(receiveCount, SendDoorbell.MAX_POST_LIST), 1);
  }

  /**
   * Posts up to {@code wanted} receives, as free buffers allow, as one list; returns how many the
   * QP took. Never throws: a failed post is kept for {@link #throwIfFailed}, once the caller has
   * counted what was taken.
   */
  int post(int wanted) {
    int n = 0;
    for (; n < wanted && n < batch.capacity() && buffers.freeReceives() > 0; n++) {
      int index = buffers.takeReceive();
      batch.add().set(CompletionDispatcher.RECV | index, buffers.receiveRegion(index), buffers.receiveOffset(index), bufferSize);
    }
    if (n == 0) {
      return 0;
    }
    try {
      qp.postReceive(batch);
    } catch (RuntimeException e) {
      failure = e;
    }
    int taken = batch.posted();
    for (int i = taken; i < n; i++) {
      buffers.freeReceive((int) batch.get(i).wrId());
    }
    batch.clear();
    return taken;
  }

  /** Throws the error of the last post that failed, once. */
  void throwIfFailed() {
    RuntimeException e = failure;
    if (e != null) {
      failure = null;
      throw e;
    }
  }
}
