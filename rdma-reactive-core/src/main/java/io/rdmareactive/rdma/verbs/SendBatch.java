package io.rdmareactive.rdma.verbs;

/**
 * Send work requests posted with one {@link QueuePair#postSend(SendBatch)}: one {@code
 * ibv_post_send} of a chained list, so one doorbell (on rxe one system call) for all of them.
 * Partial posts: see {@link WorkRequestBatch}.
 */
public final class SendBatch extends WorkRequestBatch<SendRequest> {
  /** A batch of up to {@code capacity} requests, each with room for {@code maxScatterGather} entries. */
  public SendBatch(int capacity, int maxScatterGather) {
    super(capacity, i -> new SendRequest(maxScatterGather));
  }

  /**
   * The next request, appended: a signaled SEND with no entries, to fill in.
   *
   * @throws IllegalStateException when the batch is full
   */
  public SendRequest add() {
    return append().reset(0, SendRequest.Opcode.SEND);
  }

  /**
   * The next request, appended: a signaled {@code opcode} with id {@code wrId} and no entries, to
   * fill in (no request of the caller's own to copy in).
   *
   * @throws IllegalStateException when the batch is full
   */
  public SendRequest add(long wrId, SendRequest.Opcode opcode) {
    return append().reset(wrId, opcode);
  }
}
