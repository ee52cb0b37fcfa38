/* bench copy's engine, the setup and the two ends of the deadline: the
 * child loads libcuda, opens every GPU (primary context, the kernels
 * loaded before any test as nvbandwidth preloads them, two device
 * buffers, two pinned host buffers on the GPU's NUMA node), enables peer
 * access, runs the tests and sends each result as it is done; the parent
 * collects what arrived and, when a step overran, names it (engine.h). */
#define _GNU_SOURCE
#include "engine_int.h"

#include "bench/copy/kernels.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* linux/mempolicy.h */
#define CE_MPOL_DEFAULT 0
#define CE_MPOL_PREFERRED 1
#define CE_MPOL_BIND 2
#define CE_MAX_NODES 1024
#define CE_LONG_BITS (8 * sizeof(unsigned long))
#define CE_MASK_LONGS (CE_MAX_NODES / CE_LONG_BITS)

static int ce_setup_fail(struct ce_engine *e, int gi, const char *fn, CUresult r)
{
	char msg[256], bdf[sizeof(e->out->gpus[0].bdf)] = "";
	cuda_api_format(&e->cu, fn, r, msg, sizeof(msg));
	if (gi < 0) {
		snprintf(e->out->error, sizeof(e->out->error), "%s", msg);
		return -1;
	}
	/* a copy: the address lives in the same struct as the message */
	memcpy(bdf, e->out->gpus[gi].bdf, sizeof(bdf) - 1);
	snprintf(e->out->error, sizeof(e->out->error), "GPU %d (%s): %s", e->out->gpus[gi].ordinal, bdf, msg);
	return -1;
}

#define SETUP_CALL(e, gi, fn, expr)                                                                    \
	do {                                                                                           \
		ce_step(e, gi, fn);                                                                    \
		CUresult r_ = (expr);                                                                  \
		if (r_ != CUDA_SUCCESS)                                                                \
			return ce_setup_fail(e, gi, fn, r_);                                           \
	} while (0)

/* The node of a GPU by its PCI address (the plan's table from sysfs). */
static int ce_node_of(const struct copy_plan *p, const char *bdf)
{
	for (int i = 0; i < p->n_nodes; i++)
		if (!strcasecmp(p->node_bdf[i], bdf))
			return p->node_of[i];
	return -1;
}

/* Sets mode (MPOL_PREFERRED or MPOL_BIND) on node for the calling thread
 * (set_mempolicy(2)), having saved the policy it had into *old_mode /
 * old. Returns 0 or -errno. */
static int ce_bind(int mode, int node, int *old_mode, unsigned long *old)
{
	unsigned long mask[CE_MASK_LONGS] = { 0 };

	if (syscall(SYS_get_mempolicy, old_mode, old, (unsigned long)CE_MAX_NODES, NULL, 0ul) < 0)
		return -errno;
	mask[node / CE_LONG_BITS] |= 1ul << (node % CE_LONG_BITS);
	/* set_mempolicy reads maxnode - 1 bits (mm/mempolicy.c get_nodes) */
	if (syscall(SYS_set_mempolicy, mode, mask, (unsigned long)CE_MAX_NODES + 1) < 0)
		return -errno;
	return 0;
}

/* Puts back the policy ce_bind saved; if that fails, the default, so that
 * no later allocation stays bound. */
static void ce_unbind(int mode, const unsigned long *old)
{
	if (syscall(SYS_set_mempolicy, mode, mode == CE_MPOL_DEFAULT ? NULL : old, (unsigned long)CE_MAX_NODES + 1) < 0)
		syscall(SYS_set_mempolicy, CE_MPOL_DEFAULT, NULL, 0ul);
}

/* cuMemHostAlloc with the thread's policy set to node, restored after;
 * node < 0 allocates under the policy in force. A GPU's own node is
 * MPOL_PREFERRED: the kernel takes pages elsewhere rather than fail or
 * invoke the OOM killer when that node is short of memory, as a first
 * touch under nvbandwidth's CPU affinity would; a node that cannot be
 * preferred (without memory: EINVAL) leaves the policy in force, with a
 * note. A node named by --numa is MPOL_BIND (that node or nothing) and
 * one that cannot be bound is an error. */
static int ce_host_alloc(struct ce_engine *e, int gi, int node, void **p)
{
	unsigned long old[CE_MASK_LONGS] = { 0 };
	int forced = e->plan->numa >= 0, old_mode = CE_MPOL_DEFAULT;
	int err = node >= CE_MAX_NODES ? -EINVAL
		  : node >= 0	       ? ce_bind(forced ? CE_MPOL_BIND : CE_MPOL_PREFERRED, node, &old_mode, old)
					: 0;
	struct copy_engine_gpu *o = &e->out->gpus[gi];

	if (err < 0 && (forced || err != -EINVAL)) {
		snprintf(e->out->error, sizeof(e->out->error),
			 "set_mempolicy(%s, node %d) for GPU %d's host buffers: %s%s", forced ? "MPOL_BIND" : "MPOL_PREFERRED",
			 node, o->ordinal, strerror(-err), err == -EINVAL ? " (a node without memory, or none by that number)" : "");
		return -1;
	}
	if (err < 0) {
		snprintf(o->numa_note, sizeof(o->numa_note),
			 "set_mempolicy cannot prefer NUMA node %d (no memory there, or not online): host buffers "
			 "under the default policy",
			 node);
		node = -1;
	}
	ce_step(e, gi, "cuMemHostAlloc");
	CUresult r = e->cu.mem_host_alloc(p, e->bytes, CU_MEMHOSTALLOC_PORTABLE);
	if (node >= 0)
		ce_unbind(old_mode, old);
	if (r != CUDA_SUCCESS) {
		ce_setup_fail(e, gi, "cuMemHostAlloc", r);
		size_t len = strlen(e->out->error);
		snprintf(e->out->error + len, sizeof(e->out->error) - len, " (%llu MiB of pinned host memory%s)",
			 (unsigned long long)e->plan->size_mib, node >= 0 ? " on the NUMA node" : "");
		return -1;
	}
	o->numa_node = node;
	return 0;
}

static int ce_gpu_facts(struct ce_engine *e, int gi, int ordinal)
{
	struct ce_gpu *g = &e->g[gi];
	struct copy_engine_gpu *o = &e->out->gpus[gi];
	int khz = 0;

	o->ordinal = ordinal;
	o->numa_node = -1;
	snprintf(o->bdf, sizeof(o->bdf), "GPU %d", ordinal);
	SETUP_CALL(e, gi, "cuDeviceGet", e->cu.device_get(&g->dev, ordinal));
	SETUP_CALL(e, gi, "cuDeviceGetPCIBusId", e->cu.device_get_pci_bus_id(o->bdf, (int)sizeof(o->bdf), g->dev));
	for (char *c = o->bdf; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	SETUP_CALL(e, gi, "cuDeviceGetName", e->cu.device_get_name(o->name, (int)sizeof(o->name), g->dev));
	SETUP_CALL(e, gi, "cuDeviceGetAttribute",
		   e->cu.device_get_attribute(&g->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->dev));
	SETUP_CALL(e, gi, "cuDeviceGetAttribute",
		   e->cu.device_get_attribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, g->dev));
	if (g->sms <= 0)
		g->sms = 1;
	g->spin_clocks = (unsigned long long)(khz > 0 ? khz : 2000000) * COPY_SPIN_TIMEOUT_MS;
	return 0;
}

/* One device buffer; a failure says how large it was. */
static int ce_dev_alloc(struct ce_engine *e, int gi, CUdeviceptr *p)
{
	ce_step(e, gi, "cuMemAlloc");
	CUresult r = e->cu.mem_alloc_v2(p, e->bytes);
	if (r == CUDA_SUCCESS)
		return 0;
	ce_setup_fail(e, gi, "cuMemAlloc", r);
	size_t len = strlen(e->out->error);
	snprintf(e->out->error + len, sizeof(e->out->error) - len, " (a buffer of %llu MiB; -b sets the size)",
		 (unsigned long long)e->plan->size_mib);
	return -1;
}

static int ce_gpu_open(struct ce_engine *e, int gi, bool host)
{
	struct ce_gpu *g = &e->g[gi];
	int node = e->plan->numa >= 0 ? e->plan->numa : ce_node_of(e->plan, e->out->gpus[gi].bdf);

	SETUP_CALL(e, gi, "cuDevicePrimaryCtxRetain", e->cu.primary_ctx_retain(&g->ctx, g->dev));
	g->retained = true;
	SETUP_CALL(e, gi, "cuCtxSetCurrent", e->cu.ctx_set_current(g->ctx));
	SETUP_CALL(e, gi, "cuModuleLoadData", e->cu.module_load_data(&g->mod, copy_kernels_ptx));
	SETUP_CALL(e, gi, "cuModuleGetFunction", e->cu.module_get_function(&g->copy, g->mod, COPY_KERNEL_NAME));
	SETUP_CALL(e, gi, "cuModuleGetFunction", e->cu.module_get_function(&g->spin, g->mod, SPIN_KERNEL_NAME));
	SETUP_CALL(e, gi, "cuModuleGetFunction", e->cu.module_get_function(&g->split, g->mod, SPLIT_KERNEL_NAME));
	if (ce_dev_alloc(e, gi, &g->a) < 0 || ce_dev_alloc(e, gi, &g->b) < 0)
		return -1;
	if (!e->flag) {
		void *f = NULL;
		SETUP_CALL(e, gi, "cuMemHostAlloc", e->cu.mem_host_alloc(&f, 8, CU_MEMHOSTALLOC_PORTABLE));
		e->flag = f;
	}
	SETUP_CALL(e, gi, "cuMemHostGetDevicePointer",
		   e->cu.mem_host_get_device_pointer_v2(&g->flag, (void *)e->flag, 0));
	if (!host)
		return 0;
	e->out->host_buffers = true;
	if (ce_host_alloc(e, gi, node, &g->h1) < 0)
		return -1;
	/* the second follows the first: a node without memory is noted once */
	return ce_host_alloc(e, gi, e->out->gpus[gi].numa_node, &g->h2);
}

/* Peer access from a to b; a failure leaves the pair out (N/A, with the
 * first failure kept for the message) rather than every test. */
static void ce_enable_peer(struct ce_engine *e, int a, int b)
{
	CUresult r;
	ce_step(e, a, "cuCtxSetCurrent");
	r = e->cu.ctx_set_current(e->g[a].ctx);
	if (r == CUDA_SUCCESS) {
		ce_step(e, a, "cuCtxEnablePeerAccess");
		r = e->cu.ctx_enable_peer_access(e->g[b].ctx, 0);
	}
	if (r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
		e->peer[a][b] = true;
		return;
	}
	e->no_peer[a][b] = e->no_peer[b][a] = 2;
	if (!e->peer_err[0]) {
		char msg[160];
		cuda_api_format(&e->cu, "cuCtxEnablePeerAccess", r, msg, sizeof(msg));
		snprintf(e->peer_err, sizeof(e->peer_err), "GPU %d to GPU %d: %s", e->out->gpus[a].ordinal,
			 e->out->gpus[b].ordinal, msg);
	}
}

/* Peer access both ways where cuDeviceCanAccessPeer allows both. */
static int ce_peers(struct ce_engine *e)
{
	for (int a = 0; a < e->n; a++)
		for (int b = 0; b < e->n; b++) {
			int ab = 0, ba = 0;
			if (a == b)
				continue;
			SETUP_CALL(e, a, "cuDeviceCanAccessPeer",
				   e->cu.device_can_access_peer(&ab, e->g[a].dev, e->g[b].dev));
			SETUP_CALL(e, b, "cuDeviceCanAccessPeer",
				   e->cu.device_can_access_peer(&ba, e->g[b].dev, e->g[a].dev));
			if (!ab || !ba)
				e->no_peer[a][b] = e->no_peer[b][a] = e->no_peer[a][b] ? e->no_peer[a][b] : 1;
			else
				ce_enable_peer(e, a, b);
		}
	for (int a = 0; a < e->n; a++)
		for (int b = 0; b < e->n; b++)
			e->peer[a][b] = e->peer[a][b] && e->peer[b][a];
	return 0;
}

static bool ce_needs(const struct copy_plan *p, const char *word, bool peers)
{
	for (int i = 0; i < p->n_tests; i++)
		if ((peers && p->tests[i]->peers) || (word && strstr(p->tests[i]->name, word)))
			return true;
	return false;
}

/* The GPUs to open: -d's or every one. */
static int ce_pick(struct ce_engine *e, int count, int *ord)
{
	int n = e->plan->n_devices ? e->plan->n_devices : count;
	if (n > COPY_MAX_GPUS) {
		snprintf(e->out->error, sizeof(e->out->error),
			 "%d GPUs: bench copy measures at most %d at once (choose them with -d)", n, COPY_MAX_GPUS);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		ord[i] = e->plan->n_devices ? e->plan->devices[i] : i;
		if (ord[i] >= count) {
			snprintf(e->out->error, sizeof(e->out->error), "-d %d: CUDA sees %d GPU%s (0-%d)", ord[i],
				 count, count == 1 ? "" : "s", count - 1);
			return -1;
		}
	}
	return n;
}

static int ce_setup(struct ce_engine *e, struct dl_lib *lib)
{
	unsigned need = CUDA_NEED_BASE | CUDA_NEED_FACTS | CUDA_NEED_STREAM | CUDA_NEED_EVENT | CUDA_NEED_COPY |
			CUDA_NEED_COPYBENCH;
	int count = 0, ord[COPY_MAX_GPUS];

	isolate_step(e->ictx, "loading libcuda.so.1");
	if (cuda_api_load(lib, &e->cu, need) < 0) {
		snprintf(e->out->error, sizeof(e->out->error), "cannot load the CUDA driver library: %s",
			 lib->error ? lib->error : "libcuda.so.1: unknown error");
		return -1;
	}
	SETUP_CALL(e, -1, "cuInit", e->cu.init(0));
	SETUP_CALL(e, -1, "cuDriverGetVersion", e->cu.driver_get_version(&e->out->driver_version));
	SETUP_CALL(e, -1, "cuDeviceGetCount", e->cu.device_get_count(&count));
	if (count <= 0) {
		snprintf(e->out->error, sizeof(e->out->error), "cuDeviceGetCount: no CUDA GPU on this node");
		return -1;
	}
	if ((e->n = ce_pick(e, count, ord)) < 0)
		return -1;
	e->out->n_gpus = e->n;
	bool host = ce_needs(e->plan, "host", false); /* host_to_*, *_to_host, host_to_all, all_to_host */
	for (int i = 0; i < e->n; i++)
		if (ce_gpu_facts(e, i, ord[i]) < 0 || ce_gpu_open(e, i, host) < 0)
			return -1;
	if (ce_verify_setup(e) < 0) {
		snprintf(e->out->error, sizeof(e->out->error), "%s", e->err);
		return -1;
	}
	return ce_needs(e->plan, NULL, true) && e->n > 1 ? ce_peers(e) : 0;
}

static void ce_child(struct isolate_ctx *ictx, void *arg)
{
	const struct copy_plan *plan = arg;
	struct ce_engine *e = calloc(1, sizeof(*e));
	struct copy_engine_out *out = calloc(1, sizeof(*out));
	struct dl_lib lib = { 0 };

	if (!e || !out)
		_exit(3);
	e->ictx = ictx;
	e->plan = plan;
	e->out = out;
	e->bytes = (size_t)plan->size_mib << 20;
	int r = ce_setup(e, &lib);
	isolate_send(ictx, out, offsetof(struct copy_engine_out, tests));
	if (r < 0)
		return;
	for (int i = 0; i < plan->n_tests; i++) {
		struct copy_engine_test *t = &out->tests[i];
		ce_run_test(e, plan->tests[i], t);
		isolate_send(ictx, t, sizeof(*t));
	}
	/* no teardown: the child exits, and the driver frees what it held */
}

/* The plan's deadline, else GPUREADY_PROBE_TIMEOUT (seconds, as the
 * live probes take it), else COPY_STEP_TIMEOUT_S. */
static double ce_timeout(const struct copy_plan *p)
{
	const char *s = getenv("GPUREADY_PROBE_TIMEOUT");
	char *end = NULL;
	if (p->step_timeout_s > 0)
		return p->step_timeout_s;
	double v = s && *s ? strtod(s, &end) : 0;
	return end && *end == '\0' && v > 0 && v <= 3600 ? v : COPY_STEP_TIMEOUT_S;
}

/* Why the child ended before its work did, naming the step in progress. */
static void ce_end_reason(const struct isolate_result *res, char *out, size_t size)
{
	double timeout = res->step_timeout_s;
	const char *step = res->step[0] ? res->step : "its first call";
	const char *left = res->reaped ? "" : "; the process did not die when killed and was left behind";
	if (res->end == ISOLATE_TIMEOUT)
		snprintf(out, size, "CUDA call %s did not return within %.3g s (the GPU stopped answering?; abandoned%s)",
			 step, timeout, left);
	else if (res->end == ISOLATE_CRASHED && res->signal)
		snprintf(out, size, "the measuring process died of signal %d (%s) during %s", res->signal,
			 strsignal(res->signal), step);
	else if (res->end == ISOLATE_CRASHED)
		snprintf(out, size, "the measuring process failed (exit status %d) during %s", res->exit_code, step);
	else
		snprintf(out, size, "the measuring process sent more than a result can be (during %s)%s", step, left);
}

/* Marks the tests that did not arrive: the first with why, the rest as
 * not run. */
static void ce_missing(const struct copy_plan *plan, struct copy_engine_out *out, const char *why)
{
	for (int i = out->n_tests; i < plan->n_tests; i++) {
		struct copy_engine_test *t = &out->tests[i];
		memset(t, 0, sizeof(*t));
		t->index = copy_test_index(plan->tests[i]);
		t->status = COPY_ERROR;
		snprintf(t->message, sizeof(t->message), "%s%s", i == out->n_tests ? "" : "not run: ", why);
	}
	out->n_tests = plan->n_tests;
}

int copy_engine_run(const struct copy_plan *plan, struct copy_engine_out *out)
{
	struct isolate_result res;
	double timeout = ce_timeout(plan);
	size_t head = offsetof(struct copy_engine_out, tests);
	char why[400];

	memset(out, 0, sizeof(*out));
	fflush(NULL);
	int r = isolate_run(ce_child, (void *)plan, timeout, sizeof(*out), &res);
	if (r < 0) {
		snprintf(out->error, sizeof(out->error), "could not start the measuring process: %s", strerror(-r));
		return -1;
	}
	if (res.out.len >= head) {
		memcpy(out, res.out.buf, head);
		size_t n = (res.out.len - head) / sizeof(struct copy_engine_test);
		memcpy(out->tests, res.out.buf + head, n * sizeof(struct copy_engine_test));
		out->n_tests = (int)n;
	}
	if (res.end != ISOLATE_DONE) {
		ce_end_reason(&res, why, sizeof(why));
		if (res.out.len < head)
			snprintf(out->error, sizeof(out->error), "%s", why);
		else if (!out->error[0])
			ce_missing(plan, out, why);
	} else if (!out->error[0] && out->n_tests < plan->n_tests) {
		ce_missing(plan, out, "the measuring process ended early");
	}
	isolate_result_free(&res);
	return out->error[0] ? -1 : 0;
}
