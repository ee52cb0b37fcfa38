/* Unit tests for the socket backend's groups (src/bench/backend_socket_group.c):
 * threads stand for the processes of a job on 127.0.0.1, their job
 * exchanges (bench/sync.h) going through shared memory and a barrier.
 * Each splits the socket backend into groups (halves, pairs, sizes 1, 2,
 * 3 and 5, processes in no group) and checks the ring all_reduce against
 * the exact results of bench/data.h (float sum, int32 max, double avg,
 * int8 sum; counts below the group size and not a multiple of it;
 * in-place). Then what goes wrong: records that cannot be used, strangers
 * on a listener, a member that closes or stalls mid-collective. The
 * threads record what fails (cmocka asserts only in the main thread). */
#define _GNU_SOURCE
#include "testutil.h"
#include "bench/backend.h"
#include "bench/backend_socket_group.h"
#include "bench/data.h"
#include "bench/sync.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXP 12
#define SPLIT_WAIT_S 10.0

struct proc;

/* The job: n processes, the area their exchanges go through. */
struct world {
	int n;
	pthread_barrier_t bar;
	uint8_t area[16384];
	/* run by process 0 in the first bcast, with the table split() sends */
	void (*hook)(struct world *w, const uint8_t *table, size_t len);
	int strangers[8], nstrangers;
	void (*fn)(struct proc *p);
	const void *arg;
};

/* One process: its job handle and what it saw. */
struct proc {
	struct world *w;
	int proc;
	struct bench_sync sync;
	char fail[600];            /* the first failed expectation, "" when none */
	int r;                     /* the result of the step a test looks at */
	char error[512];           /* and its message */
	double seconds;            /* and how long it took */
};

#define CHECK(p, cond, ...)                                                      \
	do {                                                                     \
		if (!(cond) && !(p)->fail[0])                                    \
			snprintf((p)->fail, sizeof((p)->fail), __VA_ARGS__);     \
	} while (0)

static void w_phase(void *ctx, const char *desc, double deadline)
{
	(void)ctx, (void)desc, (void)deadline;
}

static void w_phase_done(void *ctx)
{
	(void)ctx;
}

static void w_progress(void *ctx, uint64_t launches)
{
	(void)ctx, (void)launches;
}

static int w_barrier(void *ctx, double deadline, char **err)
{
	struct proc *p = ctx;
	(void)deadline, (void)err;
	pthread_barrier_wait(&p->w->bar);
	return 0;
}

static int w_allreduce(void *ctx, double *v, size_t n, enum bench_sync_op op, double deadline, char **err)
{
	(void)ctx, (void)v, (void)n, (void)op, (void)deadline;
	*err = xstrdup("not used here");
	return -ENOTSUP;
}

static int w_gather(void *ctx, const void *mine, size_t len, void *all, double deadline, char **err)
{
	struct proc *p = ctx;
	struct world *w = p->w;
	(void)deadline, (void)err;
	if ((size_t)w->n * len > sizeof(w->area))
		abort();
	memcpy(w->area + (size_t)p->proc * len, mine, len);
	pthread_barrier_wait(&w->bar);
	if (p->proc == 0)
		memcpy(all, w->area, (size_t)w->n * len);
	pthread_barrier_wait(&w->bar);
	return 0;
}

static int w_bcast(void *ctx, void *buf, size_t len, double deadline, char **err)
{
	struct proc *p = ctx;
	struct world *w = p->w;
	(void)deadline, (void)err;
	if (len > sizeof(w->area))
		abort();
	if (p->proc == 0) {
		memcpy(w->area, buf, len);
		if (w->hook)
			w->hook(w, buf, len);
		w->hook = NULL;
	}
	pthread_barrier_wait(&w->bar);
	if (p->proc != 0)
		memcpy(buf, w->area, len);
	pthread_barrier_wait(&w->bar);
	return 0;
}

static int w_scatter(void *ctx, const void *all, void *mine, size_t len, double deadline, char **err)
{
	(void)ctx, (void)all, (void)mine, (void)len, (void)deadline;
	*err = xstrdup("not used here");
	return -ENOTSUP;
}

static const struct bench_sync_ops world_ops = {
	.phase = w_phase, .phase_done = w_phase_done, .progress = w_progress, .barrier = w_barrier,
	.allreduce_f64 = w_allreduce, .bcast = w_bcast, .gather = w_gather, .scatter = w_scatter,
};

/* As the job's process 0 sees its peers' control connections: every
 * process came from 127.0.0.1 (test_announced_addr). */
static void w_peer_addr(void *ctx, int proc, char *buf, size_t len)
{
	const struct proc *p = ctx;
	snprintf(buf, len, "%s", p->proc == 0 && proc > 0 ? "::ffff:127.0.0.1" : "");
}

static const struct bench_sync_ops seen_ops = {
	.phase = w_phase, .phase_done = w_phase_done, .progress = w_progress, .barrier = w_barrier,
	.allreduce_f64 = w_allreduce, .bcast = w_bcast, .gather = w_gather, .scatter = w_scatter,
	.peer_addr = w_peer_addr,
};

static void *proc_main(void *arg)
{
	struct proc *p = arg;
	p->w->fn(p);
	return NULL;
}

/* Runs fn in n threads, one per process, in a fresh world (hook and arg
 * as struct world says), and fails on what any recorded. */
static void world_run(struct world *w, int n, void (*fn)(struct proc *p),
		      void (*hook)(struct world *w, const uint8_t *table, size_t len), const void *arg,
		      struct proc *procs)
{
	pthread_t th[MAXP];
	assert_true(n <= MAXP);
	*w = (struct world){ .n = n, .fn = fn, .hook = hook, .arg = arg };
	pthread_barrier_init(&w->bar, NULL, (unsigned)n);
	for (int i = 0; i < n; i++) {
		procs[i] = (struct proc){ .w = w, .proc = i };
		procs[i].sync = (struct bench_sync){ .ops = &world_ops, .ctx = &procs[i], .proc = i, .nprocs = n };
		assert_int_equal(pthread_create(&th[i], NULL, proc_main, &procs[i]), 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&w->bar);
	for (int i = 0; i < n; i++)
		if (procs[i].fail[0])
			fail_msg("process %d: %s", i, procs[i].fail);
}

/* This process's socket backend, initialised over the world. */
static struct backend *parent_new(struct proc *p)
{
	struct backend *b = NULL;
	char *err = NULL;
	if (backend_socket_create(&b, &err) < 0)
		abort();
	struct backend_env env = { .nranks = p->w->n, .proc_rank = p->proc, .nprocs = p->w->n, .local = 1,
				   .sync = &p->sync };
	int r = b->ops->init(b, &env, 0);
	CHECK(p, r == 0, "init: %s", b->error);
	return b;
}

static struct backend *split(struct proc *p, struct backend *b, int color, int key, const char *addr, double timeout)
{
	struct backend_split how = { .color = color, .key = key, .addr = addr, .timeout = timeout };
	struct backend *c = NULL;
	double t0 = clock_now();
	p->r = b->ops->split(b, &how, t0 + SPLIT_WAIT_S, &c);
	p->seconds = clock_now() - t0;
	snprintf(p->error, sizeof(p->error), "%s", b->error);
	return c;
}

/* One all_reduce on child c against bench/data.h's exact result. */
static void check_all_reduce(struct proc *p, struct backend *c, enum dtype t, enum redop op, size_t count, bool inplace)
{
	size_t bytes = count * dtype_size(t);
	struct data_spec s = { .t = t, .op = (int)op, .nranks = c->env.nranks, .seed = 0x5eedu + count };
	_cleanup_free_ char *host = xcalloc(1, bytes + 1), *want = xcalloc(1, bytes + 1);
	void *sbuf = NULL, *rbuf = NULL;

	if (c->ops->alloc(c, 0, bytes, &sbuf) < 0 || c->ops->alloc(c, 0, bytes, &rbuf) < 0)
		abort();
	data_fill(&s, c->env.proc_rank, 0, host, count);
	c->ops->copy_in(c, 0, sbuf, host, bytes);
	memset(host, 0, bytes);
	void *const send[1] = { sbuf }, *const recv[1] = { inplace ? sbuf : rbuf };
	int r = c->ops->run(c, COLL_ALL_REDUCE, send, recv, count, t, op, -1);
	CHECK(p, r == 0, "all_reduce %s %s of %zu%s: %s", dtype_name(t), redop_name(op), count,
	      inplace ? " in place" : "", c->error);
	c->ops->copy_out(c, 0, host, recv[0], bytes);
	data_expect_reduce(&s, 0, want, count);
	size_t bad = r == 0 ? data_compare(t, (int)op, host, want, count) : 0;
	CHECK(p, bad == 0, "all_reduce %s %s of %zu%s over %d: %zu elements wrong", dtype_name(t), redop_name(op),
	      count, inplace ? " in place" : "", c->env.nranks, bad);
	c->ops->free(c, 0, sbuf);
	c->ops->free(c, 0, rbuf);
}

static const struct {
	enum dtype t;
	enum redop op;
} combos[] = { { DT_FLOAT, OP_SUM }, { DT_INT32, OP_MAX }, { DT_DOUBLE, OP_AVG }, { DT_INT8, OP_SUM } };

/* counts below every group size, not multiples of 2, 3 or 5, and none */
static const size_t counts[] = { 0, 1, 2, 4, 7, 1001 };

static void check_every_combo(struct proc *p, struct backend *c)
{
	for (size_t k = 0; k < ARRAY_SIZE(combos); k++)
		for (size_t n = 0; n < ARRAY_SIZE(counts); n++)
			for (int inplace = 0; inplace < 2; inplace++)
				check_all_reduce(p, c, combos[k].t, combos[k].op, counts[n], inplace);
}

/* Groups of 1, 2, 3 and 5 at once: group 3 ordered by a descending key,
 * group 2 by ties (the parent's order). */
static void sizes_proc(struct proc *p)
{
	static const int color[11] = { 0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3 };
	static const int size[4] = { 1, 2, 3, 5 };
	static const int first[4] = { 0, 1, 3, 6 };
	int col = color[p->proc], key = col == 3 ? -p->proc : col == 2 ? 7 : p->proc;
	int want = col == 3 ? 10 - p->proc : p->proc - first[col];
	struct backend *b = parent_new(p);
	struct backend *c = split(p, b, col, key, "127.0.0.1", 5);
	CHECK(p, p->r == 0 && c, "split: %s", p->error);
	if (!c)
		goto out;
	CHECK(p, c->env.nranks == size[col] && c->env.nprocs == size[col] && c->env.local == 1,
	      "group %d has %d ranks", col, c->env.nranks);
	CHECK(p, c->env.proc_rank == want, "rank %d in group %d, not %d", c->env.proc_rank, col, want);
	check_every_combo(p, c);
	/* larger than the sockets' buffers: both directions must move at once */
	check_all_reduce(p, c, DT_FLOAT, OP_SUM, (2u << 20) + 3, false);
	check_all_reduce(p, c, DT_FLOAT, OP_SUM, (2u << 20) + 3, true);
	CHECK(p, c->ops->barrier(c, clock_now() + 5) == 0, "barrier: %s", c->error);
	void *const buf[1] = { NULL };
	CHECK(p, c->ops->run(c, COLL_ALL_GATHER, buf, buf, 0, DT_FLOAT, OP_SUM, -1) == -ENOTSUP &&
			 strstr(c->error, "all_gather"),
	      "all_gather: %s", c->error);
	CHECK(p, !strcmp(c->ops->version(c), "gpuready TCP ring"), "version %s", c->ops->version(c));
	c->ops->fini(c);
out:
	b->ops->fini(b);
}

static void test_group_sizes(void **state)
{
	(void)state;
	static struct world w;
	struct proc procs[11];
	world_run(&w, 11, sizes_proc, NULL, NULL, procs);
}

/* Halves, then pairs, then pairs with two processes in no group: one
 * parent split three times, as cluster nccl narrows a slow job down. */
static void halves_proc(struct proc *p)
{
	struct backend *b = parent_new(p);
	struct backend *c = split(p, b, p->proc / 3, p->proc, "127.0.0.1", 5);
	CHECK(p, p->r == 0 && c && c->env.nranks == 3 && c->env.proc_rank == p->proc % 3, "halves: %s", p->error);
	if (c) {
		check_all_reduce(p, c, DT_FLOAT, OP_SUM, 1001, false);
		check_all_reduce(p, c, DT_INT8, OP_SUM, 5, true);
		c->ops->fini(c);
	}
	c = split(p, b, p->proc / 2, 0, "127.0.0.1", 5);
	CHECK(p, p->r == 0 && c && c->env.nranks == 2 && c->env.proc_rank == p->proc % 2, "pairs: %s", p->error);
	if (c) {
		check_every_combo(p, c);
		c->ops->fini(c);
	}
	bool none = p->proc >= 4;
	c = split(p, b, none ? -1 : p->proc / 2, 0, "127.0.0.1", 5);
	CHECK(p, p->r == 0 && (none ? !c : c && c->env.nranks == 2), "pairs and none: %d %s", p->r, p->error);
	if (c) {
		check_all_reduce(p, c, DT_INT32, OP_MAX, 7, false);
		check_all_reduce(p, c, DT_DOUBLE, OP_AVG, 3, true);
		c->ops->fini(c);
	}
	b->ops->fini(b);
}

static void test_halves_pairs_none(void **state)
{
	(void)state;
	static struct world w;
	struct proc procs[6];
	world_run(&w, 6, halves_proc, NULL, NULL, procs);
}

/* Records from the wire: each value that cannot be used is named. */
static void test_records(void **state)
{
	(void)state;
	uint8_t table[SG_TABLE_BYTES(6)] = { 0x11, 0x22 };
	const struct sg_entry in[6] = {
		{ .color = 0, .key = -3, .port = 4242, .addr = "10.0.0.1" },
		{ .color = 0, .port = 0, .addr = "10.0.0.2" },
		{ .color = 1, .port = 70000, .addr = "10.0.0.3" },
		{ .color = -5, .port = 1, .addr = "10.0.0.4" },
		{ .color = 2, .port = -1, .addr = "fe80::1\x1b[2J" },
		{ .color = 3, .port = 80, .addr = "10.0.0.6" },
	};
	for (int i = 0; i < 6; i++)
		sg_entry_pack(&in[i], table + 8 + (size_t)i * SG_ENTRY_BYTES);
	memset(table + 8 + 5 * SG_ENTRY_BYTES + 12, 'A', SG_ADDR_LEN); /* no NUL */
	struct sg_entry out[6];
	uint64_t nonce = 0;
	sg_table_unpack(table, 6, &nonce, out);
	assert_int_equal(nonce, 0x2211);
	assert_true(out[0].color == 0 && out[0].key == -3 && out[0].port == 4242 && !strcmp(out[0].addr, "10.0.0.1"));
	assert_null(sg_entry_problem(&out[0], 0));
	_cleanup_free_ char *p1 = sg_entry_problem(&out[1], 1), *p2 = sg_entry_problem(&out[2], 2);
	_cleanup_free_ char *p3 = sg_entry_problem(&out[3], 3), *p4 = sg_entry_problem(&out[4], 4);
	_cleanup_free_ char *p5 = sg_entry_problem(&out[5], 5);
	tu_assert_has(p1, "process 1 (10.0.0.2) announced port 0");
	tu_assert_has(p1, "could not listen");
	tu_assert_has(p2, "process 2 (10.0.0.3) announced port 70000");
	tu_assert_has(p3, "process 3 asked for group -5");
	tu_assert_has(p4, "port -1");
	assert_null(strchr(out[4].addr, '\x1b')); /* made printable */
	tu_assert_has(p5, "process 5 announced no address");
	assert_string_equal(out[5].addr, "");
}

/* A process that cannot listen fails its group at once, naming it; one
 * asking for a color below -1 fails alone; the other group forms. */
static void bad_proc(struct proc *p)
{
	static const int color[6] = { 0, 0, 1, 1, -7, 2 };
	static const char *const addr[6] = { "127.0.0.1", "127.0.0.1", "127.0.0.1", "192.0.2.1", "127.0.0.1", "" };
	static const char *const why[6] = { "", "", "process 3 (192.0.2.1) announced port 0", "cannot listen on 192.0.2.1",
					    "group -7", "no numeric address" };
	struct backend *b = parent_new(p);
	struct backend *c = split(p, b, color[p->proc], 0, addr[p->proc], 5);
	CHECK(p, p->seconds < 2, "split took %.1f s", p->seconds);
	if (p->proc < 2) {
		CHECK(p, p->r == 0 && c, "group 0: %s", p->error);
		if (c)
			check_all_reduce(p, c, DT_FLOAT, OP_SUM, 7, false);
	} else {
		CHECK(p, p->r < 0 && !c && strstr(p->error, why[p->proc]), "split gave %d: %s", p->r, p->error);
	}
	if (c)
		c->ops->fini(c);
	b->ops->fini(b);
}

static void test_bad_records(void **state)
{
	(void)state;
	static struct world w;
	struct proc procs[6];
	world_run(&w, 6, bad_proc, NULL, NULL, procs);
}

/* Before anyone connects, strangers queue at process 0's listener:
 * garbage, a stale hello (another nonce), the right nonce from the wrong
 * member or group, one that closes, one that says nothing. */
static void strangers_hook(struct world *w, const uint8_t *table, size_t len)
{
	struct sg_entry e[3];
	uint64_t nonce;
	if (len != SG_TABLE_BYTES(3))
		abort(); /* a thread of the test: no cmocka asserts here */
	sg_table_unpack(table, 3, &nonce, e);
	uint8_t hello[5][SG_HELLO_BYTES];
	memset(hello[0], 'x', SG_HELLO_BYTES);
	sg_hello_pack(hello[1], nonce + 1, 0, 2);
	sg_hello_pack(hello[2], nonce, 0, 1);
	sg_hello_pack(hello[3], nonce, 1, 2);
	for (int i = 0; i < 6; i++) {
		char *err = NULL;
		int fd = tcp_connect(e[0].addr, e[0].port, clock_now() + 2, &err);
		if (fd < 0)
			abort();
		if (i < 4)
			tcp_write_all(fd, hello[i], SG_HELLO_BYTES, clock_now() + 2);
		if (i == 4) {
			close(fd);
			continue;
		}
		w->strangers[w->nstrangers++] = fd;
	}
}

static void stranger_proc(struct proc *p)
{
	struct backend *b = parent_new(p);
	struct backend *c = split(p, b, 0, 0, "127.0.0.1", 5);
	CHECK(p, p->r == 0 && c, "split with strangers: %s", p->error);
	if (c) {
		check_all_reduce(p, c, DT_FLOAT, OP_SUM, 1001, false);
		check_all_reduce(p, c, DT_INT8, OP_SUM, 2, true);
		c->ops->fini(c);
	}
	b->ops->fini(b);
}

/* Process 1 announces 127.0.0.2 (and listens there) while its control
 * connection came from 127.0.0.1: process 0 replaces the address, so
 * process 0 connects to 127.0.0.1, where nothing listens: the group fails
 * naming process 1 at 127.0.0.1, not at the address it announced. */
static void announced_proc(struct proc *p)
{
	p->sync.ops = &seen_ops;
	struct backend *b = parent_new(p);
	struct backend *c = split(p, b, 0, 0, p->proc == 1 ? "127.0.0.2" : "127.0.0.1", 2);
	if (p->proc == 0)
		CHECK(p, p->r < 0 && !c && strstr(p->error, "process 1 at 127.0.0.1:"),
		      "the announced address was used: %d %s", p->r, p->error);
	if (c)
		c->ops->fini(c);
	b->ops->fini(b);
}

static void test_announced_addr(void **state)
{
	(void)state;
	static struct world w;
	struct proc procs[2];
	world_run(&w, 2, announced_proc, NULL, NULL, procs);
}

static void test_strangers(void **state)
{
	(void)state;
	static struct world w;
	struct proc procs[3];
	world_run(&w, 3, stranger_proc, strangers_hook, NULL, procs);
	assert_int_equal(w.nstrangers, 5);
	for (int i = 0; i < w.nstrangers; i++) {
		char c;
		/* closed by process 0: the end of the stream */
		assert_int_equal(tcp_read_all(w.strangers[i], &c, 1, clock_now() + 2), -ECONNRESET);
		close(w.strangers[i]);
	}
}

/* Process 1 of a group of 3 closes its connections (arg: or stalls)
 * while the others run an all_reduce larger than the sockets' buffers. */
static void broken_proc(struct proc *p)
{
	bool stall = *(const bool *)p->w->arg;
	double timeout = stall ? 1 : 3;
	struct backend *b = parent_new(p);
	struct backend *c = split(p, b, 0, 0, "127.0.0.1", timeout);
	CHECK(p, p->r == 0 && c, "split: %s", p->error);
	if (!c)
		goto out;
	if (p->proc == 1) {
		usleep(stall ? 2000000 : 300000);
		c->ops->abort(c);
	} else {
		size_t count = (4u << 20) + 1, bytes = count * sizeof(float);
		void *buf = NULL;
		c->ops->alloc(c, 0, bytes, &buf);
		void *const v[1] = { buf };
		double t0 = clock_now();
		p->r = c->ops->run(c, COLL_ALL_REDUCE, v, v, count, DT_FLOAT, OP_SUM, -1);
		p->seconds = clock_now() - t0;
		snprintf(p->error, sizeof(p->error), "%s", c->error);
		c->ops->free(c, 0, buf);
	}
	c->ops->fini(c);
out:
	b->ops->fini(b);
}

static void test_member_closes(void **state)
{
	(void)state;
	static struct world w;
	static const bool stall = false;
	struct proc procs[3];
	world_run(&w, 3, broken_proc, NULL, &stall, procs);
	for (int i = 0; i < 3; i += 2) {
		assert_int_equal(procs[i].r, -ECONNRESET);
		assert_true(procs[i].seconds < 3);
		tu_assert_has(procs[i].error, "closed the connection");
	}
	/* process 2's previous is process 1; process 0 sends to it (or hears
	 * from process 2 first, which gave up) */
	tu_assert_has(procs[2].error, "process 1 at 127.0.0.1:");
	tu_assert_has(procs[0].error, "at 127.0.0.1:");
}

static void test_member_stalls(void **state)
{
	(void)state;
	static struct world w;
	static const bool stall = true;
	struct proc procs[3];
	world_run(&w, 3, broken_proc, NULL, &stall, procs);
	for (int i = 0; i < 3; i += 2) {
		assert_true(procs[i].r == -ETIMEDOUT || procs[i].r == -ECONNRESET);
		assert_true(procs[i].seconds < 1.8);
		tu_assert_has(procs[i].error, "at 127.0.0.1:");
	}
	/* one of them timed out waiting on process 1 */
	assert_true(strstr(procs[0].error, "process 1") || strstr(procs[2].error, "process 1"));
	assert_true(procs[0].r == -ETIMEDOUT || procs[2].r == -ETIMEDOUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_group_sizes),
		cmocka_unit_test(test_halves_pairs_none),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_strangers),
		cmocka_unit_test(test_announced_addr),
		cmocka_unit_test(test_member_closes),
		cmocka_unit_test(test_member_stalls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
