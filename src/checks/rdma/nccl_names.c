/* rdma.nccl_names: every NCCL_* name set is one NCCL reads.
 *
 * NCCL ignores names it does not know without a word, so a typo silently
 * loses the setting. Names are checked against the variables NCCL core
 * reads (docs/nccl-variables.md, from the NCCL sources 2.20-2.31 and the
 * env.html reference):
 *   - renamed or removed names (NCCL_IB_GDR_LEVEL became NCCL_NET_GDR_LEVEL
 *     in 2.4.0; NCCL_IB_CUDA_SUPPORT was removed in 2.4.0; ...): warn with
 *     the name to use;
 *   - names PyTorch reads (NCCL_ASYNC_ERROR_HANDLING...): ok, with a note;
 *   - a name with whitespace (an nccl.conf line "NCCL_X = 1" defines the
 *     name "NCCL_X "): warn;
 *   - a near miss of a known name (edit distance <= 2): warn, "did you mean";
 *   - anything else: ok with a note (a network plugin or a newer NCCL may
 *     read it). */
#include "checks/check.h"
#include "common.h"
#include "core/parse.h"

#include <ctype.h>
#include <string.h>

/* Names without the NCCL_ prefix. */
static const char *const known[] = {
	"ALGO", "ALLOC_P2P_NET_LL_BUFFERS", "BUFFSIZE", "CGA_CLUSTER_SIZE", "CHECK_MODE", "CHECK_POINTERS",
	"COLLNET_ENABLE", "COLLNET_NODE_THRESHOLD", "COMM_BLOCKING", "COMM_ID", "COMM_SHRINK_SHARE_RESOURCES",
	"COMM_SPLIT_SHARE_RESOURCES", "CONF_FILE", "CROSS_NIC", "CTA_POLICY", "CUMEM_ENABLE", "CUMEM_HOST_ENABLE",
	"DEBUG", "DEBUG_FILE", "DEBUG_SUBSYS", "DEBUG_TIMESTAMP_FORMAT", "DEBUG_TIMESTAMP_LEVELS", "DMABUF_ENABLE",
	"ENV_PLUGIN", "GDRCOPY_ENABLE", "GDRCOPY_FIFO_ENABLE", "GDRCOPY_FLUSH_ENABLE", "GDRCOPY_SYNC_ENABLE",
	"GDR_FLUSH_DISABLE", "GRAPH_DUMP_FILE", "GRAPH_DUMP_FILE_RANK", "GRAPH_FILE", "GRAPH_HELPER_DISABLE",
	"GRAPH_MIXING_SUPPORT", "GRAPH_REGISTER", "GRAPH_STREAM_ORDERING", "GROUP_CUDA_STREAM", "HOSTID",
	"IB_ADAPTIVE_ROUTING", "IB_ADDR_FAMILY", "IB_ADDR_RANGE", "IB_AR_THRESHOLD", "IB_DATA_DIRECT", "IB_DISABLE",
	"IB_ECE_ENABLE", "IB_FIFO_TC", "IB_GID_INDEX", "IB_HCA", "IB_MERGE_NICS", "IB_MERGE_VFS", "IB_OOO_RQ",
	"IB_PCI_RELAXED_ORDERING", "IB_PKEY", "IB_PKEY_VALUE", "IB_QPS_PER_CONNECTION", "IB_RETRY_CNT",
	"IB_RETURN_ASYNC_EVENTS", "IB_ROCE_VERSION_NUM", "IB_ROUTABLE_FLID_GID_INDEX", "IB_SL",
	"IB_SPLIT_DATA_ON_QPS", "IB_SUBNET_AWARE_ROUTING", "IB_SUBNET_PREFIX_LEN", "IB_TC", "IB_TIMEOUT",
	"IB_USE_INLINE", "IB_WARN_RAIL_LOCAL", "IGNORE_COLLNET_MISMATCH", "IGNORE_CPU_AFFINITY",
	"IGNORE_DISABLED_P2P", "IGNORE_NET_MISMATCH", "IPC_USE_ABSTRACT_SOCKET", "LAUNCH_MODE",
	"LAUNCH_ORDER_IMPLICIT", "LAUNCH_RACE_FATAL", "LEGACY_CUDA_REGISTER", "LL128_BUFFSIZE", "LL128_C2C",
	"LL128_NTHREADS", "LL_BUFFSIZE", "LOCAL_REGISTER", "MAX_CTAS", "MAX_NCHANNELS", "MAX_NRINGS",
	"MAX_P2P_NCHANNELS", "MEM_SYNC_DOMAIN", "MIN_CTAS", "MIN_NCHANNELS", "MIN_NRINGS", "MIN_P2P_NCHANNELS",
	"MNNVL_CLIQUE_ID", "MNNVL_ENABLE", "MNNVL_UUID", "MULTI_RANK_GPU_ENABLE", "NCHANNELS_PER_NET_PEER", "NET",
	"NETDEVS_POLICY", "NET_DISABLE_INTRA", "NET_FORCE_FLUSH", "NET_FORCE_MERGE", "NET_GDR_C2C", "NET_GDR_LEVEL",
	"NET_GDR_READ", "NET_MERGE_LEVEL", "NET_MERGE_POLICY", "NET_OPTIONAL_RECV_COMPLETION", "NET_OVERHEAD",
	"NET_PLUGIN", "NET_PLUGIN_REF_COUNT", "NET_SHARED_BUFFERS", "NET_SHARED_COMMS", "NO_CACHE",
	"NSOCKS_PERTHREAD", "NTHREADS", "NUM_RMA_CTX", "NVB_DISABLE", "NVB_PRECONNECT",
	"NVLINK_UTIL_CENTRIC_SCHED_ENABLE", "NVLS_CHUNKSIZE", "NVLS_ENABLE", "NVLS_NCHANNELS", "OOB_NET_ENABLE",
	"OOB_NET_IFNAME", "P2P_DIRECT_DISABLE", "P2P_DISABLE", "P2P_LEVEL", "P2P_LL_THRESHOLD", "P2P_NET_CHUNKSIZE",
	"P2P_NVL_CHUNKSIZE", "P2P_PCI_CHUNKSIZE", "P2P_PER_CHANNEL_NET_BW", "P2P_PXN_LEVEL", "P2P_READ_ENABLE",
	"P2P_SCHEDULE_GROUP_SIZE", "P2P_USE_CUDA_MEMCPY", "PAT_ENABLE", "PROFILER_PLUGIN", "PROTO", "PXN_C2C",
	"PXN_DISABLE", "RAS_ADDR", "RAS_ENABLE", "RAS_TIMEOUT_FACTOR", "RUNTIME_CONNECT", "SET_CPU_STACK_SIZE",
	"SET_STACK_SIZE", "SET_THREAD_NAME", "SHM_DISABLE", "SHM_LOCALITY", "SHM_MEMCPY_MODE",
	"SHM_USE_CUDA_MEMCPY", "SOCKET_FAMILY", "SOCKET_IFNAME", "SOCKET_INLINE", "SOCKET_MAGIC",
	"SOCKET_MIN_TASKSIZE", "SOCKET_NTHREADS", "SOCKET_POLL_TIMEOUT_MSEC", "SOCKET_RCVBUF", "SOCKET_RETRY_CNT",
	"SOCKET_RETRY_SLEEP_MSEC", "SOCKET_SNDBUF", "SYM_GIN_KERNELS_ENABLE", "THREAD_THRESHOLDS", "TOPO_DUMP_FILE",
	"TOPO_DUMP_FILE_RANK", "TOPO_FILE", "TUNER_PLUGIN", "UID_STAGGER_RATE", "UID_STAGGER_THRESHOLD",
	"UNPACK_DOUBLE_NCHANNELS", "WARN_ENABLE_DEBUG_INFO", "WIN_ENABLE", "WORK_ARGS_BYTES", "WORK_FIFO_BYTES",
};

static const struct {
	const char *name;
	const char *use; /* replacement, or NULL */
	const char *why;
} retired[] = {
	{ "NCCL_IB_GDR_LEVEL", "NCCL_NET_GDR_LEVEL", "renamed to NCCL_NET_GDR_LEVEL in NCCL 2.4.0" },
	{ "NCCL_IB_CUDA_SUPPORT", "NCCL_NET_GDR_LEVEL", "removed in NCCL 2.4.0" },
	{ "NCCL_CHECKS_DISABLE", "NCCL_CHECK_POINTERS", "deprecated in NCCL 2.2.12" },
	{ "NCCL_CHECK_DISABLE", "NCCL_CHECK_POINTERS", "never an NCCL name (NCCL_CHECKS_DISABLE was, until 2.2.12)" },
	{ "NCCL_SINGLE_RING_THRESHOLD", NULL, "removed in NCCL 2.3" },
	{ "NCCL_LL_THRESHOLD", "NCCL_PROTO", "removed in NCCL 2.5" },
	{ "NCCL_TREE_THRESHOLD", "NCCL_ALGO", "removed in NCCL 2.5" },
	{ "NCCL_RINGS", NULL, "documented only up to NCCL 2.3; not read by current NCCL" },
	{ "NCCL_WORK_FIFO_DEPTH", "NCCL_WORK_FIFO_BYTES", "replaced by NCCL_WORK_FIFO_BYTES in NCCL 2.22" },
	{ "NCCL_MAX_P2P_CHANNELS", "NCCL_MAX_P2P_NCHANNELS", "not an NCCL name" },
	{ "NCCL_IB_IFNAME", "NCCL_IB_HCA", "not an NCCL name (IB devices are chosen with NCCL_IB_HCA, sockets with "
					   "NCCL_SOCKET_IFNAME)" },
	{ "NCCL_IB_ENABLE_RDMA", "NCCL_IB_DISABLE", "not an NCCL name" },
	{ "NCCL_TIMEOUT", "NCCL_IB_TIMEOUT", "not an NCCL name (PyTorch's timeout is an argument of "
					    "init_process_group)" },
};

static const char *const pytorch[] = { "NCCL_ASYNC_ERROR_HANDLING", "NCCL_BLOCKING_WAIT", "NCCL_DESYNC_DEBUG" };

static bool is_known(const char *name)
{
	if (!str_startswith(name, "NCCL_"))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(name + 5, known[i]))
			return true;
	return false;
}

/* The closest known name within edit distance 2, or NULL. */
static const char *near_miss(const char *name, char *buf, size_t size)
{
	struct str_nearest n = STR_NEAREST_INIT(str_startswith(name, "NCCL_") ? name + 5 : name);
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		str_nearest_offer(&n, known[i]);
	if (!n.best)
		return NULL;
	snprintf(buf, size, "NCCL_%s", n.best);
	return buf;
}

static bool has_space(const char *s)
{
	for (; *s; s++)
		if (isspace((unsigned char)*s))
			return true;
	return false;
}

static void one(struct check_ctx *c, const struct nccl_var *v)
{
	struct finding *f;
	char buf[256];
	for (size_t i = 0; i < ARRAY_SIZE(retired); i++)
		if (!strcmp(v->name, retired[i].name)) {
			f = check_add(c, STATUS_WARN, v->name, "=%s (%s): %s; current NCCL ignores it", v->value,
				      v->source, retired[i].why);
			if (retired[i].use)
				finding_hint(f, "use %s instead (check its values: see rdma.nccl_levels for GDR levels)",
					     retired[i].use);
			else
				finding_hint(f, "remove it from %s", v->source);
			return;
		}
	for (size_t i = 0; i < ARRAY_SIZE(pytorch); i++)
		if (!strcmp(v->name, pytorch[i])) {
			check_add(c, STATUS_OK, v->name, "=%s (%s): read by PyTorch (alias of TORCH_%s), not by NCCL",
				  v->value, v->source, v->name);
			return;
		}
	if (is_known(v->name))
		return;
	if (has_space(v->name)) {
		char *copy = xstrdup(v->name);
		f = check_add(c, STATUS_WARN, str_trim(copy), "is defined with whitespace in its name ('%s', %s): NCCL "
							      "looks up the exact name and never sees it",
			      v->name, v->source);
		finding_hint(f, "write NAME=value with no spaces around '=' in %s", v->source);
		free(copy);
		return;
	}
	const char *near = near_miss(v->name, buf, sizeof(buf));
	if (near) {
		f = check_add(c, STATUS_WARN, v->name, "=%s (%s) is not a variable NCCL reads; did you mean %s?",
			      v->value, v->source, near);
		char place[256];
		finding_hint(f, "rename it to %s in %s", near, nccl_var_place(v, place, sizeof(place)));
		return;
	}
	check_add(c, STATUS_OK, v->name, "=%s (%s) is not read by NCCL core; a network plugin or a newer NCCL may "
					 "read it",
		  v->value, v->source);
}

static int run(struct check_ctx *c)
{
	const struct nccl_config *nc = &c->inv->nccl;
	size_t before = c->report->n;
	for (size_t i = 0; i < nc->n; i++)
		one(c, &nc->v[i]);
	if (c->report->n == before)
		check_add(c, STATUS_OK, SUBJECT_NODE, "%zu NCCL_* variable%s set, all names NCCL reads", nc->n,
			  nc->n == 1 ? "" : "s");
	return 0;
}

const struct check_def check_rdma_nccl_names = {
	.id = "rdma.nccl_names",
	.section = "NCCL Configuration",
	.summary = "NCCL_* names are ones NCCL reads: no typos, retired names or names with spaces",
	.run = run,
	.nccl_vars = true,
};
