package io.rdmareactive.rdma.verbs;

/** An asynchronous device event (ibv_get_async_event), already acknowledged. */
public record AsyncEvent(Type type, int eventCode, long elementId) {
  /** Event kinds, in enum ibv_event_type order. */
  public enum Type {
    /** IBV_EVENT_CQ_ERR: a completion queue overflowed or failed; its element is the CQ. */
    CQ_ERR,
    /** IBV_EVENT_QP_FATAL: a QP error the device could not attribute to a work request; the QP is in ERROR. */
    QP_FATAL,
    /** IBV_EVENT_QP_REQ_ERR: the QP's peer violated the transport as requester; the QP is in ERROR. */
    QP_REQ_ERR,
    /** IBV_EVENT_QP_ACCESS_ERR: a remote access violation on the QP; the QP is in ERROR. */
    QP_ACCESS_ERR,
    /** IBV_EVENT_COMM_EST: the first message arrived on a QP in RTR (informational). */
    COMM_EST,
    /** IBV_EVENT_SQ_DRAINED: the send queue of a QP in SQD has drained. */
    SQ_DRAINED,
    /** IBV_EVENT_PATH_MIG: the QP migrated to its alternate path. */
    PATH_MIG,
    /** IBV_EVENT_PATH_MIG_ERR: migrating to the alternate path failed. */
    PATH_MIG_ERR,
    /** IBV_EVENT_DEVICE_FATAL: the device failed; every object on it is unusable. */
    DEVICE_FATAL,
    /** IBV_EVENT_PORT_ACTIVE: a port became ACTIVE; its element is the port number. */
    PORT_ACTIVE,
    /** IBV_EVENT_PORT_ERR: a port left ACTIVE (link down); its element is the port number. */
    PORT_ERR,
    /** IBV_EVENT_LID_CHANGE: a port's LID changed (informational). */
    LID_CHANGE,
    /** IBV_EVENT_PKEY_CHANGE: a port's P_Key table changed (informational). */
    PKEY_CHANGE,
    /** IBV_EVENT_SM_CHANGE: the subnet manager of a port changed (informational). */
    SM_CHANGE,
    /** IBV_EVENT_SRQ_ERR: a shared receive queue failed. */
    SRQ_ERR,
    /** IBV_EVENT_SRQ_LIMIT_REACHED: a shared receive queue fell below its armed limit. */
    SRQ_LIMIT_REACHED,
    /** IBV_EVENT_QP_LAST_WQE_REACHED: a QP on an SRQ will consume no more of its receives. */
    QP_LAST_WQE_REACHED,
    /** IBV_EVENT_CLIENT_REREGISTER: the subnet manager asks clients to register again. */
    CLIENT_REREGISTER,
    /** IBV_EVENT_GID_CHANGE: a port's GID table changed (informational). */
    GID_CHANGE,
    /** IBV_EVENT_WQ_FATAL: a work queue failed. */
    WQ_FATAL,
    /** An event code this library does not know. */
    UNKNOWN;
    /** The type of an {@code ibv_event_type} code; {@link #UNKNOWN} for codes past the known ones. */
    public static Type of(int code) {
      return code >= 0 && code < UNKNOWN.ordinal() ? values()[code] : UNKNOWN;
    }
  }
}
