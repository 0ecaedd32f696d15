/*
 * Prints the size and field offsets of every librdmacm struct member (and the few extra verbs.h
 * members and constants) the Java CM binding (io.rdmareactive.rdma.rdmacore.CmLayout) uses, one
 * "name value" per line. CmLayoutCheckTest compiles this against the installed headers and
 * compares every line with the Java table; any drift fails the test.
 */
#include <stddef.h>
#include <stdio.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define SIZE(s) printf("sizeof.%s %zu\n", #s, sizeof(struct s))
#define OFF(s, m) printf("%s.%s %zu\n", #s, #m, offsetof(struct s, m))
#define CONST(c) printf("const.%s %ld\n", #c, (long) (c))

int main(void) {
  SIZE(rdma_cm_id);
  OFF(rdma_cm_id, verbs);
  OFF(rdma_cm_id, channel);
  OFF(rdma_cm_id, context);
  OFF(rdma_cm_id, qp);
  OFF(rdma_cm_id, route.addr.src_addr);
  OFF(rdma_cm_id, ps);
  OFF(rdma_cm_id, port_num);
  OFF(rdma_cm_id, event);
  OFF(rdma_cm_id, send_cq_channel);
  OFF(rdma_cm_id, send_cq);
  OFF(rdma_cm_id, recv_cq_channel);
  OFF(rdma_cm_id, recv_cq);
  OFF(rdma_cm_id, srq);
  OFF(rdma_cm_id, pd);
  OFF(rdma_cm_id, qp_type);

  SIZE(rdma_event_channel);
  OFF(rdma_event_channel, fd);

  SIZE(rdma_conn_param);
  OFF(rdma_conn_param, private_data);
  OFF(rdma_conn_param, private_data_len);
  OFF(rdma_conn_param, responder_resources);
  OFF(rdma_conn_param, initiator_depth);
  OFF(rdma_conn_param, flow_control);
  OFF(rdma_conn_param, retry_count);
  OFF(rdma_conn_param, rnr_retry_count);
  OFF(rdma_conn_param, srq);
  OFF(rdma_conn_param, qp_num);

  SIZE(rdma_cm_event);
  OFF(rdma_cm_event, id);
  OFF(rdma_cm_event, listen_id);
  OFF(rdma_cm_event, event);
  OFF(rdma_cm_event, status);
  OFF(rdma_cm_event, param.conn.private_data);
  OFF(rdma_cm_event, param.conn.private_data_len);
  OFF(rdma_cm_event, param.conn.retry_count);
  OFF(rdma_cm_event, param.conn.rnr_retry_count);
  OFF(rdma_cm_event, param.ud.private_data);
  OFF(rdma_cm_event, param.ud.private_data_len);

  SIZE(rdma_addrinfo);
  OFF(rdma_addrinfo, ai_flags);
  OFF(rdma_addrinfo, ai_family);
  OFF(rdma_addrinfo, ai_qp_type);
  OFF(rdma_addrinfo, ai_port_space);
  OFF(rdma_addrinfo, ai_src_len);
  OFF(rdma_addrinfo, ai_dst_len);
  OFF(rdma_addrinfo, ai_src_addr);
  OFF(rdma_addrinfo, ai_dst_addr);
  OFF(rdma_addrinfo, ai_next);

  OFF(ibv_qp, context);
  OFF(ibv_cq, context);
  OFF(ibv_srq, context);

  SIZE(pollfd);
  OFF(pollfd, revents);
  OFF(pollfd, events);

  CONST(RAI_PASSIVE);
  CONST(RDMA_PS_TCP);
  CONST(IBV_QPT_RC);
  CONST(IBV_WR_SEND);
  CONST(IBV_SEND_INLINE);
  CONST(IBV_WC_WITH_IMM);
  CONST(IBV_ACCESS_LOCAL_WRITE);
  CONST(IBV_ACCESS_REMOTE_WRITE);
  CONST(IBV_ACCESS_REMOTE_READ);
  CONST(RDMA_CM_EVENT_TIMEWAIT_EXIT);
  CONST(POLLIN);
  CONST(F_GETFL);
  CONST(F_SETFL);
  CONST(O_NONBLOCK);
  CONST(EFD_NONBLOCK);
  CONST(EFD_CLOEXEC);
  return 0;
}
