/* src/lib/verbs_api.h against rdma-core's own <infiniband/verbs.h>: every
 * struct's size and alignment, every declared field's offset and size,
 * every enum value, and the prototypes of the entry points in struct
 * verbs_api and struct ibv_context_ops.
 *
 * The two headers declare the same names, so they cannot meet in one
 * translation unit: this file is compiled twice (tests/meson.build). With
 * VERBS_ABI_REAL it includes the real header and only defines the table
 * abi_real[]; without, it includes verbs_api.h, defines abi_ours[] from
 * the same list and compares the two entry by entry, failing with the
 * field's name. The prototype checks compare each side's type with the
 * same spelled-out type (struct names are the same on both sides), so a
 * prototype that matches on both sides matches across them. Built only
 * where Meson finds <infiniband/verbs.h> (Debian: libibverbs-dev). */
#ifdef VERBS_ABI_REAL
#include <infiniband/verbs.h>
#else
#include "testutil.h"
#include "lib/verbs_api.h"

#include <stdio.h>
#include <string.h>
#endif

#include <stddef.h>

struct abi_entry {
	const char *name;
	long long a, b; /* struct: size, alignment; field: offset, size; enum: value; prototype: compatible */
};

#define S(T) { "sizeof " #T, (long long)sizeof(T), (long long)_Alignof(T) },
#define F(T, f) { #T "." #f, (long long)offsetof(T, f), (long long)sizeof(((T *)0)->f) },
#define E(v) { #v, (long long)(v), 0 },

/* Every type and field verbs_api.h declares (the _compat_ slots of the op
 * table are checked by offset and size only, as they are declared). */
#define ABI_STRUCTS \
	S(union ibv_gid) F(union ibv_gid, raw) F(union ibv_gid, global) F(union ibv_gid, global.subnet_prefix) \
	F(union ibv_gid, global.interface_id) \
	S(struct ibv_device_attr) F(struct ibv_device_attr, fw_ver) F(struct ibv_device_attr, node_guid) \
	F(struct ibv_device_attr, sys_image_guid) F(struct ibv_device_attr, max_mr_size) \
	F(struct ibv_device_attr, page_size_cap) F(struct ibv_device_attr, vendor_id) \
	F(struct ibv_device_attr, vendor_part_id) F(struct ibv_device_attr, hw_ver) F(struct ibv_device_attr, max_qp) \
	F(struct ibv_device_attr, max_qp_wr) F(struct ibv_device_attr, device_cap_flags) \
	F(struct ibv_device_attr, max_sge) F(struct ibv_device_attr, max_sge_rd) F(struct ibv_device_attr, max_cq) \
	F(struct ibv_device_attr, max_cqe) F(struct ibv_device_attr, max_mr) F(struct ibv_device_attr, max_pd) \
	F(struct ibv_device_attr, max_qp_rd_atom) F(struct ibv_device_attr, max_ee_rd_atom) \
	F(struct ibv_device_attr, max_res_rd_atom) F(struct ibv_device_attr, max_qp_init_rd_atom) \
	F(struct ibv_device_attr, max_ee_init_rd_atom) F(struct ibv_device_attr, atomic_cap) \
	F(struct ibv_device_attr, max_ee) F(struct ibv_device_attr, max_rdd) F(struct ibv_device_attr, max_mw) \
	F(struct ibv_device_attr, max_raw_ipv6_qp) F(struct ibv_device_attr, max_raw_ethy_qp) \
	F(struct ibv_device_attr, max_mcast_grp) F(struct ibv_device_attr, max_mcast_qp_attach) \
	F(struct ibv_device_attr, max_total_mcast_qp_attach) F(struct ibv_device_attr, max_ah) \
	F(struct ibv_device_attr, max_fmr) F(struct ibv_device_attr, max_map_per_fmr) \
	F(struct ibv_device_attr, max_srq) F(struct ibv_device_attr, max_srq_wr) \
	F(struct ibv_device_attr, max_srq_sge) F(struct ibv_device_attr, max_pkeys) \
	F(struct ibv_device_attr, local_ca_ack_delay) F(struct ibv_device_attr, phys_port_cnt) \
	S(struct ibv_port_attr) F(struct ibv_port_attr, state) F(struct ibv_port_attr, max_mtu) \
	F(struct ibv_port_attr, active_mtu) F(struct ibv_port_attr, gid_tbl_len) \
	F(struct ibv_port_attr, port_cap_flags) F(struct ibv_port_attr, max_msg_sz) \
	F(struct ibv_port_attr, bad_pkey_cntr) F(struct ibv_port_attr, qkey_viol_cntr) \
	F(struct ibv_port_attr, pkey_tbl_len) F(struct ibv_port_attr, lid) F(struct ibv_port_attr, sm_lid) \
	F(struct ibv_port_attr, lmc) F(struct ibv_port_attr, max_vl_num) F(struct ibv_port_attr, sm_sl) \
	F(struct ibv_port_attr, subnet_timeout) F(struct ibv_port_attr, init_type_reply) \
	F(struct ibv_port_attr, active_width) F(struct ibv_port_attr, active_speed) \
	F(struct ibv_port_attr, phys_state) F(struct ibv_port_attr, link_layer) F(struct ibv_port_attr, flags) \
	F(struct ibv_port_attr, port_cap_flags2) \
	S(struct ibv_wc) F(struct ibv_wc, wr_id) F(struct ibv_wc, status) F(struct ibv_wc, opcode) \
	F(struct ibv_wc, vendor_err) F(struct ibv_wc, byte_len) F(struct ibv_wc, imm_data) \
	F(struct ibv_wc, invalidated_rkey) F(struct ibv_wc, qp_num) F(struct ibv_wc, src_qp) \
	F(struct ibv_wc, wc_flags) F(struct ibv_wc, pkey_index) F(struct ibv_wc, slid) F(struct ibv_wc, sl) \
	F(struct ibv_wc, dlid_path_bits) \
	S(struct ibv_pd) F(struct ibv_pd, context) F(struct ibv_pd, handle) \
	S(struct ibv_mr) F(struct ibv_mr, context) F(struct ibv_mr, pd) F(struct ibv_mr, addr) F(struct ibv_mr, length) \
	F(struct ibv_mr, handle) F(struct ibv_mr, lkey) F(struct ibv_mr, rkey) \
	S(struct ibv_mw_bind_info) F(struct ibv_mw_bind_info, mr) F(struct ibv_mw_bind_info, addr) \
	F(struct ibv_mw_bind_info, length) F(struct ibv_mw_bind_info, mw_access_flags) \
	S(struct ibv_global_route) F(struct ibv_global_route, dgid) F(struct ibv_global_route, flow_label) \
	F(struct ibv_global_route, sgid_index) F(struct ibv_global_route, hop_limit) \
	F(struct ibv_global_route, traffic_class) \
	S(struct ibv_ah_attr) F(struct ibv_ah_attr, grh) F(struct ibv_ah_attr, dlid) F(struct ibv_ah_attr, sl) \
	F(struct ibv_ah_attr, src_path_bits) F(struct ibv_ah_attr, static_rate) F(struct ibv_ah_attr, is_global) \
	F(struct ibv_ah_attr, port_num) \
	S(struct ibv_qp_cap) F(struct ibv_qp_cap, max_send_wr) F(struct ibv_qp_cap, max_recv_wr) \
	F(struct ibv_qp_cap, max_send_sge) F(struct ibv_qp_cap, max_recv_sge) F(struct ibv_qp_cap, max_inline_data) \
	S(struct ibv_qp_init_attr) F(struct ibv_qp_init_attr, qp_context) F(struct ibv_qp_init_attr, send_cq) \
	F(struct ibv_qp_init_attr, recv_cq) F(struct ibv_qp_init_attr, srq) F(struct ibv_qp_init_attr, cap) \
	F(struct ibv_qp_init_attr, qp_type) F(struct ibv_qp_init_attr, sq_sig_all) \
	S(struct ibv_qp_attr) F(struct ibv_qp_attr, qp_state) F(struct ibv_qp_attr, cur_qp_state) \
	F(struct ibv_qp_attr, path_mtu) F(struct ibv_qp_attr, path_mig_state) F(struct ibv_qp_attr, qkey) \
	F(struct ibv_qp_attr, rq_psn) F(struct ibv_qp_attr, sq_psn) F(struct ibv_qp_attr, dest_qp_num) \
	F(struct ibv_qp_attr, qp_access_flags) F(struct ibv_qp_attr, cap) F(struct ibv_qp_attr, ah_attr) \
	F(struct ibv_qp_attr, alt_ah_attr) F(struct ibv_qp_attr, pkey_index) F(struct ibv_qp_attr, alt_pkey_index) \
	F(struct ibv_qp_attr, en_sqd_async_notify) F(struct ibv_qp_attr, sq_draining) \
	F(struct ibv_qp_attr, max_rd_atomic) F(struct ibv_qp_attr, max_dest_rd_atomic) \
	F(struct ibv_qp_attr, min_rnr_timer) F(struct ibv_qp_attr, port_num) F(struct ibv_qp_attr, timeout) \
	F(struct ibv_qp_attr, retry_cnt) F(struct ibv_qp_attr, rnr_retry) F(struct ibv_qp_attr, alt_port_num) \
	F(struct ibv_qp_attr, alt_timeout) F(struct ibv_qp_attr, rate_limit) \
	S(struct ibv_sge) F(struct ibv_sge, addr) F(struct ibv_sge, length) F(struct ibv_sge, lkey) \
	S(struct ibv_send_wr) F(struct ibv_send_wr, wr_id) F(struct ibv_send_wr, next) F(struct ibv_send_wr, sg_list) \
	F(struct ibv_send_wr, num_sge) F(struct ibv_send_wr, opcode) F(struct ibv_send_wr, send_flags) \
	F(struct ibv_send_wr, imm_data) F(struct ibv_send_wr, invalidate_rkey) F(struct ibv_send_wr, wr) \
	F(struct ibv_send_wr, wr.rdma.remote_addr) F(struct ibv_send_wr, wr.rdma.rkey) \
	F(struct ibv_send_wr, wr.atomic.remote_addr) F(struct ibv_send_wr, wr.atomic.compare_add) \
	F(struct ibv_send_wr, wr.atomic.swap) F(struct ibv_send_wr, wr.atomic.rkey) F(struct ibv_send_wr, wr.ud.ah) \
	F(struct ibv_send_wr, wr.ud.remote_qpn) F(struct ibv_send_wr, wr.ud.remote_qkey) \
	F(struct ibv_send_wr, qp_type) F(struct ibv_send_wr, qp_type.xrc.remote_srqn) \
	F(struct ibv_send_wr, bind_mw) F(struct ibv_send_wr, bind_mw.mw) F(struct ibv_send_wr, bind_mw.rkey) \
	F(struct ibv_send_wr, bind_mw.bind_info) F(struct ibv_send_wr, tso) F(struct ibv_send_wr, tso.hdr) \
	F(struct ibv_send_wr, tso.hdr_sz) F(struct ibv_send_wr, tso.mss) \
	S(struct ibv_recv_wr) F(struct ibv_recv_wr, wr_id) F(struct ibv_recv_wr, next) F(struct ibv_recv_wr, sg_list) \
	F(struct ibv_recv_wr, num_sge) \
	S(struct ibv_qp) F(struct ibv_qp, context) F(struct ibv_qp, qp_context) F(struct ibv_qp, pd) \
	F(struct ibv_qp, send_cq) F(struct ibv_qp, recv_cq) F(struct ibv_qp, srq) F(struct ibv_qp, handle) \
	F(struct ibv_qp, qp_num) F(struct ibv_qp, state) F(struct ibv_qp, qp_type) F(struct ibv_qp, mutex) \
	F(struct ibv_qp, cond) F(struct ibv_qp, events_completed) \
	S(struct ibv_cq) F(struct ibv_cq, context) F(struct ibv_cq, channel) F(struct ibv_cq, cq_context) \
	F(struct ibv_cq, handle) F(struct ibv_cq, cqe) F(struct ibv_cq, mutex) F(struct ibv_cq, cond) \
	F(struct ibv_cq, comp_events_completed) F(struct ibv_cq, async_events_completed) \
	S(struct ibv_context_ops) F(struct ibv_context_ops, _compat_query_device) \
	F(struct ibv_context_ops, _compat_query_port) F(struct ibv_context_ops, _compat_alloc_pd) \
	F(struct ibv_context_ops, _compat_dealloc_pd) F(struct ibv_context_ops, _compat_reg_mr) \
	F(struct ibv_context_ops, _compat_rereg_mr) F(struct ibv_context_ops, _compat_dereg_mr) \
	F(struct ibv_context_ops, alloc_mw) F(struct ibv_context_ops, bind_mw) F(struct ibv_context_ops, dealloc_mw) \
	F(struct ibv_context_ops, _compat_create_cq) F(struct ibv_context_ops, poll_cq) \
	F(struct ibv_context_ops, req_notify_cq) F(struct ibv_context_ops, _compat_cq_event) \
	F(struct ibv_context_ops, _compat_resize_cq) F(struct ibv_context_ops, _compat_destroy_cq) \
	F(struct ibv_context_ops, _compat_create_srq) F(struct ibv_context_ops, _compat_modify_srq) \
	F(struct ibv_context_ops, _compat_query_srq) F(struct ibv_context_ops, _compat_destroy_srq) \
	F(struct ibv_context_ops, post_srq_recv) F(struct ibv_context_ops, _compat_create_qp) \
	F(struct ibv_context_ops, _compat_query_qp) F(struct ibv_context_ops, _compat_modify_qp) \
	F(struct ibv_context_ops, _compat_destroy_qp) F(struct ibv_context_ops, post_send) \
	F(struct ibv_context_ops, post_recv) F(struct ibv_context_ops, _compat_create_ah) \
	F(struct ibv_context_ops, _compat_destroy_ah) F(struct ibv_context_ops, _compat_attach_mcast) \
	F(struct ibv_context_ops, _compat_detach_mcast) F(struct ibv_context_ops, _compat_async_event) \
	S(struct ibv_context) F(struct ibv_context, device) F(struct ibv_context, ops) F(struct ibv_context, cmd_fd) \
	F(struct ibv_context, async_fd) F(struct ibv_context, num_comp_vectors) F(struct ibv_context, mutex) \
	F(struct ibv_context, abi_compat)

/* Every enum type and value verbs_api.h declares. */
#define ABI_ENUMS \
	S(enum ibv_mtu) E(IBV_MTU_256) E(IBV_MTU_512) E(IBV_MTU_1024) E(IBV_MTU_2048) E(IBV_MTU_4096) \
	S(enum ibv_port_state) E(IBV_PORT_NOP) E(IBV_PORT_DOWN) E(IBV_PORT_INIT) E(IBV_PORT_ARMED) \
	E(IBV_PORT_ACTIVE) E(IBV_PORT_ACTIVE_DEFER) \
	E(IBV_LINK_LAYER_UNSPECIFIED) E(IBV_LINK_LAYER_INFINIBAND) E(IBV_LINK_LAYER_ETHERNET) \
	S(enum ibv_atomic_cap) E(IBV_ATOMIC_NONE) E(IBV_ATOMIC_HCA) E(IBV_ATOMIC_GLOB) \
	S(enum ibv_access_flags) E(IBV_ACCESS_LOCAL_WRITE) E(IBV_ACCESS_REMOTE_WRITE) E(IBV_ACCESS_REMOTE_READ) \
	E(IBV_ACCESS_REMOTE_ATOMIC) \
	S(enum ibv_qp_type) E(IBV_QPT_RC) E(IBV_QPT_UC) E(IBV_QPT_UD) \
	S(enum ibv_qp_state) E(IBV_QPS_RESET) E(IBV_QPS_INIT) E(IBV_QPS_RTR) E(IBV_QPS_RTS) E(IBV_QPS_SQD) \
	E(IBV_QPS_SQE) E(IBV_QPS_ERR) E(IBV_QPS_UNKNOWN) \
	S(enum ibv_mig_state) E(IBV_MIG_MIGRATED) E(IBV_MIG_REARM) E(IBV_MIG_ARMED) \
	S(enum ibv_qp_attr_mask) E(IBV_QP_STATE) E(IBV_QP_CUR_STATE) E(IBV_QP_EN_SQD_ASYNC_NOTIFY) \
	E(IBV_QP_ACCESS_FLAGS) E(IBV_QP_PKEY_INDEX) E(IBV_QP_PORT) E(IBV_QP_QKEY) E(IBV_QP_AV) E(IBV_QP_PATH_MTU) \
	E(IBV_QP_TIMEOUT) E(IBV_QP_RETRY_CNT) E(IBV_QP_RNR_RETRY) E(IBV_QP_RQ_PSN) E(IBV_QP_MAX_QP_RD_ATOMIC) \
	E(IBV_QP_ALT_PATH) E(IBV_QP_MIN_RNR_TIMER) E(IBV_QP_SQ_PSN) E(IBV_QP_MAX_DEST_RD_ATOMIC) \
	E(IBV_QP_PATH_MIG_STATE) E(IBV_QP_CAP) E(IBV_QP_DEST_QPN) E(IBV_QP_RATE_LIMIT) \
	S(enum ibv_wr_opcode) E(IBV_WR_RDMA_WRITE) E(IBV_WR_RDMA_WRITE_WITH_IMM) E(IBV_WR_SEND) \
	E(IBV_WR_SEND_WITH_IMM) E(IBV_WR_RDMA_READ) E(IBV_WR_ATOMIC_CMP_AND_SWP) E(IBV_WR_ATOMIC_FETCH_AND_ADD) \
	E(IBV_WR_LOCAL_INV) E(IBV_WR_BIND_MW) E(IBV_WR_SEND_WITH_INV) E(IBV_WR_TSO) E(IBV_WR_DRIVER1) \
	E(IBV_WR_ATOMIC_WRITE) \
	S(enum ibv_send_flags) E(IBV_SEND_FENCE) E(IBV_SEND_SIGNALED) E(IBV_SEND_SOLICITED) E(IBV_SEND_INLINE) \
	E(IBV_SEND_IP_CSUM) \
	S(enum ibv_wc_status) E(IBV_WC_SUCCESS) E(IBV_WC_LOC_LEN_ERR) E(IBV_WC_LOC_QP_OP_ERR) \
	E(IBV_WC_LOC_EEC_OP_ERR) E(IBV_WC_LOC_PROT_ERR) E(IBV_WC_WR_FLUSH_ERR) E(IBV_WC_MW_BIND_ERR) \
	E(IBV_WC_BAD_RESP_ERR) E(IBV_WC_LOC_ACCESS_ERR) E(IBV_WC_REM_INV_REQ_ERR) E(IBV_WC_REM_ACCESS_ERR) \
	E(IBV_WC_REM_OP_ERR) E(IBV_WC_RETRY_EXC_ERR) E(IBV_WC_RNR_RETRY_EXC_ERR) E(IBV_WC_LOC_RDD_VIOL_ERR) \
	E(IBV_WC_REM_INV_RD_REQ_ERR) E(IBV_WC_REM_ABORT_ERR) E(IBV_WC_INV_EECN_ERR) E(IBV_WC_INV_EEC_STATE_ERR) \
	E(IBV_WC_FATAL_ERR) E(IBV_WC_RESP_TIMEOUT_ERR) E(IBV_WC_GENERAL_ERR) E(IBV_WC_TM_ERR) \
	E(IBV_WC_TM_RNDV_INCOMPLETE) \
	S(enum ibv_wc_opcode) E(IBV_WC_SEND) E(IBV_WC_RDMA_WRITE) E(IBV_WC_RDMA_READ) E(IBV_WC_COMP_SWAP) \
	E(IBV_WC_FETCH_ADD) E(IBV_WC_BIND_MW) E(IBV_WC_LOCAL_INV) E(IBV_WC_TSO) E(IBV_WC_ATOMIC_WRITE) \
	E(IBV_WC_RECV) E(IBV_WC_RECV_RDMA_WITH_IMM) \
	S(enum ibv_wc_flags) E(IBV_WC_GRH) E(IBV_WC_WITH_IMM) E(IBV_WC_IP_CSUM_OK) E(IBV_WC_WITH_INV)

/* The entry points: (real symbol, verbs_api member, the prototype as a
 * pointer type). ibv_query_port is left out: verbs_api.h declares it with
 * an opaque buffer on purpose (see there). */
#define ABI_PROTOS \
	P(ibv_get_device_list, get_device_list, struct ibv_device **(*)(int *)) \
	P(ibv_free_device_list, free_device_list, void (*)(struct ibv_device **)) \
	P(ibv_get_device_name, get_device_name, const char *(*)(struct ibv_device *)) \
	P(ibv_open_device, open_device, struct ibv_context *(*)(struct ibv_device *)) \
	P(ibv_close_device, close_device, int (*)(struct ibv_context *)) \
	P(ibv_query_device, query_device, int (*)(struct ibv_context *, struct ibv_device_attr *)) \
	P(ibv_query_gid, query_gid, int (*)(struct ibv_context *, uint8_t, int, union ibv_gid *)) \
	P(ibv_alloc_pd, alloc_pd, struct ibv_pd *(*)(struct ibv_context *)) \
	P(ibv_dealloc_pd, dealloc_pd, int (*)(struct ibv_pd *)) \
	P(ibv_reg_mr, reg_mr, struct ibv_mr *(*)(struct ibv_pd *, void *, size_t, int)) \
	P(ibv_dereg_mr, dereg_mr, int (*)(struct ibv_mr *)) \
	P(ibv_create_cq, create_cq, \
	  struct ibv_cq *(*)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int)) \
	P(ibv_destroy_cq, destroy_cq, int (*)(struct ibv_cq *)) \
	P(ibv_create_qp, create_qp, struct ibv_qp *(*)(struct ibv_pd *, struct ibv_qp_init_attr *)) \
	P(ibv_modify_qp, modify_qp, int (*)(struct ibv_qp *, struct ibv_qp_attr *, int)) \
	P(ibv_destroy_qp, destroy_qp, int (*)(struct ibv_qp *)) \
	P(ibv_reg_dmabuf_mr, reg_dmabuf_mr, struct ibv_mr *(*)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int))

/* The three data-path ops (struct ibv_context_ops, same member names). */
#define ABI_OPS \
	O(poll_cq, int (*)(struct ibv_cq *, int, struct ibv_wc *)) \
	O(post_send, int (*)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **)) \
	O(post_recv, int (*)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **))

#define O(member, type) \
	{ "ibv_context_ops." #member " prototype", \
	  __builtin_types_compatible_p(__typeof__(((struct ibv_context_ops *)0)->member), type), 0 },

#ifdef VERBS_ABI_REAL
#define P(sym, member, type) { #sym " prototype", __builtin_types_compatible_p(__typeof__(&sym), type), 0 },
extern const struct abi_entry abi_real[];
extern const size_t abi_real_n;
const struct abi_entry abi_real[] = { ABI_STRUCTS ABI_ENUMS ABI_PROTOS ABI_OPS };
const size_t abi_real_n = sizeof(abi_real) / sizeof(abi_real[0]);
#else
#define P(sym, member, type) \
	{ #sym " prototype", __builtin_types_compatible_p(__typeof__(((struct verbs_api *)0)->member), type), 0 },
extern const struct abi_entry abi_real[];
extern const size_t abi_real_n;
static const struct abi_entry abi_ours[] = { ABI_STRUCTS ABI_ENUMS ABI_PROTOS ABI_OPS };

static void test_same_abi(void **state)
{
	(void)state;
	size_t n = sizeof(abi_ours) / sizeof(abi_ours[0]), bad = 0;

	assert_int_equal(n, abi_real_n);
	for (size_t i = 0; i < n; i++) {
		const struct abi_entry *o = &abi_ours[i], *r = &abi_real[i];
		assert_string_equal(o->name, r->name);
		if (o->a == r->a && o->b == r->b)
			continue;
		fprintf(stderr, "verbs ABI mismatch: %s: gpuready (%lld, %lld), rdma-core (%lld, %lld)\n", o->name, o->a,
			o->b, r->a, r->b);
		bad++;
	}
	assert_int_equal(bad, 0);
}

/* A prototype entry must be compatible on both sides, not merely equal. */
static void test_prototypes_hold(void **state)
{
	(void)state;
	for (size_t i = 0; i < abi_real_n; i++)
		if (strstr(abi_real[i].name, " prototype")) {
			if (!abi_real[i].a || !abi_ours[i].a)
				fprintf(stderr, "prototype differs: %s (gpuready %lld, rdma-core %lld)\n", abi_real[i].name,
					abi_ours[i].a, abi_real[i].a);
			assert_true(abi_real[i].a && abi_ours[i].a);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_abi),
		cmocka_unit_test(test_prototypes_hold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
