package io.rdmareactive.rdma.rdmacore;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Struct sizes and field offsets of librdmacm's rdma_cma.h (rdma-core, x86-64 LP64) that the CM
 * binding touches, plus the few verbs.h members it reads that {@link VerbsLayout} does not list.
 * Keys are what src/test/c/cm_layout_probe.c prints, so CmLayoutCheckTest compares them line by line.
 */
final class CmLayout {
  private static final Map<String, Long> TABLE = new LinkedHashMap<>();

  private CmLayout() {}

  private static long v(String name, long value) {
    TABLE.put(name, value);
    return value;
  }

  /** Name (as the probe prints it) to value, in declaration order. */
  static Map<String, Long> table() {
    return Collections.unmodifiableMap(TABLE);
  }

  static final long SIZEOF_CM_ID = v("sizeof.rdma_cm_id", 416);
  static final long CM_ID_VERBS = v("rdma_cm_id.verbs", 0);
  static final long CM_ID_CHANNEL = v("rdma_cm_id.channel", 8);
  static final long CM_ID_CONTEXT = v("rdma_cm_id.context", 16);
  static final long CM_ID_QP = v("rdma_cm_id.qp", 24);
  static final long CM_ID_SRC_ADDR = v("rdma_cm_id.route.addr.src_addr", 32);
  static final long CM_ID_PS = v("rdma_cm_id.ps", 344);
  static final long CM_ID_PORT_NUM = v("rdma_cm_id.port_num", 348);
  static final long CM_ID_EVENT = v("rdma_cm_id.event", 352);
  static final long CM_ID_SEND_CQ_CHANNEL = v("rdma_cm_id.send_cq_channel", 360);
  static final long CM_ID_SEND_CQ = v("rdma_cm_id.send_cq", 368);
  static final long CM_ID_RECV_CQ_CHANNEL = v("rdma_cm_id.recv_cq_channel", 376);
  static final long CM_ID_RECV_CQ = v("rdma_cm_id.recv_cq", 384);
  static final long CM_ID_SRQ = v("rdma_cm_id.srq", 392);
  static final long CM_ID_PD = v("rdma_cm_id.pd", 400);
  static final long CM_ID_QP_TYPE = v("rdma_cm_id.qp_type", 408);

  static final long SIZEOF_EVENT_CHANNEL = v("sizeof.rdma_event_channel", 4);
  static final long EVENT_CHANNEL_FD = v("rdma_event_channel.fd", 0);

  static final long SIZEOF_CONN_PARAM = v("sizeof.rdma_conn_param", 24);
  static final long CONN_PARAM_PRIVATE_DATA = v("rdma_conn_param.private_data", 0);
  static final long CONN_PARAM_PRIVATE_DATA_LEN = v("rdma_conn_param.private_data_len", 8);
  static final long CONN_PARAM_RESPONDER_RESOURCES = v("rdma_conn_param.responder_resources", 9);
  static final long CONN_PARAM_INITIATOR_DEPTH = v("rdma_conn_param.initiator_depth", 10);
  static final long CONN_PARAM_FLOW_CONTROL = v("rdma_conn_param.flow_control", 11);
  static final long CONN_PARAM_RETRY_COUNT = v("rdma_conn_param.retry_count", 12);
  static final long CONN_PARAM_RNR_RETRY_COUNT = v("rdma_conn_param.rnr_retry_count", 13);
  static final long CONN_PARAM_SRQ = v("rdma_conn_param.srq", 14);
  static final long CONN_PARAM_QP_NUM = v("rdma_conn_param.qp_num", 16);

  static final long SIZEOF_CM_EVENT = v("sizeof.rdma_cm_event", 80);
  static final long CM_EVENT_ID = v("rdma_cm_event.id", 0);
  static final long CM_EVENT_LISTEN_ID = v("rdma_cm_event.listen_id", 8);
  static final long CM_EVENT_EVENT = v("rdma_cm_event.event", 16);
  static final long CM_EVENT_STATUS = v("rdma_cm_event.status", 20);
  static final long CM_EVENT_PARAM_CONN_PRIVATE_DATA = v("rdma_cm_event.param.conn.private_data", 24);
  static final long CM_EVENT_PARAM_CONN_PRIVATE_DATA_LEN = v("rdma_cm_event.param.conn.private_data_len", 32);
  static final long CM_EVENT_PARAM_CONN_RETRY_COUNT = v("rdma_cm_event.param.conn.retry_count", 36);
  static final long CM_EVENT_PARAM_CONN_RNR_RETRY_COUNT = v("rdma_cm_event.param.conn.rnr_retry_count", 37);
  static final long CM_EVENT_PARAM_UD_PRIVATE_DATA = v("rdma_cm_event.param.ud.private_data", 24);
  static final long CM_EVENT_PARAM_UD_PRIVATE_DATA_LEN = v("rdma_cm_event.param.ud.private_data_len", 32);

  static final long SIZEOF_ADDRINFO = v("sizeof.rdma_addrinfo", 96);
  static final long ADDRINFO_FLAGS = v("rdma_addrinfo.ai_flags", 0);
  static final long ADDRINFO_FAMILY = v("rdma_addrinfo.ai_family", 4);
  static final long ADDRINFO_QP_TYPE = v("rdma_addrinfo.ai_qp_type", 8);
  static final long ADDRINFO_PORT_SPACE = v("rdma_addrinfo.ai_port_space", 12);
  static final long ADDRINFO_SRC_LEN = v("rdma_addrinfo.ai_src_len", 16);
  static final long ADDRINFO_DST_LEN = v("rdma_addrinfo.ai_dst_len", 20);
  static final long ADDRINFO_SRC_ADDR = v("rdma_addrinfo.ai_src_addr", 24);
  static final long ADDRINFO_DST_ADDR = v("rdma_addrinfo.ai_dst_addr", 32);
  static final long ADDRINFO_NEXT = v("rdma_addrinfo.ai_next", 88);

  // verbs.h members the inline rdma_verbs.h helpers read and VerbsLayout does not list.
  static final long QP_CONTEXT = v("ibv_qp.context", 0);
  static final long CQ_CONTEXT = v("ibv_cq.context", 0);
  static final long SRQ_CONTEXT = v("ibv_srq.context", 0);

  /** struct pollfd {int fd; short events; short revents;} */
  static final long SIZEOF_POLLFD = v("sizeof.pollfd", 8);
  static final long POLLFD_REVENTS = v("pollfd.revents", 6);
  static final long POLLFD_EVENTS = v("pollfd.events", 4);

  /** Constants from the headers (enum values and flags), checked by the probe as well. */
  static final long RAI_PASSIVE = v("const.RAI_PASSIVE", 1);
  static final long RDMA_PS_TCP = v("const.RDMA_PS_TCP", 0x106);
  static final long IBV_QPT_RC = v("const.IBV_QPT_RC", 2);
  static final long IBV_WR_SEND = v("const.IBV_WR_SEND", 2);
  static final long IBV_SEND_INLINE = v("const.IBV_SEND_INLINE", 8);
  static final long IBV_WC_WITH_IMM = v("const.IBV_WC_WITH_IMM", 2);
  static final long IBV_ACCESS_LOCAL_WRITE = v("const.IBV_ACCESS_LOCAL_WRITE", 1);
  static final long IBV_ACCESS_REMOTE_WRITE = v("const.IBV_ACCESS_REMOTE_WRITE", 2);
  static final long IBV_ACCESS_REMOTE_READ = v("const.IBV_ACCESS_REMOTE_READ", 4);
  static final long RDMA_CM_EVENT_TIMEWAIT_EXIT = v("const.RDMA_CM_EVENT_TIMEWAIT_EXIT", 15);
  static final long POLLIN = v("const.POLLIN", 1);
  static final long F_GETFL = v("const.F_GETFL", 3);
  static final long F_SETFL = v("const.F_SETFL", 4);
  static final long O_NONBLOCK = v("const.O_NONBLOCK", 04000);
  static final long EFD_NONBLOCK = v("const.EFD_NONBLOCK", 04000);
  static final long EFD_CLOEXEC = v("const.EFD_CLOEXEC", 02000000);
}
