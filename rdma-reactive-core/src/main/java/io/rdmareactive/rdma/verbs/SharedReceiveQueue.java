package io.rdmareactive.rdma.verbs;

/** A shared receive queue; an XRC SRQ also has a number remote XRC senders target. */
public interface SharedReceiveQueue extends RdmaResource {
  /** How many receives it holds (the provider may round the requested number up). */
  int maxWorkRequests();

  /** The XRC SRQ number (ibv_get_srq_num); -1 for a plain SRQ. */
  int srqNumber();

  /** ibv_post_srq_recv of one request. */
  void postReceive(ReceiveRequest request);
}
