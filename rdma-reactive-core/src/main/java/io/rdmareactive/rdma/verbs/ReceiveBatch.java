package io.rdmareactive.rdma.verbs;

/**
 * Receive work requests posted with one {@link QueuePair#postReceive(ReceiveBatch)} ({@code
 * ibv_post_recv} of a chained list). Partial posts: see {@link WorkRequestBatch}.
 */
public final class ReceiveBatch extends WorkRequestBatch<ReceiveRequest> {
  /** A batch of up to {@code capacity} requests, each with room for {@code maxScatterGather} entries. */
  public ReceiveBatch(int capacity, int maxScatterGather) {
    super(capacity, i -> new ReceiveRequest(maxScatterGather));
  }

  /**
   * The next request, appended, with no entries, to fill in.
   *
   * @throws IllegalStateException when the batch is full
   */
  public ReceiveRequest add() {
    ReceiveRequest r = append();
    r.scatterGather().clear();
    return r.wrId(0);
  }
}
