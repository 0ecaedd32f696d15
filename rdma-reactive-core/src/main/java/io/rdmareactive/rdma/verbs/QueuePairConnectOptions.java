package io.rdmareactive.rdma.verbs;

import java.util.Set;

/**
 * The local side of a CM-less connect (INIT, RTR, RTS through ibv_modify_qp): port, GID index,
 * path MTU (enum value, 1=256 ... 5=4096), remote access granted to the peer, and retry counts.
 */
public record QueuePairConnectOptions(int portNumber, int gidIndex, int pathMtu, Set<Access> remoteAccess,
    int timeout, int retryCount, int rnrRetry, int minRnrTimer, int maxReadAtomic, int localPacketSequenceNumber) {

  /** Port 1, GID index 0, path MTU 1024, local write and remote read/write, ACK timeout 14, retries 7, RNR retries 7, min RNR timer 12, one outstanding read, start PSN 0. */
  public static QueuePairConnectOptions defaults() {
    return new QueuePairConnectOptions(1, 0, 3, Set.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE),
        14, 7, 7, 12, 1, 0);
  }

  /** A copy with the source GID at {@code gidIndex} (RoCE: pick the index of the address the peer reaches). */
  public QueuePairConnectOptions withGidIndex(int gidIndex) {
    return new QueuePairConnectOptions(portNumber, gidIndex, pathMtu, remoteAccess, timeout, retryCount,
        rnrRetry, minRnrTimer, maxReadAtomic, localPacketSequenceNumber);
  }

  /** A copy with {@code rnrRetry} receiver-not-ready retries (0..7, 7: forever). */
  public QueuePairConnectOptions withRnrRetry(int rnrRetry) {
    return new QueuePairConnectOptions(portNumber, gidIndex, pathMtu, remoteAccess, timeout, retryCount,
        rnrRetry, minRnrTimer, maxReadAtomic, localPacketSequenceNumber);
  }
}
