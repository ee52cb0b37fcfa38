/* Unit tests for the benchmark core: type conversions and host reduction,
 * verifiable data, the collectives' counts and factors, the sweep, the
 * number format of the table, the verdict, and the harness itself driven
 * through an in-process backend whose results can be corrupted on purpose
 * (validation must catch it) and whose timer is fixed (the bandwidth
 * formulas must give exact numbers). */
#include "testutil.h"
#include "bench/coll.h"
#include "bench/data.h"
#include "bench/harness.h"
#include "bench/output.h"
#include "bench/types.h"
#include "job/job.h"
#include "core/tcp.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- types ---- */

static void test_half(void **state)
{
	(void)state;
	assert_int_equal(float_to_half(1.0f), 0x3c00);
	assert_int_equal(float_to_half(-2.0f), 0xc000);
	assert_int_equal(float_to_half(65504.0f), 0x7bff);
	assert_int_equal(float_to_half(65520.0f), 0x7c00);       /* rounds up to inf */
	assert_int_equal(float_to_half(2049.0f), 0x6800);        /* tie: to even, 2048 */
	assert_int_equal(float_to_half(2051.0f), 0x6802);        /* tie: to even, 2052 */
	assert_int_equal(float_to_half(ldexpf(1, -24)), 0x0001); /* smallest subnormal */
	assert_int_equal(float_to_half(ldexpf(1, -26)), 0x0000); /* below half of it */
	assert_true(half_to_float(0x7c00) == INFINITY);
	assert_true(half_to_float(0x0001) == ldexpf(1, -24));
	for (int i = -2048; i <= 2048; i++)
		assert_true(half_to_float(float_to_half((float)i)) == (float)i);
}

static void test_bf16(void **state)
{
	(void)state;
	assert_int_equal(float_to_bf16(1.0f), 0x3f80);
	assert_int_equal(float_to_bf16(1.00390625f), 0x3f80);   /* 1 + 2^-8: tie to even */
	assert_int_equal(float_to_bf16(1.01171875f), 0x3f82);   /* 1 + 3*2^-8: tie to even, up */
	assert_true(bf16_to_float(0x4300) == 128.0f);
	for (int i = -256; i <= 256; i++)
		assert_true(bf16_to_float(float_to_bf16((float)i)) == (float)i);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(dtype_parse("bfloat16"), DT_BFLOAT16);
	assert_int_equal(dtype_parse("bf16"), DT_BFLOAT16);
	assert_int_equal(dtype_parse("float16"), DT_HALF);
	assert_int_equal(dtype_parse("fp8"), -1);
	assert_int_equal(redop_parse("avg"), OP_AVG);
	assert_int_equal(redop_parse("mulsum"), -1);
	assert_int_equal(coll_parse("all_reduce_perf"), COLL_ALL_REDUCE);
	assert_int_equal(coll_parse("alltoall"), COLL_ALLTOALL);
	assert_int_equal(coll_parse("all_reduce_per"), -1);
	assert_int_equal(coll_parse("_perf"), -1);
	assert_string_equal(dtype_name(DT_UINT64), "uint64");
	assert_int_equal(dtype_size(DT_BFLOAT16), 2);
}

static void test_host_reduce(void **state)
{
	(void)state;
	int8_t a[3] = { 100, -100, 5 }, b[3] = { 100, -100, -7 };
	host_reduce(DT_INT8, OP_SUM, a, b, 3);
	assert_int_equal(a[0], -56); /* wraps */
	assert_int_equal(a[1], 56);
	assert_int_equal(a[2], -2);
	uint8_t u[2] = { 200, 3 }, v[2] = { 100, 4 };
	host_reduce(DT_UINT8, OP_MAX, u, v, 2);
	assert_int_equal(u[0], 200);
	assert_int_equal(u[1], 4);
	int32_t s[2] = { -7, 7 };
	host_avg_finish(DT_INT32, s, 2, 2);
	assert_int_equal(s[0], -3); /* truncates toward zero */
	assert_int_equal(s[1], 3);
	uint16_t h[1] = { float_to_half(1.5f) }, g[1] = { float_to_half(2.25f) };
	host_reduce(DT_HALF, OP_PROD, h, g, 1);
	assert_true(half_to_float(h[0]) == 3.375f);
}

/* ---- verifiable data ---- */

/* The expected reduction equals a step-by-step host reduction of every
 * rank's input, in any order, for every type, op and rank count. */
static void check_data(enum dtype t, int op, int n)
{
	size_t count = 257, sz = dtype_size(t);
	struct data_spec s = { .t = t, .op = op, .nranks = n, .seed = 7 };
	unsigned char *acc = malloc(count * sz), *in = malloc(count * sz), *exp = malloc(count * sz);
	/* reduce in reverse rank order: exact data makes the order irrelevant */
	data_fill(&s, n - 1, 3, acc, count);
	for (int r = n - 2; r >= 0; r--) {
		data_fill(&s, r, 3, in, count);
		host_reduce(t, (enum redop)op, acc, in, count);
	}
	if (op == OP_AVG)
		host_avg_finish(t, acc, count, n);
	data_expect_reduce(&s, 3, exp, count);
	size_t wrong = data_compare(t, op, acc, exp, count);
	if (wrong)
		fail_msg("%s %s n=%d: %zu of %zu differ", dtype_name(t), redop_name((enum redop)op), n, wrong, count);
	free(acc);
	free(in);
	free(exp);
}

static void test_data_exact(void **state)
{
	(void)state;
	static const int ns[] = { 1, 2, 3, 8, 33 };
	for (int t = 0; t < DT__COUNT; t++)
		for (int op = 0; op < OP__COUNT; op++)
			for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
				check_data((enum dtype)t, op, ns[i]);
}

/* NCCL averages floating point as a pre-multiplied sum: each input times
 * 1/n rounded in the type, then summed. The data must keep that within the
 * 2-ulp tolerance for any rank count. */
static void test_avg_premultiplied(void **state)
{
	(void)state;
	static const enum dtype fts[] = { DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE };
	static const int ns[] = { 2, 3, 5, 6, 7, 12, 24, 100 };
	size_t count = 4099;
	for (size_t ti = 0; ti < 4; ti++)
		for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
			enum dtype t = fts[ti];
			size_t sz = dtype_size(t);
			int n = ns[ni];
			struct data_spec s = { .t = t, .op = OP_AVG, .nranks = n, .seed = 3 };
			unsigned char *acc = calloc(count, sz), *in = malloc(count * sz), *exp = malloc(count * sz);
			unsigned char k[8];
			dtype_store(t, k, t == DT_DOUBLE ? 1.0 / n : (double)(float)(1.0 / n));
			double kv = dtype_load(t, k);
			for (int r = 0; r < n; r++) {
				data_fill(&s, r, 0, in, count);
				for (size_t i = 0; i < count; i++) {
					double x = dtype_load(t, in + i * sz) * kv;
					unsigned char tmp[8];
					dtype_store(t, tmp, t == DT_DOUBLE ? x : (double)(float)x);
					double sum = dtype_load(t, acc + i * sz) + dtype_load(t, tmp);
					dtype_store(t, acc + i * sz, t == DT_DOUBLE ? sum : (double)(float)sum);
				}
			}
			data_expect_reduce(&s, 0, exp, count);
			size_t wrong = data_compare(t, OP_AVG, acc, exp, count);
			if (wrong)
				fail_msg("%s avg over %d ranks, pre-multiplied: %zu of %zu beyond 2 ulp", dtype_name(t), n,
					 wrong, count);
			free(acc);
			free(in);
			free(exp);
		}
}

static void test_data_differs(void **state)
{
	(void)state;
	/* ranks and seeds give different data, or validation proves nothing */
	struct data_spec s = { .t = DT_FLOAT, .op = DATA_COPY, .nranks = 4, .seed = 1 };
	float a[64], b[64];
	data_fill(&s, 0, 0, a, 64);
	data_fill(&s, 1, 0, b, 64);
	assert_true(memcmp(a, b, sizeof(a)) != 0);
	s.seed = 2;
	data_fill(&s, 0, 0, b, 64);
	assert_true(memcmp(a, b, sizeof(a)) != 0);
	/* product data has twos in it */
	int32_t p[64];
	s = (struct data_spec){ .t = DT_INT32, .op = OP_PROD, .nranks = 8, .seed = 0 };
	data_expect_reduce(&s, 0, p, 64);
	int big = 0;
	for (int i = 0; i < 64; i++)
		big += p[i] >= 4;
	assert_true(big > 10);
}

static void test_compare(void **state)
{
	(void)state;
	float e[2] = { 1.0f, 3.0f }, g[2] = { 1.0f, 3.0f };
	assert_int_equal(data_compare(DT_FLOAT, OP_SUM, g, e, 2), 0);
	g[1] = nextafterf(3.0f, 4.0f);
	assert_int_equal(data_compare(DT_FLOAT, OP_SUM, g, e, 2), 1);  /* bit-exact */
	assert_int_equal(data_compare(DT_FLOAT, OP_AVG, g, e, 2), 0);  /* 1 ulp */
	g[1] = nextafterf(nextafterf(nextafterf(3.0f, 4.0f), 4.0f), 4.0f);
	assert_int_equal(data_compare(DT_FLOAT, OP_AVG, g, e, 2), 1);  /* 3 ulps */
	float z[1] = { 0.0f }, mz[1] = { -0.0f };
	assert_int_equal(data_compare(DT_FLOAT, OP_AVG, z, mz, 1), 0);
	int32_t i[1] = { 5 }, j[1] = { 6 };
	assert_int_equal(data_compare(DT_INT32, OP_AVG, i, j, 1), 1);  /* integers: exact */
}

/* ---- collectives ---- */

static void test_counts(void **state)
{
	(void)state;
	struct coll_counts cc;
	const struct coll_def *ag = coll_get(COLL_ALL_GATHER);
	ag->counts(1000, 3, 4, &cc); /* 333 per rank, rounded down to 16 bytes: 332 */
	assert_int_equal(cc.param, 332);
	assert_int_equal(cc.recv, 996);
	assert_int_equal(cc.send_inplace, 332);
	assert_int_equal(coll_size_bytes(&cc, 4), 3984);
	assert_true(ag->alg_bytes(&cc, 4, 3) == 3984.0);
	const struct coll_def *rs = coll_get(COLL_REDUCE_SCATTER);
	rs->counts(1000, 3, 1, &cc); /* int8: 333 -> 320 */
	assert_int_equal(cc.param, 320);
	assert_int_equal(cc.send, 960);
	assert_int_equal(cc.recv_inplace, 320);
	coll_get(COLL_ALLTOALL)->counts(1024, 4, 8, &cc);
	assert_int_equal(cc.param, 256);
	assert_int_equal(cc.send, 1024);
	coll_get(COLL_ALL_REDUCE)->counts(7, 4, 4, &cc);
	assert_int_equal(cc.param, 7);
	assert_true(fabs(bench_busbw(COLL_ALL_REDUCE, 10.0, 4) - 15.0) < 1e-12);
	assert_true(bench_busbw(COLL_ALL_REDUCE, 10.0, 1) == 0.0);
	assert_true(fabs(bench_busbw(COLL_ALL_GATHER, 10.0, 8) - 8.75) < 1e-12);
	assert_true(bench_busbw(COLL_BROADCAST, 10.0, 8) == 10.0);
	assert_true(bench_busbw(COLL_SENDRECV, 10.0, 8) == 10.0);
}

static void test_sizes(void **state)
{
	(void)state;
	struct bench_params p;
	uint64_t *v = NULL;
	bench_params_default(&p, COLL_ALL_REDUCE);
	assert_int_equal(bench_sizes(&p, &v), 1);
	assert_int_equal(v[0], 32u << 20);
	free(v);
	p.min_bytes = 8;
	p.max_bytes = 64;
	p.step_factor = 2;
	assert_int_equal(bench_sizes(&p, &v), 4);
	assert_int_equal(v[3], 64);
	free(v);
	p.min_bytes = 1 << 20;
	p.max_bytes = 3 << 20;
	p.step_factor = 1;
	assert_int_equal(bench_sizes(&p, &v), 3);
	assert_int_equal(v[2], 3 << 20);
	free(v);
	assert_null(bench_params_check(&p));
	p.min_bytes = 0;
	char *e = bench_params_check(&p);
	assert_non_null(e);
	free(e);
	p.min_bytes = 1 << 30;
	e = bench_params_check(&p);
	assert_non_null(strstr(e, "larger than"));
	free(e);
	p.min_bytes = 1;
	p.step_bytes = 1;
	e = bench_params_check(&p);
	assert_non_null(strstr(e, "sizes"));
	free(e);
}

static void fmt(double v, int w, const char *want)
{
	char buf[64];
	bench_format_float(buf, sizeof(buf), v, w);
	if (strcmp(buf, want))
		fail_msg("format(%g, %d) = '%s', want '%s'", v, w, buf, want);
}

static void test_format(void **state)
{
	(void)state;
	/* docs/nccl-tests-format.md §1.3, checked against getFloatStr */
	fmt(0.5, 7, "   0.50");
	fmt(127.7, 7, " 127.70");
	fmt(12345.6, 7, "12345.6");
	fmt(144824, 7, " 144824");
	fmt(1234.5, 6, "1234.5");
	fmt(12345.6, 6, " 12346");
	fmt(1.2e7, 7, "1.2e+07");
	fmt(2e6, 6, " 2e+06");
	fmt(0, 6, "  0.00");
	fmt(INFINITY, 6, "   inf");
}

/* ---- the harness through an in-process backend ---- */

struct mock {
	struct backend b;
	int n;                  /* local ranks = all ranks */
	size_t corrupt_at;      /* element of rank 1's result to flip, or SIZE_MAX */
	bool corrupt_replays;   /* ... only in what a graph launch replays */
	bool replaying;
	double fixed_time;      /* seconds per launch the timer reports */
	long launches;
	bool capturing;         /* -G: launches are recorded, not counted */
	long captured, graphs;
	struct mock_call {      /* what was captured, replayed by each graph launch */
		enum coll c;
		void *send[4], *recv[4];
		size_t count;
		enum dtype t;
		enum redop op;
		int root;
	} *calls;
	int depth;              /* -m: group_begin nesting */
	long groups, in_group, bad_groups; /* groups closed, launches in the open one, groups of the wrong size */
	long want_group;        /* launches each group must hold */
};

static int m_init(struct backend *b, struct backend_env *env, double deadline)
{
	(void)deadline;
	b->env = *env;
	return 0;
}

static int m_alloc(struct backend *b, int l, size_t bytes, void **ret)
{
	(void)b;
	(void)l;
	*ret = calloc(1, bytes);
	return *ret ? 0 : -12;
}

static void m_free(struct backend *b, int l, void *p)
{
	(void)b;
	(void)l;
	free(p);
}

static int m_copy(struct backend *b, int l, void *dst, const void *src, size_t n)
{
	(void)b;
	(void)l;
	memmove(dst, src, n);
	return 0;
}

/* Reference collectives over local ranks with NCCL's buffer semantics. */
static int m_run(struct backend *b, enum coll c, void *const *send, void *const *recv, size_t count, enum dtype t,
		 enum redop op, int root)
{
	struct mock *m = (struct mock *)b;
	size_t ts = dtype_size(t), bytes = count * ts, n = (size_t)m->n;
	if (m->depth > 0)
		m->in_group++;
	if (m->capturing) {
		struct mock_call *k;
		m->calls = realloc(m->calls, (size_t)(m->captured + 1) * sizeof(*m->calls));
		k = &m->calls[m->captured++];
		*k = (struct mock_call){ .c = c, .count = count, .t = t, .op = op, .root = root };
		for (int l = 0; l < m->n && l < 4; l++) {
			k->send[l] = send[l];
			k->recv[l] = recv[l];
		}
		return 0;
	}
	size_t total = (c == COLL_REDUCE_SCATTER || c == COLL_ALLTOALL ? n : 1) * bytes;
	unsigned char *snap = malloc(n * total + 1), *acc = malloc(total + 1);
	for (size_t r = 0; r < n; r++)
		memcpy(snap + r * total, send[r], total); /* inputs before any output lands */
	if (c == COLL_ALL_REDUCE || c == COLL_REDUCE || c == COLL_REDUCE_SCATTER) {
		memcpy(acc, snap, total);
		for (size_t r = 1; r < n; r++)
			host_reduce(t, op, acc, snap + r * total, total / ts);
		if (op == OP_AVG)
			host_avg_finish(t, acc, total / ts, m->n);
	}
	for (size_t r = 0; r < n; r++) {
		unsigned char *o = recv[r];
		switch (c) {
		case COLL_ALL_REDUCE: memcpy(o, acc, bytes); break;
		case COLL_REDUCE: if ((int)r == root) memcpy(o, acc, bytes); break;
		case COLL_REDUCE_SCATTER: memcpy(o, acc + r * bytes, bytes); break;
		case COLL_BROADCAST: memcpy(o, snap + (size_t)root * total, bytes); break;
		case COLL_ALL_GATHER:
			for (size_t q = 0; q < n; q++)
				memcpy(o + q * bytes, snap + q * total, bytes);
			break;
		case COLL_ALLTOALL:
			for (size_t q = 0; q < n; q++)
				memcpy(o + q * bytes, snap + q * total + r * bytes, bytes);
			break;
		default: memcpy(o, snap + ((r + n - 1) % n) * total, bytes); break;
		}
	}
	if (m->corrupt_at != SIZE_MAX && (!m->corrupt_replays || m->replaying) && m->corrupt_at < count && n > 1 && (c != COLL_REDUCE || root == 1))
		((unsigned char *)recv[1])[m->corrupt_at * ts] ^= 0x40;
	m->launches++;
	free(snap);
	free(acc);
	return 0;
}

static int m_wait(struct backend *b, double d)
{
	(void)b;
	(void)d;
	return 0;
}

static int m_begin(struct backend *b)
{
	((struct mock *)b)->launches = 0;
	return 0;
}

static int m_end(struct backend *b, double d, double *sec)
{
	(void)d;
	struct mock *m = (struct mock *)b;
	*sec = m->fixed_time * (double)m->launches;
	return 0;
}

static void m_device(struct backend *b, int l, struct backend_device *out)
{
	(void)b;
	*out = (struct backend_device){ .ordinal = -1 };
	snprintf(out->name, sizeof(out->name), "mock %d", l);
}

static int m_cap_begin(struct backend *b)
{
	struct mock *m = (struct mock *)b;
	m->capturing = true;
	m->captured = 0;
	return 0;
}

static int m_cap_end(struct backend *b)
{
	((struct mock *)b)->capturing = false;
	return 0;
}

/* Replays what was captured (each replay counts as a launch, timed). */
static int m_graph_launch(struct backend *b)
{
	struct mock *m = (struct mock *)b;
	m->replaying = true;
	for (long i = 0; i < m->captured; i++) {
		const struct mock_call *k = &m->calls[i];
		int r = m_run(b, k->c, k->send, k->recv, k->count, k->t, k->op, k->root);
		if (r < 0)
			return r;
	}
	m->replaying = false;
	m->graphs++;
	return 0;
}

static void m_graph_free(struct backend *b)
{
	struct mock *m = (struct mock *)b;
	free(m->calls);
	m->calls = NULL;
	m->captured = 0;
}

static const struct backend_ops mock_graph_ops = {
	.name = "mock", .init = m_init, .alloc = m_alloc, .free = m_free, .copy_in = m_copy, .copy_out = m_copy,
	.run = m_run, .wait = m_wait, .timer_begin = m_begin, .timer_end = m_end, .device = m_device,
	.capture_begin = m_cap_begin, .capture_end = m_cap_end, .graph_launch = m_graph_launch,
	.graph_free = m_graph_free,
};

static int m_group_begin(struct backend *b)
{
	struct mock *m = (struct mock *)b;
	if (m->depth++ == 0)
		m->in_group = 0;
	return 0;
}

static int m_group_end(struct backend *b)
{
	struct mock *m = (struct mock *)b;
	if (--m->depth == 0) {
		m->groups++;
		m->bad_groups += m->in_group != m->want_group;
	}
	return m->depth < 0 ? -EINVAL : 0;
}

static const struct backend_ops mock_group_ops = {
	.name = "mock", .init = m_init, .alloc = m_alloc, .free = m_free, .copy_in = m_copy, .copy_out = m_copy,
	.run = m_run, .wait = m_wait, .timer_begin = m_begin, .timer_end = m_end, .device = m_device,
	.group_begin = m_group_begin, .group_end = m_group_end,
};

static const struct backend_ops mock_ops = {
	.name = "mock", .init = m_init, .alloc = m_alloc, .free = m_free, .copy_in = m_copy, .copy_out = m_copy,
	.run = m_run, .wait = m_wait, .timer_begin = m_begin, .timer_end = m_end, .device = m_device,
};

/* The harness's job in one process (bench/sync.h): no peers, so every
 * exchange is a copy and every phase a no-op. */
static void solo_phase(void *ctx, const char *desc, double deadline)
{
	(void)ctx, (void)desc, (void)deadline;
}

static void solo_phase_done(void *ctx)
{
	(void)ctx;
}

static void solo_progress(void *ctx, uint64_t launches)
{
	(void)ctx, (void)launches;
}

static int solo_barrier(void *ctx, double deadline, char **err)
{
	(void)ctx, (void)deadline, (void)err;
	return 0;
}

static int solo_allreduce(void *ctx, double *v, size_t n, enum bench_sync_op op, double deadline, char **err)
{
	(void)ctx, (void)v, (void)n, (void)op, (void)deadline, (void)err;
	return 0;
}

static int solo_bcast(void *ctx, void *buf, size_t len, double deadline, char **err)
{
	(void)ctx, (void)buf, (void)len, (void)deadline, (void)err;
	return 0;
}

static int solo_copy(void *ctx, const void *from, size_t len, void *to, double deadline, char **err)
{
	(void)ctx, (void)deadline, (void)err;
	memmove(to, from, len);
	return 0;
}

static int solo_scatter(void *ctx, const void *all, void *mine, size_t len, double deadline, char **err)
{
	return solo_copy(ctx, all, len, mine, deadline, err);
}

static const struct bench_sync_ops solo_ops = {
	.phase = solo_phase, .phase_done = solo_phase_done, .progress = solo_progress, .barrier = solo_barrier,
	.allreduce_f64 = solo_allreduce, .bcast = solo_bcast, .gather = solo_copy, .scatter = solo_scatter,
};

static const struct bench_sync solo = { .ops = &solo_ops, .proc = 0, .nprocs = 1 };

static int run_mock(struct mock *m, struct bench_params *p, struct bench_result *res)
{
	struct bench_ctx ctx = { .p = p, .b = &m->b, .sync = solo, .nranks = m->n, .local = m->n, .proc = 0 };
	char *err = NULL;
	m->b.ops = &mock_ops;
	int r = bench_run(&ctx, res, &err);
	if (r < 0)
		fail_msg("bench_run: %s", err);
	return r;
}

/* -I's statistics as nccl-tests 2.19.6 computeIterStats: the skipped
 * leading samples left out, p50 sorted[n/2], p95/p99 sorted[ceil(n*p/100)-1],
 * the population standard deviation. */
static void test_iter_stats(void **state)
{
	(void)state;
	double t[102];
	t[0] = 1e9;
	t[1] = -1e9; /* the two -K leaves out */
	for (int i = 0; i < 100; i++)
		t[2 + i] = (double)((i * 37) % 100 + 1); /* 1..100, shuffled */
	struct bench_iter it = { .n = 102, .skipped = 2, .times = t };
	bench_iter_stats(&it);
	assert_true(it.min == 1 && it.max == 100 && it.p50 == 51 && it.p95 == 95 && it.p99 == 99);
	assert_true(fabs(it.avg - 50.5) < 1e-12 && fabs(it.stdev - sqrt(833.25)) < 1e-9);
	assert_true(fabs(bench_iter_cv(&it) - sqrt(833.25) / 50.5 * 100) < 1e-9);
	double three[3] = { 3, 1, 2 };
	struct bench_iter small = { .n = 3, .times = three };
	bench_iter_stats(&small);
	/* n = 3: p95 and p99 are the largest, p50 the middle */
	assert_true(small.p50 == 2 && small.p95 == 3 && small.p99 == 3 && small.min == 1);
}

static void test_harness_all(void **state)
{
	(void)state;
	for (int c = 0; c < COLL__COUNT; c++) {
		struct mock m = { .n = 3, .corrupt_at = SIZE_MAX, .fixed_time = 1e-3 };
		struct bench_params p;
		struct bench_result res;
		bench_params_default(&p, (enum coll)c);
		p.min_bytes = 64;
		p.max_bytes = 4096;
		p.step_factor = 4;
		p.iters = 2;
		p.root = -1;
		p.n_dtypes = DT__COUNT;
		for (int t = 0; t < DT__COUNT; t++)
			p.dtypes[t] = (enum dtype)t;
		p.n_ops = OP__COUNT;
		for (int o = 0; o < OP__COUNT; o++)
			p.ops[o] = (enum redop)o;
		run_mock(&m, &p, &res);
		assert_true(res.n_rows > 0);
		assert_int_equal(res.out_of_bounds, 0);
		for (size_t i = 0; i < res.n_rows; i++) {
			const struct bench_row *r = &res.rows[i];
			if (r->half[0].wrong != 0)
				fail_msg("%s %s %s %llu B: %lld wrong", coll_name((enum coll)c), dtype_name(r->type),
					 redop_name(r->op), (unsigned long long)r->size, (long long)r->half[0].wrong);
			/* in place is N/A exactly where nccl-tests says so */
			bool na = c == COLL_ALLTOALL || c == COLL_SENDRECV;
			assert_int_equal(r->half[1].wrong == -1, na);
			if (!na)
				assert_int_equal(r->half[1].wrong, 0);
		}
		bench_result_free(&res);
	}
}

static void test_harness_catches_corruption(void **state)
{
	(void)state;
	static const enum coll colls[] = { COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER, COLL_BROADCAST,
					   COLL_REDUCE, COLL_ALLTOALL, COLL_SENDRECV };
	for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++) {
		struct mock m = { .n = 4, .corrupt_at = 3, .fixed_time = 1e-3 };
		struct bench_params p;
		struct bench_result res;
		bench_params_default(&p, colls[i]);
		p.min_bytes = p.max_bytes = 1024;
		p.iters = 1;
		p.root = 1;
		p.dtypes[0] = DT_BFLOAT16;
		run_mock(&m, &p, &res);
		assert_int_equal(res.n_rows, 1);
		if (res.rows[0].half[0].wrong != 1)
			fail_msg("%s: %lld wrong, want 1", coll_name(colls[i]), (long long)res.rows[0].half[0].wrong);
		assert_true(res.out_of_bounds >= 1);
		bench_result_free(&res);
	}
}

static void test_harness_bandwidth(void **state)
{
	(void)state;
	struct mock m = { .n = 4, .corrupt_at = SIZE_MAX, .fixed_time = 250e-6 };
	struct bench_params p;
	struct bench_result res;
	bench_params_default(&p, COLL_ALL_REDUCE);
	p.min_bytes = p.max_bytes = 1 << 20;
	p.iters = 5;
	p.agg = 2;
	run_mock(&m, &p, &res);
	const struct bench_half *h = &res.rows[0].half[0];
	/* 1 MiB in 250 us: 4.194304 GB/s; busbw = algbw * 2(n-1)/n */
	assert_true(fabs(h->time_us - 250.0) < 1e-9);
	assert_true(fabs(h->algbw - 4.194304) < 1e-9);
	assert_true(fabs(h->busbw - 4.194304 * 1.5) < 1e-9);
	assert_true(fabs(res.busbw_sum / (double)res.busbw_n - 4.194304 * 1.5) < 1e-9);
	bench_result_free(&res);
}

/* -G: the loop is captured once and launched -G times; the time per
 * launch divides by iters x agg x graphs. */
static void test_harness_graph(void **state)
{
	(void)state;
	struct mock m = { .n = 2, .corrupt_at = SIZE_MAX, .fixed_time = 100e-6 };
	struct bench_params p;
	struct bench_result res;
	char *err = NULL;
	bench_params_default(&p, COLL_ALL_REDUCE);
	p.min_bytes = p.max_bytes = 4096;
	p.iters = 5;
	p.agg = 2;
	p.graph = 3;
	m.b.ops = &mock_graph_ops;
	struct bench_ctx ctx = { .p = &p, .b = &m.b, .sync = solo, .nranks = 2, .local = 2 };
	assert_int_equal(bench_run(&ctx, &res, &err), 0);
	assert_int_equal(m.graphs, 2 * (3 + 1)); /* out of place and in place: 3 timed, 1 checked */
	assert_true(fabs(res.rows[0].half[0].time_us - 100.0) < 1e-9);
	assert_int_equal(res.rows[0].half[0].wrong, 0);
	bench_result_free(&res);
	/* the check goes through a graph too: wrong data from replays only is found */
	m.corrupt_at = 5;
	m.corrupt_replays = true;
	assert_int_equal(bench_run(&ctx, &res, &err), 0);
	assert_true(res.rows[0].half[0].wrong > 0);
	bench_result_free(&res);
	p.graph = 0;
	assert_int_equal(bench_run(&ctx, &res, &err), 0);
	assert_int_equal(res.rows[0].half[0].wrong, 0); /* nothing replayed, nothing wrong */
	bench_result_free(&res);
	p.graph = 3;
	m.corrupt_at = SIZE_MAX;
	/* a backend without graphs refuses -G */
	m.b.ops = &mock_ops;
	assert_int_equal(bench_run(&ctx, &res, &err), -EINVAL);
	assert_non_null(strstr(err, "no CUDA graphs"));
	free(err);
}

/* -m 3: each iteration's three launches go to the backend as one group
 * (nccl-tests' ncclGroupStart/End), and are still all timed and checked;
 * with -z they are waited for one by one, never grouped. */
static void test_harness_group(void **state)
{
	(void)state;
	struct mock m = { .n = 2, .corrupt_at = SIZE_MAX, .fixed_time = 100e-6, .want_group = 3 };
	struct bench_params p;
	struct bench_result res;
	char *err = NULL;
	bench_params_default(&p, COLL_ALL_REDUCE);
	p.min_bytes = p.max_bytes = 4096;
	p.iters = 4;
	p.agg = 3;
	m.b.ops = &mock_group_ops;
	struct bench_ctx ctx = { .p = &p, .b = &m.b, .sync = solo, .nranks = 2, .local = 2 };
	assert_int_equal(bench_run(&ctx, &res, &err), 0);
	assert_int_equal(m.groups, 2 * 4); /* out of place and in place, one per iteration */
	assert_int_equal(m.bad_groups, 0);
	assert_int_equal(m.depth, 0);
	assert_true(fabs(res.rows[0].half[0].time_us - 100.0) < 1e-9); /* 12 launches timed, / 12 */
	assert_int_equal(res.rows[0].half[0].wrong, 0);
	bench_result_free(&res);

	m.groups = 0;
	p.blocking = 1;
	assert_int_equal(bench_run(&ctx, &res, &err), 0);
	assert_int_equal(m.groups, 0);
	bench_result_free(&res);

	p.blocking = 0;
	p.agg = 1; /* nothing to aggregate */
	assert_int_equal(bench_run(&ctx, &res, &err), 0);
	assert_int_equal(m.groups, 0);
	bench_result_free(&res);
}

static void test_verdict(void **state)
{
	(void)state;
	struct bench_params p;
	bench_params_default(&p, COLL_ALL_REDUCE);
	struct bench_row rows[2] = {
		{ .size = 1024, .half = { { .busbw = 1 }, { .busbw = 3 } } },
		{ .size = 1 << 20, .half = { { .busbw = 10 }, { .busbw = 12 } } },
	};
	struct bench_result res = { .rows = rows, .n_rows = 2, .busbw_sum = 26, .busbw_n = 4 };
	struct bench_info info = { .p = &p, .expect_busbw = 11 };
	struct bench_verdict v;
	bench_verdict_compute(&info, &res, &v);
	assert_true(v.avg_busbw == 6.5);
	assert_true(v.large_busbw == 12);
	assert_int_equal(v.expect_ok, 1);
	assert_true(v.pass);
	info.expect_busbw = 12.5;
	bench_verdict_compute(&info, &res, &v);
	assert_int_equal(v.expect_ok, 0);
	assert_false(v.pass);
	info.expect_busbw = 0;
	info.min_bw_set = true;
	info.min_bw = 7.3; /* 0.9 x 7.3 = 6.57 > 6.5 */
	bench_verdict_compute(&info, &res, &v);
	assert_int_equal(v.min_bw_ok, 0);
	assert_false(v.pass);
	info.min_bw = 7.2;
	bench_verdict_compute(&info, &res, &v);
	assert_int_equal(v.min_bw_ok, 1);
	res.out_of_bounds = 1;
	bench_verdict_compute(&info, &res, &v);
	assert_false(v.pass);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_half),
		cmocka_unit_test(test_bf16),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_host_reduce),
		cmocka_unit_test(test_data_exact),
		cmocka_unit_test(test_avg_premultiplied),
		cmocka_unit_test(test_data_differs),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_iter_stats),
		cmocka_unit_test(test_harness_all),
		cmocka_unit_test(test_harness_catches_corruption),
		cmocka_unit_test(test_harness_bandwidth),
		cmocka_unit_test(test_harness_graph),
		cmocka_unit_test(test_harness_group),
		cmocka_unit_test(test_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
