/* The benchmark harness (see harness.h for the procedure). */
#include "harness.h"
#include "coll.h"
#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Sweeps longer than this are a typo (-i 1 -e 1G), not a benchmark. */
#define MAX_SIZES 4096

/* Without -T, a step may take 60 s plus the time to move its data at
 * 100 MB/s: no fabric gpuready measures is that slow when it works
 * (loopback TCP and shared-memory MPI move GB/s), so a step slower than
 * that has stalled. */
#define AUTO_TIMEOUT_BASE_S 60.0
#define AUTO_TIMEOUT_RATE 1e8

void bench_params_default(struct bench_params *p, enum coll c)
{
	*p = (struct bench_params){
		.coll = c, .min_bytes = BENCH_DEFAULT_MIN_BYTES, .max_bytes = BENCH_DEFAULT_MAX_BYTES,
		.step_bytes = BENCH_DEFAULT_STEP_BYTES, .step_factor = BENCH_DEFAULT_STEP_FACTOR,
		.iters = BENCH_DEFAULT_ITERS, .warmup = BENCH_DEFAULT_WARMUP, .agg = BENCH_DEFAULT_AGG,
		.check = BENCH_DEFAULT_CHECK, .average = BENCH_DEFAULT_AVERAGE, .root = BENCH_DEFAULT_ROOT,
		.ngpus = BENCH_DEFAULT_NGPUS, .cycles = 1, .dtypes = { DT_FLOAT }, .n_dtypes = 1, .ops = { OP_SUM }, .n_ops = 1,
	};
}

size_t bench_sizes(const struct bench_params *p, uint64_t **ret)
{
	uint64_t *v = NULL;
	size_t n = 0;
	for (uint64_t s = p->min_bytes; s && s <= p->max_bytes && n <= MAX_SIZES;
	     s = p->step_factor > 1 ? s * (uint64_t)p->step_factor : s + p->step_bytes) {
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n++] = s;
		if (p->step_factor > 1 ? s > UINT64_MAX / (uint64_t)p->step_factor : s > UINT64_MAX - p->step_bytes)
			break;
	}
	*ret = v;
	return n;
}

char *bench_params_check(const struct bench_params *p)
{
	if (p->min_bytes == 0)
		return xstrdup("-b must be at least 1 byte (nccl-tests never ends a sweep that starts at 0)");
	if (p->min_bytes > p->max_bytes)
		return xasprintf("-b %llu is larger than -e %llu", (unsigned long long)p->min_bytes,
				 (unsigned long long)p->max_bytes);
	if (p->step_factor <= 1 && p->step_bytes == 0 && p->min_bytes != p->max_bytes)
		return xstrdup("-i 0 with -f 1 never reaches -e: give -f 2 or a step size");
	if (p->iters < 1 || p->agg < 1)
		return xstrdup("-n and -m must be at least 1");
	if (p->root < -1)
		return xstrdup("-r must be a rank, or -1 for every root");
	if (p->graph > 0 && p->blocking)
		return xstrdup("-G with -z: a CUDA graph cannot wait between its launches");
	if (p->graph > 0 && p->per_iter)
		return xstrdup("-I 1 with -G: a CUDA graph's launches cannot be timed one by one (nccl-tests turns -I off)");
	if (p->per_iter_skip && !p->per_iter)
		return xstrdup("-K needs -I 1 (it leaves leading iterations out of -I's statistics)");
	if (p->per_iter_skip >= p->iters)
		return xasprintf("-K %d: it must leave at least one of the -n %d iterations", p->per_iter_skip, p->iters);
	_cleanup_free_ uint64_t *sizes = NULL;
	if (bench_sizes(p, &sizes) > MAX_SIZES)
		return xasprintf("the sweep has more than %d sizes: use -f or a larger -i", MAX_SIZES);
	return NULL;
}

double bench_busbw(enum coll c, double algbw, int nranks)
{
	const struct coll_def *d = coll_get(c);
	return d ? algbw * d->bus_factor(nranks) : 0;
}

/* ---- per-run state ---- */

struct rank_bufs {
	void *send, *recv;
};

struct run {
	const struct bench_ctx *ctx;
	const struct coll_def *def;
	struct rank_bufs *rb;
	size_t buf_bytes;
	unsigned char *hsend, *hrecv, *hexp;   /* host staging, one local rank at a time */
	bool shift;                            /* rotate through the buffer (device memory) */
	uint64_t rep;                          /* data seed counter */
	double *stamps;                        /* -I without backend marks: the host clock at each point */
	double coll_sec;                       /* -z 3: the timed loop's time, its barriers left out */
	char **err;
};

/* What one launch needs besides the buffers. */
struct step {
	struct coll_counts cc;
	enum dtype t;
	enum redop op;
	int root;
	bool in_place;
	size_t elt;
};

static int backend_fail(struct run *r, const char *what, int ret)
{
	*r->err = xasprintf("%s: %s", what, r->ctx->b->error[0] ? r->ctx->b->error : strerror(-ret));
	return ret;
}

static int global_rank(const struct run *r, int l)
{
	return r->ctx->proc * r->ctx->local + l;
}

static double step_timeout(const struct run *r, double bytes, int launches)
{
	const struct bench_params *p = r->ctx->p;
	return p->timeout > 0 ? p->timeout : AUTO_TIMEOUT_BASE_S + bytes * launches / AUTO_TIMEOUT_RATE;
}

/* Elements the in-place region spans for this rank. */
static size_t region_elems(const struct step *s, int rank)
{
	size_t a = s->cc.send_inplace * (size_t)rank + s->cc.send, b = s->cc.recv_inplace * (size_t)rank + s->cc.recv;
	return a > b ? a : b;
}

/* Rank l's buffers as the collective sees them: -u elements past the
 * allocation's aligned start. */
static char *sendbuf(const struct run *r, int l, const struct step *s)
{
	return (char *)r->rb[l].send + (size_t)r->ctx->p->unalign * s->elt;
}

static char *recvbuf(const struct run *r, int l, const struct step *s)
{
	return (char *)r->rb[l].recv + (size_t)r->ctx->p->unalign * s->elt;
}

static int launch(struct run *r, const struct step *s, uint64_t iter)
{
	const struct bench_ctx *c = r->ctx;
	void *sendv[64], *recvv[64];
	size_t window = region_elems(s, c->nranks - 1) * s->elt;
	size_t shift = 0;

	if (r->shift && window && window <= r->buf_bytes)
		shift = window * (size_t)(iter % (r->buf_bytes / window));
	for (int l = 0; l < c->local; l++) {
		int rank = global_rank(r, l);
		char *send = sendbuf(r, l, s) + shift, *recv = recvbuf(r, l, s) + shift;
		if (s->in_place) {
			sendv[l] = recv + s->cc.send_inplace * (size_t)rank * s->elt;
			recvv[l] = recv + s->cc.recv_inplace * (size_t)rank * s->elt;
		} else {
			sendv[l] = send;
			recvv[l] = recv;
		}
	}
	int ret = c->b->ops->run(c->b, c->p->coll, sendv, recvv, s->cc.param, s->t, s->op, s->root);
	return ret < 0 ? backend_fail(r, "starting the collective", ret) : 0;
}

static int wait_all(struct run *r, double deadline)
{
	int ret = r->ctx->b->ops->wait(r->ctx->b, deadline);
	return ret < 0 ? backend_fail(r, "waiting for the collective", ret) : 0;
}

static int barrier(struct run *r, double deadline)
{
	const struct bench_ctx *c = r->ctx;
	if (c->b->ops->barrier) {
		int ret = c->b->ops->barrier(c->b, deadline);
		return ret < 0 ? backend_fail(r, "barrier", ret) : 0;
	}
	return c->sync.ops->barrier(c->sync.ctx, deadline, r->err);
}

static struct coll_run coll_run_for(const struct run *r, const struct step *s, int l, uint64_t seed)
{
	return (struct coll_run){
		.cc = s->cc,
		.data = { .t = s->t, .op = r->def->has_op ? (int)s->op : DATA_COPY, .nranks = r->ctx->nranks, .seed = seed },
		.rank = global_rank(r, l), .nranks = r->ctx->nranks, .root = s->root, .in_place = s->in_place,
	};
}

/* Fills every local rank's buffers with fresh verifiable data. */
static int init_data(struct run *r, const struct step *s, uint64_t seed)
{
	const struct bench_ctx *c = r->ctx;
	for (int l = 0; l < c->local; l++) {
		struct coll_run cr = coll_run_for(r, s, l, seed);
		int ret;
		r->def->init(&cr, r->hsend);
		if (!s->in_place) {
			memset(r->hrecv, 0, s->cc.recv * s->elt);
			ret = c->b->ops->copy_in(c->b, l, sendbuf(r, l, s), r->hsend, s->cc.send * s->elt);
			if (ret == 0)
				ret = c->b->ops->copy_in(c->b, l, recvbuf(r, l, s), r->hrecv, s->cc.recv * s->elt);
		} else {
			size_t n = region_elems(s, cr.rank);
			memset(r->hrecv, 0, n * s->elt);
			memcpy(r->hrecv + s->cc.send_inplace * (size_t)cr.rank * s->elt, r->hsend, s->cc.send * s->elt);
			ret = c->b->ops->copy_in(c->b, l, recvbuf(r, l, s), r->hrecv, n * s->elt);
		}
		if (ret < 0)
			return backend_fail(r, "copying data to the buffers", ret);
	}
	return 0;
}

/* Wrong elements over the local ranks after a launch on data of `seed`. */
static int count_wrong(struct run *r, const struct step *s, uint64_t seed, int64_t *wrong)
{
	const struct bench_ctx *c = r->ctx;
	*wrong = 0;
	for (int l = 0; l < c->local; l++) {
		struct coll_run cr = coll_run_for(r, s, l, seed);
		const char *res = recvbuf(r, l, s);
		if (s->in_place)
			res += s->cc.recv_inplace * (size_t)cr.rank * s->elt;
		int ret = c->b->ops->copy_out(c->b, l, r->hrecv, res, s->cc.recv * s->elt);
		if (ret < 0)
			return backend_fail(r, "copying results back", ret);
		r->def->init(&cr, r->hsend);
		r->def->expect(&cr, r->hsend, r->hexp);
		*wrong += (int64_t)data_compare(s->t, cr.data.op, r->hrecv, r->hexp, s->cc.recv);
	}
	return 0;
}

/* The launch validate() checks: with -G captured into a graph and the
 * graph launched once, as nccl-tests checks a -G run (graph replays take
 * NCCL's persistent-plan path, which the timed loop used); the caller
 * waits, then frees the graph. */
static int check_launch(struct run *r, const struct step *s)
{
	const struct bench_ctx *c = r->ctx;
	const struct backend_ops *o = c->b->ops;

	if (c->p->graph <= 0)
		return launch(r, s, 0);
	int ret = o->capture_begin(c->b);
	if (ret < 0)
		return backend_fail(r, "capturing the check launch into a CUDA graph", ret);
	ret = launch(r, s, 0);
	int end = o->capture_end(c->b);
	if (ret == 0 && end < 0)
		ret = backend_fail(r, "instantiating the check launch's CUDA graph", end);
	if (ret == 0 && (ret = o->graph_launch(c->b)) < 0)
		ret = backend_fail(r, "launching the check launch's CUDA graph", ret);
	return ret;
}

/* -I's timing points of a timed loop: where each iteration starts and
 * ends, an iteration's end the next one's start except with -z 3, whose
 * barrier between them is left out (nccl-tests' paired events). */
static int npoints(const struct bench_params *p)
{
	return p->blocking == 3 ? 2 * p->iters : p->iters + 1;
}

static int point_start(const struct bench_params *p, int i)
{
	return p->blocking == 3 ? 2 * i : i;
}

static int mark_at(struct run *r, int k)
{
	const struct bench_ctx *c = r->ctx;
	if (!c->b->ops->mark) {
		r->stamps[k] = clock_now(); /* run() has completed: the host backends */
		return 0;
	}
	int ret = c->b->ops->mark(c->b, k);
	return ret < 0 ? backend_fail(r, "recording a per-iteration timing point (-I)", ret) : 0;
}

/* -z 3: the iteration waited for and its time counted, then the barrier,
 * which is not. */
static int iteration_end(struct run *r, int i, double t0, double deadline)
{
	int ret = wait_all(r, deadline);
	if (ret == 0 && r->ctx->p->per_iter)
		ret = mark_at(r, 2 * i + 1);
	r->coll_sec += clock_now() - t0;
	return ret == 0 ? barrier(r, deadline) : ret;
}

/* -c: up to `check` launches on fresh data, stopping at the first with
 * errors anywhere. *wrong is the global count. */
static int validate(struct run *r, const struct step *s, double deadline, int64_t *wrong)
{
	const struct bench_ctx *c = r->ctx;
	*wrong = 0;
	for (int i = 0; i < c->p->check; i++) {
		uint64_t seed = ++r->rep;
		int64_t local = 0;
		int ret = init_data(r, s, seed);
		if (ret == 0)
			ret = check_launch(r, s);
		if (ret == 0)
			ret = wait_all(r, deadline);
		if (c->p->graph > 0)
			c->b->ops->graph_free(c->b);
		if (ret == 0)
			ret = count_wrong(r, s, seed, &local);
		if (ret < 0)
			return ret;
		double v[2] = { (double)local, local ? 1.0 : 0.0 };
		ret = c->sync.ops->allreduce_f64(c->sync.ctx, v, 2, BENCH_SYNC_SUM, deadline, r->err);
		if (ret < 0)
			return ret;
		*wrong = (int64_t)v[0];
		if (*wrong)
			return (int)v[1]; /* processes with errors, for "Out of bounds values" */
	}
	return 0;
}

/* The launches of the timed loop, launched now (or recorded, in capture). */
static int launch_loop(struct run *r, const struct step *s, double deadline, bool capturing)
{
	const struct bench_ctx *c = r->ctx;
	const struct bench_params *p = c->p;
	const struct backend_ops *o = c->b->ops;
	/* -m as one group (nccl-tests: ncclGroupStart/End around the agg_iters
	 * launches); with -z each launch is waited for, so never grouped */
	bool group = p->agg > 1 && !p->blocking && o->group_begin && o->group_end;
	bool rec = p->per_iter && !capturing;
	int ret = 0;

	r->coll_sec = 0;
	for (int i = 0; i < p->iters && ret == 0; i++) {
		double t0 = clock_now();
		if (rec && (ret = mark_at(r, point_start(p, i))) < 0)
			return ret;
		if (group && (ret = o->group_begin(c->b)) < 0)
			return backend_fail(r, "starting a group of launches (-m)", ret);
		for (int a = 0; a < p->agg && ret == 0; a++) {
			uint64_t k = (uint64_t)i * (uint64_t)p->agg + (uint64_t)a;
			ret = launch(r, s, k);
			if (!capturing)
				c->sync.ops->progress(c->sync.ctx, k + 1);
			if (ret == 0 && p->blocking)
				ret = wait_all(r, deadline);
			if (ret == 0 && p->blocking == 1)
				ret = barrier(r, deadline);
		}
		if (group) {
			int end = o->group_end(c->b);
			if (ret == 0 && end < 0)
				ret = backend_fail(r, "issuing a group of launches (-m)", end);
		}
		if (ret == 0 && p->blocking == 3)
			ret = iteration_end(r, i, t0, deadline);
	}
	if (ret == 0 && rec && p->blocking != 3)
		ret = mark_at(r, p->iters);
	return ret;
}

/* -G: the loop captured into a CUDA graph once, the graph launched
 * `graph` times (nccl-tests' -G); *sec is the time of them all. */
static int graph_loop(struct run *r, const struct step *s, double deadline, double *sec)
{
	const struct bench_ctx *c = r->ctx;
	const struct backend_ops *o = c->b->ops;
	int ret = o->capture_begin(c->b);
	if (ret < 0)
		return backend_fail(r, "capturing a CUDA graph", ret);
	ret = launch_loop(r, s, deadline, true);
	int end = o->capture_end(c->b);
	if (ret == 0 && end < 0)
		ret = backend_fail(r, "instantiating the CUDA graph", end);
	if (ret == 0 && (ret = barrier(r, deadline)) == 0 && (ret = o->timer_begin(c->b)) < 0)
		ret = backend_fail(r, "starting the timer", ret);
	for (int g = 0; g < c->p->graph && ret == 0; g++) {
		if ((ret = o->graph_launch(c->b)) < 0)
			ret = backend_fail(r, "launching the CUDA graph", ret);
		c->sync.ops->progress(c->sync.ctx, (uint64_t)(g + 1) * (uint64_t)c->p->iters * (uint64_t)c->p->agg);
	}
	if (ret == 0 && (ret = o->timer_end(c->b, deadline, sec)) < 0)
		ret = backend_fail(r, "waiting for the graph launches", ret);
	o->graph_free(c->b);
	return ret;
}

/* The timed loop; *sec is the mean time per launch, combined per -a;
 * *cpu the host time per launch spent issuing them (-C: nccl-tests' cputime,
 * this process's own, never combined). */
static int timed(struct run *r, const struct step *s, double deadline, double *sec, double *cpu)
{
	const struct bench_ctx *c = r->ctx;
	const struct bench_params *p = c->p;
	double launches = (double)p->iters * p->agg * (p->graph > 0 ? p->graph : 1);
	int ret = 0;

	if ((ret = launch(r, s, 0)) < 0 || (ret = wait_all(r, deadline)) < 0 || (ret = barrier(r, deadline)) < 0)
		return ret;
	double t0 = clock_now();
	if (p->graph > 0) {
		if ((ret = graph_loop(r, s, deadline, sec)) < 0)
			return ret;
		*cpu = clock_now() - t0; /* graph launches and the wait: as close as -G allows */
	} else {
		if ((ret = c->b->ops->timer_begin(c->b)) < 0)
			return backend_fail(r, "starting the timer", ret);
		t0 = clock_now();
		if ((ret = launch_loop(r, s, deadline, false)) < 0)
			return ret;
		*cpu = clock_now() - t0;
		if ((ret = c->b->ops->timer_end(c->b, deadline, sec)) < 0)
			return backend_fail(r, "waiting for the timed loop", ret);
		if (p->blocking == 3)
			*sec = *cpu = r->coll_sec; /* nccl-tests' collOnlySec, for both */
	}
	*sec /= launches;
	*cpu /= launches;
	if (p->average == 0)
		return 0; /* process 0 prints its own time */
	enum bench_sync_op op = p->average == 2 ? BENCH_SYNC_MIN : p->average == 3 ? BENCH_SYNC_MAX : BENCH_SYNC_SUM;
	ret = c->sync.ops->allreduce_f64(c->sync.ctx, sec, 1, op, deadline, r->err);
	if (ret == 0 && op == BENCH_SYNC_SUM)
		*sec /= c->sync.nprocs;
	return ret;
}

/* One process's per-iteration times (s per launch, the longest local rank). */
static int own_iter_times(struct run *r, double *t)
{
	const struct bench_ctx *c = r->ctx;
	const struct bench_params *p = c->p;
	for (int i = 0; i < p->iters; i++) {
		int a = point_start(p, i), z = p->blocking == 3 ? a + 1 : i + 1;
		double sec = 0;
		if (!c->b->ops->mark_elapsed) {
			sec = r->stamps[z] - r->stamps[a];
		} else {
			int ret = c->b->ops->mark_elapsed(c->b, a, z, &sec);
			if (ret < 0)
				return backend_fail(r, "reading the per-iteration times (-I)", ret);
		}
		t[i] = sec / p->agg;
	}
	return 0;
}

/* -I after the timed loop: every process's times gathered to process 0,
 * which keeps each iteration's longest (nccl-tests: max over process rows). */
static int iter_times(struct run *r, double deadline, struct bench_iter **out)
{
	const struct bench_ctx *c = r->ctx;
	int n = c->p->iters, np = c->sync.nprocs > 0 ? c->sync.nprocs : 1;
	double *mine = xcalloc((size_t)n, sizeof(double));
	double *all = c->proc == 0 ? xcalloc((size_t)np * (size_t)n, sizeof(double)) : NULL;
	int ret = own_iter_times(r, mine);

	if (ret == 0)
		ret = c->sync.ops->gather(c->sync.ctx, mine, (size_t)n * sizeof(double), all, deadline, r->err);
	if (ret < 0 || c->proc != 0) {
		free(mine);
		free(all);
		return ret;
	}
	for (int q = 1; q < np; q++)
		for (int i = 0; i < n; i++)
			mine[i] = fmax(mine[i], all[(size_t)q * (size_t)n + (size_t)i]);
	if (np == 1) {
		free(all);
		all = NULL;
	}
	struct bench_iter *it = xcalloc(1, sizeof(*it));
	*it = (struct bench_iter){ .n = n, .skipped = c->p->per_iter_skip, .nprocs = np, .times = mine, .procs = all };
	bench_iter_stats(it);
	*out = it;
	return 0;
}

static void phase_name(char *buf, size_t len, const struct run *r, const struct step *s, const char *what)
{
	snprintf(buf, len, "%s %zu B %s %s%s%s (%s)", coll_name(r->ctx->p->coll), coll_size_bytes(&s->cc, s->elt),
		 dtype_name(s->t), r->def->has_op ? redop_name(s->op) : "", r->def->has_op ? " " : "",
		 s->in_place ? "in-place" : "out-of-place", what);
}

/* One half-row: timing, then validation. Returns processes with errors
 * (>= 0) or -errno. */
static int half_row(struct run *r, const struct step *s, struct bench_half *h, struct bench_iter **iter)
{
	const struct bench_ctx *c = r->ctx;
	double bytes = (double)region_elems(s, c->nranks - 1) * (double)s->elt;
	int launches = c->p->iters * c->p->agg * (c->p->graph > 0 ? c->p->graph + 1 : 1) + 1 + c->p->check;
	double deadline = clock_now() + step_timeout(r, bytes, launches);
	char name[192];
	double sec = 0, cpu = 0;
	int ret;

	phase_name(name, sizeof(name), r, s, "timed loop");
	c->sync.ops->phase(c->sync.ctx, name, deadline);
	if (c->p->check && (ret = init_data(r, s, ++r->rep)) < 0)
		return ret;
	if ((ret = timed(r, s, deadline, &sec, &cpu)) < 0)
		return ret;
	if (c->p->per_iter && (ret = iter_times(r, deadline, iter)) < 0)
		return ret;
	/* -C changes the time column only; the bandwidths stay the GPU's */
	h->time_us = (c->p->cputime ? cpu : sec) * 1e6;
	h->algbw = sec > 0 ? r->def->alg_bytes(&s->cc, s->elt, c->nranks) / 1e9 / sec : 0;
	h->busbw = h->algbw * r->def->bus_factor(c->nranks);
	h->wrong = -1;
	ret = 0;
	if (c->p->check && (!s->in_place || r->def->inplace_checked)) {
		ret = validate(r, s, deadline, &h->wrong);
		if (ret < 0)
			return ret;
	}
	c->sync.ops->phase_done(c->sync.ctx);
	return ret;
}

static int warm_up(struct run *r, enum dtype t, enum redop op, int root)
{
	const struct bench_ctx *c = r->ctx;
	const struct bench_params *p = c->p;
	char name[128];

	if (p->warmup <= 0)
		return 0;
	double deadline = clock_now() + step_timeout(r, (double)p->max_bytes * 2, p->warmup * 2 + 2);
	snprintf(name, sizeof(name), "%s warm-up %s%s%s", coll_name(p->coll), dtype_name(t),
		 r->def->has_op ? " " : "", r->def->has_op ? redop_name(op) : "");
	c->sync.ops->phase(c->sync.ctx, name, deadline);
	/* every power-of-two size from -b, as current nccl-tests does */
	for (uint64_t size = p->min_bytes; size && size <= p->max_bytes; size *= 2) {
		struct step s = { .t = t, .op = op, .root = root, .elt = dtype_size(t) };
		r->def->counts(size / s.elt, c->nranks, s.elt, &s.cc);
		for (int i = 0; i < p->warmup; i++) {
			int ret = launch(r, &s, 0);
			if (ret < 0)
				return ret;
		}
		int ret = wait_all(r, deadline);
		if (ret < 0)
			return ret;
	}
	c->sync.ops->phase_done(c->sync.ctx);
	return 0;
}

/* ---- the sweep ---- */

static int sweep_sizes(struct run *r, const uint64_t *sizes, size_t n_sizes, enum dtype t, enum redop op, int root,
		       struct bench_result *res);

static int one_block(struct run *r, const uint64_t *sizes, size_t n_sizes, enum dtype t, enum redop op, int root,
		     struct bench_result *res)
{
	const struct bench_ctx *c = r->ctx;
	int ret = warm_up(r, t, op, root);
	if (ret < 0)
		return ret;
	/* -N: the sweep again after the one warm-up, as nccl-tests (0: forever) */
	for (int cycle = 0; c->p->cycles == 0 || cycle < c->p->cycles; cycle++)
		if ((ret = sweep_sizes(r, sizes, n_sizes, t, op, root, res)) < 0)
			return ret;
	return 0;
}

static int sweep_sizes(struct run *r, const uint64_t *sizes, size_t n_sizes, enum dtype t, enum redop op, int root,
		       struct bench_result *res)
{
	const struct bench_ctx *c = r->ctx;
	int ret;

	for (size_t i = 0; i < n_sizes; i++) {
		struct step s = { .t = t, .op = op, .root = root, .elt = dtype_size(t) };
		struct bench_row row = { .type = t, .op = op, .root = r->def->has_root ? root : -1,
					 .has_op = r->def->has_op || c->p->coll == COLL_SENDRECV };
		r->def->counts(sizes[i] / s.elt, c->nranks, s.elt, &s.cc);
		row.size = coll_size_bytes(&s.cc, s.elt);
		row.count = s.cc.param;
		for (int h = 0; h < 2; h++) {
			s.in_place = h == 1;
			ret = half_row(r, &s, &row.half[h], &row.iter[h]);
			if (ret < 0) {
				bench_iter_free(row.iter[0]);
				bench_iter_free(row.iter[1]);
				return ret;
			}
			res->out_of_bounds += ret;
			res->busbw_sum += row.half[h].busbw;
			res->busbw_n++;
		}
		row.done = (int64_t)time(NULL);
		res->rows = xreallocarray(res->rows, res->n_rows + 1, sizeof(*res->rows));
		res->rows[res->n_rows++] = row;
		if (c->proc == 0 && c->on_row)
			c->on_row(c->row_ctx, &row);
	}
	return 0;
}

static int sweep(struct run *r, struct bench_result *res)
{
	const struct bench_params *p = r->ctx->p;
	_cleanup_free_ uint64_t *sizes = NULL;
	size_t n_sizes = bench_sizes(p, &sizes);
	bool loop_ops = r->def->has_op || p->coll == COLL_SENDRECV;
	int ret = 0;

	for (size_t ti = 0; ti < p->n_dtypes && ret == 0; ti++)
		for (size_t oi = 0; oi < (loop_ops ? p->n_ops : 1) && ret == 0; oi++) {
			int first = r->def->has_root && p->root < 0 ? 0 : p->root;
			int last = r->def->has_root && p->root < 0 ? r->ctx->nranks - 1 : first;
			for (int root = first; root <= last && ret == 0; root++)
				ret = one_block(r, sizes, n_sizes, p->dtypes[ti], loop_ops ? p->ops[oi] : OP_SUM,
						r->def->has_root ? root : -1, res);
		}
	return ret;
}

static void free_buffers(struct run *r)
{
	const struct bench_ctx *c = r->ctx;
	for (int l = 0; r->rb && l < c->local; l++) {
		if (r->rb[l].send)
			c->b->ops->free(c->b, l, r->rb[l].send);
		if (r->rb[l].recv)
			c->b->ops->free(c->b, l, r->rb[l].recv);
	}
	free(r->rb);
	if (c->p->per_iter && c->b->ops->marks)
		c->b->ops->marks(c->b, 0);
	free(r->stamps);
	free(r->hsend);
	free(r->hrecv);
	free(r->hexp);
}

/* -R: every local rank's buffers registered in one group, as nccl-tests
 * (symmetric registration is collective over the communicator). */
static int register_buffers(struct run *r, size_t bytes)
{
	const struct bench_ctx *c = r->ctx;
	const struct backend_ops *o = c->b->ops;
	int ret = o->group_begin(c->b);

	if (ret < 0)
		return backend_fail(r, "registering the buffers (-R)", ret);
	for (int l = 0; l < c->local && ret == 0; l++)
		if ((ret = o->reg(c->b, l, r->rb[l].send, bytes)) == 0)
			ret = o->reg(c->b, l, r->rb[l].recv, bytes);
	int end = o->group_end(c->b);
	if (ret == 0)
		ret = end;
	return ret < 0 ? backend_fail(r, "registering the buffers (-R)", ret) : 0;
}

static int alloc_buffers(struct run *r)
{
	const struct bench_ctx *c = r->ctx;
	/* every size's send, receive and in-place region fits in max_bytes
	 * (counts only round down); 64 bytes spare for alignment rounding */
	r->buf_bytes = (size_t)c->p->max_bytes + 64;
	r->rb = xcalloc((size_t)c->local, sizeof(*r->rb));
	/* -u: room for the widest type (8 bytes) times the shift */
	size_t bytes = r->buf_bytes + 8 * (size_t)c->p->unalign;
	for (int l = 0; l < c->local; l++) {
		int ret = c->b->ops->alloc(c->b, l, bytes, &r->rb[l].send);
		if (ret == 0)
			ret = c->b->ops->alloc(c->b, l, bytes, &r->rb[l].recv);
		if (ret < 0)
			return backend_fail(r, "allocating buffers", ret);
		struct backend_device d = { .ordinal = -1 };
		c->b->ops->device(c->b, l, &d);
		r->shift = d.ordinal >= 0; /* nccl-tests' per-iteration offset, for GPU caches */
	}
	if (c->p->reg) {
		int ret = register_buffers(r, bytes);
		if (ret < 0)
			return ret;
	}
	if (c->p->per_iter && !c->b->ops->marks) {
		r->stamps = xcalloc((size_t)npoints(c->p), sizeof(double));
	} else if (c->p->per_iter) {
		int ret = c->b->ops->marks(c->b, npoints(c->p));
		if (ret < 0)
			return backend_fail(r, "creating the per-iteration timing points (-I)", ret);
	}
	if (c->p->check) {
		r->hsend = malloc(r->buf_bytes);
		r->hrecv = malloc(r->buf_bytes);
		r->hexp = malloc(r->buf_bytes);
		if (!r->hsend || !r->hrecv || !r->hexp) {
			*r->err = xasprintf("cannot allocate %zu MiB of host memory for validation (-c 0 turns it off)",
					    3 * r->buf_bytes >> 20);
			return -ENOMEM;
		}
	}
	return 0;
}

/* -M: every local GPU's free memory now. */
static int mem_read(struct run *r, int64_t *avail)
{
	const struct bench_ctx *c = r->ctx;
	for (int l = 0; l < c->local; l++) {
		int ret = c->b->ops->mem_free(c->b, l, &avail[l]);
		if (ret < 0)
			return backend_fail(r, "reading the GPU's free memory (-M)", ret);
	}
	return 0;
}

/* -M: what setup, the buffers and the sweep took, the most of any GPU of
 * any process (nccl-tests takes the maximum over GPUs and processes). */
static int mem_report(struct run *r, const int64_t *before, const int64_t *alloced, const int64_t *after,
		      struct bench_result *res)
{
	const struct bench_ctx *c = r->ctx;
	double v[3] = { (double)c->b->mem_init, -1e18, -1e18 };
	for (int l = 0; l < c->local; l++) {
		v[1] = fmax(v[1], (double)(before[l] - alloced[l]));
		v[2] = fmax(v[2], (double)(alloced[l] - after[l]));
	}
	int ret = c->sync.ops->allreduce_f64(c->sync.ctx, v, 3, BENCH_SYNC_MAX, clock_now() + 30.0, r->err);
	if (ret < 0)
		return ret;
	for (int i = 0; i < 3; i++)
		res->mem[i] = (int64_t)v[i];
	res->has_mem = true;
	return 0;
}

int bench_run(const struct bench_ctx *ctx, struct bench_result *res, char **err)
{
	struct run r = { .ctx = ctx, .def = coll_get(ctx->p->coll), .err = err };
	int ret;

	memset(res, 0, sizeof(*res));
	if (!r.def)
		return -EINVAL;
	if (ctx->local > 64) {
		*err = xasprintf("-g %d: at most 64 GPUs per process", ctx->local);
		return -EINVAL;
	}
	if (ctx->p->graph > 0 && !ctx->b->ops->capture_begin) {
		*err = xasprintf("-G: the %s backend has no CUDA graphs (they need --backend nccl)", ctx->b->ops->name);
		return -EINVAL;
	}
	if (r.def->has_root && ctx->p->root >= ctx->nranks) {
		*err = xasprintf("-r %d: there are only %d ranks", ctx->p->root, ctx->nranks);
		return -EINVAL;
	}
	if (ctx->p->reg && (!ctx->b->ops->reg || !ctx->b->ops->group_begin || !ctx->b->ops->group_end)) {
		*err = xasprintf("-R %d: the %s backend has no NCCL communicators to register buffers with "
				 "(--backend nccl)", ctx->p->reg, ctx->b->ops->name);
		return -EINVAL;
	}
	if (ctx->p->memory && !ctx->b->ops->mem_free) {
		*err = xasprintf("-M: the %s backend uses host memory: no GPU memory to report (--backend nccl)",
				 ctx->b->ops->name);
		return -EINVAL;
	}
	int64_t mem[3][64];
	bool m = ctx->p->memory;
	if ((ret = m ? mem_read(&r, mem[0]) : 0) == 0 && (ret = alloc_buffers(&r)) == 0 &&
	    (ret = m ? mem_read(&r, mem[1]) : 0) == 0 && (ret = sweep(&r, res)) == 0 && m &&
	    (ret = mem_read(&r, mem[2])) == 0)
		ret = mem_report(&r, mem[0], mem[1], mem[2], res);
	free_buffers(&r);
	return ret;
}

void bench_result_free(struct bench_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; res->rows && i < res->n_rows; i++) {
		bench_iter_free(res->rows[i].iter[0]);
		bench_iter_free(res->rows[i].iter[1]);
	}
	free(res->rows);
	res->rows = NULL;
	res->n_rows = 0;
}
