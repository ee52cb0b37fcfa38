/* The driver calls of gpuready bench copy (CUDA_NEED_COPYBENCH, with the
 * stream and event groups) through gpuready's own table, against the
 * fake libcuda.so.1 of tests/fakes (found on LD_LIBRARY_PATH): timing as
 * nvbandwidth does it (a spin kernel holds the stream while the warm-up,
 * the start event, the copies and the end event are queued; the host
 * releases it and synchronises), so that the figure is the fake's
 * configured rate; the copy kernel; peer access granted and refused; a
 * GPU lost in the middle of a run; allocation failure; the pointer-chase
 * kernel (the fake follows the chain: the time is the hops made x
 * FAKE_CUDA_LATENCY_NS, and a chain that leaves its buffer, a misaligned
 * node or a GPU's memory without peer access faults). Each test sets the
 * FAKE_CUDA_* variables and calls cuInit, which reads them again. */
#define _GNU_SOURCE
#include "testutil.h"

#include "bench/copy/kernels.h"
#include "lib/cuda_api.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024u * 1024u)
#define SIZE (4 * MiB)
#define LOOPS 16
#define WARMUP 4

static struct dl_lib lib;
static struct cuda_api cu;

static int setup(void **state)
{
	(void)state;
	unsigned need = CUDA_NEED_BASE | CUDA_NEED_FACTS | CUDA_NEED_STREAM | CUDA_NEED_EVENT | CUDA_NEED_COPYBENCH;
	if (cuda_api_load(&lib, &cu, need) < 0) {
		fprintf(stderr, "cuda_api_load: %s\n", lib.error);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dl_close(&lib);
	return 0;
}

static int fake_count(const char *hook)
{
	int (*f)(void) = (int (*)(void))dlsym(lib.handle, hook);
	assert_non_null(f);
	return f();
}

static int launch_count(const char *name)
{
	int (*f)(const char *) = (int (*)(const char *))dlsym(lib.handle, "fake_cuda_launch_count");
	assert_non_null(f);
	return f(name);
}

#define OK(call) assert_int_equal((call), CUDA_SUCCESS)

/* Sets the fake's environment (NULL unsets) and initialises it again. */
static void fake_env(const char *gbps, const char *peer, const char *lost_after, const char *oom)
{
	const char *names[] = { "FAKE_CUDA_COPY_GBPS", "FAKE_CUDA_PEER", "FAKE_CUDA_LOST_AFTER", "FAKE_CUDA_OOM" };
	const char *values[] = { gbps, peer, lost_after, oom };
	for (int i = 0; i < 4; i++) {
		if (values[i])
			setenv(names[i], values[i], 1);
		else
			unsetenv(names[i]);
	}
	unsetenv("FAKE_CUDA_LOST_CODE");
	setenv("FAKE_CUDA_DEVICES", "2", 1);
	OK(cu.init(0));
}

/* One GPU's primary context, its kernels and a stream. */
struct gpu {
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction copy, spin, chase;
	CUstream s;
	CUevent start, end;
};

static void gpu_open(struct gpu *g, int ordinal)
{
	OK(cu.device_get(&g->dev, ordinal));
	OK(cu.primary_ctx_retain(&g->ctx, g->dev));
	OK(cu.ctx_set_current(g->ctx));
	OK(cu.module_load_data(&g->mod, copy_kernels_ptx));
	OK(cu.module_get_function(&g->copy, g->mod, COPY_KERNEL_NAME));
	OK(cu.module_get_function(&g->spin, g->mod, SPIN_KERNEL_NAME));
	OK(cu.module_get_function(&g->chase, g->mod, CHASE_KERNEL_NAME));
	OK(cu.stream_create(&g->s, CU_STREAM_NON_BLOCKING));
	OK(cu.event_create(&g->start, CU_EVENT_DEFAULT));
	OK(cu.event_create(&g->end, CU_EVENT_DEFAULT));
}

static void gpu_close(struct gpu *g)
{
	OK(cu.ctx_set_current(g->ctx));
	OK(cu.event_destroy_v2(g->start));
	OK(cu.event_destroy_v2(g->end));
	OK(cu.stream_destroy_v2(g->s));
	OK(cu.module_unload(g->mod));
	OK(cuda_api_release(&cu, g->dev));
}

/* Holds g's stream on *flag (cleared here) for at most timeout_ms. */
static void hold(struct gpu *g, volatile uint32_t *flag, unsigned long long timeout_ms)
{
	int khz;
	OK(cu.device_get_attribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, g->dev));
	CUdeviceptr f;
	OK(cu.mem_host_get_device_pointer_v2(&f, (void *)flag, 0));
	unsigned long long clocks = (unsigned long long)khz * timeout_ms;
	void *params[] = { &f, &clocks };
	*flag = 0;
	OK(cu.launch_kernel(g->spin, 1, 1, 1, 1, 1, 1, 0, g->s, params, NULL));
}

/* nvbandwidth's measurement of cuMemcpyAsync(dst, src) on g: GB/s. */
static double measure_ce(struct gpu *g, CUdeviceptr dst, CUdeviceptr src, volatile uint32_t *flag)
{
	float ms = 0;
	hold(g, flag, 10000);
	for (int i = 0; i < WARMUP; i++)
		OK(cu.memcpy_async(dst, src, SIZE, g->s));
	OK(cu.event_record(g->start, g->s));
	for (int i = 0; i < LOOPS; i++)
		OK(cu.memcpy_async(dst, src, SIZE, g->s));
	OK(cu.event_record(g->end, g->s));
	/* held: nothing has run, the events are not reached */
	assert_int_equal(cu.stream_query(g->s), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuda_api_elapsed(&cu, &ms, g->start, g->end), CUDA_ERROR_NOT_READY);
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	OK(cu.stream_synchronize(g->s));
	OK(cuda_api_elapsed(&cu, &ms, g->start, g->end));
	return (double)SIZE * LOOPS / (ms * 1e-3) / 1e9;
}

static void assert_rate(double got, double want)
{
	if (got < want * 0.999 || got > want * 1.001)
		fail_msg("measured %.4f GB/s, want %.4f", got, want);
}

/* h2d at the configured 50 GB/s, d2h at 25, with the data copied. */
static void test_h2d_d2h_timed(void **state)
{
	(void)state;
	struct gpu g;
	CUdeviceptr dev;
	uint32_t *flag;
	unsigned char *host;

	fake_env("h2d=50,d2h=25", NULL, NULL, NULL);
	gpu_open(&g, 0);
	OK(cu.mem_host_alloc((void **)&flag, 8, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_alloc((void **)&host, SIZE, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_alloc_v2(&dev, SIZE));
	for (size_t i = 0; i < SIZE; i++)
		host[i] = (unsigned char)(i * 7 + 1);
	assert_rate(measure_ce(&g, dev, (CUdeviceptr)(uintptr_t)host, flag), 50);
	unsigned char *back = malloc(SIZE);
	OK(cu.memcpy_dtoh_v2(back, dev, SIZE));
	assert_memory_equal(back, host, SIZE);
	memset(host, 0, SIZE);
	assert_rate(measure_ce(&g, (CUdeviceptr)(uintptr_t)host, dev, flag), 25);
	assert_memory_equal(back, host, SIZE);
	free(back);
	assert_int_equal(launch_count(SPIN_KERNEL_NAME), 2);
	assert_int_equal(fake_count("fake_cuda_spin_timeouts"), 0);
	OK(cu.mem_free_v2(dev));
	OK(cu.mem_free_host(host));
	OK(cu.mem_free_host(flag));
	gpu_close(&g);
	assert_int_equal(fake_count("fake_cuda_live_allocs"), 0);
	assert_int_equal(fake_count("fake_cuda_live_host_allocs"), 0);
	assert_int_equal(fake_count("fake_cuda_live_modules"), 0);
}

/* The copy kernel (one launch = LOOPS copies) at the sm_ rate; a memset
 * fills what it copies. */
static void test_copy_kernel(void **state)
{
	(void)state;
	struct gpu g;
	CUdeviceptr a, b;
	uint32_t *flag;
	float ms;

	fake_env("h2d=50,local=1000,sm_local=800", NULL, NULL, NULL);
	gpu_open(&g, 0);
	OK(cu.mem_host_alloc((void **)&flag, 8, 0));
	OK(cu.mem_alloc_v2(&a, SIZE));
	OK(cu.mem_alloc_v2(&b, SIZE));
	OK(cu.memset_d32_async(a, 0x5a5a5a5au, SIZE / 4, g.s));
	hold(&g, flag, 10000);
	unsigned long long n = SIZE / 16;
	unsigned loops = LOOPS;
	void *params[] = { &b, &a, &n, &loops };
	OK(cu.launch_kernel(g.copy, 132, 1, 1, 512, 1, 1, 0, g.s, params, NULL)); /* warm-up */
	OK(cu.event_record(g.start, g.s));
	OK(cu.launch_kernel(g.copy, 132, 1, 1, 512, 1, 1, 0, g.s, params, NULL));
	OK(cu.event_record(g.end, g.s));
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	OK(cu.stream_synchronize(g.s));
	OK(cuda_api_elapsed(&cu, &ms, g.start, g.end));
	assert_rate((double)SIZE * LOOPS / (ms * 1e-3) / 1e9, 800);
	uint32_t word;
	OK(cu.memcpy_dtoh_v2(&word, b + SIZE - 4, 4));
	assert_int_equal(word, 0x5a5a5a5au);
	assert_int_equal(launch_count(COPY_KERNEL_NAME), 2);
	/* a block of more than 1024 threads is refused */
	assert_int_equal(cu.launch_kernel(g.copy, 1, 1, 1, 2048, 1, 1, 0, g.s, params, NULL), CUDA_ERROR_INVALID_VALUE);
	OK(cu.mem_free_v2(a));
	OK(cu.mem_free_v2(b));
	OK(cu.mem_free_host(flag));
	gpu_close(&g);
}

/* Two streams of one GPU started together (the second waits on the
 * first's start event, as nvbandwidth's interference copies do, twice as
 * many): h2d beside d2h keeps the full rate (a full-duplex link), h2d
 * beside h2d shares it. Returns the first stream's GB/s. */
static double two_streams(struct gpu *g, CUstream s2, CUevent e2, CUdeviceptr dst2, CUdeviceptr src2, CUdeviceptr dev,
			  unsigned char *host, uint32_t *flag)
{
	float ms;
	hold(g, flag, 10000);
	CUdeviceptr f = (CUdeviceptr)(uintptr_t)flag;
	unsigned long long clocks = 1980000ull * 10000;
	void *params[] = { &f, &clocks };
	OK(cu.launch_kernel(g->spin, 1, 1, 1, 1, 1, 1, 0, s2, params, NULL));
	OK(cu.event_record(g->start, g->s));
	for (int i = 0; i < LOOPS; i++)
		OK(cu.memcpy_async(dev, (CUdeviceptr)(uintptr_t)host, SIZE, g->s));
	OK(cu.event_record(g->end, g->s));
	OK(cu.stream_wait_event(s2, g->start, 0));
	for (int i = 0; i < 2 * LOOPS; i++)
		OK(cu.memcpy_async(dst2, src2, SIZE, s2));
	OK(cu.event_record(e2, s2));
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	OK(cu.stream_synchronize(g->s));
	OK(cu.stream_synchronize(s2));
	OK(cuda_api_elapsed(&cu, &ms, g->start, g->end));
	return (double)SIZE * LOOPS / (ms * 1e-3) / 1e9;
}

static void test_interference(void **state)
{
	(void)state;
	struct gpu g;
	CUstream s2;
	CUevent e2;
	CUdeviceptr dev, dev2;
	uint32_t *flag;
	unsigned char *host, *host2;

	fake_env("h2d=50,d2h=50", NULL, NULL, NULL);
	gpu_open(&g, 0);
	OK(cu.stream_create(&s2, CU_STREAM_NON_BLOCKING));
	OK(cu.event_create(&e2, CU_EVENT_DEFAULT));
	OK(cu.mem_host_alloc((void **)&flag, 8, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_alloc((void **)&host, SIZE, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_alloc((void **)&host2, SIZE, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_alloc_v2(&dev, SIZE));
	OK(cu.mem_alloc_v2(&dev2, SIZE));
	assert_rate(two_streams(&g, s2, e2, (CUdeviceptr)(uintptr_t)host2, dev2, dev, host, flag), 50);
	double shared = two_streams(&g, s2, e2, dev2, (CUdeviceptr)(uintptr_t)host2, dev, host, flag);
	if (shared < 24 || shared > 27)
		fail_msg("h2d beside h2d: %.2f GB/s, want about half of 50", shared);
	OK(cu.mem_free_v2(dev));
	OK(cu.mem_free_v2(dev2));
	OK(cu.mem_free_host(host));
	OK(cu.mem_free_host(host2));
	OK(cu.mem_free_host(flag));
	OK(cu.event_destroy_v2(e2));
	OK(cu.stream_destroy_v2(s2));
	gpu_close(&g);
}

/* A spin kernel nobody releases ends on its timeout. */
static void test_spin_timeout(void **state)
{
	(void)state;
	struct gpu g;
	uint32_t *flag;

	fake_env(NULL, NULL, NULL, NULL);
	gpu_open(&g, 0);
	OK(cu.mem_host_alloc((void **)&flag, 8, 0));
	hold(&g, flag, 50);
	OK(cu.event_record(g.end, g.s));
	assert_int_equal(cu.event_query(g.end), CUDA_ERROR_NOT_READY);
	assert_int_equal(flag[1], 0);
	OK(cu.stream_synchronize(g.s));
	assert_int_equal(fake_count("fake_cuda_spin_timeouts"), 1);
	/* the kernel's second word says it gave up */
	assert_int_equal(flag[1], 1);
	OK(cu.mem_free_host(flag));
	gpu_close(&g);
}

/* Peer access where FAKE_CUDA_PEER allows it (0 may reach 1, not the
 * reverse): cuCtxEnablePeerAccess's answers, the NVLink rate; without
 * peer access a copy is staged through the host, and the copy kernel
 * faults on the peer's memory. */
static void test_peer(void **state)
{
	(void)state;
	struct gpu g0, g1;
	CUdeviceptr a, b;
	uint32_t *flag;
	int can;

	fake_env("p2p=300,h2d=50,d2h=40", "0-1", NULL, NULL);
	gpu_open(&g0, 0);
	gpu_open(&g1, 1);
	OK(cu.device_can_access_peer(&can, 0, 1));
	assert_int_equal(can, 1);
	OK(cu.device_can_access_peer(&can, 1, 0));
	assert_int_equal(can, 0);
	OK(cu.mem_host_alloc((void **)&flag, 8, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_alloc_v2(&b, SIZE));
	OK(cu.ctx_set_current(g0.ctx));
	OK(cu.mem_alloc_v2(&a, SIZE));
	/* staged through the host before peer access: the slower PCIe leg */
	assert_rate(measure_ce(&g0, b, a, flag), 40);
	OK(cu.ctx_enable_peer_access(g1.ctx, 0));
	assert_int_equal(cu.ctx_enable_peer_access(g1.ctx, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
	assert_int_equal(cu.ctx_enable_peer_access(g0.ctx, 0), CUDA_ERROR_INVALID_CONTEXT);
	assert_rate(measure_ce(&g0, b, a, flag), 300);
	OK(cu.ctx_set_current(g1.ctx));
	assert_int_equal(cu.ctx_enable_peer_access(g0.ctx, 1), CUDA_ERROR_INVALID_VALUE);
	CUresult r = cu.ctx_enable_peer_access(g0.ctx, 0);
	assert_int_equal(r, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
	char why[256];
	cuda_api_format(&cu, "cuCtxEnablePeerAccess", r, why, sizeof(why));
	assert_non_null(strstr(why, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED (217)"));
	assert_int_equal(cu.ctx_disable_peer_access(g0.ctx), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
	/* GPU 1's kernel on GPU 0's memory: a fault at the synchronisation,
	 * sticky for GPU 1 */
	unsigned long long n = SIZE / 16;
	unsigned loops = 1;
	void *params[] = { &b, &a, &n, &loops };
	OK(cu.launch_kernel(g1.copy, 132, 1, 1, 512, 1, 1, 0, g1.s, params, NULL));
	assert_int_equal(cu.stream_synchronize(g1.s), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(cu.stream_query(g1.s), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(cu.mem_free_v2(b), CUDA_ERROR_ILLEGAL_ADDRESS);
	OK(cu.ctx_set_current(g0.ctx));
	OK(cu.ctx_disable_peer_access(g1.ctx));
	OK(cu.mem_free_v2(a));
	OK(cu.mem_free_host(flag));
	gpu_close(&g0);
	gpu_close(&g1);
	assert_int_equal(fake_count("fake_cuda_live_allocs"), 0);
}

/* Copies on GPU 0 until it falls off the bus: its calls fail with the code
 * configured (want), GPU 1 goes on. */
static void lost_run(const char *code, CUresult want, const char *name)
{
	struct gpu g0, g1;
	CUdeviceptr a, b;
	uint32_t *flag;
	void *host;
	CUresult r = CUDA_SUCCESS;
	char why[256];

	fake_env("h2d=50", NULL, "20", NULL);
	if (code)
		setenv("FAKE_CUDA_LOST_CODE", code, 1);
	OK(cu.init(0));
	gpu_open(&g1, 1);
	OK(cu.mem_host_alloc((void **)&flag, 8, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_alloc(&host, SIZE, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_alloc_v2(&b, SIZE));
	gpu_open(&g0, 0);
	OK(cu.mem_alloc_v2(&a, SIZE));
	for (int i = 0; i < 100 && r == CUDA_SUCCESS; i++)
		if ((r = cu.memcpy_async(a, (CUdeviceptr)(uintptr_t)host, SIZE, g0.s)) == CUDA_SUCCESS)
			r = cu.stream_synchronize(g0.s);
	assert_int_equal(r, want);
	cuda_api_format(&cu, "cuStreamSynchronize", r, why, sizeof(why));
	assert_non_null(strstr(why, name));
	/* sticky for GPU 0: every later call concerning it fails alike */
	assert_int_equal(cu.stream_synchronize(g0.s), want);
	CUdeviceptr more;
	assert_int_equal(cu.mem_alloc_v2(&more, 16), want);
	assert_int_equal(cu.mem_free_v2(a), want); /* released all the same */
	OK(cu.ctx_set_current(g1.ctx));
	assert_rate(measure_ce(&g1, b, (CUdeviceptr)(uintptr_t)host, flag), 50);
	OK(cu.mem_free_v2(b));
	OK(cu.mem_free_host(host));
	OK(cu.mem_free_host(flag));
	gpu_close(&g0);
	gpu_close(&g1);
	unsetenv("FAKE_CUDA_LOST_AFTER");
	assert_int_equal(fake_count("fake_cuda_live_allocs"), 0);
}

static void test_lost_gpu(void **state)
{
	(void)state;
	lost_run(NULL, CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN (999)");
	lost_run("719", CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED (719)");
}

/* FAKE_CUDA_OOM: device memory per GPU and pinned host memory in all. */
static void test_oom(void **state)
{
	(void)state;
	struct gpu g;
	CUdeviceptr a, b;
	void *h, *h2;
	char why[256];

	fake_env(NULL, NULL, NULL, "1048576");
	gpu_open(&g, 0);
	OK(cu.mem_alloc_v2(&a, 512 * 1024));
	CUresult r = cu.mem_alloc_v2(&b, 768 * 1024);
	assert_int_equal(r, CUDA_ERROR_OUT_OF_MEMORY);
	cuda_api_format(&cu, "cuMemAlloc", r, why, sizeof(why));
	assert_non_null(strstr(why, "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"));
	OK(cu.mem_host_alloc(&h, 1048576, 0));
	assert_int_equal(cu.mem_host_alloc(&h2, 1, 0), CUDA_ERROR_OUT_OF_MEMORY);
	OK(cu.mem_free_host(h));
	OK(cu.mem_free_v2(a));
	gpu_close(&g);
}

/* A GPU's own rate (a slow slot), what cuMemcpyAsync refuses, and the
 * copy kernel's fault on an address not 16-byte aligned. */
static void test_slot_and_refusals(void **state)
{
	(void)state;
	struct gpu g0, g1;
	CUdeviceptr a, b;
	uint32_t *flag;
	unsigned char *host;

	fake_env("h2d@1=14,h2d=50", NULL, NULL, NULL);
	gpu_open(&g1, 1);
	OK(cu.mem_host_alloc((void **)&flag, 8, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_alloc((void **)&host, SIZE, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_alloc_v2(&b, SIZE));
	assert_rate(measure_ce(&g1, b, (CUdeviceptr)(uintptr_t)host, flag), 14);
	gpu_open(&g0, 0);
	OK(cu.mem_alloc_v2(&a, SIZE));
	assert_rate(measure_ce(&g0, a, (CUdeviceptr)(uintptr_t)host, flag), 50);
	/* past the end of the allocation */
	assert_int_equal(cu.memcpy_async(a + 16, (CUdeviceptr)(uintptr_t)host, SIZE, g0.s), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cu.memcpy_async(0, (CUdeviceptr)(uintptr_t)host, 4, g0.s), CUDA_ERROR_INVALID_VALUE);
	/* the kernel's 16-byte accesses */
	CUdeviceptr odd = a + 4;
	unsigned long long n = 1;
	unsigned loops = 1;
	void *params[] = { &odd, &b, &n, &loops };
	OK(cu.launch_kernel(g0.copy, 1, 1, 1, 32, 1, 1, 0, g0.s, params, NULL));
	assert_int_equal(cu.stream_synchronize(g0.s), CUDA_ERROR_MISALIGNED_ADDRESS);
	assert_int_equal(cu.mem_free_v2(a), CUDA_ERROR_MISALIGNED_ADDRESS);
	OK(cu.ctx_set_current(g1.ctx));
	OK(cu.mem_free_v2(b));
	OK(cu.mem_free_host(host));
	OK(cu.mem_free_host(flag));
	gpu_close(&g0);
	gpu_close(&g1);
}

/* What cuModuleLoadData and cuModuleGetFunction refuse. */
static void test_module(void **state)
{
	(void)state;
	struct gpu g;
	CUmodule m;
	CUfunction f;

	fake_env(NULL, NULL, NULL, NULL);
	gpu_open(&g, 0);
	assert_int_equal(cu.module_load_data(&m, ".version 9.0\n.target sm_100\n.visible .entry k()\n{\n\tret;\n}\n"),
			 CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
	assert_int_equal(cu.module_load_data(&m, "not PTX"), CUDA_ERROR_INVALID_IMAGE);
	assert_int_equal(cu.module_get_function(&f, g.mod, "nvbandwidth_copy"), CUDA_ERROR_NOT_FOUND);
	gpu_close(&g);
}

/* ---- the pointer chase (fake_cuda_chase.c) ---- */

#define LAT_BYTES (2u << 20)
#define NODES (LAT_BYTES / 8)
#define STRIDE 16 /* nodes: nvbandwidth's strideLen */

/* FAKE_CUDA_LATENCY_NS (NULL unsets), read again by cuInit, which also
 * forgets a fault. */
static void lat_env(const char *ns)
{
	if (ns)
		setenv("FAKE_CUDA_LATENCY_NS", ns, 1);
	else
		unsetenv("FAKE_CUDA_LATENCY_NS");
	fake_env(NULL, NULL, NULL, NULL);
}

/* nvbandwidth's chain: node i -> node i + 16 (mod n), as addressed at base. */
static void chain(uint64_t *buf, CUdeviceptr base)
{
	for (size_t i = 0; i < NODES; i++)
		buf[i] = (uint64_t)base + ((i + STRIDE) % NODES) * 8;
}

/* A chain in GPU g's memory, written with cuMemcpyHtoD. */
static CUdeviceptr dev_chain(struct gpu *g, uint64_t *staging)
{
	CUdeviceptr buf;
	OK(cu.ctx_set_current(g->ctx));
	OK(cu.mem_alloc_v2(&buf, LAT_BYTES));
	chain(staging, buf);
	OK(cu.memcpy_htod_v2(buf, staging, LAT_BYTES));
	return buf;
}

/* One launch on g (grid blocks, block `block` chases hops from data):
 * the first error (a kernel's fault is sticky: it may show at the end
 * event's record or at the synchronisation, as on a GPU), the elapsed ms
 * in *ms when none. */
static CUresult chase(struct gpu *g, CUdeviceptr data, unsigned hops, unsigned blocks, unsigned block, float *ms)
{
	unsigned long long size = LAT_BYTES;
	void *params[] = { &data, &size, &hops, &block };
	OK(cu.ctx_set_current(g->ctx));
	OK(cu.event_record(g->start, g->s));
	OK(cu.launch_kernel(g->chase, blocks, 1, 1, 1, 1, 1, 0, g->s, params, NULL));
	CUresult r = cu.event_record(g->end, g->s);
	if (r == CUDA_SUCCESS)
		r = cu.stream_synchronize(g->s);
	if (r == CUDA_SUCCESS)
		OK(cuda_api_elapsed(&cu, ms, g->start, g->end));
	return r;
}

static void assert_ms(float got, double want)
{
	/* the first launch on a stream also counts the gap since its start
	 * event (real time, microseconds) */
	if (got < want * 0.999 || got > want * 1.05)
		fail_msg("elapsed %.6f ms, want %.6f", (double)got, want);
}

/* Host memory: hops x host latency; every node of the chain's period is
 * visited, the hops counted; the blocks that do not chase do nothing; a
 * chain of adjacent nodes is mostly cache hits. */
static void test_chase_host(void **state)
{
	(void)state;
	struct gpu g;
	uint64_t *h;
	CUdeviceptr d;
	float ms = 0;

	lat_env("host=800,host@1=2000");
	gpu_open(&g, 0);
	OK(cu.mem_host_alloc((void **)&h, LAT_BYTES, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_get_device_pointer_v2(&d, h, 0));
	chain(h, d);
	OK(chase(&g, d, 50000, 132, 7, &ms));
	assert_ms(ms, 50000 * 800e-6);
	assert_int_equal(fake_count("fake_cuda_chase_hops"), 50000);
	assert_int_equal(fake_count("fake_cuda_chase_nodes"), NODES / STRIDE); /* 16384: 2 MiB / 128 B */
	/* a grid that does not reach the chasing block: nothing walked */
	OK(chase(&g, d, 50000, 4, 7, &ms));
	assert_int_equal(fake_count("fake_cuda_chase_hops"), 50000);
	/* a stride of one node: every node is visited */
	for (size_t i = 0; i < NODES; i++)
		h[i] = (uint64_t)d + ((i + 1) % NODES) * 8;
	OK(chase(&g, d, NODES, 1, 0, &ms));
	assert_int_equal(fake_count("fake_cuda_chase_nodes"), NODES);
	/* ... 16 nodes to a 128-byte line: 15 of 16 hops are cache hits (30 ns) */
	assert_ms(ms, (NODES / 16 * 800 + NODES / 16 * 15 * 30) * 1e-6);
	OK(cu.mem_free_host(h));
	gpu_close(&g);

	/* host@1: GPU 1's own figure */
	gpu_open(&g, 1);
	OK(cu.mem_host_alloc((void **)&h, LAT_BYTES, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_get_device_pointer_v2(&d, h, 0));
	chain(h, d);
	OK(chase(&g, d, 1000, 1, 0, &ms));
	assert_ms(ms, 1000 * 2000e-6);
	OK(cu.mem_free_host(h));
	gpu_close(&g);
}

/* A chain in GPU 1's memory: local from GPU 1, p2p from GPU 0 with peer
 * access, a fault from GPU 0 without. */
static void test_chase_device(void **state)
{
	(void)state;
	struct gpu g0, g1;
	uint64_t *c = malloc(LAT_BYTES);
	float ms = 0;

	assert_non_null(c);
	lat_env("p2p=650,local=500");
	gpu_open(&g0, 0);
	gpu_open(&g1, 1);
	CUdeviceptr buf = dev_chain(&g1, c);
	OK(chase(&g1, buf, 10000, 1, 0, &ms));
	assert_ms(ms, 10000 * 500e-6);
	/* GPU 0 without peer access to GPU 1: an illegal address, sticky */
	assert_int_equal(chase(&g0, buf, 10000, 1, 0, &ms), CUDA_ERROR_ILLEGAL_ADDRESS);
	OK(cu.ctx_set_current(g1.ctx));
	OK(cu.mem_free_v2(buf));
	lat_env(NULL); /* forgets GPU 0's fault */
	gpu_close(&g0);
	gpu_close(&g1);

	lat_env("p2p=650,local=500");
	gpu_open(&g0, 0);
	gpu_open(&g1, 1);
	buf = dev_chain(&g1, c);
	OK(cu.ctx_set_current(g0.ctx));
	OK(cu.ctx_enable_peer_access(g1.ctx, 0));
	OK(chase(&g0, buf, 10000, 1, 0, &ms));
	assert_ms(ms, 10000 * 650e-6);
	OK(cu.ctx_set_current(g1.ctx));
	OK(cu.mem_free_v2(buf));
	gpu_close(&g0);
	gpu_close(&g1);
	free(c);
}

/* Chains set up wrong are caught where the GPU would fault: a node
 * pointing out of the buffer (here a host address in a GPU's chain, as
 * nvbandwidth's host chain would be if copied as is), a misaligned node,
 * an unwritten (zero) node, a last node of 0 (the kernel's trap). */
static void test_chase_wrong_chain(void **state)
{
	(void)state;
	struct gpu g;
	uint64_t *h;
	CUdeviceptr d, buf;
	float ms = 0;

	struct {
		size_t node;
		int kind; /* 0 outside, 1 misaligned, 2 zero */
		unsigned hops;
		CUresult want;
	} cases[] = {
		{ 3 * STRIDE, 0, 100, CUDA_ERROR_ILLEGAL_ADDRESS },
		{ 5 * STRIDE, 1, 100, CUDA_ERROR_MISALIGNED_ADDRESS },
		{ 7 * STRIDE, 2, 100, CUDA_ERROR_ILLEGAL_ADDRESS },
		{ 7 * STRIDE, 2, 8, CUDA_ERROR_LAUNCH_FAILED }, /* node 7's next is read last */
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		lat_env(NULL);
		gpu_open(&g, 0);
		OK(cu.mem_host_alloc((void **)&h, LAT_BYTES, CU_MEMHOSTALLOC_PORTABLE));
		OK(cu.mem_host_get_device_pointer_v2(&d, h, 0));
		OK(cu.mem_alloc_v2(&buf, LAT_BYTES));
		chain(h, d);
		size_t n = cases[k].node;
		h[n] = cases[k].kind == 0 ? (uint64_t)buf : cases[k].kind == 1 ? h[n] + 4 : 0;
		assert_int_equal(chase(&g, d, cases[k].hops, 1, 0, &ms), cases[k].want);
		/* the hops up to the bad node were made */
		int want_hops = cases[k].want == CUDA_ERROR_LAUNCH_FAILED ? (int)cases[k].hops : (int)(n / STRIDE + 1);
		assert_int_equal(fake_count("fake_cuda_chase_hops"), want_hops);
		cu.mem_free_v2(buf);
		cu.mem_free_host(h);
		lat_env(NULL);
		gpu_close(&g);
	}
	/* a buffer that runs past its allocation, and pageable memory */
	lat_env(NULL);
	gpu_open(&g, 0);
	OK(cu.mem_host_alloc((void **)&h, LAT_BYTES / 2, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_get_device_pointer_v2(&d, h, 0));
	assert_int_equal(chase(&g, d, 10, 1, 0, &ms), CUDA_ERROR_ILLEGAL_ADDRESS);
	cu.mem_free_host(h);
	lat_env(NULL);
	gpu_close(&g);
	lat_env(NULL);
	gpu_open(&g, 0);
	uint64_t *pageable = malloc(LAT_BYTES);
	assert_non_null(pageable);
	chain(pageable, (CUdeviceptr)(uintptr_t)pageable);
	assert_int_equal(chase(&g, (CUdeviceptr)(uintptr_t)pageable, 10, 1, 0, &ms), CUDA_ERROR_ILLEGAL_ADDRESS);
	free(pageable);
	lat_env(NULL);
	gpu_close(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h2d_d2h_timed), cmocka_unit_test(test_copy_kernel),
		cmocka_unit_test(test_interference),  cmocka_unit_test(test_spin_timeout),
		cmocka_unit_test(test_peer),
		cmocka_unit_test(test_lost_gpu),      cmocka_unit_test(test_oom),
		cmocka_unit_test(test_slot_and_refusals),
		cmocka_unit_test(test_module),
		cmocka_unit_test(test_chase_host),    cmocka_unit_test(test_chase_device),
		cmocka_unit_test(test_chase_wrong_chain),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
