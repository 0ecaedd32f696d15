package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Map;

/**
 * Flyweight over one native {@code struct ibv_send_wr} and its gather list, reused by every post
 * of its owner: posting allocates nothing.
 */
final class SendWr implements ChainedWr {
  static final long SIZE = VerbsLayout.SIZEOF_SEND_WR;
  /** What this flyweight writes, keyed as the layout probe prints it (checked by LayoutCheckTest). */
  static final Map<String, Long> FIELDS = Map.ofEntries(
      Map.entry("sizeof.ibv_send_wr", SIZE),
      Map.entry("ibv_send_wr.wr_id", VerbsLayout.SEND_WR_WR_ID),
      Map.entry("ibv_send_wr.next", VerbsLayout.SEND_WR_NEXT),
      Map.entry("ibv_send_wr.sg_list", VerbsLayout.SEND_WR_SG_LIST),
      Map.entry("ibv_send_wr.num_sge", VerbsLayout.SEND_WR_NUM_SGE),
      Map.entry("ibv_send_wr.opcode", VerbsLayout.SEND_WR_OPCODE),
      Map.entry("ibv_send_wr.send_flags", VerbsLayout.SEND_WR_SEND_FLAGS),
      Map.entry("ibv_send_wr.imm_data", VerbsLayout.SEND_WR_IMM_DATA),
      Map.entry("ibv_send_wr.invalidate_rkey", VerbsLayout.SEND_WR_INVALIDATE_RKEY),
      Map.entry("ibv_send_wr.bind_mw.mw", VerbsLayout.SEND_WR_BIND_MW_MW),
      Map.entry("ibv_send_wr.bind_mw.rkey", VerbsLayout.SEND_WR_BIND_MW_RKEY),
      Map.entry("ibv_send_wr.bind_mw.bind_info.mr", VerbsLayout.SEND_WR_BIND_MW_BIND_INFO_MR),
      Map.entry("ibv_send_wr.bind_mw.bind_info.addr", VerbsLayout.SEND_WR_BIND_MW_BIND_INFO_ADDR),
      Map.entry("ibv_send_wr.bind_mw.bind_info.length", VerbsLayout.SEND_WR_BIND_MW_BIND_INFO_LENGTH),
      Map.entry("ibv_send_wr.bind_mw.bind_info.mw_access_flags", VerbsLayout.SEND_WR_BIND_MW_BIND_INFO_MW_ACCESS_FLAGS),
      Map.entry("ibv_send_wr.wr.rdma.remote_addr", VerbsLayout.SEND_WR_WR_RDMA_REMOTE_ADDR),
      Map.entry("ibv_send_wr.wr.rdma.rkey", VerbsLayout.SEND_WR_WR_RDMA_RKEY),
      Map.entry("ibv_send_wr.qp_type.xrc.remote_srqn", VerbsLayout.SEND_WR_QP_TYPE_XRC_REMOTE_SRQN));
  /** imm_data is __be32. */
  private static final ValueLayout.OfInt BE32 = JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);

  private final MemorySegment wr;
  private final Sge sges;

  /** A work request with room for {@code maxSge} gather entries (at least one), in {@code arena}. */
  SendWr(Arena arena, int maxSge) {
    wr = arena.allocate(SIZE, 8);
    sges = new Sge(arena, maxSge);
    wr.set(ADDRESS, VerbsLayout.SEND_WR_NEXT, MemorySegment.NULL);
    wr.set(ADDRESS, VerbsLayout.SEND_WR_SG_LIST, sges.segment());
  }

  /** The struct to pass to post_send. */
  @Override
  public MemorySegment segment() {
    return wr;
  }

  Sge sges() {
    return sges;
  }

  @Override
  public SendWr next(MemorySegment next) {
    wr.set(ADDRESS, VerbsLayout.SEND_WR_NEXT, next);
    return this;
  }

  SendWr wrId(long wrId) {
    wr.set(JAVA_LONG, VerbsLayout.SEND_WR_WR_ID, wrId);
    return this;
  }

  SendWr numSge(int n) {
    wr.set(JAVA_INT, VerbsLayout.SEND_WR_NUM_SGE, n);
    return this;
  }

  /** enum ibv_wr_opcode. */
  SendWr opcode(int opcode) {
    wr.set(JAVA_INT, VerbsLayout.SEND_WR_OPCODE, opcode);
    return this;
  }

  /** enum ibv_send_flags. */
  SendWr sendFlags(int flags) {
    wr.set(JAVA_INT, VerbsLayout.SEND_WR_SEND_FLAGS, flags);
    return this;
  }

  /** Immediate data, written in network byte order. */
  SendWr immediateData(int value) {
    wr.set(BE32, VerbsLayout.SEND_WR_IMM_DATA, value);
    return this;
  }

  /** wr.rdma: the remote buffer of an RDMA write or read. */
  SendWr rdma(long remoteAddress, int remoteKey) {
    wr.set(JAVA_LONG, VerbsLayout.SEND_WR_WR_RDMA_REMOTE_ADDR, remoteAddress);
    wr.set(JAVA_INT, VerbsLayout.SEND_WR_WR_RDMA_RKEY, remoteKey);
    return this;
  }

  /** invalidate_rkey (a union with imm_data, in host order): the key a LOCAL_INV revokes. */
  SendWr invalidateRkey(int rkey) {
    wr.set(JAVA_INT, VerbsLayout.SEND_WR_INVALIDATE_RKEY, rkey);
    return this;
  }

  /** bind_mw: the window, the key the bind gives it, and the range of {@code mr} it opens with {@code access}. */
  SendWr bindMw(MemorySegment mw, int rkey, MemorySegment mr, long address, long length, int access) {
    wr.set(ADDRESS, VerbsLayout.SEND_WR_BIND_MW_MW, mw);
    wr.set(JAVA_INT, VerbsLayout.SEND_WR_BIND_MW_RKEY, rkey);
    wr.set(ADDRESS, VerbsLayout.SEND_WR_BIND_MW_BIND_INFO_MR, mr);
    wr.set(JAVA_LONG, VerbsLayout.SEND_WR_BIND_MW_BIND_INFO_ADDR, address);
    wr.set(JAVA_LONG, VerbsLayout.SEND_WR_BIND_MW_BIND_INFO_LENGTH, length);
    wr.set(JAVA_INT, VerbsLayout.SEND_WR_BIND_MW_BIND_INFO_MW_ACCESS_FLAGS, access);
    return this;
  }

  /** qp_type.xrc.remote_srqn: the SRQ an XRC send goes to. */
  SendWr xrcRemoteSrqNumber(int srqNumber) {
    wr.set(JAVA_INT, VerbsLayout.SEND_WR_QP_TYPE_XRC_REMOTE_SRQN, srqNumber);
    return this;
  }
}
