/* The NCCL backend (src/bench/backend_nccl.c, nccl_api.c) against the
 * fake libcuda.so.1 and libnccl.so.2 of tests/fakes, since no GPU is
 * available: two "GPUs" in one process, as nccl-tests -g 2 runs them.
 *
 * The program runs in one of three modes (argv[1]), each its own Meson
 * test, because a library once loaded stays in the process (both loaders
 * pin theirs) and NCCL reads its debug settings once per process:
 *   main  LD_LIBRARY_PATH holds the fakes: every collective x type x op
 *         with exact results, deadlines (FAKE_NCCL_HANG), device and
 *         version facts, missing devices, old NCCL, a foreign unique id
 *   log   runs itself again ("log-child") per FAKE_NCCL_SCENARIO with
 *         NCCL_DEBUG=INFO and checks the log file NCCL_DEBUG_FILE names
 *   libs  no fakes on the path: libcuda.so.1 missing, then (fake libcuda
 *         loaded by path) where NCCL is looked for and what a failure says
 *   nographs  the fake libcuda without CUDA graphs comes first on the
 *         path: the backend works, -G's capture says what is missing
 * main also covers CUDA graphs (-G): capture, replay, misuse.
 * $GPUREADY_FAKES is the directory with the fakes. */
#define _GNU_SOURCE
#include "testutil.h"

#include "bench/backend.h"
#include "lib/nccl_api.h"
#include "core/spawn.h"
#include "core/strbuf.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Stand-ins for the harness's src/bench/backend.c and types.c while they
 * are not part of libgpuready; weak, so the real ones win once linked. */
__attribute__((weak)) void backend_set_error(struct backend *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->error, sizeof(b->error), fmt, ap);
	va_end(ap);
}

__attribute__((weak)) size_t dtype_size(enum dtype t)
{
	static const size_t s[DT__COUNT] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2 };
	return s[t];
}

__attribute__((weak)) const char *coll_name(enum coll c)
{
	static const char *const n[COLL__COUNT] = { "all_reduce", "all_gather", "reduce_scatter", "broadcast",
						    "reduce", "alltoall", "sendrecv" };
	return n[c];
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *fakes(void)
{
	const char *d = getenv("GPUREADY_FAKES");
	assert_non_null(d);
	return d;
}

static struct backend_env env_for(int local, const char *nccl_lib)
{
	return (struct backend_env){ .nranks = local, .proc_rank = 0, .nprocs = 1, .local = local, .first_gpu = 0,
				     .nccl_lib = nccl_lib };
}

/* A backend initialised on 2 fake GPUs, or fails the test. */
static struct backend *up(const char *nccl_lib)
{
	struct backend *b = NULL;
	char *err = NULL;
	int r = backend_nccl_create(&b, &err);
	if (r < 0)
		fail_msg("create: %s", err);
	struct backend_env e = env_for(2, nccl_lib);
	r = b->ops->init(b, &e, mono() + 10);
	if (r < 0)
		fail_msg("init: %s", b->error);
	return b;
}

/* init with -G graph: returns the backend initialised, or (want < 0) the
 * one whose init failed with want and a message containing needle. */
static struct backend *up_graph(const char *nccl_lib, int graph, int want, const char *needle)
{
	struct backend *b = NULL;
	char *err = NULL;
	if (backend_nccl_create(&b, &err) < 0)
		fail_msg("create: %s", err);
	struct backend_env e = env_for(2, nccl_lib);
	e.graph = graph;
	int r = b->ops->init(b, &e, mono() + 10);
	if (r != want || (needle && !strstr(b->error, needle)))
		fail_msg("init with -G %d: %d (want %d): %s", graph, r, want, b->error);
	return b;
}

/* ---- values: small integers, exact in every type ---- */

static uint16_t to_half(float f)
{
	int e;
	float m = frexpf(fabsf(f), &e); /* f = m * 2^e, m in [0.5, 1) */
	if (f == 0)
		return 0;
	uint16_t mant = (uint16_t)((m * 2 - 1) * 1024);
	return (uint16_t)((f < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) | mant);
}

static float from_half(uint16_t h)
{
	if (!(h & 0x7fff))
		return 0;
	float v = ldexpf(1 + (float)(h & 0x3ff) / 1024, ((h >> 10) & 0x1f) - 15);
	return h & 0x8000 ? -v : v;
}

static void put(enum dtype t, void *buf, size_t i, double v)
{
	switch (t) {
	case DT_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
	case DT_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
	case DT_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
	case DT_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
	case DT_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
	case DT_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
	case DT_HALF: ((uint16_t *)buf)[i] = to_half((float)v); break;
	case DT_FLOAT: ((float *)buf)[i] = (float)v; break;
	case DT_DOUBLE: ((double *)buf)[i] = v; break;
	case DT_BFLOAT16: {
		float f = (float)v;
		uint32_t x;
		memcpy(&x, &f, sizeof(x));
		((uint16_t *)buf)[i] = (uint16_t)(x >> 16); /* exact for these values */
		break;
	}
	default: fail();
	}
}

static double get(enum dtype t, const void *buf, size_t i)
{
	switch (t) {
	case DT_INT8: return ((const int8_t *)buf)[i];
	case DT_UINT8: return ((const uint8_t *)buf)[i];
	case DT_INT32: return ((const int32_t *)buf)[i];
	case DT_UINT32: return ((const uint32_t *)buf)[i];
	case DT_INT64: return (double)((const int64_t *)buf)[i];
	case DT_UINT64: return (double)((const uint64_t *)buf)[i];
	case DT_HALF: return from_half(((const uint16_t *)buf)[i]);
	case DT_FLOAT: return ((const float *)buf)[i];
	case DT_DOUBLE: return ((const double *)buf)[i];
	case DT_BFLOAT16: {
		uint32_t x = (uint32_t)((const uint16_t *)buf)[i] << 16;
		float f;
		memcpy(&f, &x, sizeof(f));
		return f;
	}
	default: fail();
	}
	return 0;
}

static bool is_int(enum dtype t)
{
	return t != DT_HALF && t != DT_FLOAT && t != DT_DOUBLE && t != DT_BFLOAT16;
}

/* Element i of rank r's input chunk j (j: the chunk a rank sends to rank j,
 * or the chunk of a reduce-scatter input): 1..4. */
static double val(int r, int j, size_t i)
{
	return (double)(1 + (r * 3 + j * 2 + (int)i) % 4);
}

static double reduce2(enum redop op, enum dtype t, double a, double b)
{
	switch (op) {
	case OP_SUM: return a + b;
	case OP_PROD: return a * b;
	case OP_MAX: return a > b ? a : b;
	case OP_MIN: return a < b ? a : b;
	case OP_AVG: return is_int(t) ? trunc((a + b) / 2) : (a + b) / 2;
	default: fail();
	}
	return 0;
}

/* ---- main: collectives ---- */

struct layout {
	size_t send, recv;     /* elements per rank's buffers */
	bool has_op, has_root, in_place;
};

static struct layout layout_of(enum coll c, size_t n, int nranks)
{
	size_t w = n * (size_t)nranks;
	switch (c) {
	case COLL_ALL_REDUCE: return (struct layout){ n, n, true, false, true };
	case COLL_ALL_GATHER: return (struct layout){ n, w, false, false, true };
	case COLL_REDUCE_SCATTER: return (struct layout){ w, n, true, false, true };
	case COLL_BROADCAST: return (struct layout){ n, n, false, true, true };
	case COLL_REDUCE: return (struct layout){ n, n, true, true, true };
	case COLL_ALLTOALL: return (struct layout){ w, w, false, false, false };
	case COLL_SENDRECV: return (struct layout){ n, n, false, false, false };
	default: fail();
	}
	return (struct layout){ 0 };
}

/* What rank r's receive buffer holds afterwards (element k of lay.recv). */
static double expected(enum coll c, enum dtype t, enum redop op, int root, int r, int nranks, size_t n, size_t k,
		       double before)
{
	size_t j = k / n, i = k % n;
	switch (c) {
	case COLL_ALL_REDUCE: return reduce2(op, t, val(0, 0, k), val(1, 0, k));
	case COLL_REDUCE: return r == root ? reduce2(op, t, val(0, 0, k), val(1, 0, k)) : before;
	case COLL_BROADCAST: return val(root, 0, k);
	case COLL_ALL_GATHER: return val((int)j, 0, i);
	case COLL_REDUCE_SCATTER: return reduce2(op, t, val(0, r, k), val(1, r, k));
	case COLL_ALLTOALL: return val((int)j, r, i);
	case COLL_SENDRECV: return val((r - 1 + nranks) % nranks, 0, k);
	default: fail();
	}
	return 0;
}

struct bufs {
	void *dev[2];          /* the allocation per rank */
	void *send[2], *recv[2];
};

/* Allocates and fills rank buffers; in place they share one allocation
 * laid out as NCCL's in-place rules say (backend.h). */
static void fill(struct backend *b, enum coll c, enum dtype t, struct layout lay, size_t n, bool in_place,
		 struct bufs *bf)
{
	size_t ts = dtype_size(t), big = lay.send > lay.recv ? lay.send : lay.recv;
	char *host = calloc(big, ts);

	for (int l = 0; l < 2; l++) {
		void *send, *recv;
		assert_int_equal(b->ops->alloc(b, l, big * ts, &bf->dev[l]), 0);
		memset(host, 0, big * ts);
		assert_int_equal(b->ops->copy_in(b, l, bf->dev[l], host, big * ts), 0);
		if (in_place) {
			recv = bf->dev[l];
			send = c == COLL_ALL_GATHER ? (char *)recv + (size_t)l * n * ts : recv;
			if (c == COLL_REDUCE_SCATTER)
				recv = (char *)send + (size_t)l * n * ts;
		} else {
			send = bf->dev[l];
			assert_int_equal(b->ops->alloc(b, l, big * ts, &recv), 0);
			assert_int_equal(b->ops->copy_in(b, l, recv, host, big * ts), 0);
		}
		for (size_t k = 0; k < lay.send; k++)
			put(t, host, k, val(l, (int)(k / n), k % n));
		assert_int_equal(b->ops->copy_in(b, l, send, host, lay.send * ts), 0);
		bf->send[l] = send;
		bf->recv[l] = recv;
	}
	free(host);
}

static void check_case(struct backend *b, enum coll c, enum dtype t, enum redop op, int root, bool in_place)
{
	const size_t n = 5;
	struct layout lay = layout_of(c, n, 2);
	size_t ts = dtype_size(t);
	struct bufs bf;
	char *got = calloc(lay.recv, ts);

	fill(b, c, t, lay, n, in_place, &bf);
	int r = b->ops->run(b, c, bf.send, bf.recv, n, t, op, root);
	if (r < 0)
		fail_msg("%s %d %d: %s", coll_name(c), t, op, b->error);
	assert_int_equal(b->ops->wait(b, mono() + 5), 0);
	for (int l = 0; l < 2; l++) {
		assert_int_equal(b->ops->copy_out(b, l, got, bf.recv[l], lay.recv * ts), 0);
		for (size_t k = 0; k < lay.recv; k++) {
			/* a non-root reduce leaves its buffer: zero, or its input in place */
			double before = in_place ? val(l, 0, k) : 0;
			double want = expected(c, t, op, root, l, 2, n, k, before);
			if (get(t, got, k) != want)
				fail_msg("%s type %d op %d root %d %s rank %d [%zu]: got %g want %g", coll_name(c), t,
					 op, root, in_place ? "in-place" : "out-of-place", l, k, get(t, got, k), want);
		}
		if (!in_place)
			b->ops->free(b, l, bf.recv[l]);
		b->ops->free(b, l, bf.dev[l]);
	}
	free(got);
}

/* A counter the fake libcuda exports for tests. */
static int fake_count(const char *hook)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	int (*f)(void) = (int (*)(void))dlsym(h, hook);
	assert_non_null(f);
	int n = f();
	dlclose(h);
	return n;
}

static int live_allocs(void)
{
	return fake_count("fake_cuda_live_allocs");
}

static int live_graphs(void)
{
	return fake_count("fake_cuda_live_graphs");
}

/* cluster nccl's split: both local ranks in one group with the ring
 * forced (NCCL_ALGO=Ring while NCCL makes it, put back after), an
 * all_reduce on the child; no color: no child. */
static void test_split(void **state)
{
	(void)state;
	struct backend *b = up(NULL), *c = NULL;
	setenv("NCCL_ALGO", "Tree", 1);
	struct backend_split how = { .color = 3, .key = 0, .ring = true };
	int r = b->ops->split(b, &how, mono() + 10, &c);
	if (r < 0)
		fail_msg("split: %s", b->error);
	assert_non_null(c);
	assert_string_equal(getenv("NCCL_ALGO"), "Tree");
	void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	const char *(*algo)(void) = (const char *(*)(void))dlsym(h, "fake_nccl_split_algo");
	assert_non_null(algo);
	assert_string_equal(algo(), "Ring");
	dlclose(h);
	unsetenv("NCCL_ALGO");
	assert_int_equal(c->env.nranks, 2);
	assert_int_equal(c->env.proc_rank, 0);
	check_case(c, COLL_ALL_REDUCE, DT_FLOAT, OP_SUM, -1, false);
	check_case(c, COLL_ALL_REDUCE, DT_INT32, OP_MAX, -1, true);
	c->ops->fini(c);
	how = (struct backend_split){ .color = -1 };
	c = b;
	assert_int_equal(b->ops->split(b, &how, mono() + 10, &c), 0);
	assert_null(c);
	check_case(b, COLL_ALL_REDUCE, DT_FLOAT, OP_SUM, -1, false); /* the parent still works */
	b->ops->fini(b);
	assert_int_equal(live_allocs(), 0);
}

static void test_every_collective(void **state)
{
	(void)state;
	struct backend *b = up(NULL);
	int cases = 0;

	for (int c = 0; c < COLL__COUNT; c++) {
		struct layout lay = layout_of((enum coll)c, 1, 2);
		for (int t = 0; t < DT__COUNT; t++)
			for (int op = 0; op < (lay.has_op ? OP__COUNT : 1); op++)
				for (int root = lay.has_root ? 0 : -1; root < (lay.has_root ? 2 : 0); root++)
					for (int ip = 0; ip <= (lay.in_place ? 1 : 0); ip++) {
						check_case(b, (enum coll)c, (enum dtype)t, (enum redop)op, root, ip);
						cases++;
					}
	}
	assert_int_equal(cases, 480);
	b->ops->fini(b);
	assert_int_equal(live_allocs(), 0);
}

static void test_explicit_path_device_version(void **state)
{
	(void)state;
	char *path = xasprintf("%s/libnccl.so.2", fakes());
	struct backend *b = up(path);
	struct backend_device d;

	/* the version and the file it came from (the JSON's "library") */
	char *want = xasprintf("NCCL 2.21.5 (%s)", path);
	assert_string_equal(b->ops->version(b), want);
	free(want);
	b->ops->device(b, 0, &d);
	assert_int_equal(d.ordinal, 0);
	assert_string_equal(d.bus_id, "0000:18:00");
	assert_string_equal(d.name, "NVIDIA Fake GPU");
	b->ops->device(b, 1, &d);
	assert_int_equal(d.ordinal, 1);
	assert_string_equal(d.bus_id, "0000:29:00");
	assert_int_equal(b->ops->barrier(b, mono() + 5), 0);

	double sec = -1;
	assert_int_equal(b->ops->timer_begin(b), 0);
	assert_int_equal(b->ops->barrier(b, mono() + 5), 0);
	assert_int_equal(b->ops->timer_end(b, mono() + 5, &sec), 0);
	assert_true(sec >= 0 && sec < 5);
	b->ops->fini(b);
	free(path);
}

/* A collective that never completes: wait gives up at the deadline and
 * names every rank still running; abort then frees the streams. */
static void test_collective_deadline(void **state)
{
	(void)state;
	struct backend *b = up(NULL);
	void *buf[2];

	for (int l = 0; l < 2; l++)
		assert_int_equal(b->ops->alloc(b, l, 64, &buf[l]), 0);
	setenv("FAKE_NCCL_HANG", "coll", 1);
	assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, buf, buf, 16, DT_FLOAT, OP_SUM, -1), 0);
	double t0 = mono();
	assert_int_equal(b->ops->wait(b, t0 + 0.3), -ETIMEDOUT);
	double took = mono() - t0;
	assert_true(took >= 0.3 && took < 3);
	assert_non_null(strstr(b->error, "rank 0 (local 0, GPU 0)"));
	assert_non_null(strstr(b->error, "rank 1 (local 1, GPU 1)"));
	assert_non_null(strstr(b->error, "deadline"));
	double sec;
	assert_int_equal(b->ops->timer_end(b, mono() + 0.1, &sec), -ETIMEDOUT);
	b->ops->abort(b);
	unsetenv("FAKE_NCCL_HANG");
	for (int l = 0; l < 2; l++)
		b->ops->free(b, l, buf[l]);
	b->ops->fini(b);
	assert_int_equal(live_allocs(), 0);
}

/* Communicator setup that never finishes (a peer that never arrives):
 * non-blocking init gives up at the deadline and aborts. */
static void test_init_deadline(void **state)
{
	(void)state;
	struct backend *b = NULL;
	char *err = NULL;
	assert_int_equal(backend_nccl_create(&b, &err), 0);
	struct backend_env e = env_for(2, NULL);
	setenv("FAKE_NCCL_HANG", "init", 1);
	double t0 = mono();
	assert_int_equal(b->ops->init(b, &e, t0 + 0.3), -ETIMEDOUT);
	unsetenv("FAKE_NCCL_HANG");
	assert_true(mono() - t0 < 3);
	assert_non_null(strstr(b->error, "did not finish by the deadline"));
	assert_non_null(strstr(b->error, "rank 0 (local 0, GPU 0)"));
	assert_non_null(strstr(b->error, "rank 1 (local 1, GPU 1)"));
	b->ops->abort(b);
	b->ops->fini(b);
	assert_int_equal(live_allocs(), 0);
}

static void init_fails(const struct backend_env *e, int want, const char *needle)
{
	struct backend *b = NULL;
	char *err = NULL;
	assert_int_equal(backend_nccl_create(&b, &err), 0);
	struct backend_env copy = *e;
	int r = b->ops->init(b, &copy, mono() + 5);
	if (r != want || !strstr(b->error, needle))
		fail_msg("init: %d (want %d): %s (want \"%s\")", r, want, b->error, needle);
	b->ops->fini(b);
}

static void test_no_gpus(void **state)
{
	(void)state;
	struct backend_env e = env_for(2, NULL);
	setenv("FAKE_CUDA_DEVICES", "0", 1);
	init_fails(&e, -ENODEV, "CUDA sees 0 GPUs (cuInit: CUDA_ERROR_NO_DEVICE (100)");
	setenv("FAKE_CUDA_DEVICES", "1", 1);
	init_fails(&e, -ENODEV, "CUDA sees 1 GPU; this process needs GPUs 0..1");
	unsetenv("FAKE_CUDA_DEVICES");
	e.first_gpu = 1;
	init_fails(&e, -ENODEV, "CUDA sees 2 GPUs; this process needs GPUs 1..2 (2 local ranks from GPU 1)");
}

/* --nccl-lib is the only place tried when given, even with a NCCL on the
 * library path. */
static void test_explicit_path_missing(void **state)
{
	(void)state;
	struct backend_env e = env_for(2, "/nonexistent/libnccl.so.2");
	init_fails(&e, -ENOENT, "--nccl-lib /nonexistent/libnccl.so.2: /nonexistent/libnccl.so.2: cannot open shared "
				"object file");
	init_fails(&e, -ENOENT, "apt install libnccl2 from NVIDIA's CUDA repository, or pip install "
				"nvidia-nccl-cu12, or give --nccl-lib PATH");
}

/* An NCCL older than 2.14 has no non-blocking init: the blocking path
 * (and the pre-2.9 version code) work, and 2.10's additions are refused. */
static void test_old_nccl(void **state)
{
	(void)state;
	setenv("FAKE_NCCL_VERSION", "2708", 1);
	struct backend *b = up(NULL);
	void *buf[2];
	/* found through the soname: named by the file the dynamic linker chose */
	char *want = xasprintf("NCCL 2.7.8 (%s/libnccl.so.2)", fakes());
	assert_string_equal(b->ops->version(b), want);
	free(want);
	for (int l = 0; l < 2; l++)
		assert_int_equal(b->ops->alloc(b, l, 64, &buf[l]), 0);
	assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, buf, buf, 4, DT_BFLOAT16, OP_SUM, -1), -ENOTSUP);
	assert_non_null(strstr(b->error, "bfloat16 needs NCCL 2.10 or newer; this is NCCL 2.7.8"));
	assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, buf, buf, 4, DT_FLOAT, OP_AVG, -1), -ENOTSUP);
	assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, buf, buf, 4, DT_FLOAT, OP_SUM, -1), 0);
	assert_int_equal(b->ops->wait(b, mono() + 5), 0);
	assert_int_equal(b->ops->capture_begin(b), -ENOTSUP);
	assert_non_null(strstr(b->error, "CUDA graphs (-G) need NCCL 2.9 or newer (as nccl-tests -G); this is NCCL 2.7.8"));
	for (int l = 0; l < 2; l++)
		b->ops->free(b, l, buf[l]);
	b->ops->fini(b);
	b = up_graph(NULL, 3, -ENOTSUP, "need NCCL 2.9 or newer"); /* -G refused at init */
	b->ops->fini(b);
	unsetenv("FAKE_NCCL_VERSION");
}

/* Communicator setup that fails keeps NCCL's own reason: ncclGetLastError
 * (NCCL 2.13+) is asked with no communicator, since none exists yet. Both
 * the non-blocking (2.14+) and the blocking init. */
static void test_init_last_error(void **state)
{
	(void)state;
	struct backend_env e = env_for(2, NULL);
	setenv("FAKE_NCCL_INIT_FAIL", "Bootstrap : no socket interface found", 1);
	init_fails(&e, -EIO, "ncclCommInitRankConfig: unhandled system error (run with NCCL_DEBUG=INFO for details) "
			     "(2); NCCL's last error: Bootstrap : no socket interface found");
	setenv("FAKE_NCCL_VERSION", "21300", 1);
	init_fails(&e, -EIO, "ncclCommInitRank: unhandled system error (run with NCCL_DEBUG=INFO for details) (2); "
			     "NCCL's last error: Bootstrap : no socket interface found");
	unsetenv("FAKE_NCCL_VERSION");
	unsetenv("FAKE_NCCL_INIT_FAIL");
}

static int fake_bcast(void *ctx, void *buf, size_t len, double deadline)
{
	(void)deadline;
	int pid = 1; /* not this process */
	assert_int_equal(len, sizeof(ncclUniqueId));
	memset(buf, 0, len);
	memcpy(buf, "FAKENCCL", 8);
	memcpy((char *)buf + 8, &pid, sizeof(pid));
	(*(int *)ctx)++;
	return 0;
}

/* Process 1 of 2 takes the id from the out-of-band broadcast; the fake
 * NCCL refuses one from another process, and its WARN is in the message.
 * Without a broadcast, init says so. */
static void test_multi_process(void **state)
{
	(void)state;
	int calls = 0;
	struct backend_env e = { .nranks = 2, .proc_rank = 1, .nprocs = 2, .local = 1, .first_gpu = 1,
				 .oob_bcast = fake_bcast, .oob_ctx = &calls };
	init_fails(&e, -EIO, "ncclCommInitRankConfig: invalid usage");
	init_fails(&e, -EIO, "NCCL's last error: fake NCCL: single process only");
	assert_int_equal(calls, 2);
	e.oob_bcast = NULL;
	init_fails(&e, -EINVAL, "no out-of-band exchange");
	e.nranks = 3;
	init_fails(&e, -EINVAL, "3 ranks do not fit 2 process(es) x 1 GPU(s)");
}

/* The event group of the CUDA loader (not used by the backend, which
 * times with the host clock as nccl-tests does). */
static void test_cuda_events(void **state)
{
	(void)state;
	struct dl_lib lib;
	struct cuda_api cu;
	CUcontext ctx;
	CUstream s;
	CUevent a, z;
	float ms = -1;

	assert_int_equal(cuda_api_load(&lib, &cu, CUDA_NEED_BASE | CUDA_NEED_STREAM | CUDA_NEED_EVENT), 0);
	assert_int_equal(cu.init(0), CUDA_SUCCESS);
	assert_int_equal(cu.primary_ctx_retain(&ctx, 0), CUDA_SUCCESS);
	assert_int_equal(cu.ctx_set_current(ctx), CUDA_SUCCESS);
	assert_int_equal(cu.stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	assert_int_equal(cu.event_create(&a, CU_EVENT_DEFAULT), CUDA_SUCCESS);
	assert_int_equal(cu.event_create(&z, CU_EVENT_DEFAULT), CUDA_SUCCESS);
	assert_int_equal(cu.event_record(a, s), CUDA_SUCCESS);
	assert_int_equal(cu.event_record(z, s), CUDA_SUCCESS);
	assert_int_equal(cu.event_synchronize(z), CUDA_SUCCESS);
	assert_int_equal(cu.event_query(z), CUDA_SUCCESS);
	assert_int_equal(cuda_api_elapsed(&cu, &ms, a, z), CUDA_SUCCESS);
	assert_true(ms >= 0 && ms < 1000);
	assert_int_equal(cu.event_destroy_v2(a), CUDA_SUCCESS);
	assert_int_equal(cu.event_destroy_v2(z), CUDA_SUCCESS);
	assert_int_equal(cu.stream_synchronize(s), CUDA_SUCCESS);
	assert_int_equal(cu.stream_destroy_v2(s), CUDA_SUCCESS);
	assert_int_equal(cu.ctx_set_current(NULL), CUDA_SUCCESS);
	assert_int_equal(cuda_api_release(&cu, 0), CUDA_SUCCESS);
	dl_close(&lib);
}

static void test_version_decode(void **state)
{
	(void)state;
	int a, b, c;
	assert_int_equal(nccl_version_decode(22105, &a, &b, &c), 0);
	assert_true(a == 2 && b == 21 && c == 5);
	assert_int_equal(nccl_version_decode(20900, &a, &b, &c), 0);
	assert_true(a == 2 && b == 9 && c == 0);
	assert_int_equal(nccl_version_decode(2708, &a, &b, &c), 0);
	assert_true(a == 2 && b == 7 && c == 8);
	assert_int_equal(nccl_version_decode(23007, &a, &b, &c), 0);
	assert_true(a == 2 && b == 30 && c == 7);
	assert_int_equal(nccl_version_decode(0, &a, &b, &c), -EINVAL);
	assert_int_equal(NCCL_VERSION_CODE(2, 8, 4), 2804);
	assert_int_equal(NCCL_VERSION_CODE(2, 14, 0), 21400);
}

/* ---- main: CUDA graphs (-G) ---- */

enum { GN = 8 };

/* n floats on rank l, each v(i). */
static void *gbuf(struct backend *b, int l, double (*v)(int l, size_t i))
{
	float host[GN];
	void *p;
	for (size_t i = 0; i < GN; i++)
		host[i] = (float)v(l, i);
	assert_int_equal(b->ops->alloc(b, l, sizeof(host), &p), 0);
	assert_int_equal(b->ops->copy_in(b, l, p, host, sizeof(host)), 0);
	return p;
}

static double g_input(int l, size_t i)
{
	return (double)(l + 1) * (double)(i + 1);
}

static double g_zero(int l, size_t i)
{
	(void)l, (void)i;
	return 0;
}

static double g_one(int l, size_t i)
{
	(void)l, (void)i;
	return 1;
}

/* Every element of rank l's p is want(l, i), or the test fails. */
static void gcheck(struct backend *b, int l, void *p, double (*want)(int l, size_t i), const char *what)
{
	float got[GN];
	assert_int_equal(b->ops->copy_out(b, l, got, p, sizeof(got)), 0);
	for (size_t i = 0; i < GN; i++)
		if (got[i] != (float)want(l, i))
			fail_msg("%s: rank %d [%zu]: got %g want %g", what, l, i, got[i], want(l, i));
}

static double g_sum(int l, size_t i)
{
	(void)l;
	return 3.0 * (double)(i + 1); /* g_input of both ranks */
}

static double g_from_peer(int l, size_t i)
{
	return g_input(1 - l, i); /* sendrecv on 2 ranks: from the other one */
}

static double g_doubled_6(int l, size_t i)
{
	(void)l, (void)i;
	return 64; /* ones summed over 2 ranks, 3 captured x 2 launches */
}

/* Captured with -g 2: an out-of-place sum (idempotent), three in-place
 * sums of ones (each doubles them: 2^(3 x launches) counts the replays)
 * and a sendrecv (a grouped send/receive pair per rank). Nothing runs
 * until the graphs launch; each launch replays all of it. */
static void test_graph_replay(void **state)
{
	(void)state;
	struct backend *b = up(NULL);
	void *in[2], *out[2], *acc[2], *sr[2];

	for (int l = 0; l < 2; l++) {
		in[l] = gbuf(b, l, g_input);
		out[l] = gbuf(b, l, g_zero);
		acc[l] = gbuf(b, l, g_one);
		sr[l] = gbuf(b, l, g_zero);
	}
	assert_int_equal(b->ops->capture_begin(b), 0);
	assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, in, out, GN, DT_FLOAT, OP_SUM, -1), 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, acc, acc, GN, DT_FLOAT, OP_SUM, -1), 0);
	assert_int_equal(b->ops->run(b, COLL_SENDRECV, in, sr, GN, DT_FLOAT, OP_SUM, -1), 0);
	assert_int_equal(b->ops->wait(b, mono() + 5), 0); /* no stream query while capturing */
	assert_int_equal(b->ops->capture_end(b), 0);
	for (int l = 0; l < 2; l++) {
		gcheck(b, l, out[l], g_zero, "captured, not launched");
		gcheck(b, l, acc[l], g_one, "captured, not launched");
	}
	double sec = -1;
	assert_int_equal(b->ops->barrier(b, mono() + 5), 0);
	assert_int_equal(b->ops->timer_begin(b), 0);
	for (int m = 0; m < 2; m++)
		assert_int_equal(b->ops->graph_launch(b), 0);
	assert_int_equal(b->ops->timer_end(b, mono() + 5, &sec), 0);
	assert_true(sec >= 0 && sec < 5);
	for (int l = 0; l < 2; l++) {
		gcheck(b, l, out[l], g_sum, "all_reduce out of place");
		gcheck(b, l, acc[l], g_doubled_6, "3 in-place all_reduce x 2 launches");
		gcheck(b, l, sr[l], g_from_peer, "sendrecv");
	}
	assert_int_equal(live_graphs(), 4); /* a graph and an executable graph per rank */
	b->ops->graph_free(b);
	b->ops->graph_free(b);
	assert_int_equal(live_graphs(), 0);

	/* a second capture; fini frees its graphs */
	assert_int_equal(b->ops->capture_begin(b), 0);
	assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, in, acc, GN, DT_FLOAT, OP_SUM, -1), 0);
	assert_int_equal(b->ops->capture_end(b), 0);
	assert_int_equal(b->ops->graph_launch(b), 0);
	assert_int_equal(b->ops->wait(b, mono() + 5), 0);
	for (int l = 0; l < 2; l++) {
		gcheck(b, l, acc[l], g_sum, "second capture");
		b->ops->free(b, l, in[l]);
		b->ops->free(b, l, out[l]);
		b->ops->free(b, l, acc[l]);
		b->ops->free(b, l, sr[l]);
	}
	b->ops->fini(b);
	assert_int_equal(live_graphs(), 0);
	assert_int_equal(live_allocs(), 0);
}

static void want_error(struct backend *b, int r, int want, const char *needle)
{
	if (r != want || !strstr(b->error, needle))
		fail_msg("got %d (want %d): %s (want \"%s\")", r, want, b->error, needle);
}

/* -G with two GPUs in one process: NCCL's graph mixing, which its guide
 * says can deadlock when one thread launches several communicators'
 * graphs, is switched off before the communicators exist, unless the
 * user chose; without -G it is left alone. */
static void test_graph_env(void **state)
{
	(void)state;
	unsetenv("NCCL_GRAPH_MIXING_SUPPORT");
	struct backend *b = up(NULL);
	assert_null(getenv("NCCL_GRAPH_MIXING_SUPPORT"));
	b->ops->fini(b);
	b = up_graph(NULL, 2, 0, NULL);
	assert_non_null(getenv("NCCL_GRAPH_MIXING_SUPPORT"));
	assert_string_equal(getenv("NCCL_GRAPH_MIXING_SUPPORT"), "0");
	b->ops->fini(b);
	setenv("NCCL_GRAPH_MIXING_SUPPORT", "1", 1);
	b = up_graph(NULL, 2, 0, NULL);
	assert_string_equal(getenv("NCCL_GRAPH_MIXING_SUPPORT"), "1");
	b->ops->fini(b);
	unsetenv("NCCL_GRAPH_MIXING_SUPPORT");
	assert_int_equal(live_allocs(), 0);
}

static double g_eight(int l, size_t i)
{
	(void)l, (void)i;
	return 8; /* ones, summed over 2 ranks 3 times in place */
}

/* -m: three in-place sums of ones between group_begin and group_end are
 * issued together at group_end (nested in run()'s own groups) and each
 * still takes effect; an unbalanced group_end is NCCL's error, named. */
static void test_group(void **state)
{
	(void)state;
	struct backend *b = up(NULL);
	void *acc[2];

	for (int l = 0; l < 2; l++)
		acc[l] = gbuf(b, l, g_one);
	assert_int_equal(b->ops->group_begin(b), 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, acc, acc, GN, DT_FLOAT, OP_SUM, -1), 0);
	for (int l = 0; l < 2; l++)
		gcheck(b, l, acc[l], g_one, "grouped, not issued before group_end");
	assert_int_equal(b->ops->group_end(b), 0);
	assert_int_equal(b->ops->wait(b, mono() + 5), 0);
	for (int l = 0; l < 2; l++) {
		gcheck(b, l, acc[l], g_eight, "3 grouped in-place all_reduce");
		b->ops->free(b, l, acc[l]);
	}
	want_error(b, b->ops->group_end(b), -EIO, "ncclGroupEnd");
	b->ops->fini(b);
	assert_int_equal(live_allocs(), 0);
}

/* Calls out of order fail with what was wrong, and leave the backend
 * usable: a launch before capture_end, calls a capture forbids, an
 * abandoned capture. */
static void test_graph_misuse(void **state)
{
	(void)state;
	struct backend *b = up(NULL);
	void *buf[2], *p = NULL;
	float host[GN] = { 0 };

	for (int l = 0; l < 2; l++)
		buf[l] = gbuf(b, l, g_one);
	want_error(b, b->ops->graph_launch(b), -EINVAL, "nccl: graph_launch without a graph");
	want_error(b, b->ops->capture_end(b), -EINVAL, "nccl: capture_end without capture_begin");

	assert_int_equal(b->ops->capture_begin(b), 0);
	assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, buf, buf, GN, DT_FLOAT, OP_SUM, -1), 0);
	want_error(b, b->ops->graph_launch(b), -EBUSY, "nccl: graph_launch during a CUDA graph capture");
	want_error(b, b->ops->capture_begin(b), -EBUSY, "capture_begin during a CUDA graph capture");
	want_error(b, b->ops->copy_in(b, 0, buf[0], host, sizeof(host)), -EBUSY, "copy_in during");
	want_error(b, b->ops->copy_out(b, 0, host, buf[0], sizeof(host)), -EBUSY, "copy_out during");
	want_error(b, b->ops->alloc(b, 0, 64, &p), -EBUSY, "alloc during");
	want_error(b, b->ops->barrier(b, mono() + 5), -EBUSY, "barrier during");
	assert_null(p);
	b->ops->graph_free(b); /* abandons the capture */
	assert_int_equal(live_graphs(), 0);
	want_error(b, b->ops->graph_launch(b), -EINVAL, "without a graph");
	gcheck(b, 0, buf[0], g_one, "abandoned capture");

	/* the streams work as before, and capture again */
	assert_int_equal(b->ops->barrier(b, mono() + 5), 0);
	assert_int_equal(b->ops->capture_begin(b), 0);
	assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, buf, buf, GN, DT_FLOAT, OP_SUM, -1), 0);
	assert_int_equal(b->ops->capture_end(b), 0);
	assert_int_equal(b->ops->graph_launch(b), 0);
	assert_int_equal(b->ops->wait(b, mono() + 5), 0);
	for (int l = 0; l < 2; l++) {
		float two[GN];
		assert_int_equal(b->ops->copy_out(b, l, two, buf[l], sizeof(two)), 0);
		assert_true(two[0] == 2 && two[GN - 1] == 2);
		b->ops->free(b, l, buf[l]);
	}
	b->ops->fini(b);
	assert_int_equal(live_graphs(), 0);
	assert_int_equal(live_allocs(), 0);
}

/* A graph whose collectives never complete: wait gives up at the deadline
 * naming the ranks, as for launches without graphs. */
static void test_graph_deadline(void **state)
{
	(void)state;
	struct backend *b = up(NULL);
	void *buf[2];

	for (int l = 0; l < 2; l++)
		buf[l] = gbuf(b, l, g_one);
	assert_int_equal(b->ops->capture_begin(b), 0);
	assert_int_equal(b->ops->run(b, COLL_ALL_REDUCE, buf, buf, GN, DT_FLOAT, OP_SUM, -1), 0);
	assert_int_equal(b->ops->capture_end(b), 0);
	setenv("FAKE_NCCL_HANG", "coll", 1);
	assert_int_equal(b->ops->graph_launch(b), 0);
	want_error(b, b->ops->wait(b, mono() + 0.3), -ETIMEDOUT, "rank 0 (local 0, GPU 0), rank 1 (local 1, GPU 1)");
	b->ops->abort(b);
	unsetenv("FAKE_NCCL_HANG");
	for (int l = 0; l < 2; l++)
		b->ops->free(b, l, buf[l]);
	b->ops->fini(b);
	assert_int_equal(live_graphs(), 0);
	assert_int_equal(live_allocs(), 0);
}

/* The loader's graph group, and the capture rules the fake driver
 * enforces as CUDA does (tests/fakes/fake_cuda.c). */
static void test_cuda_graph_api(void **state)
{
	(void)state;
	struct dl_lib lib;
	struct cuda_api cu, old, none = { 0 };
	CUcontext ctx;
	CUstream s;
	CUgraph g = NULL;
	CUgraphExec e = NULL;
	CUdeviceptr p = 0;

	assert_int_equal(cuda_api_load(&lib, &cu, CUDA_NEED_BASE | CUDA_NEED_STREAM | CUDA_NEED_GRAPH), 0);
	assert_null(cuda_api_missing(&cu, CUDA_NEED_BASE | CUDA_NEED_STREAM | CUDA_NEED_GRAPH));
	assert_string_equal(cuda_api_missing(&none, CUDA_NEED_GRAPH), "cuStreamBeginCapture_v2");
	old = cu;
	old.graph_instantiate_with_flags = NULL; /* a driver before CUDA 11.4 */
	assert_null(cuda_api_missing(&old, CUDA_NEED_GRAPH));
	old.graph_instantiate_v2 = NULL;
	assert_string_equal(cuda_api_missing(&old, CUDA_NEED_GRAPH),
			    "cuGraphInstantiateWithFlags (or cuGraphInstantiate_v2)");

	assert_int_equal(cu.init(0), CUDA_SUCCESS);
	assert_int_equal(cu.primary_ctx_retain(&ctx, 0), CUDA_SUCCESS);
	assert_int_equal(cu.ctx_set_current(ctx), CUDA_SUCCESS);
	assert_int_equal(cu.stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);

	/* a query of a capturing stream fails and invalidates the capture */
	assert_int_equal(cu.stream_begin_capture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
	assert_int_equal(cu.stream_begin_capture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cu.mem_alloc_v2(&p, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cu.ctx_synchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cu.stream_query(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	g = (CUgraph)&g;
	assert_int_equal(cu.stream_end_capture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	assert_null(g);
	assert_int_equal(cu.stream_end_capture(s, &g), CUDA_ERROR_INVALID_VALUE);

	/* an empty capture, instantiated the pre-11.4 way, launches */
	assert_int_equal(cu.stream_begin_capture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	assert_int_equal(cu.stream_end_capture(s, &g), CUDA_SUCCESS);
	assert_non_null(g);
	old = cu;
	old.graph_instantiate_with_flags = NULL;
	assert_int_equal(cuda_api_instantiate(&old, &e, g), CUDA_SUCCESS);
	assert_int_equal(cu.graph_launch(e, s), CUDA_SUCCESS);
	assert_int_equal(cu.stream_synchronize(s), CUDA_SUCCESS);
	assert_int_equal(live_graphs(), 2);
	assert_int_equal(cu.graph_destroy(g), CUDA_SUCCESS); /* the executable graph stays usable */
	assert_int_equal(cu.graph_launch(e, s), CUDA_SUCCESS);
	assert_int_equal(cu.graph_exec_destroy(e), CUDA_SUCCESS);
	assert_int_equal(live_graphs(), 0);

	char msg[256];
	cuda_api_format(&cu, "cuStreamEndCapture", CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, msg, sizeof(msg));
	assert_string_equal(msg, "cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901): operation failed "
				 "due to a previous error during capture");
	assert_int_equal(cu.stream_destroy_v2(s), CUDA_SUCCESS);
	assert_int_equal(cu.ctx_set_current(NULL), CUDA_SUCCESS);
	assert_int_equal(cuda_api_release(&cu, 0), CUDA_SUCCESS);
	dl_close(&lib);
}

/* ---- nographs: a driver without CUDA graphs ---- */

static void test_no_graphs(void **state)
{
	(void)state;
	struct dl_lib lib;
	struct cuda_api cu;

	assert_int_equal(cuda_api_load(&lib, &cu, CUDA_NEED_BASE | CUDA_NEED_GRAPH), -ENOSYS);
	assert_non_null(strstr(lib.error, "libcuda.so.1: required symbol cuStreamBeginCapture_v2 missing"));
	dl_close(&lib);

	static const char no_graphs[] = "CUDA graphs (-G) are not available: the CUDA driver library libcuda.so.1 "
					"lacks cuStreamBeginCapture_v2 (CUDA 11.4 and newer drivers have every graph "
					"call used); run without -G";
	/* asked for -G: init refuses, before anything runs */
	struct backend *b = up_graph(NULL, 2, -ENOTSUP, no_graphs);
	b->ops->fini(b);

	b = up(NULL);
	want_error(b, b->ops->capture_begin(b), -ENOTSUP, no_graphs);
	want_error(b, b->ops->graph_launch(b), -EINVAL, "without a graph");
	want_error(b, b->ops->capture_end(b), -EINVAL, "without capture_begin");
	assert_int_equal(b->ops->barrier(b, mono() + 5), 0);
	b->ops->graph_free(b);
	b->ops->fini(b);
	assert_int_equal(live_allocs(), 0);
}

/* ---- log: what the fake NCCL writes with NCCL_DEBUG=INFO ---- */

/* The child: one 2-GPU communicator and an all-reduce; prints its pid. */
static int log_child(void)
{
	struct backend *b = NULL;
	char *err = NULL;
	if (backend_nccl_create(&b, &err) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct backend_env e = env_for(2, NULL);
	int r = b->ops->init(b, &e, mono() + 10);
	if (r == 0)
		r = b->ops->barrier(b, mono() + 10);
	if (r < 0)
		fprintf(stderr, "%s\n", b->error);
	b->ops->fini(b);
	printf("%d\n", (int)getpid());
	return r < 0;
}

/* Runs the child with the scenario and subsystems given; returns the log
 * text (malloc'd) from the file NCCL_DEBUG_FILE named with %h and %p. */
static char *run_logged(const char *dir, const char *scenario, const char *subsys)
{
	char self[4096], host[256] = "";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	char *pattern = xasprintf("%s/nccl.%%h.%%p.log", dir);
	setenv("NCCL_DEBUG", "INFO", 1);
	setenv("NCCL_DEBUG_FILE", pattern, 1);
	setenv("FAKE_NCCL_SCENARIO", scenario, 1);
	if (subsys)
		setenv("NCCL_DEBUG_SUBSYS", subsys, 1);
	else
		unsetenv("NCCL_DEBUG_SUBSYS");
	const char *argv[] = { self, "log-child", NULL };
	struct spawn_result res;
	assert_int_equal(spawn_run(argv, NULL, 30000, &res), 0);
	if (res.exit_code != 0)
		fail_msg("log-child failed: %s", res.err.buf);
	gethostname(host, sizeof(host) - 1);
	host[strcspn(host, ".")] = '\0';
	char *file = xasprintf("%s/nccl.%s.%d.log", dir, host, atoi(res.out.buf));
	FILE *f = fopen(file, "r");
	if (!f)
		fail_msg("no log file %s", file);
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, got);
	fclose(f);
	remove(file);
	free(file);
	free(pattern);
	spawn_result_free(&res);
	return strbuf_detach(&sb);
}

static void has_line(const char *log, const char *msg)
{
	/* "<host>:<pid>:<tid> [<dev>] NCCL INFO <msg>" */
	char *needle = xasprintf("] NCCL INFO %s\n", msg);
	if (!strstr(log, needle))
		fail_msg("log lacks \"%s\":\n%s", needle, log);
	free(needle);
}

static void test_log_scenarios(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();

	char *log = run_logged(dir, "ib-gdr", "INIT,NET");
	has_line(log, "NCCL version 2.21.5+cuda12.4");
	has_line(log, "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>");
	has_line(log, "Using network IB");
	has_line(log, "NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'");
	has_line(log, "NET/IB : GPU Direct RDMA Enabled for HCA 1 'mlx5_1'");
	has_line(log, "DMA-BUF is available on GPU device 0");
	has_line(log, "DMA-BUF is available on GPU device 1");
	has_line(log, "Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA");
	has_line(log, "Channel 00/0 : 0[0] -> 1[1] [receive] via NET/IB/0/GDRDMA");
	assert_non_null(strstr(log, "[1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [receive]")); /* rank 1's own line */
	free(log);

	/* NCCL's default subsystems leave out NET: no GPUDirect verdicts */
	log = run_logged(dir, "ib-gdr", NULL);
	has_line(log, "Using network IB");
	assert_null(strstr(log, "GPU Direct RDMA"));
	free(log);

	log = run_logged(dir, "socket", "INIT,NET");
	has_line(log, "NET/IB : No device found.");
	has_line(log, "NET/Socket : Using [0]eth0:10.0.0.1<0>");
	has_line(log, "Using network Socket");
	has_line(log, "Channel 01/0 : 1[1] -> 0[0] [send] via NET/Socket/0");
	assert_null(strstr(log, "GPU Direct RDMA"));
	free(log);

	log = run_logged(dir, "p2p-single-node", "ALL");
	has_line(log, "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>");
	has_line(log, "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read");
	has_line(log, "Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read");
	assert_null(strstr(log, "via NET/"));
	free(log);

	unsetenv("NCCL_DEBUG");
	unsetenv("NCCL_DEBUG_FILE");
	unsetenv("NCCL_DEBUG_SUBSYS");
	unsetenv("FAKE_NCCL_SCENARIO");
	tu_rmtree(dir);
	free(dir);
}

/* ---- libs: nothing on the library path ---- */

static bool lib_present(const char *soname)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (h)
		dlclose(h);
	return h != NULL;
}

/* Runs first in this process, before any libcuda is loaded. */
static void test_no_libcuda(void **state)
{
	(void)state;
	struct backend *b = NULL;
	char *err = NULL;

	if (lib_present("libcuda.so.1")) {
		print_message("a libcuda.so.1 is installed here; skipped\n");
		skip();
	}
	assert_int_equal(backend_nccl_create(&b, &err), -ENOENT);
	assert_null(b);
	assert_non_null(strstr(err, "libcuda.so.1: cannot open shared object file"));
	assert_non_null(strstr(err, "NVIDIA driver"));
	free(err);
}

/* A virtualenv whose python prints a sys.path entry holding the wheel's
 * layout, and whose lib/python3.11/site-packages holds it too. */
static char *make_venv(void)
{
	char *d = tu_mkdtemp();
	char *lib = xasprintf("%s/libnccl.so.2", fakes());
	char *script = xasprintf("#!/bin/sh\necho\necho relative/ignored\necho %s/pathdir\necho /nonexistent\n", d);
	tu_write(d, "bin/python", script);
	char *py = xasprintf("%s/bin/python", d);
	assert_int_equal(chmod(py, 0755), 0);
	tu_symlink(d, "pathdir/nvidia/nccl/lib/libnccl.so.2", lib);
	tu_symlink(d, "lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2", lib);
	free(py);
	free(script);
	free(lib);
	return d;
}

static void test_wheels(void **state)
{
	(void)state;
	char *venv = make_venv();
	struct strv c = STRV_INIT;
	struct strbuf searched = STRBUF_INIT;

	setenv("VIRTUAL_ENV", venv, 1);
	nccl_api_wheels(&c, &searched);
	assert_int_equal(c.n, 2);
	char *want1 = xasprintf("%s/pathdir/nvidia/nccl/lib/libnccl.so.2", venv);
	char *want2 = xasprintf("%s/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2", venv);
	assert_string_equal(c.v[0], want1);
	assert_string_equal(c.v[1], want2);
	assert_non_null(strstr(searched.buf, "/bin/python sys.path (2 entries)"));
	assert_non_null(strstr(searched.buf, "$VIRTUAL_ENV"));

	/* the wheel's file, given by path, is the fake */
	struct nccl_api api;
	char *err = NULL;
	assert_int_equal(nccl_api_load(&api, want2, &err), 0);
	assert_string_equal(api.version, "NCCL 2.21.5");
	assert_true(nccl_api_has_nonblocking_init(&api));
	nccl_api_unload(&api);

	unsetenv("VIRTUAL_ENV");
	strv_free(&c);
	strbuf_release(&searched);
	free(want1);
	free(want2);
	tu_rmtree(venv);
	free(venv);
}

/* With no NCCL anywhere, the message lists every place tried and the fix.
 * Where a system NCCL exists (a CUDA toolkit's lib/ in ld.so.cache), it is
 * loaded instead: then its version must decode. */
static void test_no_nccl(void **state)
{
	(void)state;
	struct nccl_api api;
	char *err = NULL;
	char *venv = tu_mkdtemp();

	setenv("VIRTUAL_ENV", venv, 1);
	int r = nccl_api_load(&api, NULL, &err);
	unsetenv("VIRTUAL_ENV");
	if (r == 0) {
		print_message("system %s at %s\n", api.version, api.lib.path);
		assert_true(api.major == 2 && api.minor >= 7);
		assert_non_null(api.comm_abort);
		nccl_api_unload(&api);
		tu_rmtree(venv);
		free(venv);
		skip();
	}
	assert_int_equal(r, -ENOENT);
	assert_non_null(strstr(err, "NCCL (libnccl.so.2) could not be loaded; tried libnccl.so.2: cannot open shared "
				    "object file"));
	assert_non_null(strstr(err, "nvidia/nccl/lib/libnccl.so.2 was looked for in"));
	assert_non_null(strstr(err, "sys.path"));
	assert_non_null(strstr(err, "pip install nvidia-nccl-cu12"));
	free(err);
	nccl_api_unload(&api);
	tu_rmtree(venv);
	free(venv);
}

/* The fake libcuda loaded by path answers to its soname from then on. */
static void test_preload_cuda(void **state)
{
	(void)state;
	char *path = xasprintf("%s/libcuda.so.1", fakes());
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	assert_non_null(h);
	struct backend *b = NULL;
	char *err = NULL;
	assert_int_equal(backend_nccl_create(&b, &err), 0);
	b->ops->fini(b);
	dlclose(h);
	free(path);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "main";
	const struct CMUnitTest main_tests[] = {
		cmocka_unit_test(test_version_decode),
		cmocka_unit_test(test_cuda_events),
		cmocka_unit_test(test_every_collective),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_explicit_path_device_version),
		cmocka_unit_test(test_collective_deadline),
		cmocka_unit_test(test_init_deadline),
		cmocka_unit_test(test_no_gpus),
		cmocka_unit_test(test_explicit_path_missing),
		cmocka_unit_test(test_old_nccl),
		cmocka_unit_test(test_multi_process),
		cmocka_unit_test(test_init_last_error),
		cmocka_unit_test(test_cuda_graph_api),
		cmocka_unit_test(test_graph_replay),
		cmocka_unit_test(test_graph_misuse),
		cmocka_unit_test(test_graph_deadline),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_graph_env),
	};
	const struct CMUnitTest nographs_tests[] = {
		cmocka_unit_test(test_no_graphs),
	};
	const struct CMUnitTest log_tests[] = {
		cmocka_unit_test(test_log_scenarios),
	};
	const struct CMUnitTest lib_tests[] = {
		cmocka_unit_test(test_no_libcuda),
		cmocka_unit_test(test_no_nccl),
		cmocka_unit_test(test_wheels),
		cmocka_unit_test(test_preload_cuda),
	};

	if (!strcmp(mode, "log-child"))
		return log_child();
	if (!strcmp(mode, "log"))
		return cmocka_run_group_tests_name("backend_nccl log", log_tests, NULL, NULL);
	if (!strcmp(mode, "libs"))
		return cmocka_run_group_tests_name("backend_nccl libs", lib_tests, NULL, NULL);
	if (!strcmp(mode, "nographs"))
		return cmocka_run_group_tests_name("backend_nccl nographs", nographs_tests, NULL, NULL);
	return cmocka_run_group_tests_name("backend_nccl", main_tests, NULL, NULL);
}
