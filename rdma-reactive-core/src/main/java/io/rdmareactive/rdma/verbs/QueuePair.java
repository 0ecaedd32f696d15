package io.rdmareactive.rdma.verbs;

/**
 * A queue pair. Posting is allocation-free: fill a reusable {@link SendRequest} or
 * {@link ReceiveRequest} and post it; the provider copies it into its own work-request memory.
 */
public interface QueuePair extends RdmaResource {
  int qpNumber();

  QueuePairType type();

  QueuePairState state();

  /** What a peer needs to connect to this QP (port 1 / {@code gidIndex}). */
  QueuePairAddress localAddress(QueuePairConnectOptions options);

  /** Moves RESET to INIT, RTR and RTS towards {@code remote} (ibv_modify_qp), for setups without the CM. */
  void connect(QueuePairAddress remote, QueuePairConnectOptions options);

  /** Moves the QP to ERROR: outstanding work requests complete with WR_FLUSH_ERR. */
  void toError();

  /** ibv_post_send of one request (its chain of one). */
  void postSend(SendRequest request);

  /** ibv_post_recv of one request. */
  void postReceive(ReceiveRequest request);
}
