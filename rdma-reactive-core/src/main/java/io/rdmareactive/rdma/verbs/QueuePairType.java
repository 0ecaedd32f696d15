package io.rdmareactive.rdma.verbs;

/** Transport types (enum ibv_qp_type) the library supports. */
public enum QueuePairType {
  RC(2), UC(3), UD(4), XRC_SEND(9), XRC_RECV(10);

  private final int code;

  QueuePairType(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }
}
