package io.rdmareactive.rdma.verbs;

/**
 * A queue pair. Posting is allocation-free: fill a reusable {@link SendRequest} or
 * {@link ReceiveRequest} and post it; the provider copies it into its own work-request memory.
 *
 * <p>A work request holds its queue slot until its completion is polled, whatever the device
 * does (some free the slot once the completion is written); an unsignaled send holds its slot
 * at most until a later signaled send's completion on the QP is polled. A post beyond the queue's depth fails with
 * {@link io.rdmareactive.rdma.NativeCallException} errno ENOMEM before reaching the device; poll,
 * then post again. Since the CQ depth must cover the QPs' send + receive depths (checked at
 * creation, see {@link CompletionQueueOptions}), the CQ cannot overflow.
 */
public interface QueuePair extends RdmaResource {
  /** The queue pair number peers address it by. */
  int qpNumber();

  /** Its transport type. */
  QueuePairType type();

  /** Its current state (ibv_query_qp). */
  QueuePairState state();

  /** What a peer needs to connect to this QP (port 1 / {@code gidIndex}). */
  QueuePairAddress localAddress(QueuePairConnectOptions options);

  /** Moves RESET to INIT, RTR and RTS towards {@code remote} (ibv_modify_qp), for setups without the CM. */
  void connect(QueuePairAddress remote, QueuePairConnectOptions options);

  /** Moves the QP to ERROR: outstanding work requests complete with WR_FLUSH_ERR. */
  void toError();

  /**
   * ibv_post_send of one request (its chain of one).
   *
   * @throws io.rdmareactive.rdma.NativeCallException ENOMEM when the send queue's depth is taken by
   *     work requests whose completions were not polled yet
   */
  void postSend(SendRequest request);

  /**
   * ibv_post_send of {@code batch}'s requests as one chained list: one doorbell for all of them.
   * Requests are taken in order; the first that cannot be (full queue, bad request, the device
   * refusing it) stops the post, those before it stay posted, and {@link SendBatch#posted()} says
   * how many that is, whether this returns or throws. This default posts one at a time; providers
   * post the list at once.
   *
   * @throws io.rdmareactive.rdma.NativeCallException ENOMEM when the send queue fills part way
   */
  default void postSend(SendBatch batch) {
    int i = 0;
    try {
      for (; i < batch.size(); i++) {
        postSend(batch.get(i));
      }
    } finally {
      batch.posted(i);
    }
  }

  /**
   * ibv_post_recv of {@code batch}'s requests as one chained list, partial as {@link
   * #postSend(SendBatch)} is ({@link ReceiveBatch#posted()}).
   *
   * @throws io.rdmareactive.rdma.NativeCallException ENOMEM when the receive queue fills part way
   */
  default void postReceive(ReceiveBatch batch) {
    int i = 0;
    try {
      for (; i < batch.size(); i++) {
        postReceive(batch.get(i));
      }
    } finally {
      batch.posted(i);
    }
  }

  /**
   * ibv_post_recv of one request.
   *
   * @throws io.rdmareactive.rdma.NativeCallException ENOMEM when the receive queue is full
   */
  void postReceive(ReceiveRequest request);
}
