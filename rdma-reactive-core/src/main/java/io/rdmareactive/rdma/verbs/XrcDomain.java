package io.rdmareactive.rdma.verbs;

/**
 * An XRC domain: receive-side objects (XRC SRQs, XRC receive QPs) that send QPs of other
 * processes reach by SRQ number. Closing fails with {@link io.rdmareactive.rdma.ResourceBusyException}
 * while SRQs or QPs use it.
 */
public interface XrcDomain extends RdmaResource {
  /** The device context the domain belongs to. */
  RdmaContext context();

  /** An XRC SRQ (create_srq_ex with IBV_SRQT_XRC); its {@link SharedReceiveQueue#srqNumber()} is what senders target. */
  SharedReceiveQueue createSharedReceiveQueue(ProtectionDomain pd, CompletionQueue cq, SharedReceiveQueueOptions options);

  /** An XRC receive QP (create_qp_ex with IBV_QPT_XRC_RECV), the modern ibv_create_xrc_rcv_qp. */
  QueuePair createReceiveQueuePair();

  /** Opens an XRC receive QP another process created in this domain (ibv_open_qp). */
  QueuePair openQueuePair(int qpNumber);
}
