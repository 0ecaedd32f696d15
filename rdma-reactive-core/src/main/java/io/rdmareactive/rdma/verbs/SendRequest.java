package io.rdmareactive.rdma.verbs;

/**
 * A reusable send work request (struct ibv_send_wr): SEND, SEND_WITH_IMM, RDMA_WRITE(_WITH_IMM)
 * or RDMA_READ. Not thread-safe: one per posting thread. Unsignaled sends produce no completion
 * unless they fail, or the QP signals all.
 */
public final class SendRequest {

  /** enum ibv_wr_opcode values this library posts. */
  public enum Opcode { RDMA_WRITE(0), RDMA_WRITE_WITH_IMM(1), SEND(2), SEND_WITH_IMM(3), RDMA_READ(4);
    private final int code;
    Opcode(int code) {
      this.code = code;
    }
    public int code() {
      return code;
    }
    public boolean hasImmediate() {
      return this == RDMA_WRITE_WITH_IMM || this == SEND_WITH_IMM;
    }
    public boolean isRdma() {
      return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ;
    }
  }

  /** enum ibv_send_flags bits. */
  public static final int FENCE = 1, SIGNALED = 2, SOLICITED = 4, INLINE = 8;

  private long wrId;
  private Opcode opcode = Opcode.SEND;
  private int flags = SIGNALED;
  private int immediateData;
  private long remoteAddress;
  private int remoteKey;
  private int remoteSrqNumber;
  private final ScatterGatherList sgl;

  public SendRequest(int maxScatterGather) {
    sgl = new ScatterGatherList(maxScatterGather);
  }

  public SendRequest() {
    this(1);
  }

  /** Resets to a signaled SEND of {@code length} bytes at {@code offset} of {@code region}. */
  public SendRequest send(long wrId, MemoryRegion region, long offset, int length) {
    return reset(wrId, Opcode.SEND).gather(region, offset, length);
  }

  /** Resets to a signaled RDMA_WRITE from local memory to ({@code remoteAddress}, {@code rkey}). */
  public SendRequest write(long wrId, MemoryRegion region, long offset, int length, long remoteAddress, int rkey) {
    return reset(wrId, Opcode.RDMA_WRITE).gather(region, offset, length).remote(remoteAddress, rkey);
  }

  /** Resets to a signaled RDMA_READ from ({@code remoteAddress}, {@code rkey}) into local memory. */
  public SendRequest read(long wrId, MemoryRegion region, long offset, int length, long remoteAddress, int rkey) {
    return reset(wrId, Opcode.RDMA_READ).gather(region, offset, length).remote(remoteAddress, rkey);
  }

  public SendRequest reset(long wrId, Opcode opcode) {
    this.wrId = wrId;
    this.opcode = opcode;
    this.flags = SIGNALED;
    this.immediateData = 0;
    this.remoteAddress = 0;
    this.remoteKey = 0;
    this.remoteSrqNumber = 0;
    sgl.clear();
    return this;
  }

  public SendRequest gather(MemoryRegion region, long offset, int length) {
    sgl.add(region, offset, length);
    return this;
  }

  public SendRequest remote(long address, int rkey) {
    this.remoteAddress = address;
    this.remoteKey = rkey;
    return this;
  }

  public SendRequest immediate(int immediateData) {
    this.immediateData = immediateData;
    return this;
  }

  public SendRequest flags(int flags) {
    this.flags = flags;
    return this;
  }

  /** The XRC SRQ a send on an XRC_SEND QP targets. */
  public SendRequest remoteSrqNumber(int srqNumber) {
    this.remoteSrqNumber = srqNumber;
    return this;
  }

  public SendRequest opcode(Opcode opcode) {
    this.opcode = opcode;
    return this;
  }

  public SendRequest wrId(long wrId) {
    this.wrId = wrId;
    return this;
  }

  public long wrId() {
    return wrId;
  }

  public Opcode opcode() {
    return opcode;
  }

  public int flags() {
    return flags;
  }

  public boolean isSignaled() {
    return (flags & SIGNALED) != 0;
  }

  public int immediateData() {
    return immediateData;
  }

  public long remoteAddress() {
    return remoteAddress;
  }

  public int remoteKey() {
    return remoteKey;
  }

  public int remoteSrqNumber() {
    return remoteSrqNumber;
  }

  public ScatterGatherList scatterGather() {
    return sgl;
  }
}
