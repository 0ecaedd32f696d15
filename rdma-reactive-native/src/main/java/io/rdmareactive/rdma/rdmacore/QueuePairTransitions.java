package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.QueuePairAddress;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The queue-pair state machine (ibv_modify_qp, ibv_query_qp): RESET to INIT, RTR and RTS with the
 * attributes each transport type needs, and to ERROR. The caller holds the QP's monitor.
 */
final class QueuePairTransitions {
  // enum ibv_qp_attr_mask
  static final int QP_STATE = 1, ACCESS_FLAGS = 1 << 3, PKEY_INDEX = 1 << 4, PORT = 1 << 5, QKEY = 1 << 6,
      AV = 1 << 7, PATH_MTU = 1 << 8, TIMEOUT = 1 << 9, RETRY_CNT = 1 << 10, RNR_RETRY = 1 << 11,
      RQ_PSN = 1 << 12, MAX_QP_RD_ATOMIC = 1 << 13, MIN_RNR_TIMER = 1 << 15, SQ_PSN = 1 << 16,
      MAX_DEST_RD_ATOMIC = 1 << 17, DEST_QPN = 1 << 20;
  static final int UD_QKEY = 0x11111111;

  private QueuePairTransitions() {}

  /** ibv_query_qp's current state of {@code qp} ({@code owner} is named in errors). */
  static QueuePairState state(MemorySegment qp, Object owner) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_QP_ATTR, 8);
      MemorySegment init = a.allocate(SIZEOF_QP_INIT_ATTR, 8);
      int rc = Ibverbs.queryQp(qp, attr, QP_STATE, init);
      if (rc != 0) {
        throw Native.failure("ibv_query_qp", Native.errnoOf(rc), owner.toString());
      }
      return QueuePairState.of(attr.get(JAVA_INT, QP_ATTR_QP_STATE));
    }
  }

  /** RESET -> INIT -> RTR (-> RTS, except for an XRC receive QP) towards {@code remote}. */
  static void connect(NativeContext context, MemorySegment qp, QueuePairType type, QueuePairAddress remote,
      QueuePairConnectOptions o, Object owner) {
    PortAttributes port = context.queryPort(o.portNumber());
    int mtu = Math.max(1, Math.min(o.pathMtu(), port.activeMtu()));
    byte[] gid = remote.gid();
    boolean global = port.linkLayer() == PortAttributes.LinkLayer.ETHERNET || !allZero(gid);
    int access = Access.mask(o.remoteAccess());
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_QP_ATTR, 8);
      // RESET -> INIT
      attr.set(JAVA_INT, QP_ATTR_QP_STATE, QueuePairState.INIT.ordinal());
      attr.set(JAVA_SHORT, QP_ATTR_PKEY_INDEX, (short) 0);
      attr.set(JAVA_BYTE, QP_ATTR_PORT_NUM, (byte) o.portNumber());
      int mask = QP_STATE | PKEY_INDEX | PORT;
      if (type == QueuePairType.UD) {
        attr.set(JAVA_INT, QP_ATTR_QKEY, UD_QKEY);
        mask |= QKEY;
      } else {
        attr.set(JAVA_INT, QP_ATTR_QP_ACCESS_FLAGS,
            type == QueuePairType.UC ? access & ~Access.REMOTE_READ.bit() & ~Access.REMOTE_ATOMIC.bit() : access);
        mask |= ACCESS_FLAGS;
      }
      modify(qp, attr, mask, owner, "INIT");
      // INIT -> RTR
      attr.fill((byte) 0);
      attr.set(JAVA_INT, QP_ATTR_QP_STATE, QueuePairState.RTR.ordinal());
      mask = QP_STATE;
      if (type != QueuePairType.UD) {
        attr.set(JAVA_INT, QP_ATTR_PATH_MTU, mtu);
        attr.set(JAVA_INT, QP_ATTR_DEST_QP_NUM, remote.qpNumber());
        attr.set(JAVA_INT, QP_ATTR_RQ_PSN, remote.packetSequenceNumber() & 0xFFFFFF);
        attr.set(JAVA_SHORT, QP_ATTR_AH_ATTR_DLID, (short) remote.lid());
        attr.set(JAVA_BYTE, QP_ATTR_AH_ATTR_PORT_NUM, (byte) o.portNumber());
        if (global) {
          attr.set(JAVA_BYTE, QP_ATTR_AH_ATTR_IS_GLOBAL, (byte) 1);
          MemorySegment.copy(gid, 0, attr, JAVA_BYTE, QP_ATTR_AH_ATTR_GRH_DGID, 16);
          attr.set(JAVA_BYTE, QP_ATTR_AH_ATTR_GRH_SGID_INDEX, (byte) o.gidIndex());
          attr.set(JAVA_BYTE, QP_ATTR_AH_ATTR_GRH_HOP_LIMIT, (byte) 64);
        }
        mask |= AV | PATH_MTU | DEST_QPN | RQ_PSN;
        if (type != QueuePairType.UC) {
          attr.set(JAVA_BYTE, QP_ATTR_MAX_DEST_RD_ATOMIC, (byte) o.maxReadAtomic());
          attr.set(JAVA_BYTE, QP_ATTR_MIN_RNR_TIMER, (byte) o.minRnrTimer());
          mask |= MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
        }
      }
      modify(qp, attr, mask, owner, "RTR");
      if (type == QueuePairType.XRC_RECV) {
        return; // a receive-only target QP stops at RTR
      }
      // RTR -> RTS
      attr.fill((byte) 0);
      attr.set(JAVA_INT, QP_ATTR_QP_STATE, QueuePairState.RTS.ordinal());
      attr.set(JAVA_INT, QP_ATTR_SQ_PSN, o.localPacketSequenceNumber() & 0xFFFFFF);
      mask = QP_STATE | SQ_PSN;
      if (type == QueuePairType.RC || type == QueuePairType.XRC_SEND) {
        attr.set(JAVA_BYTE, QP_ATTR_TIMEOUT, (byte) o.timeout());
        attr.set(JAVA_BYTE, QP_ATTR_RETRY_CNT, (byte) o.retryCount());
        attr.set(JAVA_BYTE, QP_ATTR_RNR_RETRY, (byte) o.rnrRetry());
        attr.set(JAVA_BYTE, QP_ATTR_MAX_RD_ATOMIC, (byte) o.maxReadAtomic());
        mask |= TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC;
      }
      modify(qp, attr, mask, owner, "RTS");
    }
  }

  /** Moves {@code qp} to ERROR: outstanding work completes flushed. */
  static void toError(MemorySegment qp, Object owner) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_QP_ATTR, 8);
      attr.set(JAVA_INT, QP_ATTR_QP_STATE, QueuePairState.ERROR.ordinal());
      modify(qp, attr, QP_STATE, owner, "ERROR");
    }
  }

  private static boolean allZero(byte[] b) {
    for (byte x : b) {
      if (x != 0) {
        return false;
      }
    }
    return true;
  }

  private static void modify(MemorySegment qp, MemorySegment attr, int mask, Object owner, String target) {
    int rc = Ibverbs.modifyQp(qp, attr, mask);
    if (rc != 0) {
      throw Native.failure("ibv_modify_qp", Native.errnoOf(rc), owner + " to " + target);
    }
  }
}
