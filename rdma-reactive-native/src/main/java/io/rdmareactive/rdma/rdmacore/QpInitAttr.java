package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * Flyweight over a native {@code struct ibv_qp_init_attr}, the one place that fills it (for
 * ibv_create_qp, rdma_create_qp and rdma_create_ep). The create call writes the granted
 * capabilities back into the struct: read them with the {@code max*} getters afterwards.
 */
final class QpInitAttr {
  static final long SIZE = VerbsLayout.SIZEOF_QP_INIT_ATTR;
  /** What this flyweight writes, keyed as the layout probe prints it (checked by LayoutCheckTest). */
  static final Map<String, Long> FIELDS = Map.ofEntries(
      Map.entry("sizeof.ibv_qp_init_attr", SIZE),
      Map.entry("ibv_qp_init_attr.qp_context", VerbsLayout.QP_INIT_ATTR_QP_CONTEXT),
      Map.entry("ibv_qp_init_attr.send_cq", VerbsLayout.QP_INIT_ATTR_SEND_CQ),
      Map.entry("ibv_qp_init_attr.recv_cq", VerbsLayout.QP_INIT_ATTR_RECV_CQ),
      Map.entry("ibv_qp_init_attr.srq", VerbsLayout.QP_INIT_ATTR_SRQ),
      Map.entry("ibv_qp_init_attr.cap.max_send_wr", VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_WR),
      Map.entry("ibv_qp_init_attr.cap.max_recv_wr", VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_WR),
      Map.entry("ibv_qp_init_attr.cap.max_send_sge", VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_SGE),
      Map.entry("ibv_qp_init_attr.cap.max_recv_sge", VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_SGE),
      Map.entry("ibv_qp_init_attr.cap.max_inline_data", VerbsLayout.QP_INIT_ATTR_CAP_MAX_INLINE_DATA),
      Map.entry("ibv_qp_init_attr.qp_type", VerbsLayout.QP_INIT_ATTR_QP_TYPE),
      Map.entry("ibv_qp_init_attr.sq_sig_all", VerbsLayout.QP_INIT_ATTR_SQ_SIG_ALL));

  private final MemorySegment attr;

  /** A zeroed struct in {@code arena}. */
  QpInitAttr(Arena arena) {
    attr = arena.allocate(SIZE, 8);
  }

  /** Over an existing struct (e.g. one a create call wrote back into). */
  QpInitAttr(MemorySegment attr) {
    this.attr = attr.reinterpret(SIZE);
  }

  MemorySegment segment() {
    return attr;
  }

  QpInitAttr context(MemorySegment qpContext) {
    attr.set(ADDRESS, VerbsLayout.QP_INIT_ATTR_QP_CONTEXT, qpContext);
    return this;
  }

  /** send_cq, recv_cq and srq (NULL for none). */
  QpInitAttr queues(MemorySegment sendCq, MemorySegment recvCq, MemorySegment srq) {
    attr.set(ADDRESS, VerbsLayout.QP_INIT_ATTR_SEND_CQ, sendCq);
    attr.set(ADDRESS, VerbsLayout.QP_INIT_ATTR_RECV_CQ, recvCq);
    attr.set(ADDRESS, VerbsLayout.QP_INIT_ATTR_SRQ, srq);
    return this;
  }

  /** struct ibv_qp_cap. */
  QpInitAttr capabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {
    attr.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_WR, maxSendWr);
    attr.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_WR, maxRecvWr);
    attr.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_SGE, maxSendSge);
    attr.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_SGE, maxRecvSge);
    attr.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_INLINE_DATA, maxInlineData);
    return this;
  }

  /** enum ibv_qp_type, and whether every send is signaled. */
  QpInitAttr type(int qpType, boolean signalAll) {
    attr.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_QP_TYPE, qpType);
    attr.set(JAVA_INT, VerbsLayout.QP_INIT_ATTR_SQ_SIG_ALL, signalAll ? 1 : 0);
    return this;
  }

  int maxSendWr() {
    return attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_WR);
  }

  int maxRecvWr() {
    return attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_WR);
  }

  int maxSendSge() {
    return attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_SEND_SGE);
  }

  int maxRecvSge() {
    return attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_RECV_SGE);
  }

  int maxInlineData() {
    return attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_CAP_MAX_INLINE_DATA);
  }

  boolean signalAll() {
    return attr.get(JAVA_INT, VerbsLayout.QP_INIT_ATTR_SQ_SIG_ALL) != 0;
  }
}
