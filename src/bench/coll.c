/* The seven collectives (see coll.h). Per-rank chunks of the gather-type
 * collectives are rounded down to 16 bytes' worth of elements, as current
 * nccl-tests does (align in *GetCollByteCount). */
#include "coll.h"

#include <string.h>

static size_t align16(size_t count, size_t elt_size)
{
	size_t per = elt_size < 16 ? 16 / elt_size : 1;
	return count / per * per;
}

static void counts_same(size_t count, int nranks, size_t elt_size, struct coll_counts *o)
{
	(void)nranks;
	(void)elt_size;
	*o = (struct coll_counts){ .param = count, .send = count, .recv = count };
}

static void counts_gather(size_t count, int nranks, size_t elt_size, struct coll_counts *o)
{
	size_t b = align16(count / (size_t)nranks, elt_size);
	*o = (struct coll_counts){ .param = b, .send = b, .recv = b * (size_t)nranks, .send_inplace = b };
}

static void counts_scatter(size_t count, int nranks, size_t elt_size, struct coll_counts *o)
{
	size_t b = align16(count / (size_t)nranks, elt_size);
	*o = (struct coll_counts){ .param = b, .send = b * (size_t)nranks, .recv = b, .recv_inplace = b };
}

static void counts_alltoall(size_t count, int nranks, size_t elt_size, struct coll_counts *o)
{
	size_t b = align16(count / (size_t)nranks, elt_size);
	*o = (struct coll_counts){ .param = b, .send = b * (size_t)nranks, .recv = b * (size_t)nranks };
}

static double bytes_param(const struct coll_counts *cc, size_t elt_size, int nranks)
{
	(void)nranks;
	return (double)cc->param * (double)elt_size;
}

static double bytes_param_n(const struct coll_counts *cc, size_t elt_size, int nranks)
{
	return (double)cc->param * (double)elt_size * nranks;
}

/* Bus bandwidth factors (nccl-tests doc/PERFORMANCE.md). */
static double factor_allreduce(int n)
{
	return 2.0 * (n - 1) / n;
}

static double factor_n1(int n)
{
	return (double)(n - 1) / n;
}

static double factor_one(int n)
{
	(void)n;
	return 1.0;
}

/* ---- data ---- */

static struct data_spec copy_spec(const struct coll_run *r)
{
	struct data_spec s = r->data;
	s.op = DATA_COPY;
	return s;
}

static void init_reduce(const struct coll_run *r, void *send)
{
	data_fill(&r->data, r->rank, 0, send, r->cc.send);
}

static void init_copy(const struct coll_run *r, void *send)
{
	struct data_spec s = copy_spec(r);
	data_fill(&s, r->rank, 0, send, r->cc.send);
}

static void expect_allreduce(const struct coll_run *r, const void *send, void *exp)
{
	(void)send;
	data_expect_reduce(&r->data, 0, exp, r->cc.recv);
}

static void expect_allgather(const struct coll_run *r, const void *send, void *exp)
{
	struct data_spec s = copy_spec(r);
	size_t sz = dtype_size(s.t);
	(void)send;
	for (int p = 0; p < r->nranks; p++)
		data_fill(&s, p, 0, (char *)exp + (size_t)p * r->cc.param * sz, r->cc.param);
}

static void expect_reducescatter(const struct coll_run *r, const void *send, void *exp)
{
	(void)send;
	data_expect_reduce(&r->data, (size_t)r->rank * r->cc.param, exp, r->cc.recv);
}

/* alltoall: rank p's block q is data_fill(p) at indices q*b...; rank r
 * receives every p's block r. */
static void expect_alltoall(const struct coll_run *r, const void *send, void *exp)
{
	struct data_spec s = copy_spec(r);
	size_t sz = dtype_size(s.t), b = r->cc.param;
	(void)send;
	for (int p = 0; p < r->nranks; p++)
		data_fill(&s, p, (size_t)r->rank * b, (char *)exp + (size_t)p * b * sz, b);
}

static void init_broadcast(const struct coll_run *r, void *send)
{
	struct data_spec s = copy_spec(r);
	if (r->rank == r->root)
		data_fill(&s, r->root, 0, send, r->cc.send);
	else
		memset(send, 0, r->cc.send * dtype_size(s.t));
}

static void expect_broadcast(const struct coll_run *r, const void *send, void *exp)
{
	struct data_spec s = copy_spec(r);
	(void)send;
	data_fill(&s, r->root, 0, exp, r->cc.recv);
}

/* reduce: only the root's buffer changes; the others keep what they had
 * (zeros out of place, their own input in place). */
static void expect_reduce(const struct coll_run *r, const void *send, void *exp)
{
	size_t bytes = r->cc.recv * dtype_size(r->data.t);
	if (r->rank == r->root)
		data_expect_reduce(&r->data, 0, exp, r->cc.recv);
	else if (r->in_place)
		memcpy(exp, send, bytes);
	else
		memset(exp, 0, bytes);
}

static void expect_sendrecv(const struct coll_run *r, const void *send, void *exp)
{
	struct data_spec s = copy_spec(r);
	(void)send;
	data_fill(&s, (r->rank - 1 + r->nranks) % r->nranks, 0, exp, r->cc.recv);
}

static const struct coll_def defs[COLL__COUNT] = {
	[COLL_ALL_REDUCE] = { .id = COLL_ALL_REDUCE, .has_op = true, .inplace_checked = true, .counts = counts_same,
			      .alg_bytes = bytes_param, .bus_factor = factor_allreduce, .init = init_reduce,
			      .expect = expect_allreduce },
	[COLL_ALL_GATHER] = { .id = COLL_ALL_GATHER, .inplace_checked = true, .counts = counts_gather,
			      .alg_bytes = bytes_param_n, .bus_factor = factor_n1, .init = init_copy,
			      .expect = expect_allgather },
	[COLL_REDUCE_SCATTER] = { .id = COLL_REDUCE_SCATTER, .has_op = true, .inplace_checked = true,
				  .counts = counts_scatter, .alg_bytes = bytes_param_n, .bus_factor = factor_n1,
				  .init = init_reduce, .expect = expect_reducescatter },
	[COLL_BROADCAST] = { .id = COLL_BROADCAST, .has_root = true, .inplace_checked = true, .counts = counts_same,
			     .alg_bytes = bytes_param, .bus_factor = factor_one, .init = init_broadcast,
			     .expect = expect_broadcast },
	[COLL_REDUCE] = { .id = COLL_REDUCE, .has_op = true, .has_root = true, .inplace_checked = true,
			  .counts = counts_same, .alg_bytes = bytes_param, .bus_factor = factor_one,
			  .init = init_reduce, .expect = expect_reduce },
	[COLL_ALLTOALL] = { .id = COLL_ALLTOALL, .counts = counts_alltoall, .alg_bytes = bytes_param_n,
			    .bus_factor = factor_n1, .init = init_copy, .expect = expect_alltoall },
	[COLL_SENDRECV] = { .id = COLL_SENDRECV, .counts = counts_same, .alg_bytes = bytes_param,
			    .bus_factor = factor_one, .init = init_copy, .expect = expect_sendrecv },
};

const struct coll_def *coll_get(enum coll c)
{
	return (unsigned)c < COLL__COUNT ? &defs[c] : NULL;
}

size_t coll_size_bytes(const struct coll_counts *cc, size_t elt_size)
{
	return (cc->send > cc->recv ? cc->send : cc->recv) * elt_size;
}
