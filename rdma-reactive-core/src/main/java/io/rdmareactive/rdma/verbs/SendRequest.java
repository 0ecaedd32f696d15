package io.rdmareactive.rdma.verbs;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A reusable send work request (struct ibv_send_wr): SEND, SEND_WITH_IMM, RDMA_WRITE(_WITH_IMM),
 * RDMA_READ, or the local operations on memory windows, BIND_MW and LOCAL_INV. Not thread-safe: one per posting thread. Unsignaled sends produce no completion
 * unless they fail, or the QP signals all.
 */
public final class SendRequest {

  /** enum ibv_wr_opcode values this library posts. */
  public enum Opcode {
    /** IBV_WR_RDMA_WRITE: writes into the peer's memory; the peer sees no completion. */
    RDMA_WRITE(0),
    /** IBV_WR_RDMA_WRITE_WITH_IMM: writes into the peer's memory and consumes one of its receives, which carries the immediate data. */
    RDMA_WRITE_WITH_IMM(1),
    /** IBV_WR_SEND: a message into the peer's next posted receive. */
    SEND(2),
    /** IBV_WR_SEND_WITH_IMM: a SEND that also carries 32 bits of immediate data. */
    SEND_WITH_IMM(3),
    /** IBV_WR_RDMA_READ: reads the peer's memory into local buffers. */
    RDMA_READ(4),
    /** IBV_WR_LOCAL_INV: revokes a memory window's key; nothing goes on the wire. */
    LOCAL_INV(7),
    /** IBV_WR_BIND_MW: binds a type-2 memory window to a range of a region; nothing goes on the wire. */
    BIND_MW(8);
    private final int code;
    Opcode(int code) {
      this.code = code;
    }
    /** The {@code ibv_wr_opcode} value. */
    public int code() {
      return code;
    }
    /** Whether the request carries immediate data. */
    public boolean hasImmediate() {
      return this == RDMA_WRITE_WITH_IMM || this == SEND_WITH_IMM;
    }
    /** Whether the request names remote memory (RDMA WRITE or READ). */
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
  private @Nullable MemoryWindow window;
  private @Nullable MemoryRegion bindRegion;
  private long bindAddress;
  private long bindLength;
  private int bindAccess;
  private int bindKey;
  private int invalidateKey;

  /** A request with room for {@code maxScatterGather} scatter/gather entries. */
  public SendRequest(int maxScatterGather) {
    sgl = new ScatterGatherList(maxScatterGather);
  }

  /** A request with room for one scatter/gather entry. */
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

  /**
   * Resets to a signaled BIND_MW: binds {@code window} to exactly [offset, offset + length) of
   * {@code region} (registered with {@link Access#MW_BIND}) with {@code access} (the remote rights
   * the window grants), giving it the key {@link #bindKey()}, the next of its current one. The
   * window is then open to peers of the posting queue pair only, once the bind has executed (work
   * requests posted after it on the same queue pair, such as a SEND carrying the key, execute after it).
   */
  public SendRequest bind(long wrId, MemoryWindow window, MemoryRegion region, long offset, long length,
      Set<Access> access) {
    reset(wrId, Opcode.BIND_MW);
    this.window = window;
    this.bindRegion = region;
    this.bindAddress = region.address() + offset;
    this.bindLength = length;
    this.bindAccess = Access.mask(access);
    this.bindKey = MemoryWindow.nextKey(window.remoteKey());
    return this;
  }

  /** Resets to a signaled LOCAL_INV of {@code rkey} (a bound memory window's key): it opens nothing after. */
  public SendRequest invalidate(long wrId, int rkey) {
    reset(wrId, Opcode.LOCAL_INV);
    this.invalidateKey = rkey;
    return this;
  }

  /** Starts over: a signaled request of {@code opcode} with id {@code wrId}, no immediate data, no remote memory, no entries. */
  public SendRequest reset(long wrId, Opcode opcode) {
    this.wrId = wrId;
    this.opcode = opcode;
    this.flags = SIGNALED;
    this.immediateData = 0;
    this.remoteAddress = 0;
    this.remoteKey = 0;
    this.remoteSrqNumber = 0;
    this.window = null;
    this.bindRegion = null;
    this.bindAddress = 0;
    this.bindLength = 0;
    this.bindAccess = 0;
    this.bindKey = 0;
    this.invalidateKey = 0;
    sgl.clear();
    return this;
  }

  /**
   * Becomes a copy of {@code other} (its id, operation, flags, immediate data, remote memory,
   * window operation and entries), as a batch takes a request filled elsewhere.
   *
   * @throws IllegalStateException when {@code other} has more entries than this request has room for
   */
  public SendRequest set(SendRequest other) {
    this.wrId = other.wrId;
    this.opcode = other.opcode;
    this.flags = other.flags;
    this.immediateData = other.immediateData;
    this.remoteAddress = other.remoteAddress;
    this.remoteKey = other.remoteKey;
    this.remoteSrqNumber = other.remoteSrqNumber;
    this.window = other.window;
    this.bindRegion = other.bindRegion;
    this.bindAddress = other.bindAddress;
    this.bindLength = other.bindLength;
    this.bindAccess = other.bindAccess;
    this.bindKey = other.bindKey;
    this.invalidateKey = other.invalidateKey;
    sgl.set(other.sgl);
    return this;
  }

  /** Appends a gather entry: {@code length} bytes at {@code offset} of {@code region}. */
  public SendRequest gather(MemoryRegion region, long offset, int length) {
    sgl.add(region, offset, length);
    return this;
  }

  /** The remote memory of an RDMA operation: its address and the key the peer registered it with. */
  public SendRequest remote(long address, int rkey) {
    this.remoteAddress = address;
    this.remoteKey = rkey;
    return this;
  }

  /** The 32 bits of immediate data of a *_WITH_IMM request. */
  public SendRequest immediate(int immediateData) {
    this.immediateData = immediateData;
    return this;
  }

  /** Replaces the send flags ({@link #SIGNALED}, {@link #INLINE}, {@link #SOLICITED}, {@link #FENCE}). */
  public SendRequest flags(int flags) {
    this.flags = flags;
    return this;
  }

  /** The XRC SRQ a send on an XRC_SEND QP targets. */
  public SendRequest remoteSrqNumber(int srqNumber) {
    this.remoteSrqNumber = srqNumber;
    return this;
  }

  /** Sets the operation. */
  public SendRequest opcode(Opcode opcode) {
    this.opcode = opcode;
    return this;
  }

  /** Sets the work request id its completion will carry. */
  public SendRequest wrId(long wrId) {
    this.wrId = wrId;
    return this;
  }

  /** The work request id its completion will carry. */
  public long wrId() {
    return wrId;
  }

  /** The operation. */
  public Opcode opcode() {
    return opcode;
  }

  /** The send flags. */
  public int flags() {
    return flags;
  }

  /** Whether a successful completion is reported ({@link #SIGNALED}). */
  public boolean isSignaled() {
    return (flags & SIGNALED) != 0;
  }

  /** The immediate data (meaningful for *_WITH_IMM). */
  public int immediateData() {
    return immediateData;
  }

  /** The remote address of an RDMA operation. */
  public long remoteAddress() {
    return remoteAddress;
  }

  /** The remote key of an RDMA operation. */
  public int remoteKey() {
    return remoteKey;
  }

  /** The XRC SRQ number a send on an XRC_SEND QP targets. */
  public int remoteSrqNumber() {
    return remoteSrqNumber;
  }

  /** The local buffers, in order. */
  public ScatterGatherList scatterGather() {
    return sgl;
  }

  /** The window a BIND_MW binds; null for other operations. */
  public @Nullable MemoryWindow window() {
    return window;
  }

  /** The region a BIND_MW binds the window to; null for other operations. */
  public @Nullable MemoryRegion bindRegion() {
    return bindRegion;
  }

  /** The first address a BIND_MW opens. */
  public long bindAddress() {
    return bindAddress;
  }

  /** How many bytes a BIND_MW opens. */
  public long bindLength() {
    return bindLength;
  }

  /** The {@code ibv_access_flags} a BIND_MW grants through the window. */
  public int bindAccess() {
    return bindAccess;
  }

  /** The key a BIND_MW gives the window, the one to advertise to the peer. */
  public int bindKey() {
    return bindKey;
  }

  /** The key a LOCAL_INV revokes. */
  public int invalidateKey() {
    return invalidateKey;
  }
}
