package io.rdmareactive.rdma.verbs;

/** Transport types (enum ibv_qp_type) the library supports. */
public enum QueuePairType {
  /** IBV_QPT_RC: reliable connected. */
  RC(2),
  /** IBV_QPT_UC: unreliable connected. */
  UC(3),
  /** IBV_QPT_UD: unreliable datagram. */
  UD(4),
  /** IBV_QPT_XRC_SEND: the sending side of an XRC connection, which targets SRQs of an XRC domain. */
  XRC_SEND(9),
  /** IBV_QPT_XRC_RECV: the receiving side of an XRC connection. */
  XRC_RECV(10);

  private final int code;

  QueuePairType(int code) {
    this.code = code;
  }

  /** The {@code ibv_qp_type} value. */
  public int code() {
    return code;
  }
}
