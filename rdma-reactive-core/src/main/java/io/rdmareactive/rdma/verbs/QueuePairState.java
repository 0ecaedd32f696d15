package io.rdmareactive.rdma.verbs;

/** enum ibv_qp_state, in order. */
public enum QueuePairState {
  /** IBV_QPS_RESET: just created, or reset. */
  RESET,
  /** IBV_QPS_INIT: receives may be posted. */
  INIT,
  /** IBV_QPS_RTR: ready to receive. */
  RTR,
  /** IBV_QPS_RTS: ready to send. */
  RTS,
  /** IBV_QPS_SQD: the send queue is draining. */
  SQD,
  /** IBV_QPS_SQE: a send failed on an unreliable QP; receives still work. */
  SQE,
  /** IBV_QPS_ERR: failed; posted requests complete with WR_FLUSH_ERR. */
  ERROR,
  /** A state this library does not know. */
  UNKNOWN;
  /** The state of an {@code ibv_qp_state} code; {@link #UNKNOWN} for others. */
  public static QueuePairState of(int code) {
    return code >= 0 && code < UNKNOWN.ordinal() ? values()[code] : UNKNOWN;
  }
}
