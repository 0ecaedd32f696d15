package io.rdmareactive.rdma.verbs;

/** A reusable receive work request (struct ibv_recv_wr). Not thread-safe: one per posting thread. */
public final class ReceiveRequest {
  private long wrId;
  private final ScatterGatherList sgl;

  /** A request with room for {@code maxScatterGather} scatter entries. */
  public ReceiveRequest(int maxScatterGather) {
    sgl = new ScatterGatherList(maxScatterGather);
  }

  /** A request with room for one scatter entry. */
  public ReceiveRequest() {
    this(1);
  }

  /** The work request id its completion will carry. */
  public long wrId() {
    return wrId;
  }

  /** Sets the work request id its completion will carry. */
  public ReceiveRequest wrId(long wrId) {
    this.wrId = wrId;
    return this;
  }

  /** The buffers the message is scattered into, in order. */
  public ScatterGatherList scatterGather() {
    return sgl;
  }

  /** Resets to one entry over {@code length} bytes at {@code offset} of {@code region}. */
  public ReceiveRequest set(long wrId, MemoryRegion region, long offset, int length) {
    this.wrId = wrId;
    sgl.clear().add(region, offset, length);
    return this;
  }
}
