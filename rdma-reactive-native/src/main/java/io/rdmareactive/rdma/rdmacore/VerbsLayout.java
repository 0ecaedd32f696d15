package io.rdmareactive.rdma.rdmacore;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every struct size and field offset the binding uses, for rdma-core's verbs.h on x86-64 (LP64),
 * in one table. Keys are what src/test/c/layout_probe.c prints ({@code sizeof.<struct>},
 * {@code <struct>.<member path>}), so LayoutCheckTest can compare the two line by line and fail on
 * any drift. Offsets into {@code ibv_context.ops} are from the start of struct ibv_context.
 */
final class VerbsLayout {
  private static final Map<String, Long> TABLE = new LinkedHashMap<>();

  private VerbsLayout() {}

  private static long v(String name, long value) {
    TABLE.put(name, value);
    return value;
  }

  /** Name (as the probe prints it) to value, in declaration order. */
  static Map<String, Long> table() {
    return Collections.unmodifiableMap(TABLE);
  }

  static final long SIZEOF_CONTEXT = v("sizeof.ibv_context", 328);
  static final long CONTEXT_OPS = v("ibv_context.ops", 8);
  static final long CONTEXT_OPS_POLL_CQ = v("ibv_context.ops.poll_cq", 96);
  static final long CONTEXT_OPS_REQ_NOTIFY_CQ = v("ibv_context.ops.req_notify_cq", 104);
  static final long CONTEXT_OPS_POST_SRQ_RECV = v("ibv_context.ops.post_srq_recv", 168);
  static final long CONTEXT_OPS_POST_SEND = v("ibv_context.ops.post_send", 208);
  static final long CONTEXT_OPS_POST_RECV = v("ibv_context.ops.post_recv", 216);
  static final long CONTEXT_ASYNC_FD = v("ibv_context.async_fd", 268);
  static final long CONTEXT_NUM_COMP_VECTORS = v("ibv_context.num_comp_vectors", 272);
  static final long CONTEXT_ABI_COMPAT = v("ibv_context.abi_compat", 320);
  static final long SIZEOF_VERBS_CONTEXT = v("sizeof.verbs_context", 648);
  static final long VERBS_CONTEXT_QUERY_PORT = v("verbs_context.query_port", 0);
  static final long VERBS_CONTEXT_ALLOC_PARENT_DOMAIN = v("verbs_context.alloc_parent_domain", 112);
  static final long VERBS_CONTEXT_DEALLOC_TD = v("verbs_context.dealloc_td", 120);
  static final long VERBS_CONTEXT_ALLOC_TD = v("verbs_context.alloc_td", 128);
  static final long VERBS_CONTEXT_OPEN_QP = v("verbs_context.open_qp", 256);
  static final long VERBS_CONTEXT_CREATE_QP_EX = v("verbs_context.create_qp_ex", 264);
  static final long VERBS_CONTEXT_GET_SRQ_NUM = v("verbs_context.get_srq_num", 272);
  static final long VERBS_CONTEXT_CREATE_SRQ_EX = v("verbs_context.create_srq_ex", 280);
  static final long VERBS_CONTEXT_OPEN_XRCD = v("verbs_context.open_xrcd", 288);
  static final long VERBS_CONTEXT_CLOSE_XRCD = v("verbs_context.close_xrcd", 296);
  static final long VERBS_CONTEXT_SZ = v("verbs_context.sz", 312);
  static final long VERBS_CONTEXT_CONTEXT = v("verbs_context.context", 320);
  static final long SIZEOF_DEVICE_ATTR = v("sizeof.ibv_device_attr", 232);
  static final long DEVICE_ATTR_FW_VER = v("ibv_device_attr.fw_ver", 0);
  static final long DEVICE_ATTR_NODE_GUID = v("ibv_device_attr.node_guid", 64);
  static final long DEVICE_ATTR_MAX_MR_SIZE = v("ibv_device_attr.max_mr_size", 80);
  static final long DEVICE_ATTR_VENDOR_ID = v("ibv_device_attr.vendor_id", 96);
  static final long DEVICE_ATTR_VENDOR_PART_ID = v("ibv_device_attr.vendor_part_id", 100);
  static final long DEVICE_ATTR_MAX_QP = v("ibv_device_attr.max_qp", 108);
  static final long DEVICE_ATTR_MAX_QP_WR = v("ibv_device_attr.max_qp_wr", 112);
  static final long DEVICE_ATTR_DEVICE_CAP_FLAGS = v("ibv_device_attr.device_cap_flags", 116);
  static final long DEVICE_ATTR_MAX_SGE = v("ibv_device_attr.max_sge", 120);
  static final long DEVICE_ATTR_MAX_CQ = v("ibv_device_attr.max_cq", 128);
  static final long DEVICE_ATTR_MAX_CQE = v("ibv_device_attr.max_cqe", 132);
  static final long DEVICE_ATTR_MAX_MR = v("ibv_device_attr.max_mr", 136);
  static final long DEVICE_ATTR_MAX_PD = v("ibv_device_attr.max_pd", 140);
  static final long DEVICE_ATTR_MAX_SRQ = v("ibv_device_attr.max_srq", 212);
  static final long DEVICE_ATTR_MAX_SRQ_WR = v("ibv_device_attr.max_srq_wr", 216);
  static final long DEVICE_ATTR_PHYS_PORT_CNT = v("ibv_device_attr.phys_port_cnt", 227);
  static final long SIZEOF_PORT_ATTR = v("sizeof.ibv_port_attr", 52);
  static final long PORT_ATTR_STATE = v("ibv_port_attr.state", 0);
  static final long PORT_ATTR_MAX_MTU = v("ibv_port_attr.max_mtu", 4);
  static final long PORT_ATTR_ACTIVE_MTU = v("ibv_port_attr.active_mtu", 8);
  static final long PORT_ATTR_GID_TBL_LEN = v("ibv_port_attr.gid_tbl_len", 12);
  static final long PORT_ATTR_LID = v("ibv_port_attr.lid", 34);
  static final long PORT_ATTR_LINK_LAYER = v("ibv_port_attr.link_layer", 46);
  static final long SIZEOF_GID = v("sizeof.ibv_gid", 16);
  static final long SIZEOF_MR = v("sizeof.ibv_mr", 48);
  static final long MR_ADDR = v("ibv_mr.addr", 16);
  static final long MR_LENGTH = v("ibv_mr.length", 24);
  static final long MR_LKEY = v("ibv_mr.lkey", 36);
  static final long MR_RKEY = v("ibv_mr.rkey", 40);
  static final long SIZEOF_COMP_CHANNEL = v("sizeof.ibv_comp_channel", 16);
  static final long COMP_CHANNEL_FD = v("ibv_comp_channel.fd", 8);
  static final long SIZEOF_CQ = v("sizeof.ibv_cq", 128);
  static final long CQ_CQE = v("ibv_cq.cqe", 28);
  static final long SIZEOF_WC = v("sizeof.ibv_wc", 48);
  static final long WC_WR_ID = v("ibv_wc.wr_id", 0);
  static final long WC_STATUS = v("ibv_wc.status", 8);
  static final long WC_OPCODE = v("ibv_wc.opcode", 12);
  static final long WC_VENDOR_ERR = v("ibv_wc.vendor_err", 16);
  static final long WC_BYTE_LEN = v("ibv_wc.byte_len", 20);
  static final long WC_IMM_DATA = v("ibv_wc.imm_data", 24);
  static final long WC_QP_NUM = v("ibv_wc.qp_num", 28);
  static final long WC_SRC_QP = v("ibv_wc.src_qp", 32);
  static final long WC_WC_FLAGS = v("ibv_wc.wc_flags", 36);
  static final long SIZEOF_ASYNC_EVENT = v("sizeof.ibv_async_event", 16);
  static final long ASYNC_EVENT_ELEMENT = v("ibv_async_event.element", 0);
  static final long ASYNC_EVENT_EVENT_TYPE = v("ibv_async_event.event_type", 8);
  static final long SIZEOF_QP = v("sizeof.ibv_qp", 160);
  static final long QP_QP_NUM = v("ibv_qp.qp_num", 52);
  static final long SIZEOF_QP_INIT_ATTR = v("sizeof.ibv_qp_init_attr", 64);
  static final long QP_INIT_ATTR_QP_CONTEXT = v("ibv_qp_init_attr.qp_context", 0);
  static final long QP_INIT_ATTR_SEND_CQ = v("ibv_qp_init_attr.send_cq", 8);
  static final long QP_INIT_ATTR_RECV_CQ = v("ibv_qp_init_attr.recv_cq", 16);
  static final long QP_INIT_ATTR_SRQ = v("ibv_qp_init_attr.srq", 24);
  static final long QP_INIT_ATTR_CAP_MAX_SEND_WR = v("ibv_qp_init_attr.cap.max_send_wr", 32);
  static final long QP_INIT_ATTR_CAP_MAX_RECV_WR = v("ibv_qp_init_attr.cap.max_recv_wr", 36);
  static final long QP_INIT_ATTR_CAP_MAX_SEND_SGE = v("ibv_qp_init_attr.cap.max_send_sge", 40);
  static final long QP_INIT_ATTR_CAP_MAX_RECV_SGE = v("ibv_qp_init_attr.cap.max_recv_sge", 44);
  static final long QP_INIT_ATTR_CAP_MAX_INLINE_DATA = v("ibv_qp_init_attr.cap.max_inline_data", 48);
  static final long QP_INIT_ATTR_QP_TYPE = v("ibv_qp_init_attr.qp_type", 52);
  static final long QP_INIT_ATTR_SQ_SIG_ALL = v("ibv_qp_init_attr.sq_sig_all", 56);
  static final long SIZEOF_QP_INIT_ATTR_EX = v("sizeof.ibv_qp_init_attr_ex", 136);
  static final long QP_INIT_ATTR_EX_QP_CONTEXT = v("ibv_qp_init_attr_ex.qp_context", 0);
  static final long QP_INIT_ATTR_EX_SEND_CQ = v("ibv_qp_init_attr_ex.send_cq", 8);
  static final long QP_INIT_ATTR_EX_RECV_CQ = v("ibv_qp_init_attr_ex.recv_cq", 16);
  static final long QP_INIT_ATTR_EX_SRQ = v("ibv_qp_init_attr_ex.srq", 24);
  static final long QP_INIT_ATTR_EX_CAP_MAX_SEND_WR = v("ibv_qp_init_attr_ex.cap.max_send_wr", 32);
  static final long QP_INIT_ATTR_EX_CAP_MAX_RECV_WR = v("ibv_qp_init_attr_ex.cap.max_recv_wr", 36);
  static final long QP_INIT_ATTR_EX_CAP_MAX_SEND_SGE = v("ibv_qp_init_attr_ex.cap.max_send_sge", 40);
  static final long QP_INIT_ATTR_EX_CAP_MAX_RECV_SGE = v("ibv_qp_init_attr_ex.cap.max_recv_sge", 44);
  static final long QP_INIT_ATTR_EX_CAP_MAX_INLINE_DATA = v("ibv_qp_init_attr_ex.cap.max_inline_data", 48);
  static final long QP_INIT_ATTR_EX_QP_TYPE = v("ibv_qp_init_attr_ex.qp_type", 52);
  static final long QP_INIT_ATTR_EX_SQ_SIG_ALL = v("ibv_qp_init_attr_ex.sq_sig_all", 56);
  static final long QP_INIT_ATTR_EX_COMP_MASK = v("ibv_qp_init_attr_ex.comp_mask", 60);
  static final long QP_INIT_ATTR_EX_PD = v("ibv_qp_init_attr_ex.pd", 64);
  static final long QP_INIT_ATTR_EX_XRCD = v("ibv_qp_init_attr_ex.xrcd", 72);
  static final long SIZEOF_QP_OPEN_ATTR = v("sizeof.ibv_qp_open_attr", 32);
  static final long QP_OPEN_ATTR_COMP_MASK = v("ibv_qp_open_attr.comp_mask", 0);
  static final long QP_OPEN_ATTR_QP_NUM = v("ibv_qp_open_attr.qp_num", 4);
  static final long QP_OPEN_ATTR_XRCD = v("ibv_qp_open_attr.xrcd", 8);
  static final long QP_OPEN_ATTR_QP_CONTEXT = v("ibv_qp_open_attr.qp_context", 16);
  static final long QP_OPEN_ATTR_QP_TYPE = v("ibv_qp_open_attr.qp_type", 24);
  static final long SIZEOF_QP_ATTR = v("sizeof.ibv_qp_attr", 144);
  static final long QP_ATTR_QP_STATE = v("ibv_qp_attr.qp_state", 0);
  static final long QP_ATTR_PATH_MTU = v("ibv_qp_attr.path_mtu", 8);
  static final long QP_ATTR_QKEY = v("ibv_qp_attr.qkey", 16);
  static final long QP_ATTR_RQ_PSN = v("ibv_qp_attr.rq_psn", 20);
  static final long QP_ATTR_SQ_PSN = v("ibv_qp_attr.sq_psn", 24);
  static final long QP_ATTR_DEST_QP_NUM = v("ibv_qp_attr.dest_qp_num", 28);
  static final long QP_ATTR_QP_ACCESS_FLAGS = v("ibv_qp_attr.qp_access_flags", 32);
  static final long QP_ATTR_AH_ATTR_GRH_DGID = v("ibv_qp_attr.ah_attr.grh.dgid", 56);
  static final long QP_ATTR_AH_ATTR_GRH_FLOW_LABEL = v("ibv_qp_attr.ah_attr.grh.flow_label", 72);
  static final long QP_ATTR_AH_ATTR_GRH_SGID_INDEX = v("ibv_qp_attr.ah_attr.grh.sgid_index", 76);
  static final long QP_ATTR_AH_ATTR_GRH_HOP_LIMIT = v("ibv_qp_attr.ah_attr.grh.hop_limit", 77);
  static final long QP_ATTR_AH_ATTR_GRH_TRAFFIC_CLASS = v("ibv_qp_attr.ah_attr.grh.traffic_class", 78);
  static final long QP_ATTR_AH_ATTR_DLID = v("ibv_qp_attr.ah_attr.dlid", 80);
  static final long QP_ATTR_AH_ATTR_SL = v("ibv_qp_attr.ah_attr.sl", 82);
  static final long QP_ATTR_AH_ATTR_SRC_PATH_BITS = v("ibv_qp_attr.ah_attr.src_path_bits", 83);
  static final long QP_ATTR_AH_ATTR_IS_GLOBAL = v("ibv_qp_attr.ah_attr.is_global", 85);
  static final long QP_ATTR_AH_ATTR_PORT_NUM = v("ibv_qp_attr.ah_attr.port_num", 86);
  static final long QP_ATTR_PKEY_INDEX = v("ibv_qp_attr.pkey_index", 120);
  static final long QP_ATTR_MAX_RD_ATOMIC = v("ibv_qp_attr.max_rd_atomic", 126);
  static final long QP_ATTR_MAX_DEST_RD_ATOMIC = v("ibv_qp_attr.max_dest_rd_atomic", 127);
  static final long QP_ATTR_MIN_RNR_TIMER = v("ibv_qp_attr.min_rnr_timer", 128);
  static final long QP_ATTR_PORT_NUM = v("ibv_qp_attr.port_num", 129);
  static final long QP_ATTR_TIMEOUT = v("ibv_qp_attr.timeout", 130);
  static final long QP_ATTR_RETRY_CNT = v("ibv_qp_attr.retry_cnt", 131);
  static final long QP_ATTR_RNR_RETRY = v("ibv_qp_attr.rnr_retry", 132);
  static final long SIZEOF_SGE = v("sizeof.ibv_sge", 16);
  static final long SGE_ADDR = v("ibv_sge.addr", 0);
  static final long SGE_LENGTH = v("ibv_sge.length", 8);
  static final long SGE_LKEY = v("ibv_sge.lkey", 12);
  static final long SIZEOF_SEND_WR = v("sizeof.ibv_send_wr", 128);
  static final long SEND_WR_WR_ID = v("ibv_send_wr.wr_id", 0);
  static final long SEND_WR_NEXT = v("ibv_send_wr.next", 8);
  static final long SEND_WR_SG_LIST = v("ibv_send_wr.sg_list", 16);
  static final long SEND_WR_NUM_SGE = v("ibv_send_wr.num_sge", 24);
  static final long SEND_WR_OPCODE = v("ibv_send_wr.opcode", 28);
  static final long SEND_WR_SEND_FLAGS = v("ibv_send_wr.send_flags", 32);
  static final long SEND_WR_IMM_DATA = v("ibv_send_wr.imm_data", 36);
  static final long SEND_WR_WR_RDMA_REMOTE_ADDR = v("ibv_send_wr.wr.rdma.remote_addr", 40);
  static final long SEND_WR_WR_RDMA_RKEY = v("ibv_send_wr.wr.rdma.rkey", 48);
  static final long SEND_WR_QP_TYPE_XRC_REMOTE_SRQN = v("ibv_send_wr.qp_type.xrc.remote_srqn", 72);
  static final long SIZEOF_RECV_WR = v("sizeof.ibv_recv_wr", 32);
  static final long RECV_WR_WR_ID = v("ibv_recv_wr.wr_id", 0);
  static final long RECV_WR_NEXT = v("ibv_recv_wr.next", 8);
  static final long RECV_WR_SG_LIST = v("ibv_recv_wr.sg_list", 16);
  static final long RECV_WR_NUM_SGE = v("ibv_recv_wr.num_sge", 24);
  static final long SIZEOF_SRQ_INIT_ATTR = v("sizeof.ibv_srq_init_attr", 24);
  static final long SRQ_INIT_ATTR_SRQ_CONTEXT = v("ibv_srq_init_attr.srq_context", 0);
  static final long SRQ_INIT_ATTR_ATTR_MAX_WR = v("ibv_srq_init_attr.attr.max_wr", 8);
  static final long SRQ_INIT_ATTR_ATTR_MAX_SGE = v("ibv_srq_init_attr.attr.max_sge", 12);
  static final long SRQ_INIT_ATTR_ATTR_SRQ_LIMIT = v("ibv_srq_init_attr.attr.srq_limit", 16);
  static final long SIZEOF_SRQ_INIT_ATTR_EX = v("sizeof.ibv_srq_init_attr_ex", 64);
  static final long SRQ_INIT_ATTR_EX_SRQ_CONTEXT = v("ibv_srq_init_attr_ex.srq_context", 0);
  static final long SRQ_INIT_ATTR_EX_ATTR_MAX_WR = v("ibv_srq_init_attr_ex.attr.max_wr", 8);
  static final long SRQ_INIT_ATTR_EX_ATTR_MAX_SGE = v("ibv_srq_init_attr_ex.attr.max_sge", 12);
  static final long SRQ_INIT_ATTR_EX_ATTR_SRQ_LIMIT = v("ibv_srq_init_attr_ex.attr.srq_limit", 16);
  static final long SRQ_INIT_ATTR_EX_COMP_MASK = v("ibv_srq_init_attr_ex.comp_mask", 20);
  static final long SRQ_INIT_ATTR_EX_SRQ_TYPE = v("ibv_srq_init_attr_ex.srq_type", 24);
  static final long SRQ_INIT_ATTR_EX_PD = v("ibv_srq_init_attr_ex.pd", 32);
  static final long SRQ_INIT_ATTR_EX_XRCD = v("ibv_srq_init_attr_ex.xrcd", 40);
  static final long SRQ_INIT_ATTR_EX_CQ = v("ibv_srq_init_attr_ex.cq", 48);
  static final long SIZEOF_XRCD_INIT_ATTR = v("sizeof.ibv_xrcd_init_attr", 12);
  static final long XRCD_INIT_ATTR_COMP_MASK = v("ibv_xrcd_init_attr.comp_mask", 0);
  static final long XRCD_INIT_ATTR_FD = v("ibv_xrcd_init_attr.fd", 4);
  static final long XRCD_INIT_ATTR_OFLAGS = v("ibv_xrcd_init_attr.oflags", 8);
  static final long SIZEOF_TD_INIT_ATTR = v("sizeof.ibv_td_init_attr", 4);
  static final long TD_INIT_ATTR_COMP_MASK = v("ibv_td_init_attr.comp_mask", 0);
  static final long SIZEOF_PARENT_DOMAIN_INIT_ATTR = v("sizeof.ibv_parent_domain_init_attr", 48);
  static final long PARENT_DOMAIN_INIT_ATTR_PD = v("ibv_parent_domain_init_attr.pd", 0);
  static final long PARENT_DOMAIN_INIT_ATTR_TD = v("ibv_parent_domain_init_attr.td", 8);
  static final long PARENT_DOMAIN_INIT_ATTR_COMP_MASK = v("ibv_parent_domain_init_attr.comp_mask", 16);
  static final long PARENT_DOMAIN_INIT_ATTR_ALLOC = v("ibv_parent_domain_init_attr.alloc", 24);
  static final long PARENT_DOMAIN_INIT_ATTR_FREE = v("ibv_parent_domain_init_attr.free", 32);
  static final long PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT = v("ibv_parent_domain_init_attr.pd_context", 40);
}
