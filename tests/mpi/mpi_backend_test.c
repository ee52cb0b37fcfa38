/* The MPI backend end to end, under mpirun (tests/mpi/run.sh -np 2 and 4).
 *
 * Loads gpuready-mpi.so through backend_mpi_create() ($GPUREADY_MPI_MODULE
 * points at the build's module) and drives it through its ops the way the
 * harness does: every collective × every type × every op (ops only for
 * the reducing collectives), out of place and in place (NCCL's buffer
 * conventions), several counts (0, small, and large enough for Open MPI's
 * segmented algorithms) and roots 0 and n-1. Each rank computes its
 * inputs and every expected output itself and compares them exactly.
 * The data are small integers chosen so that every result is an integer
 * that half and bfloat16 hold exactly (sums <= 88, products <= 2^n, and
 * the rank-dependent parts of the sum inputs cancel, so the average is an
 * integer too). Mismatches are printed (first few per case); the failure
 * counts are summed over ranks through the backend itself, and every rank
 * exits 1 when any rank saw one, 2 when the backend could not be set up.
 *
 * The program does not link libmpi: everything goes through the module.
 * It provides backend_set_error here (the harness's src/bench/backend.c
 * is not linked); host_reduce and host_avg_finish come from
 * src/bench/types.c, compiled in. */
#include "bench/backend.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPORTS 5   /* mismatches printed per case */
#define GARBAGE 0xa5    /* byte pattern in buffers the collective must overwrite */

void backend_set_error(struct backend *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->error, sizeof(b->error), fmt, ap);
	va_end(ap);
}

static const char *const type_names[DT__COUNT] = {
	[DT_INT8] = "int8", [DT_UINT8] = "uint8", [DT_INT32] = "int32", [DT_UINT32] = "uint32",
	[DT_INT64] = "int64", [DT_UINT64] = "uint64", [DT_HALF] = "half", [DT_FLOAT] = "float",
	[DT_DOUBLE] = "double", [DT_BFLOAT16] = "bfloat16",
};
static const size_t type_sizes[DT__COUNT] = {
	[DT_INT8] = 1, [DT_UINT8] = 1, [DT_INT32] = 4, [DT_UINT32] = 4, [DT_INT64] = 8, [DT_UINT64] = 8,
	[DT_HALF] = 2, [DT_FLOAT] = 4, [DT_DOUBLE] = 8, [DT_BFLOAT16] = 2,
};
static const char *const op_names[OP__COUNT] = { "sum", "prod", "max", "min", "avg" };
static const char *const coll_names[COLL__COUNT] = {
	"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv",
};

struct ctx {
	struct backend *b;
	int rank, n;
	long cases, failures;
};

/* One test case. */
struct tcase {
	enum coll c;
	enum dtype t;
	enum redop op;   /* OP_SUM for the non-reducing collectives (data only) */
	bool in_place;
	size_t count;
	int root;
};

static bool is_signed(enum dtype t)
{
	return t != DT_UINT8 && t != DT_UINT32 && t != DT_UINT64;
}

static bool is_reducing(enum coll c)
{
	return c == COLL_ALL_REDUCE || c == COLL_REDUCE_SCATTER || c == COLL_REDUCE;
}

/* Rank k's input element idx. */
static long input(const struct ctx *x, const struct tcase *tc, int k, size_t idx)
{
	int n = x->n;
	if (!is_reducing(tc->c))
		return (long)((k * 31 + idx * 7) % 100);
	switch (tc->op) {
	case OP_PROD: return 1 + ((idx + (size_t)k) % 3 == 0);
	case OP_MAX:
	case OP_MIN: return (long)((idx * 7 + (size_t)k * 3) % 11) - (is_signed(tc->t) ? 5 : 0);
	default: return (long)(n - 1) + (long)(idx % 5) + 2 * k - (n - 1); /* sum over k: n * (n-1 + idx%5) */
	}
}

/* Every rank's input at idx, reduced by the case's op. */
static long reduced(const struct ctx *x, const struct tcase *tc, size_t idx)
{
	long acc = input(x, tc, 0, idx);
	for (int k = 1; k < x->n; k++) {
		long v = input(x, tc, k, idx);
		switch (tc->op) {
		case OP_PROD: acc *= v; break;
		case OP_MAX: acc = v > acc ? v : acc; break;
		case OP_MIN: acc = v < acc ? v : acc; break;
		default: acc += v; break;
		}
	}
	return tc->op == OP_AVG ? acc / x->n : acc;
}

/* Exact encodings of small integers. */
static uint16_t half_bits(long v)
{
	uint16_t sign = v < 0 ? 0x8000 : 0;
	unsigned long a = (unsigned long)(v < 0 ? -v : v);
	if (!a)
		return sign;
	int e = 63 - __builtin_clzl(a); /* a in [2^e, 2^(e+1)), e <= 10 here */
	return sign | (uint16_t)((e + 15) << 10) | (uint16_t)((a << (10 - e)) & 0x3ff);
}

static uint16_t bf16_bits(long v)
{
	float f = (float)v;
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return (uint16_t)(u >> 16);
}

static void put(enum dtype t, void *buf, size_t i, long v)
{
	switch (t) {
	case DT_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
	case DT_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
	case DT_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
	case DT_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
	case DT_INT64: ((int64_t *)buf)[i] = v; break;
	case DT_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
	case DT_HALF: ((uint16_t *)buf)[i] = half_bits(v); break;
	case DT_FLOAT: ((float *)buf)[i] = (float)v; break;
	case DT_DOUBLE: ((double *)buf)[i] = (double)v; break;
	case DT_BFLOAT16: ((uint16_t *)buf)[i] = bf16_bits(v); break;
	default: break;
	}
}

/* The raw element, for messages. */
static void show(enum dtype t, const void *buf, size_t i, char *out, size_t size)
{
	const unsigned char *p = (const unsigned char *)buf + i * type_sizes[t];
	int len = snprintf(out, size, "0x");
	for (size_t j = type_sizes[t]; j-- > 0 && len > 0 && (size_t)len < size;)
		len += snprintf(out + len, size - (size_t)len, "%02x", p[j]);
}

/* Compares n elements of got, starting at element off, with the expected
 * values f(idx); reports the first few differences. */
static long compare(struct ctx *x, const struct tcase *tc, const void *got, size_t off, size_t n,
		    long (*f)(const struct ctx *, const struct tcase *, size_t), const char *what)
{
	size_t sz = type_sizes[tc->t];
	unsigned char want[8];
	long bad = 0;

	for (size_t i = off; i < off + n; i++) {
		put(tc->t, want, 0, f(x, tc, i));
		if (!memcmp(want, (const unsigned char *)got + i * sz, sz))
			continue;
		if (bad++ < MAX_REPORTS) {
			char g[24], w[24];
			show(tc->t, got, i, g, sizeof(g));
			show(tc->t, want, 0, w, sizeof(w));
			fprintf(stderr, "rank %d: %s %s %s %s count=%zu root=%d: %s[%zu] = %s, want %s (%ld)\n",
				x->rank, coll_names[tc->c], type_names[tc->t], is_reducing(tc->c) ? op_names[tc->op] : "-",
				tc->in_place ? "in-place" : "out-of-place", tc->count, tc->root, what, i, g, w,
				f(x, tc, i));
		}
	}
	return bad;
}

/* The expected element i of the (root's) receive buffer. */
static long expected(const struct ctx *x, const struct tcase *tc, size_t i)
{
	size_t cnt = tc->count;
	switch (tc->c) {
	case COLL_ALL_REDUCE:
	case COLL_REDUCE: return reduced(x, tc, i);
	case COLL_ALL_GATHER: return input(x, tc, (int)(i / cnt), i % cnt);
	case COLL_REDUCE_SCATTER: return reduced(x, tc, (size_t)x->rank * cnt + i);
	case COLL_BROADCAST: return input(x, tc, tc->root, i);
	case COLL_ALLTOALL: return input(x, tc, (int)(i / cnt), (size_t)x->rank * cnt + i % cnt);
	case COLL_SENDRECV: return input(x, tc, (x->rank - 1 + x->n) % x->n, i);
	default: return 0;
	}
}

static long own_input(const struct ctx *x, const struct tcase *tc, size_t i)
{
	return input(x, tc, x->rank, i);
}

/* Element counts of the send and receive buffers (NCCL's API). */
static void buffer_sizes(const struct ctx *x, const struct tcase *tc, size_t *send, size_t *recv)
{
	size_t all = tc->count * (size_t)x->n;
	*send = tc->c == COLL_REDUCE_SCATTER || tc->c == COLL_ALLTOALL ? all : tc->count;
	*recv = tc->c == COLL_ALL_GATHER || tc->c == COLL_ALLTOALL ? all : tc->count;
}

/* Fills the backend buffers as the harness would: send data, recv garbage;
 * in place per NCCL (all_gather: send = recv + rank*count; reduce_scatter:
 * recv = send + rank*count; else send == recv). */
static int setup(struct ctx *x, const struct tcase *tc, void *bufs[2], void **send, void **recv)
{
	const struct backend_ops *o = x->b->ops;
	size_t sz = type_sizes[tc->t], ns, nr;
	buffer_sizes(x, tc, &ns, &nr);
	size_t nbuf = ns > nr ? ns : nr, chunk = (size_t)x->rank * tc->count * sz;
	unsigned char *h = malloc(nbuf * sz + 1);
	int r = h ? 0 : -ENOMEM;

	for (int i = 0; i < 2 && r == 0; i++)
		r = o->alloc(x->b, 0, (i ? nr : ns) * sz, &bufs[i]);
	if (r == 0) {
		memset(h, GARBAGE, nbuf * sz);
		r = o->copy_in(x->b, 0, bufs[1], h, nr * sz);
	}
	for (size_t i = 0; i < ns && r == 0; i++)
		put(tc->t, h, i, own_input(x, tc, i));
	if (r == 0)
		r = o->copy_in(x->b, 0, bufs[0], h, ns * sz);
	*send = bufs[0];
	*recv = bufs[1];
	if (r == 0 && tc->in_place && tc->c == COLL_ALL_GATHER) {
		*send = (char *)bufs[1] + chunk;
		r = o->copy_in(x->b, 0, *send, h, ns * sz);
	} else if (tc->in_place) {
		*recv = tc->c == COLL_REDUCE_SCATTER ? (char *)bufs[0] + chunk : bufs[0];
	}
	free(h);
	return r;
}

/* Runs one case and checks its result; returns the mismatches. */
static long run_case(struct ctx *x, const struct tcase *tc)
{
	const struct backend_ops *o = x->b->ops;
	size_t sz = type_sizes[tc->t], ns, nr;
	void *bufs[2] = { NULL, NULL }, *send = NULL, *recv = NULL;
	long bad = 0;

	buffer_sizes(x, tc, &ns, &nr);
	unsigned char *h = malloc((ns > nr ? ns : nr) * sz + 1);
	int r = h ? setup(x, tc, bufs, &send, &recv) : -ENOMEM;
	if (r == 0)
		r = o->run(x->b, tc->c, &send, &recv, tc->count, tc->t, tc->op, tc->root);
	if (r == 0 && (tc->c != COLL_REDUCE || x->rank == tc->root)) {
		r = o->copy_out(x->b, 0, h, recv, nr * sz);
		if (r == 0)
			bad += compare(x, tc, h, 0, nr, expected, "recv");
	}
	if (r == 0 && !tc->in_place) { /* the send buffer stays as it was */
		r = o->copy_out(x->b, 0, h, send, ns * sz);
		if (r == 0)
			bad += compare(x, tc, h, 0, ns, own_input, "send");
	}
	if (r < 0) {
		fprintf(stderr, "rank %d: %s %s %s %s count=%zu: error %d: %s\n", x->rank, coll_names[tc->c],
			type_names[tc->t], is_reducing(tc->c) ? op_names[tc->op] : "-", tc->in_place ? "in-place" : "out-of-place", tc->count, r,
			x->b->error);
		bad++;
	}
	for (int i = 0; i < 2; i++)
		if (bufs[i])
			o->free(x->b, 0, bufs[i]);
	free(h);
	return bad;
}

/* Every collective × type × op × placement × count × root. */
static void run_all(struct ctx *x)
{
	static const size_t counts[] = { 0, 1, 7, 1031, 70001 };
	for (int c = 0; c < COLL__COUNT; c++)
		for (int t = 0; t < DT__COUNT; t++)
			for (int op = 0; op < (is_reducing(c) ? OP__COUNT : 1); op++)
				for (int ip = 0; ip < 2; ip++)
					for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
						for (int root = 0; root < x->n; root += x->n > 1 ? x->n - 1 : 1) {
							bool rooted = c == COLL_BROADCAST || c == COLL_REDUCE;
							struct tcase tc = { .c = c, .t = t, .op = op, .in_place = ip,
									    .count = counts[i], .root = rooted ? root : -1 };
							if (!rooted && root)
								break;
							x->cases++;
							x->failures += run_case(x, &tc);
						}
}

#define CHECK(x, cond, ...)                                                                        \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: %s:%d: ", (x)->rank, __FILE__, __LINE__);        \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			(x)->failures++;                                                           \
		}                                                                                  \
	} while (0)

/* Identity, version, device, bootstrap broadcast, barrier and timer. */
static void check_basics(struct ctx *x, const struct backend_env *env, int local_rank)
{
	const struct backend_ops *o = x->b->ops;
	struct backend_device d;
	unsigned char buf[100];
	double sec = -1;

	CHECK(x, !strcmp(o->name, "mpi"), "name %s", o->name);
	CHECK(x, env->nranks == x->n && env->nprocs == x->n && env->proc_rank == x->rank && env->local == 1,
	      "env nranks %d nprocs %d proc_rank %d local %d", env->nranks, env->nprocs, env->proc_rank, env->local);
	/* every rank runs on this host, so the node-local rank is the rank */
	CHECK(x, local_rank == x->rank, "local rank %d", local_rank);
	const char *v = o->version(x->b);
	CHECK(x, v && v[0] && !strchr(v, '\n'), "version \"%s\"", v ? v : "(null)");
	if (x->rank == 0)
		printf("# %s, %d processes, local rank of rank 0: %d\n", v, x->n, local_rank);
	memset(&d, 0x5a, sizeof(d));
	o->device(x->b, 0, &d);
	CHECK(x, d.ordinal == -1 && !strcmp(d.name, "host") && !d.bus_id[0], "device %d %s %s", d.ordinal, d.name,
	      d.bus_id);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = x->rank == 0 ? (unsigned char)(i * 3 + 1) : 0;
	CHECK(x, o->bcast(x->b, buf, sizeof(buf)) == 0, "bcast: %s", x->b->error);
	for (size_t i = 0; i < sizeof(buf); i++)
		CHECK(x, buf[i] == (unsigned char)(i * 3 + 1), "bcast byte %zu = %u", i, buf[i]);
	CHECK(x, o->barrier(x->b, 0) == 0, "barrier: %s", x->b->error);
	CHECK(x, o->timer_begin(x->b) == 0, "timer_begin");
	CHECK(x, o->barrier(x->b, 0) == 0 && o->wait(x->b, 0) == 0, "barrier/wait: %s", x->b->error);
	CHECK(x, o->timer_end(x->b, 0, &sec) == 0 && sec >= 0 && sec < 60, "timer_end %g", sec);
}

/* Argument errors are messages, not MPI aborts (checked before any MPI
 * call, so every rank fails alike). */
static void check_errors(struct ctx *x)
{
	const struct backend_ops *o = x->b->ops;
	void *p = &x->cases;
	int r;

	x->b->error[0] = '\0';
	r = o->run(x->b, COLL_ALL_REDUCE, &p, &p, (size_t)INT_MAX + 1, DT_INT8, OP_SUM, -1);
	CHECK(x, r == -EOVERFLOW && strstr(x->b->error, "count"), "huge count: %d %s", r, x->b->error);
	r = o->run(x->b, COLL_BROADCAST, &p, &p, 1, DT_INT8, OP_SUM, x->n);
	CHECK(x, r == -EINVAL && strstr(x->b->error, "root"), "bad root: %d %s", r, x->b->error);
	r = o->run(x->b, COLL__COUNT, &p, &p, 1, DT_INT8, OP_SUM, -1);
	CHECK(x, r == -EINVAL && x->b->error[0], "bad collective: %d %s", r, x->b->error);
}

/* Sums v over ranks through the backend itself. */
static int sum_ranks(struct ctx *x, long *v)
{
	const struct backend_ops *o = x->b->ops;
	int64_t h = *v;
	void *p = NULL;
	int r = o->alloc(x->b, 0, sizeof(h), &p);
	if (r == 0)
		r = o->copy_in(x->b, 0, p, &h, sizeof(h));
	if (r == 0)
		r = o->run(x->b, COLL_ALL_REDUCE, &p, &p, 1, DT_INT64, OP_SUM, -1);
	if (r == 0)
		r = o->copy_out(x->b, 0, &h, p, sizeof(h));
	if (p)
		o->free(x->b, 0, p);
	*v = (long)h;
	return r;
}

int main(void)
{
	struct ctx x = { 0 };
	struct backend_env env = { .local = 2 };
	char *err = NULL;
	int local_rank = -1;

	int r = backend_mpi_create(&x.b, &err);
	if (r < 0) {
		fprintf(stderr, "backend_mpi_create: %s (%s)\n", err ? err : "?", strerror(-r));
		free(err);
		return 2;
	}
	/* -g 2 is refused before MPI starts */
	r = x.b->ops->init(x.b, &env, 0);
	CHECK(&x, r == -EINVAL && strstr(x.b->error, "one rank per process"), "init with local 2: %d %s", r,
	      x.b->error);
	/* proc_info may come first: it starts MPI */
	r = x.b->ops->proc_info(x.b, &x.rank, &x.n, &local_rank);
	env = (struct backend_env){ .local = 1 };
	if (r == 0)
		r = x.b->ops->init(x.b, &env, 0);
	if (r < 0) {
		fprintf(stderr, "MPI backend setup: %s\n", x.b->error);
		x.b->ops->fini(x.b);
		return 2;
	}
	check_basics(&x, &env, local_rank);
	check_errors(&x);
	run_all(&x);

	long failures = x.failures;
	r = sum_ranks(&x, &failures);
	if (r < 0) {
		fprintf(stderr, "rank %d: summing failures: %s\n", x.rank, x.b->error);
		failures = x.failures + 1;
	}
	if (x.rank == 0)
		printf("# %ld cases per rank, %ld failures over %d ranks\n", x.cases, failures, x.n);
	x.b->ops->fini(x.b);
	return failures ? 1 : 0;
}
