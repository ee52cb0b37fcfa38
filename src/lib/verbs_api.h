/* The libibverbs subset gpuready calls, loaded at run time: the RDMA
 * kernels of `gpuready bench net` (src/bench/net/rdma.c), the live port
 * query of the inventory (src/inventory/verbs.c) and the GPUDirect
 * registration probe (src/inventory/gdr_probe.c).
 *
 * libibverbs.so.1 comes with rdma-core on the machine that runs gpuready,
 * never with the build: <infiniband/verbs.h> is not included. The types
 * below mirror rdma-core 44's libibverbs/verbs.h field for field (Debian
 * 12's libibverbs-dev 44.0-2); tests/unit/test_verbs_abi.c, built where
 * the real header is installed, checks every struct's size and every
 * field's offset and size, and every enum value, against it. The layouts
 * are the library's ABI (soname 1), which rdma-core keeps stable: new
 * fields only ever go into the extended structs (verbs_context,
 * ibv_qp_ex...), which gpuready does not use.
 *
 * Symbols are looked up with dlvsym at the version rdma-core 44 exports as
 * the default (libibverbs/libibverbs.map.in): IBVERBS_1.1 for the base
 * verbs (IBVERBS_1.0 holds the compat symbols of libibverbs 1.0's
 * layouts, which these structs are not), IBVERBS_1.12 for
 * ibv_reg_dmabuf_mr (rdma-core v34+, optional). ibv_reg_mr is a real
 * export at IBVERBS_1.1; verbs.h only turns it into ibv_reg_mr_iova2
 * (IBVERBS_1.8) for the optional access flags (RELAXED_ORDERING), which
 * gpuready does not pass.
 *
 * ibv_post_send, ibv_post_recv and ibv_poll_cq are not exported: verbs.h
 * defines them as static inline calls through ctx->ops, and so does this
 * header. ibv_query_port is exported, but verbs.h wraps it: the export
 * fills only the older struct _compat_ibv_port_attr (rdma-core libibverbs/verbs.h, ibv_query_port), so
 * call it through verbs_query_port(), which passes a zeroed, oversized
 * buffer and keeps only the compat fields. */
#ifndef GPUREADY_VERBS_API_H
#define GPUREADY_VERBS_API_H

#include "core/dl.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* ---- enums (values as verbs.h) ---- */

enum ibv_mtu {
	IBV_MTU_256 = 1,
	IBV_MTU_512 = 2,
	IBV_MTU_1024 = 3,
	IBV_MTU_2048 = 4,
	IBV_MTU_4096 = 5
};

enum ibv_port_state {
	IBV_PORT_NOP = 0,
	IBV_PORT_DOWN = 1,
	IBV_PORT_INIT = 2,
	IBV_PORT_ARMED = 3,
	IBV_PORT_ACTIVE = 4,
	IBV_PORT_ACTIVE_DEFER = 5
};

/* struct ibv_port_attr.link_layer */
enum {
	IBV_LINK_LAYER_UNSPECIFIED,
	IBV_LINK_LAYER_INFINIBAND,
	IBV_LINK_LAYER_ETHERNET,
};

enum ibv_atomic_cap {
	IBV_ATOMIC_NONE,
	IBV_ATOMIC_HCA,
	IBV_ATOMIC_GLOB
};

/* The access flags gpuready uses (ibv_reg_dmabuf_mr accepts these four
 * and RELAXED_ORDERING; ibv_reg_mr(3)). */
enum ibv_access_flags {
	IBV_ACCESS_LOCAL_WRITE = 1,
	IBV_ACCESS_REMOTE_WRITE = (1 << 1),
	IBV_ACCESS_REMOTE_READ = (1 << 2),
	IBV_ACCESS_REMOTE_ATOMIC = (1 << 3),
};

enum ibv_qp_type {
	IBV_QPT_RC = 2,
	IBV_QPT_UC,
	IBV_QPT_UD,
};

enum ibv_qp_state {
	IBV_QPS_RESET,
	IBV_QPS_INIT,
	IBV_QPS_RTR,
	IBV_QPS_RTS,
	IBV_QPS_SQD,
	IBV_QPS_SQE,
	IBV_QPS_ERR,
	IBV_QPS_UNKNOWN
};

enum ibv_mig_state {
	IBV_MIG_MIGRATED,
	IBV_MIG_REARM,
	IBV_MIG_ARMED
};

enum ibv_qp_attr_mask {
	IBV_QP_STATE = 1 << 0,
	IBV_QP_CUR_STATE = 1 << 1,
	IBV_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	IBV_QP_ACCESS_FLAGS = 1 << 3,
	IBV_QP_PKEY_INDEX = 1 << 4,
	IBV_QP_PORT = 1 << 5,
	IBV_QP_QKEY = 1 << 6,
	IBV_QP_AV = 1 << 7,
	IBV_QP_PATH_MTU = 1 << 8,
	IBV_QP_TIMEOUT = 1 << 9,
	IBV_QP_RETRY_CNT = 1 << 10,
	IBV_QP_RNR_RETRY = 1 << 11,
	IBV_QP_RQ_PSN = 1 << 12,
	IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	IBV_QP_ALT_PATH = 1 << 14,
	IBV_QP_MIN_RNR_TIMER = 1 << 15,
	IBV_QP_SQ_PSN = 1 << 16,
	IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	IBV_QP_PATH_MIG_STATE = 1 << 18,
	IBV_QP_CAP = 1 << 19,
	IBV_QP_DEST_QPN = 1 << 20,
	IBV_QP_RATE_LIMIT = 1 << 25,
};

enum ibv_wr_opcode {
	IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_SEND,
	IBV_WR_SEND_WITH_IMM,
	IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP,
	IBV_WR_ATOMIC_FETCH_AND_ADD,
	IBV_WR_LOCAL_INV,
	IBV_WR_BIND_MW,
	IBV_WR_SEND_WITH_INV,
	IBV_WR_TSO,
	IBV_WR_DRIVER1,
	IBV_WR_ATOMIC_WRITE = 15,
};

enum ibv_send_flags {
	IBV_SEND_FENCE = 1 << 0,
	IBV_SEND_SIGNALED = 1 << 1,
	IBV_SEND_SOLICITED = 1 << 2,
	IBV_SEND_INLINE = 1 << 3,
	IBV_SEND_IP_CSUM = 1 << 4
};

enum ibv_wc_status {
	IBV_WC_SUCCESS,
	IBV_WC_LOC_LEN_ERR,
	IBV_WC_LOC_QP_OP_ERR,
	IBV_WC_LOC_EEC_OP_ERR,
	IBV_WC_LOC_PROT_ERR,
	IBV_WC_WR_FLUSH_ERR,
	IBV_WC_MW_BIND_ERR,
	IBV_WC_BAD_RESP_ERR,
	IBV_WC_LOC_ACCESS_ERR,
	IBV_WC_REM_INV_REQ_ERR,
	IBV_WC_REM_ACCESS_ERR,
	IBV_WC_REM_OP_ERR,
	IBV_WC_RETRY_EXC_ERR,
	IBV_WC_RNR_RETRY_EXC_ERR,
	IBV_WC_LOC_RDD_VIOL_ERR,
	IBV_WC_REM_INV_RD_REQ_ERR,
	IBV_WC_REM_ABORT_ERR,
	IBV_WC_INV_EECN_ERR,
	IBV_WC_INV_EEC_STATE_ERR,
	IBV_WC_FATAL_ERR,
	IBV_WC_RESP_TIMEOUT_ERR,
	IBV_WC_GENERAL_ERR,
	IBV_WC_TM_ERR,
	IBV_WC_TM_RNDV_INCOMPLETE,
};

/* The completion opcodes gpuready tells apart (the enum goes on with tag
 * matching and driver values, which keep it int-sized). */
enum ibv_wc_opcode {
	IBV_WC_SEND,
	IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_READ,
	IBV_WC_COMP_SWAP,
	IBV_WC_FETCH_ADD,
	IBV_WC_BIND_MW,
	IBV_WC_LOCAL_INV,
	IBV_WC_TSO,
	IBV_WC_ATOMIC_WRITE = 9,
	/* a receive when (opcode & IBV_WC_RECV) */
	IBV_WC_RECV = 1 << 7,
	IBV_WC_RECV_RDMA_WITH_IMM,
};

enum ibv_wc_flags {
	IBV_WC_GRH = 1 << 0,
	IBV_WC_WITH_IMM = 1 << 1,
	IBV_WC_IP_CSUM_OK = 1 << 2,
	IBV_WC_WITH_INV = 1 << 3,
};

/* ---- structs (layouts as verbs.h; __be* fields as uintN_t) ---- */

/* Only passed back to the library, or only reached through pointers. */
struct ibv_device;
struct ibv_comp_channel;
struct ibv_srq;
struct ibv_ah;
struct ibv_mw;
struct ibv_mw_bind;
struct ibv_context;

union ibv_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix; /* big endian */
		uint64_t interface_id;  /* big endian */
	} global;
};

struct ibv_device_attr {
	char fw_ver[64];
	uint64_t node_guid;             /* big endian */
	uint64_t sys_image_guid;        /* big endian */
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	int max_qp;
	int max_qp_wr;
	unsigned int device_cap_flags;
	int max_sge;
	int max_sge_rd;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;             /* RDMA reads this end can answer at once, per QP */
	int max_ee_rd_atom;
	int max_res_rd_atom;
	int max_qp_init_rd_atom;        /* RDMA reads this end can have outstanding, per QP */
	int max_ee_init_rd_atom;
	enum ibv_atomic_cap atomic_cap;
	int max_ee;
	int max_rdd;
	int max_mw;
	int max_raw_ipv6_qp;
	int max_raw_ethy_qp;
	int max_mcast_grp;
	int max_mcast_qp_attach;
	int max_total_mcast_qp_attach;
	int max_ah;
	int max_fmr;
	int max_map_per_fmr;
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint8_t phys_port_cnt;
};

/* rdma-core 44's full layout. The exported ibv_query_port fills the
 * fields up to `flags` (the compat layout); use verbs_query_port(). */
struct ibv_port_attr {
	enum ibv_port_state state;
	enum ibv_mtu max_mtu;
	enum ibv_mtu active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
	uint16_t port_cap_flags2;       /* not filled by the exported symbol: 0 */
};

struct ibv_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	union {
		uint32_t imm_data;      /* network byte order */
		uint32_t invalidated_rkey;
	};
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
};

struct ibv_pd {
	struct ibv_context *context;
	uint32_t handle;
};

struct ibv_mr {
	struct ibv_context *context;
	struct ibv_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

struct ibv_mw_bind_info {
	struct ibv_mr *mr;
	uint64_t addr;
	uint64_t length;
	unsigned int mw_access_flags;
};

struct ibv_global_route {
	union ibv_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

struct ibv_ah_attr {
	struct ibv_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
};

struct ibv_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct ibv_cq;

struct ibv_qp_init_attr {
	void *qp_context;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
};

struct ibv_qp_attr {
	enum ibv_qp_state qp_state;
	enum ibv_qp_state cur_qp_state;
	enum ibv_mtu path_mtu;
	enum ibv_mig_state path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	unsigned int qp_access_flags;
	struct ibv_qp_cap cap;
	struct ibv_ah_attr ah_attr;
	struct ibv_ah_attr alt_ah_attr;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint32_t rate_limit;
};

struct ibv_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct ibv_send_wr {
	uint64_t wr_id;
	struct ibv_send_wr *next;
	struct ibv_sge *sg_list;
	int num_sge;
	enum ibv_wr_opcode opcode;
	unsigned int send_flags;
	union {
		uint32_t imm_data;      /* network byte order */
		uint32_t invalidate_rkey;
	};
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct ibv_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
	} wr;
	union {
		struct {
			uint32_t remote_srqn;
		} xrc;
	} qp_type;
	union {
		struct {
			struct ibv_mw *mw;
			uint32_t rkey;
			struct ibv_mw_bind_info bind_info;
		} bind_mw;
		struct {
			void *hdr;
			uint16_t hdr_sz;
			uint16_t mss;
		} tso;
	};
};

struct ibv_recv_wr {
	uint64_t wr_id;
	struct ibv_recv_wr *next;
	struct ibv_sge *sg_list;
	int num_sge;
};

struct ibv_qp {
	struct ibv_context *context;
	void *qp_context;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
	enum ibv_qp_state state;
	enum ibv_qp_type qp_type;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
};

struct ibv_cq {
	struct ibv_context *context;
	struct ibv_comp_channel *channel;
	void *cq_context;
	uint32_t handle;
	int cqe;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t comp_events_completed;
	uint32_t async_events_completed;
};

/* The legacy op table every provider fills; the three data-path entries
 * are what verbs.h's inline ibv_post_send/ibv_post_recv/ibv_poll_cq call.
 * The _compat_ slots are kept as pointers of any kind: only their size
 * matters here. */
struct ibv_context_ops {
	void *_compat_query_device;
	void *_compat_query_port;
	void *_compat_alloc_pd;
	void *_compat_dealloc_pd;
	void *_compat_reg_mr;
	void *_compat_rereg_mr;
	void *_compat_dereg_mr;
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, int type);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
	int (*dealloc_mw)(struct ibv_mw *mw);
	void *_compat_create_cq;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	void *_compat_cq_event;
	void *_compat_resize_cq;
	void *_compat_destroy_cq;
	void *_compat_create_srq;
	void *_compat_modify_srq;
	void *_compat_query_srq;
	void *_compat_destroy_srq;
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr, struct ibv_recv_wr **bad_recv_wr);
	void *_compat_create_qp;
	void *_compat_query_qp;
	void *_compat_modify_qp;
	void *_compat_destroy_qp;
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
	void *_compat_create_ah;
	void *_compat_destroy_ah;
	void *_compat_attach_mcast;
	void *_compat_detach_mcast;
	void *_compat_async_event;
};

struct ibv_context {
	struct ibv_device *device;
	struct ibv_context_ops ops;
	int cmd_fd;
	int async_fd;
	int num_comp_vectors;
	pthread_mutex_t mutex;
	void *abi_compat;
};

/* ---- the data path, as verbs.h defines it (static inline) ---- */

static inline int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return qp->context->ops.post_send(qp, wr, bad_wr);
}

static inline int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return qp->context->ops.post_recv(qp, wr, bad_wr);
}

/* Returns the number of completions (0 .. num_entries) or < 0. */
static inline int ibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	return cq->context->ops.poll_cq(cq, num_entries, wc);
}

/* ---- the exported entry points ---- */

/* Filled by verbs_api_load(). Verbs return NULL or a nonzero value on
 * failure with errno set (ibv_dereg_mr, ibv_modify_qp and the destroy
 * verbs return the errno itself). */
struct verbs_api {
	/* required, IBVERBS_1.1 */
	struct ibv_device **(*get_device_list)(int *num);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *dev);
	struct ibv_context *(*open_device)(struct ibv_device *dev);
	int (*close_device)(struct ibv_context *ctx);
	int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
	/* the compat layout: call verbs_query_port() instead */
	int (*query_port)(struct ibv_context *ctx, uint8_t port, void *compat_attr);
	int (*query_gid)(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	int (*destroy_qp)(struct ibv_qp *qp);
	/* optional, IBVERBS_1.12 (rdma-core v34+): NULL when older */
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
					int access);
};

/* Opens `file` (NULL: the soname "libibverbs.so.1"; a path loads that
 * file, as tests do with their stand-in) into *api (zeroed first). Returns
 * 0 or the dl_open() error with lib->error saying why; the caller calls
 * dl_close(lib) either way. */
int verbs_api_load(struct dl_lib *lib, struct verbs_api *api, const char *file);

/* The symbol table verbs_api_load() resolves (names and symbol versions),
 * for the tests that hold it against the real library: *n entries. */
const struct dl_sym *verbs_api_symbols(size_t *n);

/* ibv_query_port through the exported symbol: a zeroed buffer larger than
 * any layout is passed, and only the compat fields (state ... flags) are
 * copied into *out; port_cap_flags2 stays 0. Returns 0 or the verb's
 * nonzero result (an errno). */
int verbs_query_port(const struct verbs_api *api, struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *out);

/* enum ibv_mtu <-> bytes: 0 / -1 when out of range. verbs_mtu_from_bytes
 * takes the largest MTU not above `bytes` (256 ... 4096). */
int verbs_mtu_bytes(int mtu);
int verbs_mtu_from_bytes(int bytes);

/* "IBV_WC_RETRY_EXC_ERR"; "IBV_WC_<n>" for unknown values (buf holds
 * those; 24 bytes suffice). */
const char *verbs_wc_status_name(int status, char *buf, size_t size);
/* "ACTIVE", "DOWN", ...; "UNKNOWN" */
const char *verbs_port_state_name(int state);

#endif
