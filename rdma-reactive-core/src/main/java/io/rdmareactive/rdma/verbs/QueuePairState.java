package io.rdmareactive.rdma.verbs;

/** enum ibv_qp_state, in order. */
public enum QueuePairState { RESET, INIT, RTR, RTS, SQD, SQE, ERROR, UNKNOWN;
  public static QueuePairState of(int code) {
    return code >= 0 && code < UNKNOWN.ordinal() ? values()[code] : UNKNOWN;
  }
}
