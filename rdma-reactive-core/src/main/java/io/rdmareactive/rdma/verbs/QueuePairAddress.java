package io.rdmareactive.rdma.verbs;

/**
 * What a peer needs to connect a QP without the CM: exchanged out of band (e.g. over TCP).
 * {@code gid} is 16 bytes (RoCE needs it; InfiniBand may use {@code lid} alone).
 */
public record QueuePairAddress(int qpNumber, int lid, byte[] gid, int packetSequenceNumber) {
  /** Checks that the GID is 16 bytes and copies it. */
  public QueuePairAddress {
    if (gid.length != 16) {
      throw new IllegalArgumentException("gid must be 16 bytes, was " + gid.length);
    }
    gid = gid.clone();
  }

  @Override
  public byte[] gid() {
    return gid.clone();
  }
}
