/* Loads libibverbs.so.1 into struct verbs_api and wraps the two calls
 * verbs.h does not leave to the export alone (ibv_query_port); see
 * verbs_api.h. One symbol table, each entry at the version rdma-core 44
 * exports as the default. */
#define _GNU_SOURCE
#include "verbs_api.h"

#include <stdio.h>
#include <string.h>

#define VB_REQ(sym, member) \
	{ .name = #sym, .version = "IBVERBS_1.1", .offset = offsetof(struct verbs_api, member) }

static const struct dl_sym verbs_syms[] = {
	VB_REQ(ibv_get_device_list, get_device_list),
	VB_REQ(ibv_free_device_list, free_device_list),
	VB_REQ(ibv_get_device_name, get_device_name),
	VB_REQ(ibv_open_device, open_device),
	VB_REQ(ibv_close_device, close_device),
	VB_REQ(ibv_query_device, query_device),
	VB_REQ(ibv_query_port, query_port),
	VB_REQ(ibv_query_gid, query_gid),
	VB_REQ(ibv_alloc_pd, alloc_pd),
	VB_REQ(ibv_dealloc_pd, dealloc_pd),
	VB_REQ(ibv_reg_mr, reg_mr),
	VB_REQ(ibv_dereg_mr, dereg_mr),
	VB_REQ(ibv_create_cq, create_cq),
	VB_REQ(ibv_destroy_cq, destroy_cq),
	VB_REQ(ibv_create_qp, create_qp),
	VB_REQ(ibv_modify_qp, modify_qp),
	VB_REQ(ibv_destroy_qp, destroy_qp),
	{ .name = "ibv_reg_dmabuf_mr", .version = "IBVERBS_1.12", .optional = true,
	  .offset = offsetof(struct verbs_api, reg_dmabuf_mr) },
};

int verbs_api_load(struct dl_lib *lib, struct verbs_api *api, const char *file)
{
	const char *const libs[] = { file ? file : "libibverbs.so.1", NULL };

	memset(api, 0, sizeof(*api));
	return dl_open(lib, libs, verbs_syms, sizeof(verbs_syms) / sizeof(verbs_syms[0]), api);
}

const struct dl_sym *verbs_api_symbols(size_t *n)
{
	*n = sizeof(verbs_syms) / sizeof(verbs_syms[0]);
	return verbs_syms;
}

/* Room for whatever a newer library's provider might write past the
 * compat layout (it is given no size; rdma-core libibverbs/verbs.h). */
struct port_attr_buf {
	struct ibv_port_attr attr;
	uint8_t reserve[256];
};

int verbs_query_port(const struct verbs_api *api, struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *out)
{
	struct port_attr_buf buf;

	memset(&buf, 0, sizeof(buf));
	int r = api->query_port(ctx, port, &buf);
	if (r != 0)
		return r;
	memset(out, 0, sizeof(*out));
	/* the compat layout ends with `flags` */
	memcpy(out, &buf.attr, offsetof(struct ibv_port_attr, flags) + sizeof(buf.attr.flags));
	return 0;
}

int verbs_mtu_bytes(int mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0;
}

int verbs_mtu_from_bytes(int bytes)
{
	int best = -1;
	for (int m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if ((128 << m) <= bytes)
			best = m;
	return best;
}

const char *verbs_wc_status_name(int status, char *buf, size_t size)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "IBV_WC_SUCCESS",
		[IBV_WC_LOC_LEN_ERR] = "IBV_WC_LOC_LEN_ERR",
		[IBV_WC_LOC_QP_OP_ERR] = "IBV_WC_LOC_QP_OP_ERR",
		[IBV_WC_LOC_EEC_OP_ERR] = "IBV_WC_LOC_EEC_OP_ERR",
		[IBV_WC_LOC_PROT_ERR] = "IBV_WC_LOC_PROT_ERR",
		[IBV_WC_WR_FLUSH_ERR] = "IBV_WC_WR_FLUSH_ERR",
		[IBV_WC_MW_BIND_ERR] = "IBV_WC_MW_BIND_ERR",
		[IBV_WC_BAD_RESP_ERR] = "IBV_WC_BAD_RESP_ERR",
		[IBV_WC_LOC_ACCESS_ERR] = "IBV_WC_LOC_ACCESS_ERR",
		[IBV_WC_REM_INV_REQ_ERR] = "IBV_WC_REM_INV_REQ_ERR",
		[IBV_WC_REM_ACCESS_ERR] = "IBV_WC_REM_ACCESS_ERR",
		[IBV_WC_REM_OP_ERR] = "IBV_WC_REM_OP_ERR",
		[IBV_WC_RETRY_EXC_ERR] = "IBV_WC_RETRY_EXC_ERR",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "IBV_WC_RNR_RETRY_EXC_ERR",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "IBV_WC_LOC_RDD_VIOL_ERR",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "IBV_WC_REM_INV_RD_REQ_ERR",
		[IBV_WC_REM_ABORT_ERR] = "IBV_WC_REM_ABORT_ERR",
		[IBV_WC_INV_EECN_ERR] = "IBV_WC_INV_EECN_ERR",
		[IBV_WC_INV_EEC_STATE_ERR] = "IBV_WC_INV_EEC_STATE_ERR",
		[IBV_WC_FATAL_ERR] = "IBV_WC_FATAL_ERR",
		[IBV_WC_RESP_TIMEOUT_ERR] = "IBV_WC_RESP_TIMEOUT_ERR",
		[IBV_WC_GENERAL_ERR] = "IBV_WC_GENERAL_ERR",
		[IBV_WC_TM_ERR] = "IBV_WC_TM_ERR",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "IBV_WC_TM_RNDV_INCOMPLETE",
	};
	if (status >= 0 && (size_t)status < sizeof(names) / sizeof(names[0]))
		return names[status];
	snprintf(buf, size, "IBV_WC_%d", status);
	return buf;
}

const char *verbs_port_state_name(int state)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };
	return state >= 0 && state <= IBV_PORT_ACTIVE_DEFER ? names[state] : "UNKNOWN";
}
