/* A stand-in for the NVIDIA driver's libcuda.so.1 (soname libcuda.so.1),
 * for tests on machines without GPUs: the driver API subset gpuready
 * loads (src/lib/cuda_api.h), with host memory as "device" memory.
 *
 * FAKE_CUDA_DEVICES=N (read by every cuInit; default 2, at most
 * FAKE_CUDA_MAX) sets the device count; 0 makes cuInit fail with
 * CUDA_ERROR_NO_DEVICE, as the real driver does without GPUs. Device i is
 * "NVIDIA Fake GPU", PCI 0000:<0x18 + 0x11*i>:00.0, compute capability 9.0.
 * Work on streams (copies, memsets, kernels, event records; this file
 * has the streams, fake_cuda_queue.c their queues and the events,
 * fake_cuda_copy.c pinned host memory, peer access, modules and the
 * failures bench copy is tested with) runs as soon as nothing holds it,
 * with modelled durations: see those files. A stream marked hung
 * (fake_cuda_stream_hang, called by the fake NCCL for
 * FAKE_NCCL_HANG=coll) stays CUDA_ERROR_NOT_READY until unmarked.
 * cuStreamSynchronize and cuCtxSynchronize on hung work return
 * CUDA_ERROR_LAUNCH_TIMEOUT instead of blocking forever, so a test that
 * calls them where it must not fails rather than hangs.
 *
 * Graphs (cuStreamBeginCapture_v2 .. cuGraphLaunch): a capturing stream
 * records instead of running. The driver itself runs nothing, so what it
 * records is work the fake NCCL hands over through fake_cuda_capture_add
 * (a callback and its argument, after asking fake_cuda_capturing); each
 * launch of an executable graph calls those callbacks in capture order.
 * The capture rules gpuready must follow are enforced as the driver does:
 * cuStreamQuery/cuStreamSynchronize on a capturing stream fail with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate the capture (its
 * cuStreamEndCapture then fails, graph NULL); cuCtxSynchronize fails while
 * a stream of the context captures; cuMemAlloc_v2/cuMemFree_v2 fail during
 * a GLOBAL capture of any thread or a non-RELAXED one of the calling
 * thread (cuThreadExchangeStreamCaptureMode's rules for threads left in
 * the default mode); a non-RELAXED capture ends on the thread that began
 * it (CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD). Captures and graphs are
 * not locked: use each from one thread at a time. Built with
 * -DFAKE_CUDA_NO_GRAPHS (tests/fakes/nographs/) it exports none of the
 * graph entry points, as a driver older than CUDA 10 would.
 *
 * FAKE_CUDA_HANG=<function> (cuInit, cuDeviceGetCount, cuDeviceGet,
 * cuDevicePrimaryCtxRetain, cuMemAlloc_v2, cuMemcpyHtoD_v2,
 * cuMemcpyDtoH_v2, cuMemGetHandleForAddressRange or cuStreamSynchronize,
 * the last for bench copy's timed loop) makes that function
 * never return, as the driver's calls can on a GPU that has fallen off the
 * bus: for the tests of the probes' deadline (src/probe/deadline.c).
 *
 * Process-wide state (initialisation, primary contexts, live allocations)
 * and a thread's current context live in file-scope variables: that is
 * the driver's own model; cuMemGetInfo_v2 reports 80 GiB less what
 * cuMemAlloc_v2 holds on the device. fake_cuda_live_allocs() and
 * fake_cuda_live_graphs() let a test check that everything was freed. */
#define _GNU_SOURCE
#include "fake_cuda_int.h"
#include "fake_hang.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The exported functions are the driver's ABI, declared by cuda.h, which
 * this build does not have: no prototypes to precede them. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

/* The same CUDA_ERROR_* numbers as cuda.h (13.0) for the codes only the
 * fake returns. */
#define FAKE_NOT_INITIALIZED ((CUresult)3)
#define FAKE_CAPTURE_WRONG_THREAD ((CUresult)908)

/* Work recorded into a graph (fake_cuda_capture_add), shared by the graph
 * and the executable graphs made from it; released with the last. */
struct fake_node {
	atomic_int refs;
	void (*run)(void *arg);
	void (*release)(void *arg);
	void *arg;
};

struct CUgraph_st {
	unsigned magic;
	int n, cap;
	struct fake_node **nodes;   /* capture order */
};

struct CUgraphExec_st {
	struct CUgraph_st g;        /* the nodes at instantiation */
};

#define GRAPH_MAGIC 0x64a9fu
#define EXEC_MAGIC 0xe8ec9u

int fake_initialised;
int fake_ndev;
struct CUctx_st fake_ctxs[FAKE_CUDA_MAX];
static atomic_int live_allocs;
static atomic_llong live_bytes[FAKE_CUDA_MAX];      /* per device, for cuMemGetInfo_v2 */
#define FAKE_TOTAL_MEM ((size_t)80 << 30)
/* what cuMemAlloc_v2 puts before the memory it returns */
struct alloc_head {
	size_t bytes;
	int dev;
	int pad;
};
_Static_assert(sizeof(struct alloc_head) == 16, "the memory after the header keeps calloc's alignment");
static atomic_int hung_streams;
static atomic_int live_graphs;                    /* graphs and executable graphs */
static atomic_int global_captures;                /* CU_STREAM_CAPTURE_MODE_GLOBAL, any thread */
static atomic_int dev_captures[FAKE_CUDA_MAX];    /* captures per device */
static __thread int strict_captures;              /* this thread's non-RELAXED captures */
__thread CUcontext fake_current;

static int env_devices(void)
{
	const char *s = getenv("FAKE_CUDA_DEVICES");
	if (!s || !*s)
		return 2;
	int n = atoi(s);
	return n < 0 ? 0 : n > FAKE_CUDA_MAX ? FAKE_CUDA_MAX : n;
}

static CUresult need_dev(CUdevice d)
{
	if (!fake_initialised)
		return FAKE_NOT_INITIALIZED;
	return d >= 0 && d < fake_ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

FAKE_API CUresult cuInit(unsigned flags)
{
	fake_hang_if("FAKE_CUDA_HANG", "cuInit");
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	fake_ndev = env_devices();
	if (fake_ndev == 0)
		return CUDA_ERROR_NO_DEVICE;
	for (int i = 0; i < fake_ndev; i++)
		fake_ctxs[i].dev = i;
	fake_initialised = 1;
	fake_copy_init();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDriverGetVersion(int *v)
{
	*v = 12040;
	return CUDA_SUCCESS;
}

static const struct {
	int code;
	const char *name, *text;
} errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ FAKE_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
	{ CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable" },
	{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
	{ CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these two devices" },
	{ CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed" },
	{ CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	  "the provided PTX was compiled with an unsupported toolchain." },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered" },
	{ CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	  "peer access is already enabled" },
	{ CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access has not been enabled" },
	{ CUDA_ERROR_TOO_MANY_PEERS, "CUDA_ERROR_TOO_MANY_PEERS", "peer mapping resources exhausted" },
	{ CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address" },
	{ CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
	{ CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
	  "operation not permitted when stream is capturing" },
	{ CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	  "operation failed due to a previous error during capture" },
	{ FAKE_CAPTURE_WRONG_THREAD, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
	  "attempt to terminate a thread-local capture sequence from another thread" },
};

static CUresult lookup(CUresult r, const char **s, int text)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == (int)r) {
			*s = text ? errors[i].text : errors[i].name;
			return CUDA_SUCCESS;
		}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuGetErrorName(CUresult r, const char **s)
{
	return lookup(r, s, 0);
}

FAKE_API CUresult cuGetErrorString(CUresult r, const char **s)
{
	return lookup(r, s, 1);
}

FAKE_API CUresult cuDeviceGetCount(int *n)
{
	fake_hang_if("FAKE_CUDA_HANG", "cuDeviceGetCount");
	if (!fake_initialised)
		return FAKE_NOT_INITIALIZED;
	*n = fake_ndev;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	fake_hang_if("FAKE_CUDA_HANG", "cuDeviceGet");
	CUresult r = need_dev(ordinal);
	if (r == CUDA_SUCCESS)
		*d = ordinal;
	return r;
}

FAKE_API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	CUresult r = need_dev(d);
	if (r == CUDA_SUCCESS)
		snprintf(name, (size_t)len, "NVIDIA Fake GPU");
	return r;
}

FAKE_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	CUresult r = need_dev(d);
	if (r == CUDA_SUCCESS)
		*bytes = FAKE_TOTAL_MEM;
	return r;
}

static int bus_of(CUdevice d)
{
	return 0x18 + 0x11 * d;
}

FAKE_API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	CUresult r = need_dev(d);
	if (r != CUDA_SUCCESS)
		return r;
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = bus_of(d); break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: *v = 1; break;
	/* an H100 SXM5's (132 SMs, 1980 MHz boost) */
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = fake_reported_khz(); break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
	CUresult r = need_dev(d);
	if (r == CUDA_SUCCESS)
		snprintf(id, (size_t)len, "0000:%02x:00.0", bus_of(d));
	return r;
}

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	fake_hang_if("FAKE_CUDA_HANG", "cuDevicePrimaryCtxRetain");
	CUresult r = need_dev(d);
	if (r != CUDA_SUCCESS)
		return r;
	__atomic_add_fetch(&fake_ctxs[d].refs, 1, __ATOMIC_SEQ_CST);
	*c = &fake_ctxs[d];
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	CUresult r = need_dev(d);
	if (r != CUDA_SUCCESS)
		return r;
	return __atomic_sub_fetch(&fake_ctxs[d].refs, 1, __ATOMIC_SEQ_CST) < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
	return cuDevicePrimaryCtxRelease_v2(d);
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext c)
{
	if (c && (c < fake_ctxs || c >= fake_ctxs + FAKE_CUDA_MAX))
		return CUDA_ERROR_INVALID_CONTEXT;
	fake_current = c;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext *c)
{
	*c = fake_current;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetDevice(CUdevice *d)
{
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = fake_current->dev;
	return CUDA_SUCCESS;
}

/* What cuMemAlloc/cuMemFree meet while captures run (see the top). */
static CUresult capture_forbids(void)
{
	return atomic_load(&global_captures) > 0 || strict_captures > 0 ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
									   : CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSynchronize(void)
{
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (atomic_load(&dev_captures[fake_current->dev]) > 0)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return atomic_load(&hung_streams) ? CUDA_ERROR_LAUNCH_TIMEOUT : fake_ctx_sync(fake_current->dev);
}

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	fake_hang_if("FAKE_CUDA_HANG", "cuMemAlloc_v2");
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (capture_forbids() != CUDA_SUCCESS)
		return capture_forbids();
	CUresult r = fake_gate(fake_current->dev);
	if (r != CUDA_SUCCESS)
		return r;
	if (!fake_oom(atomic_load(&live_bytes[fake_current->dev]), bytes))
		return CUDA_ERROR_OUT_OF_MEMORY;
	struct alloc_head *h = calloc(1, sizeof(*h) + bytes);
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->bytes = bytes;
	h->dev = fake_current->dev;
	atomic_fetch_add(&live_allocs, 1);
	atomic_fetch_add(&live_bytes[h->dev], (long long)bytes);
	fake_reg_add(h + 1, bytes, h->dev);
	*p = (CUdeviceptr)(uintptr_t)(h + 1);
	return CUDA_SUCCESS;
}

/* Free memory: the total less what cuMemAlloc_v2 holds on the device. */
FAKE_API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*total_bytes = FAKE_TOTAL_MEM;
	*free_bytes = FAKE_TOTAL_MEM - (size_t)atomic_load(&live_bytes[fake_current->dev]);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemFree_v2(CUdeviceptr p)
{
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (capture_forbids() != CUDA_SUCCESS)
		return capture_forbids();
	CUresult r = CUDA_SUCCESS;
	if (p) {
		/* the driver waits for the device first; on a lost GPU the
		 * memory is gone with it: freed here, the error returned */
		struct alloc_head *h = (struct alloc_head *)(uintptr_t)p - 1;
		r = fake_ctx_sync(h->dev);
		fake_reg_del(h + 1);
		atomic_fetch_sub(&live_bytes[h->dev], (long long)h->bytes);
		free(h);
		atomic_fetch_sub(&live_allocs, 1);
	}
	return r;
}

FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
	fake_hang_if("FAKE_CUDA_HANG", "cuMemcpyHtoD_v2");
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	CUresult r = fake_gate(fake_current->dev);
	if (r != CUDA_SUCCESS)
		return r;
	if (!dst || !src || fake_reg_find((void *)(uintptr_t)dst, bytes) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy((void *)(uintptr_t)dst, src, bytes);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
	fake_hang_if("FAKE_CUDA_HANG", "cuMemcpyDtoH_v2");
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	CUresult r = fake_gate(fake_current->dev);
	if (r != CUDA_SUCCESS)
		return r;
	if (!dst || !src || fake_reg_find((const void *)(uintptr_t)src, bytes) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, (const void *)(uintptr_t)src, bytes);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr p, size_t size, CUmemRangeHandleType type,
						unsigned long long flags)
{
	(void)handle, (void)p, (void)size, (void)type, (void)flags;
	fake_hang_if("FAKE_CUDA_HANG", "cuMemGetHandleForAddressRange");
	return CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_API CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (flags > CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_gate(fake_current->dev);
	if (r != CUDA_SUCCESS)
		return r;
	struct CUstream_st *st = calloc(1, sizeof(*st));
	if (!st)
		return CUDA_ERROR_OUT_OF_MEMORY;
	st->magic = STREAM_MAGIC;
	st->dev = fake_current->dev;
	fake_stream_link(st);
	*s = st;
	return CUDA_SUCCESS;
}

static int bad_stream(CUstream s)
{
	return !s || s->magic != STREAM_MAGIC;
}

static void node_unref(struct fake_node *nd)
{
	if (atomic_fetch_sub(&nd->refs, 1) == 1) {
		if (nd->release)
			nd->release(nd->arg);
		free(nd);
	}
}

/* Drops a graph's (or executable graph's) nodes and frees it. */
static void graph_release(struct CUgraph_st *g)
{
	for (int i = 0; i < g->n; i++)
		node_unref(g->nodes[i]);
	free(g->nodes);
	g->magic = 0;
	free(g);
	atomic_fetch_sub(&live_graphs, 1);
}

/* Ends s's capture; the caller owns what it returns. */
static struct CUgraph_st *capture_stop(CUstream s)
{
	struct CUgraph_st *g = s->capture;
	if (s->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)
		atomic_fetch_sub(&global_captures, 1);
	if (s->mode != CU_STREAM_CAPTURE_MODE_RELAXED && pthread_equal(s->capturer, pthread_self()))
		strict_captures--; /* cuStreamEndCapture checks the thread; a destroy may not */
	atomic_fetch_sub(&dev_captures[s->dev], 1);
	s->capture = NULL;
	s->invalidated = 0;
	return g;
}

/* A query or synchronisation of a capturing stream: illegal, and it
 * invalidates the capture. */
static CUresult capture_illegal(CUstream s)
{
	s->invalidated = 1;
	return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

FAKE_API CUresult cuStreamDestroy_v2(CUstream s)
{
	if (bad_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (s->capture)
		graph_release(capture_stop(s));
	if (atomic_load(&s->hung))
		atomic_fetch_sub(&hung_streams, 1);
	s->magic = 0;
	if (!fake_stream_unlink(s))
		free(s);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamQuery(CUstream s)
{
	if (bad_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (s->capture)
		return capture_illegal(s);
	return atomic_load(&s->hung) ? CUDA_ERROR_NOT_READY : fake_stream_query(s);
}

FAKE_API CUresult cuStreamSynchronize(CUstream s)
{
	fake_hang_if("FAKE_CUDA_HANG", "cuStreamSynchronize");
	if (bad_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (s->capture)
		return capture_illegal(s);
	return atomic_load(&s->hung) ? CUDA_ERROR_LAUNCH_TIMEOUT : fake_stream_sync(s);
}

/* ---- graphs ---- */

#ifndef FAKE_CUDA_NO_GRAPHS
FAKE_API CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	if (!s)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
	if (bad_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (s->capture || mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	struct CUgraph_st *g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->magic = GRAPH_MAGIC;
	atomic_fetch_add(&live_graphs, 1);
	s->capture = g;
	s->mode = mode;
	s->capturer = pthread_self();
	s->invalidated = 0;
	if (mode == CU_STREAM_CAPTURE_MODE_GLOBAL)
		atomic_fetch_add(&global_captures, 1);
	if (mode != CU_STREAM_CAPTURE_MODE_RELAXED)
		strict_captures++;
	atomic_fetch_add(&dev_captures[s->dev], 1);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamEndCapture(CUstream s, CUgraph *out)
{
	if (bad_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!out || !s->capture)
		return CUDA_ERROR_INVALID_VALUE;
	if (s->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(s->capturer, pthread_self()))
		return FAKE_CAPTURE_WRONG_THREAD;
	int invalidated = s->invalidated;
	struct CUgraph_st *g = capture_stop(s);
	if (invalidated) {
		graph_release(g);
		*out = NULL;
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	}
	*out = g;
	return CUDA_SUCCESS;
}

static CUresult instantiate(CUgraphExec *out, CUgraph g)
{
	if (!out || !g || g->magic != GRAPH_MAGIC)
		return CUDA_ERROR_INVALID_VALUE;
	struct CUgraphExec_st *e = calloc(1, sizeof(*e));
	struct fake_node **nodes = calloc((size_t)g->n + 1, sizeof(*nodes));
	if (!e || !nodes) {
		free(e);
		free(nodes);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (int i = 0; i < g->n; i++) {
		nodes[i] = g->nodes[i];
		atomic_fetch_add(&nodes[i]->refs, 1);
	}
	e->g = (struct CUgraph_st){ .magic = EXEC_MAGIC, .n = g->n, .cap = g->n, .nodes = nodes };
	atomic_fetch_add(&live_graphs, 1);
	*out = e;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
	return flags & ~0xfull ? CUDA_ERROR_INVALID_VALUE : instantiate(out, g);
}

FAKE_API CUresult cuGraphInstantiate_v2(CUgraphExec *out, CUgraph g, CUgraphNode *error_node, char *log, size_t size)
{
	if (error_node)
		*error_node = NULL;
	if (log && size)
		log[0] = '\0';
	return instantiate(out, g);
}

/* Runs the recorded work now, in capture order; a launch into a capturing
 * stream (a child-graph node in CUDA) is not modelled. */
FAKE_API CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
	if (!e || e->g.magic != EXEC_MAGIC)
		return CUDA_ERROR_INVALID_VALUE;
	if (s && bad_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (s && s->capture)
		return CUDA_ERROR_NOT_SUPPORTED;
	for (int i = 0; i < e->g.n; i++)
		e->g.nodes[i]->run(e->g.nodes[i]->arg);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphExecDestroy(CUgraphExec e)
{
	if (!e || e->g.magic != EXEC_MAGIC)
		return CUDA_ERROR_INVALID_VALUE;
	graph_release(&e->g);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphDestroy(CUgraph g)
{
	if (!g || g->magic != GRAPH_MAGIC)
		return CUDA_ERROR_INVALID_VALUE;
	graph_release(g);
	return CUDA_SUCCESS;
}
#endif

/* ---- test hooks, not in the real driver ---- */

/* Marks s hung (1: cuStreamQuery says NOT_READY from now on) or not (0). */
FAKE_API int fake_cuda_stream_hang(CUstream s, int hung)
{
	if (bad_stream(s))
		return -1;
	int was = atomic_exchange(&s->hung, hung ? 1 : 0);
	if (was != (hung ? 1 : 0))
		atomic_fetch_add(&hung_streams, hung ? 1 : -1);
	return 0;
}

/* The device a stream was created on, -1 for a bad handle. */
FAKE_API int fake_cuda_stream_device(CUstream s)
{
	return bad_stream(s) ? -1 : s->dev;
}

FAKE_API int fake_cuda_live_allocs(void)
{
	return atomic_load(&live_allocs);
}

FAKE_API int fake_cuda_live_graphs(void)
{
	return atomic_load(&live_graphs);
}

/* 1 while s captures, 0 when it does not, -1 for a bad handle or a capture
 * already invalidated (work issued there is an error in CUDA). */
FAKE_API int fake_cuda_capturing(CUstream s)
{
	if (bad_stream(s))
		return -1;
	return s->capture ? (s->invalidated ? -1 : 1) : 0;
}

/* Records work into s's capture: run(arg) at every launch of a graph made
 * from it, release(arg) (may be NULL) once the last graph holding it is
 * destroyed. 0, or -1 (nothing recorded, release not called) when s does
 * not capture. */
FAKE_API int fake_cuda_capture_add(CUstream s, void (*run)(void *), void (*release)(void *), void *arg)
{
	if (fake_cuda_capturing(s) != 1 || !run)
		return -1;
	struct CUgraph_st *g = s->capture;
	struct fake_node *nd = calloc(1, sizeof(*nd));
	if (!nd)
		return -1;
	if (g->n == g->cap) {
		int cap = g->cap ? g->cap * 2 : 8;
		struct fake_node **nodes = realloc(g->nodes, sizeof(*nodes) * (size_t)cap);
		if (!nodes) {
			free(nd);
			return -1;
		}
		g->nodes = nodes;
		g->cap = cap;
	}
	atomic_init(&nd->refs, 1);
	nd->run = run;
	nd->release = release;
	nd->arg = arg;
	g->nodes[g->n++] = nd;
	return 0;
}
