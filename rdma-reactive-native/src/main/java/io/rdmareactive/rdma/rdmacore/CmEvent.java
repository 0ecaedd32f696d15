package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

/**
 * One RDMA CM event (struct rdma_cm_event), copied out of native memory before it is acknowledged.
 *
 * @param type what happened
 * @param status the event's status: 0, a negative errno, or a transport reject reason (REJECTED)
 * @param id the struct rdma_cm_id* the event is about (for CONNECT_REQUEST: the new id)
 * @param listenId the listening id of a CONNECT_REQUEST, otherwise 0
 * @param privateData the peer's private data (connect, accept or reject), empty when none; on
 *     InfiniBand/RoCE padded with zeros to the CM message's private-data size
 * @param retryCount a CONNECT_REQUEST's transport retry count (the initiator's, from the REQ), otherwise 0
 * @param rnrRetry a CONNECT_REQUEST's RNR retry count (the initiator's, from the REQ), otherwise 0
 */
record CmEvent(Type type, int status, long id, long listenId, byte[] privateData, int retryCount, int rnrRetry) {

  /** enum rdma_cm_event_type, in order, in Java names. */
  enum Type {
    ADDRESS_RESOLVED, ADDRESS_ERROR, ROUTE_RESOLVED, ROUTE_ERROR, CONNECT_REQUEST, CONNECT_RESPONSE,
    CONNECT_ERROR, UNREACHABLE, REJECTED, ESTABLISHED, DISCONNECTED, DEVICE_REMOVAL, MULTICAST_JOIN,
    MULTICAST_ERROR, ADDRESS_CHANGE, TIMEWAIT_EXIT, UNKNOWN;

    private static final Type[] VALUES = values();

    static Type of(int code) {
      return code >= 0 && code < UNKNOWN.ordinal() ? VALUES[code] : UNKNOWN;
    }

    /** Whether this event ends a connection attempt unsuccessfully. */
    boolean isConnectFailure() {
      return switch (this) {
        case ADDRESS_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, DISCONNECTED, DEVICE_REMOVAL -> true;
        default -> false;
      };
    }
  }

  /** Copies {@code event} (a struct rdma_cm_event*); the caller acknowledges it afterwards. */
  static CmEvent copyOf(MemorySegment event) {
    MemorySegment e = event.reinterpret(CmLayout.SIZEOF_CM_EVENT);
    int code = e.get(JAVA_INT, CmLayout.CM_EVENT_EVENT);
    Type type = Type.of(code);
    byte[] data = switch (type) {
      case CONNECT_REQUEST, CONNECT_RESPONSE, REJECTED, ESTABLISHED -> RdmaCm.copy(
          e.get(ADDRESS, CmLayout.CM_EVENT_PARAM_CONN_PRIVATE_DATA),
          Byte.toUnsignedInt(e.get(JAVA_BYTE, CmLayout.CM_EVENT_PARAM_CONN_PRIVATE_DATA_LEN)));
      default -> new byte[0];
    };
    boolean request = type == Type.CONNECT_REQUEST;
    return new CmEvent(type, e.get(JAVA_INT, CmLayout.CM_EVENT_STATUS),
        e.get(ADDRESS, CmLayout.CM_EVENT_ID).address(), e.get(ADDRESS, CmLayout.CM_EVENT_LISTEN_ID).address(), data,
        request ? Byte.toUnsignedInt(e.get(JAVA_BYTE, CmLayout.CM_EVENT_PARAM_CONN_RETRY_COUNT)) : 0,
        request ? Byte.toUnsignedInt(e.get(JAVA_BYTE, CmLayout.CM_EVENT_PARAM_CONN_RNR_RETRY_COUNT)) : 0);
  }

  @Override
  public String toString() {
    return "CmEvent[" + type + ", status " + status + ", id 0x" + Long.toHexString(id)
        + (privateData.length > 0 ? ", " + privateData.length + " bytes of private data" : "") + "]";
  }
}
