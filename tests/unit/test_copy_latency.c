/* bench copy's latency tests against the fake libcuda.so.1 of tests/fakes
 * (found on LD_LIBRARY_PATH): the pointer-chase kernel as the fake runs
 * it (it follows the chain in memory: the modelled time is the hops made
 * x FAKE_CUDA_LATENCY_NS; a chain that leaves its buffer, a misaligned
 * node, a GPU's memory without peer access fault), then the engine's
 * host_device_latency_sm and device_to_device_latency_sm (copy_engine_run):
 * the configured latencies in ns, N/A pairs, one GPU, -b below 2 MiB, a
 * GPU lost part-way. Each test sets the FAKE_CUDA_* variables; cuInit
 * reads them again. */
#define _GNU_SOURCE
#include "testutil.h"

#include "bench/copy/engine.h"
#include "bench/copy/kernels.h"
#include "lib/cuda_api.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAT_BYTES (2u << 20)
#define NODES (LAT_BYTES / 8)
#define STRIDE 16 /* nodes: nvbandwidth's strideLen */

static struct dl_lib lib;
static struct cuda_api cu;

#define OK(call) assert_int_equal((call), CUDA_SUCCESS)

static int setup(void **state)
{
	(void)state;
	unsigned need = CUDA_NEED_BASE | CUDA_NEED_FACTS | CUDA_NEED_COPY | CUDA_NEED_STREAM | CUDA_NEED_EVENT |
			CUDA_NEED_COPYBENCH;
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

static long long hook(const char *name)
{
	long long (*f)(void) = (long long (*)(void))dlsym(lib.handle, name);
	assert_non_null(f);
	return f();
}

/* The fake's environment (NULL unsets) for n GPUs, read again by cuInit. */
static void fake_env(int n, const char *latency, const char *peer, const char *lost_after)
{
	char devs[8];
	const char *names[] = { "FAKE_CUDA_LATENCY_NS", "FAKE_CUDA_PEER", "FAKE_CUDA_LOST_AFTER" };
	const char *values[] = { latency, peer, lost_after };
	for (int i = 0; i < 3; i++) {
		if (values[i])
			setenv(names[i], values[i], 1);
		else
			unsetenv(names[i]);
	}
	unsetenv("FAKE_CUDA_COPY_GBPS");
	unsetenv("FAKE_CUDA_OOM");
	unsetenv("FAKE_CUDA_LOST_CODE");
	unsetenv("FAKE_CUDA_LOST_DEVICE");
	snprintf(devs, sizeof(devs), "%d", n);
	setenv("FAKE_CUDA_DEVICES", devs, 1);
	OK(cu.init(0));
}

/* nvbandwidth's chain: node i -> node i + 16 (mod n), as addressed at base. */
static void chain(uint64_t *buf, CUdeviceptr base)
{
	for (size_t i = 0; i < NODES; i++)
		buf[i] = (uint64_t)base + ((i + STRIDE) % NODES) * 8;
}

struct gpu {
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction chase;
	CUstream s;
	CUevent start, end;
};

static void gpu_open(struct gpu *g, int ordinal)
{
	OK(cu.device_get(&g->dev, ordinal));
	OK(cu.primary_ctx_retain(&g->ctx, g->dev));
	OK(cu.ctx_set_current(g->ctx));
	OK(cu.module_load_data(&g->mod, copy_kernels_ptx));
	OK(cu.module_get_function(&g->chase, g->mod, CHASE_KERNEL_NAME));
	OK(cu.stream_create(&g->s, CU_STREAM_DEFAULT));
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

/* gpu_close after a fault (sticky: the calls that check fail). */
static void gpu_drop(struct gpu *g)
{
	cu.ctx_set_current(g->ctx);
	cu.event_destroy_v2(g->start);
	cu.event_destroy_v2(g->end);
	cu.stream_destroy_v2(g->s);
	cu.module_unload(g->mod);
	cuda_api_release(&cu, g->dev);
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
 * visited, the hops counted; the blocks that do not chase do nothing. */
static void test_chase_host(void **state)
{
	(void)state;
	struct gpu g;
	uint64_t *h;
	CUdeviceptr d;
	float ms = 0;

	fake_env(2, "host=800,host@1=2000", NULL, NULL);
	gpu_open(&g, 0);
	OK(cu.mem_host_alloc((void **)&h, LAT_BYTES, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_get_device_pointer_v2(&d, h, 0));
	chain(h, d);
	OK(chase(&g, d, 50000, 132, 7, &ms));
	assert_ms(ms, 50000 * 800e-6);
	assert_int_equal(hook("fake_cuda_chase_hops"), 50000);
	assert_int_equal(hook("fake_cuda_chase_nodes"), NODES / STRIDE); /* 16384: 2 MiB / 128 B */
	/* a grid that does not reach the chasing block: nothing walked */
	OK(chase(&g, d, 50000, 4, 7, &ms));
	assert_int_equal(hook("fake_cuda_chase_hops"), 50000);
	/* a stride of one node: every node is visited */
	for (size_t i = 0; i < NODES; i++)
		h[i] = (uint64_t)d + ((i + 1) % NODES) * 8;
	OK(chase(&g, d, NODES + 5, 1, 0, &ms));
	assert_int_equal(hook("fake_cuda_chase_nodes"), NODES);
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
	fake_env(2, "p2p=650,local=500", NULL, NULL);
	gpu_open(&g0, 0);
	gpu_open(&g1, 1);
	CUdeviceptr buf = dev_chain(&g1, c);
	OK(chase(&g1, buf, 10000, 1, 0, &ms));
	assert_ms(ms, 10000 * 500e-6);
	/* GPU 0 without peer access to GPU 1: an illegal address, sticky */
	assert_int_equal(chase(&g0, buf, 10000, 1, 0, &ms), CUDA_ERROR_ILLEGAL_ADDRESS);
	OK(cu.ctx_set_current(g1.ctx));
	OK(cu.mem_free_v2(buf));
	gpu_drop(&g0);
	gpu_close(&g1);

	fake_env(2, "p2p=650,local=500", NULL, NULL);
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
		fake_env(1, NULL, NULL, NULL);
		gpu_open(&g, 0);
		OK(cu.mem_host_alloc((void **)&h, LAT_BYTES, CU_MEMHOSTALLOC_PORTABLE));
		OK(cu.mem_host_get_device_pointer_v2(&d, h, 0));
		OK(cu.mem_alloc_v2(&buf, LAT_BYTES));
		chain(h, d);
		size_t n = cases[k].node;
		h[n] = cases[k].kind == 0 ? (uint64_t)buf : cases[k].kind == 1 ? h[n] + 4 : 0;
		assert_int_equal(chase(&g, d, cases[k].hops, 1, 0, &ms), cases[k].want);
		/* the hops up to the bad node were made */
		long long want_hops = cases[k].want == CUDA_ERROR_LAUNCH_FAILED ? cases[k].hops : (long long)(n / STRIDE + 1);
		assert_int_equal(hook("fake_cuda_chase_hops"), want_hops);
		cu.mem_free_v2(buf);
		cu.mem_free_host(h);
		gpu_drop(&g);
	}
	/* a buffer that runs past its allocation, and pageable memory */
	fake_env(1, NULL, NULL, NULL);
	gpu_open(&g, 0);
	OK(cu.mem_host_alloc((void **)&h, LAT_BYTES / 2, CU_MEMHOSTALLOC_PORTABLE));
	OK(cu.mem_host_get_device_pointer_v2(&d, h, 0));
	assert_int_equal(chase(&g, d, 10, 1, 0, &ms), CUDA_ERROR_ILLEGAL_ADDRESS);
	cu.mem_free_host(h);
	gpu_drop(&g);
	fake_env(1, NULL, NULL, NULL);
	gpu_open(&g, 0);
	uint64_t *pageable = malloc(LAT_BYTES);
	assert_non_null(pageable);
	chain(pageable, (CUdeviceptr)(uintptr_t)pageable);
	assert_int_equal(chase(&g, (CUdeviceptr)(uintptr_t)pageable, 10, 1, 0, &ms), CUDA_ERROR_ILLEGAL_ADDRESS);
	free(pageable);
	gpu_drop(&g);
}

/* ---- the engine ---- */

static struct copy_engine_out *engine_run(const char *tests, int size_mib)
{
	struct copy_plan *p = calloc(1, sizeof(*p));
	struct copy_engine_out *o = calloc(1, sizeof(*o));
	assert_non_null(p);
	assert_non_null(o);
	char *copy = strdup(tests);
	for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		p->tests[p->n_tests] = copy_test_find(t);
		assert_non_null(p->tests[p->n_tests]);
		p->n_tests++;
	}
	free(copy);
	p->size_mib = (uint64_t)size_mib;
	p->loop_count = 16;
	p->samples = 3;
	p->numa = -1;
	p->step_timeout_s = 60;
	assert_int_equal(copy_engine_run(p, o), 0);
	free(p);
	return o;
}

static void assert_ns(double got, double want)
{
	if (!(got >= want * 0.999 && got <= want * 1.01))
		fail_msg("%.3f ns, want %.3f", got, want);
}

/* Three GPUs, peer access between 0 and 1 only: the host row with each
 * GPU's figure, the pairs 0-1 and 1-0 at the p2p figure, the rest N/A
 * with the note; the buffers freed. */
static void test_engine(void **state)
{
	(void)state;
	fake_env(3, "host=800,host@2=1500,p2p=600,p2p@1=640", "0-1,1-0", NULL);
	struct copy_engine_out *o = engine_run("host_device_latency_sm,device_to_device_latency_sm", 4);
	assert_int_equal(o->n_tests, 2);
	struct copy_engine_test *h = &o->tests[0], *d = &o->tests[1];
	assert_int_equal(h->index, 32);
	assert_int_equal(h->status, COPY_RAN);
	assert_int_equal(h->rows, 1);
	assert_int_equal(h->cols, 3);
	assert_ns(h->value[0][0], 800);
	assert_ns(h->value[0][1], 800);
	assert_ns(h->value[0][2], 1500);
	assert_string_equal(h->message, "");
	assert_int_equal(d->index, 33);
	assert_int_equal(d->status, COPY_RAN);
	assert_int_equal(d->rows, 3);
	assert_ns(d->value[0][0 * 3 + 1], 600); /* GPU 0 chases GPU 1's memory */
	assert_ns(d->value[0][1 * 3 + 0], 640); /* GPU 1 chases GPU 0's: p2p@1 */
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 3; c++)
			if (!((r == 0 && c == 1) || (r == 1 && c == 0)))
				assert_true(isnan(d->value[0][r * 3 + c]));
	tu_assert_has(d->message, "N/A: 2 GPU pairs without peer access");
	free(o);
}

/* One GPU: the host test runs, the device test is waived (no pair); -b 1
 * (below the 2 MiB the chase needs): the host buffer is allocated apart,
 * and the note says so. */
static void test_engine_one_gpu(void **state)
{
	(void)state;
	fake_env(1, "host=900", NULL, NULL);
	struct copy_engine_out *o = engine_run("32,33", 1);
	assert_int_equal(o->tests[0].status, COPY_RAN);
	assert_ns(o->tests[0].value[0][0], 900);
	tu_assert_has(o->tests[0].message, "allocated apart (-b is below 2 MiB)");
	assert_int_equal(o->tests[1].status, COPY_WAIVED);
	tu_assert_has(o->tests[1].message, "one GPU: there is no GPU pair");
	free(o);
	fake_env(2, NULL, "none", NULL);
	o = engine_run("33", 512);
	assert_int_equal(o->tests[0].status, COPY_WAIVED);
	tu_assert_has(o->tests[0].message, "no GPU pair with peer access");
	free(o);
}

/* GPU 0 falls off the bus during the chase: the test errors naming the
 * GPU and the call. */
static void test_engine_lost(void **state)
{
	(void)state;
	fake_env(2, NULL, NULL, "60");
	struct copy_engine_out *o = engine_run("32", 4);
	assert_int_equal(o->tests[0].status, COPY_ERROR);
	tu_assert_has(o->tests[0].message, "GPU 0 (");
	tu_assert_has(o->tests[0].message, "CUDA_ERROR_UNKNOWN (999)");
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chase_host),   cmocka_unit_test(test_chase_device),
		cmocka_unit_test(test_chase_wrong_chain), cmocka_unit_test(test_engine),
		cmocka_unit_test(test_engine_one_gpu), cmocka_unit_test(test_engine_lost),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
