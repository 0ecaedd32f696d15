package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.verbs.ReceiveRequest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * Flyweight over one native {@code struct ibv_recv_wr} and its scatter list, reused by every post
 * of its owner (a QP, an SRQ, the blocking endpoint): posting allocates nothing.
 */
final class RecvWr implements ChainedWr {
  static final long SIZE = VerbsLayout.SIZEOF_RECV_WR;
  /** What this flyweight writes, keyed as the layout probe prints it (checked by LayoutCheckTest). */
  static final Map<String, Long> FIELDS = Map.of("sizeof.ibv_recv_wr", SIZE, "ibv_recv_wr.wr_id",
      VerbsLayout.RECV_WR_WR_ID, "ibv_recv_wr.next", VerbsLayout.RECV_WR_NEXT, "ibv_recv_wr.sg_list",
      VerbsLayout.RECV_WR_SG_LIST, "ibv_recv_wr.num_sge", VerbsLayout.RECV_WR_NUM_SGE);

  private final MemorySegment wr;
  private final Sge sges;

  /** A work request with room for {@code maxSge} scatter entries (at least one), in {@code arena}. */
  RecvWr(Arena arena, int maxSge) {
    wr = arena.allocate(SIZE, 8);
    sges = new Sge(arena, maxSge);
    wr.set(ADDRESS, VerbsLayout.RECV_WR_NEXT, MemorySegment.NULL);
    wr.set(ADDRESS, VerbsLayout.RECV_WR_SG_LIST, sges.segment());
  }

  /** The struct to pass to post_recv. */
  @Override
  public MemorySegment segment() {
    return wr;
  }

  Sge sges() {
    return sges;
  }

  @Override
  public RecvWr next(MemorySegment next) {
    wr.set(ADDRESS, VerbsLayout.RECV_WR_NEXT, next);
    return this;
  }

  RecvWr wrId(long wrId) {
    wr.set(JAVA_LONG, VerbsLayout.RECV_WR_WR_ID, wrId);
    return this;
  }

  RecvWr numSge(int n) {
    wr.set(JAVA_INT, VerbsLayout.RECV_WR_NUM_SGE, n);
    return this;
  }

  /** Copies {@code r} (whose scatter list the caller checked fits). */
  RecvWr set(ReceiveRequest r) {
    return wrId(r.wrId()).numSge(sges.set(r.scatterGather()));
  }
}
