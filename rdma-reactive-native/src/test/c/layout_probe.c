/*
 * Prints the size and field offsets of every libibverbs struct member the Java binding
 * (io.rdmareactive.rdma.rdmacore.VerbsLayout) touches, one "name value" per line:
 * "sizeof.<struct>" and "<struct>.<member path>". LayoutCheckTest compiles this against the
 * installed verbs.h and compares each line with the Java table; any drift fails the test.
 */
#include <stddef.h>
#include <stdio.h>
#include <infiniband/verbs.h>

#define SIZE(s) printf("sizeof.%s %zu\n", #s, sizeof(struct s))
#define OFF(s, m) printf("%s.%s %zu\n", #s, #m, offsetof(struct s, m))

int main(void) {
  SIZE(ibv_context);
  OFF(ibv_context, ops);
  OFF(ibv_context, ops.alloc_mw);
  OFF(ibv_context, ops.dealloc_mw);
  OFF(ibv_context, ops.poll_cq);
  OFF(ibv_context, ops.req_notify_cq);
  OFF(ibv_context, ops.post_srq_recv);
  OFF(ibv_context, ops.post_send);
  OFF(ibv_context, ops.post_recv);
  OFF(ibv_context, async_fd);
  OFF(ibv_context, num_comp_vectors);
  OFF(ibv_context, abi_compat);

  SIZE(verbs_context);
  OFF(verbs_context, query_port);
  OFF(verbs_context, alloc_parent_domain);
  OFF(verbs_context, dealloc_td);
  OFF(verbs_context, alloc_td);
  OFF(verbs_context, open_qp);
  OFF(verbs_context, create_qp_ex);
  OFF(verbs_context, get_srq_num);
  OFF(verbs_context, create_srq_ex);
  OFF(verbs_context, open_xrcd);
  OFF(verbs_context, close_xrcd);
  OFF(verbs_context, sz);
  OFF(verbs_context, context);

  SIZE(ibv_device_attr);
  OFF(ibv_device_attr, fw_ver);
  OFF(ibv_device_attr, node_guid);
  OFF(ibv_device_attr, max_mr_size);
  OFF(ibv_device_attr, vendor_id);
  OFF(ibv_device_attr, vendor_part_id);
  OFF(ibv_device_attr, max_qp);
  OFF(ibv_device_attr, max_qp_wr);
  OFF(ibv_device_attr, device_cap_flags);
  OFF(ibv_device_attr, max_sge);
  OFF(ibv_device_attr, max_cq);
  OFF(ibv_device_attr, max_cqe);
  OFF(ibv_device_attr, max_mr);
  OFF(ibv_device_attr, max_pd);
  OFF(ibv_device_attr, max_srq);
  OFF(ibv_device_attr, max_srq_wr);
  OFF(ibv_device_attr, phys_port_cnt);

  SIZE(ibv_port_attr);
  OFF(ibv_port_attr, state);
  OFF(ibv_port_attr, max_mtu);
  OFF(ibv_port_attr, active_mtu);
  OFF(ibv_port_attr, gid_tbl_len);
  OFF(ibv_port_attr, lid);
  OFF(ibv_port_attr, link_layer);

  printf("sizeof.ibv_gid %zu\n", sizeof(union ibv_gid));

  SIZE(ibv_mr);
  OFF(ibv_mr, addr);
  OFF(ibv_mr, length);
  OFF(ibv_mr, lkey);
  OFF(ibv_mr, rkey);

  SIZE(ibv_comp_channel);
  OFF(ibv_comp_channel, fd);

  SIZE(ibv_cq);
  OFF(ibv_cq, cqe);

  SIZE(ibv_wc);
  OFF(ibv_wc, wr_id);
  OFF(ibv_wc, status);
  OFF(ibv_wc, opcode);
  OFF(ibv_wc, vendor_err);
  OFF(ibv_wc, byte_len);
  OFF(ibv_wc, imm_data);
  OFF(ibv_wc, qp_num);
  OFF(ibv_wc, src_qp);
  OFF(ibv_wc, wc_flags);

  SIZE(ibv_async_event);
  OFF(ibv_async_event, element);
  OFF(ibv_async_event, event_type);

  SIZE(ibv_qp);
  OFF(ibv_qp, qp_num);

  SIZE(ibv_qp_init_attr);
  OFF(ibv_qp_init_attr, qp_context);
  OFF(ibv_qp_init_attr, send_cq);
  OFF(ibv_qp_init_attr, recv_cq);
  OFF(ibv_qp_init_attr, srq);
  OFF(ibv_qp_init_attr, cap.max_send_wr);
  OFF(ibv_qp_init_attr, cap.max_recv_wr);
  OFF(ibv_qp_init_attr, cap.max_send_sge);
  OFF(ibv_qp_init_attr, cap.max_recv_sge);
  OFF(ibv_qp_init_attr, cap.max_inline_data);
  OFF(ibv_qp_init_attr, qp_type);
  OFF(ibv_qp_init_attr, sq_sig_all);

  SIZE(ibv_qp_init_attr_ex);
  OFF(ibv_qp_init_attr_ex, qp_context);
  OFF(ibv_qp_init_attr_ex, send_cq);
  OFF(ibv_qp_init_attr_ex, recv_cq);
  OFF(ibv_qp_init_attr_ex, srq);
  OFF(ibv_qp_init_attr_ex, cap.max_send_wr);
  OFF(ibv_qp_init_attr_ex, cap.max_recv_wr);
  OFF(ibv_qp_init_attr_ex, cap.max_send_sge);
  OFF(ibv_qp_init_attr_ex, cap.max_recv_sge);
  OFF(ibv_qp_init_attr_ex, cap.max_inline_data);
  OFF(ibv_qp_init_attr_ex, qp_type);
  OFF(ibv_qp_init_attr_ex, sq_sig_all);
  OFF(ibv_qp_init_attr_ex, comp_mask);
  OFF(ibv_qp_init_attr_ex, pd);
  OFF(ibv_qp_init_attr_ex, xrcd);

  SIZE(ibv_qp_open_attr);
  OFF(ibv_qp_open_attr, comp_mask);
  OFF(ibv_qp_open_attr, qp_num);
  OFF(ibv_qp_open_attr, xrcd);
  OFF(ibv_qp_open_attr, qp_context);
  OFF(ibv_qp_open_attr, qp_type);

  SIZE(ibv_qp_attr);
  OFF(ibv_qp_attr, qp_state);
  OFF(ibv_qp_attr, path_mtu);
  OFF(ibv_qp_attr, qkey);
  OFF(ibv_qp_attr, rq_psn);
  OFF(ibv_qp_attr, sq_psn);
  OFF(ibv_qp_attr, dest_qp_num);
  OFF(ibv_qp_attr, qp_access_flags);
  OFF(ibv_qp_attr, ah_attr.grh.dgid);
  OFF(ibv_qp_attr, ah_attr.grh.flow_label);
  OFF(ibv_qp_attr, ah_attr.grh.sgid_index);
  OFF(ibv_qp_attr, ah_attr.grh.hop_limit);
  OFF(ibv_qp_attr, ah_attr.grh.traffic_class);
  OFF(ibv_qp_attr, ah_attr.dlid);
  OFF(ibv_qp_attr, ah_attr.sl);
  OFF(ibv_qp_attr, ah_attr.src_path_bits);
  OFF(ibv_qp_attr, ah_attr.is_global);
  OFF(ibv_qp_attr, ah_attr.port_num);
  OFF(ibv_qp_attr, pkey_index);
  OFF(ibv_qp_attr, max_rd_atomic);
  OFF(ibv_qp_attr, max_dest_rd_atomic);
  OFF(ibv_qp_attr, min_rnr_timer);
  OFF(ibv_qp_attr, port_num);
  OFF(ibv_qp_attr, timeout);
  OFF(ibv_qp_attr, retry_cnt);
  OFF(ibv_qp_attr, rnr_retry);

  SIZE(ibv_sge);
  OFF(ibv_sge, addr);
  OFF(ibv_sge, length);
  OFF(ibv_sge, lkey);

  SIZE(ibv_send_wr);
  OFF(ibv_send_wr, wr_id);
  OFF(ibv_send_wr, next);
  OFF(ibv_send_wr, sg_list);
  OFF(ibv_send_wr, num_sge);
  OFF(ibv_send_wr, opcode);
  OFF(ibv_send_wr, send_flags);
  OFF(ibv_send_wr, imm_data);
  OFF(ibv_send_wr, invalidate_rkey);
  OFF(ibv_send_wr, wr.rdma.remote_addr);
  OFF(ibv_send_wr, wr.rdma.rkey);
  OFF(ibv_send_wr, qp_type.xrc.remote_srqn);
  OFF(ibv_send_wr, bind_mw.mw);
  OFF(ibv_send_wr, bind_mw.rkey);
  OFF(ibv_send_wr, bind_mw.bind_info.mr);
  OFF(ibv_send_wr, bind_mw.bind_info.addr);
  OFF(ibv_send_wr, bind_mw.bind_info.length);
  OFF(ibv_send_wr, bind_mw.bind_info.mw_access_flags);

  SIZE(ibv_mw);
  OFF(ibv_mw, rkey);

  SIZE(ibv_recv_wr);
  OFF(ibv_recv_wr, wr_id);
  OFF(ibv_recv_wr, next);
  OFF(ibv_recv_wr, sg_list);
  OFF(ibv_recv_wr, num_sge);

  SIZE(ibv_srq_init_attr);
  OFF(ibv_srq_init_attr, srq_context);
  OFF(ibv_srq_init_attr, attr.max_wr);
  OFF(ibv_srq_init_attr, attr.max_sge);
  OFF(ibv_srq_init_attr, attr.srq_limit);

  SIZE(ibv_srq_init_attr_ex);
  OFF(ibv_srq_init_attr_ex, srq_context);
  OFF(ibv_srq_init_attr_ex, attr.max_wr);
  OFF(ibv_srq_init_attr_ex, attr.max_sge);
  OFF(ibv_srq_init_attr_ex, attr.srq_limit);
  OFF(ibv_srq_init_attr_ex, comp_mask);
  OFF(ibv_srq_init_attr_ex, srq_type);
  OFF(ibv_srq_init_attr_ex, pd);
  OFF(ibv_srq_init_attr_ex, xrcd);
  OFF(ibv_srq_init_attr_ex, cq);

  SIZE(ibv_xrcd_init_attr);
  OFF(ibv_xrcd_init_attr, comp_mask);
  OFF(ibv_xrcd_init_attr, fd);
  OFF(ibv_xrcd_init_attr, oflags);

  SIZE(ibv_td_init_attr);
  OFF(ibv_td_init_attr, comp_mask);

  SIZE(ibv_parent_domain_init_attr);
  OFF(ibv_parent_domain_init_attr, pd);
  OFF(ibv_parent_domain_init_attr, td);
  OFF(ibv_parent_domain_init_attr, comp_mask);
  OFF(ibv_parent_domain_init_attr, alloc);
  OFF(ibv_parent_domain_init_attr, free);
  OFF(ibv_parent_domain_init_attr, pd_context);
  return 0;
}
