/* The socket backend's groups (backend_socket_group.h): split() and an
 * all_reduce over direct TCP connections between a group's members.
 *
 * The socket backend moves every collective of the whole job through
 * process 0 over the job's control connections, a star, which says nothing
 * about the links between two nodes. A group made here connects its
 * members in a ring instead, each straight to the next, so what it
 * measures is TCP between the group's nodes. Its all_reduce is the ring
 * algorithm of Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms
 * for clusters of workstations", J. Parallel Distrib. Comput. 69(2):117-124,
 * 2009 (doi:10.1016/j.jpdc.2008.09.002), which NCCL's ring all_reduce
 * also follows (runRing in NCCL's src/device/all_reduce.h): a reduce-scatter of
 * g - 1 steps, then an all-gather of g - 1 steps, each step sending one
 * chunk of about count / g elements to the next member while the previous
 * member's chunk arrives. Both directions move at once (non-blocking
 * sockets and poll(2)): a blocking send followed by a receive deadlocks
 * once every member's send buffer is full.
 *
 * split(): every process in a group listens on how->addr (any free port)
 * and sends its {color, key, address, port} to process 0 over the job
 * (sync.h gather); process 0 adds a nonce from getrandom(2) and sends the
 * table to everyone (bcast). The records are a peer's, so each is checked
 * before it is used. Every ring connection opens with a hello carrying
 * the nonce, the color and the sender's place in the group; a connection
 * without the expected one is closed and accepting goes on. */
#define _GNU_SOURCE
#include "backend_socket_group.h"
#include "sync.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "core/tcp.h"
#include "core/wire.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define SG_MAGIC 0x67707367u   /* "gpsg" */
#define SG_HELLO_WAIT_S 2.0    /* a connection that sends no hello for this long is dropped */
#define SG_DEFAULT_TIMEOUT_S 60.0 /* a collective's bound when how->timeout is not set */

/* A member this process talks to: its parent process number and where it listens. */
struct sg_peer {
	int proc, port;
	char addr[SG_ADDR_LEN];
	char name[SG_ADDR_LEN + 48]; /* "process 3 at 10.0.0.3:41234", for messages */
};

struct sock_group {
	struct backend b;
	struct backend *parent;      /* its alloc, free and copies serve the group */
	int idx, g, color;
	int send_fd, recv_fd;        /* to the next member, from the previous one; -1 when none */
	struct sg_peer next, prev;
	double timeout, t0;
	char *tmp;                   /* one arriving chunk of the reduce-scatter */
	size_t tmp_len;
};

static struct sock_group *sg_of(struct backend *b)
{
	return (struct sock_group *)b;
}

void sg_entry_pack(const struct sg_entry *e, void *out)
{
	struct wire_w w = WIRE_W(out, SG_ENTRY_BYTES);
	wire_put_u32(&w, (uint32_t)e->color);
	wire_put_u32(&w, (uint32_t)e->key);
	wire_put_u32(&w, (uint32_t)e->port);
	wire_put_str(&w, e->addr, SG_ADDR_LEN);
}

void sg_table_unpack(const void *buf, int n, uint64_t *nonce, struct sg_entry *out)
{
	struct wire_r r = WIRE_R(buf, SG_TABLE_BYTES(n));
	*nonce = wire_get_u64(&r);
	for (int i = 0; i < n; i++) {
		struct sg_entry *e = &out[i];
		e->color = (int32_t)wire_get_u32(&r);
		e->key = (int32_t)wire_get_u32(&r);
		e->port = (int32_t)wire_get_u32(&r);
		e->addr_ok = wire_get_str(&r, e->addr, sizeof(e->addr));
		if (!e->addr_ok)
			e->addr[0] = '\0';
		str_printable(e->addr, false);
	}
}

char *sg_entry_problem(const struct sg_entry *e, int proc)
{
	if (e->color < -1)
		return xasprintf("process %d asked for group %d (a group is 0 or more; -1: none)", proc, e->color);
	if (!e->addr_ok || !e->addr[0])
		return xasprintf("process %d announced no address for its group connections (a terminated string "
				 "of at most %d bytes)", proc, SG_ADDR_LEN - 1);
	if (e->port < 1 || e->port > 65535)
		return xasprintf("process %d (%s) announced port %d for its group connections, not 1..65535%s", proc,
				 e->addr, e->port, e->port == 0 ? " (it could not listen)" : "");
	return NULL;
}

void sg_hello_pack(void *out, uint64_t nonce, int color, int idx)
{
	struct wire_w w = WIRE_W(out, SG_HELLO_BYTES);
	wire_put_u32(&w, SG_MAGIC);
	wire_put_u32(&w, (uint32_t)color);
	wire_put_u32(&w, (uint32_t)idx);
	wire_put_u32(&w, 0);
	wire_put_u64(&w, nonce);
}

/* 64 bits from getrandom(2); without it (Linux before 3.17) the clock
 * and pid still tell one split from the next. */
static uint64_t sg_nonce(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = (uint64_t)(clock_unix() * 1e9) ^ ((uint64_t)getpid() << 32);
	return v;
}

/* The listener of this process's group connections on addr, any free
 * port: the fd, its address and port in *mine; or -errno with *err. */
static int sg_listen(const char *addr, struct sg_entry *mine, char **err)
{
	if (!addr || !*addr || strlen(addr) >= SG_ADDR_LEN) {
		*err = xasprintf("no numeric address of at most %d bytes to listen on for the group's connections",
				 SG_ADDR_LEN - 1);
		return -EINVAL;
	}
	snprintf(mine->addr, sizeof(mine->addr), "%s", addr); /* named by the others even if listening fails */
	int fd = tcp_listen(addr, 0, err);
	if (fd < 0)
		return fd;
	int port = tcp_local_port(fd);
	if (port <= 0) {
		close(fd);
		*err = xasprintf("cannot read the port listening on %s: %s", addr, strerror(port < 0 ? -port : EINVAL));
		return port < 0 ? port : -EINVAL;
	}
	mine->port = port;
	return fd;
}

/* Process 0: each process's announced address becomes the one its
 * control connection came from (sync.h peer_addr), so that no process can
 * make its group connect to a host of its choosing. */
static void sg_table_verify(const struct bench_sync *s, uint8_t *table)
{
	if (!s->ops->peer_addr)
		return;
	_cleanup_free_ struct sg_entry *all = xcalloc((size_t)s->nprocs, sizeof(*all));
	uint64_t nonce;
	sg_table_unpack(table, s->nprocs, &nonce, all);
	for (int p = 1; p < s->nprocs; p++) {
		char seen[SG_ADDR_LEN] = "";
		s->ops->peer_addr(s->ctx, p, seen, sizeof(seen));
		const char *v = !strncmp(seen, "::ffff:", 7) && strchr(seen + 7, '.') ? seen + 7 : seen;
		if (!v[0] || !strcmp(v, all[p].addr))
			continue;
		snprintf(all[p].addr, sizeof(all[p].addr), "%s", v);
		sg_entry_pack(&all[p], table + 8 + (size_t)p * SG_ENTRY_BYTES);
	}
}

/* This process's record to process 0, everyone's back with the nonce. */
static int sg_exchange(struct backend *b, const struct sg_entry *mine, double deadline, uint64_t *nonce,
		       struct sg_entry *all)
{
	const struct bench_sync *s = b->env.sync;
	size_t len = SG_TABLE_BYTES(s->nprocs);
	_cleanup_free_ uint8_t *table = xcalloc(1, len);
	uint8_t rec[SG_ENTRY_BYTES];
	char *err = NULL;

	sg_entry_pack(mine, rec);
	int r = s->ops->gather(s->ctx, rec, sizeof(rec), table + 8, deadline, &err);
	if (r == 0 && s->proc == 0) {
		sg_table_verify(s, table);
		struct wire_w w = WIRE_W(table, 8);
		wire_put_u64(&w, sg_nonce());
	}
	if (r == 0)
		r = s->ops->bcast(s->ctx, table, len, deadline, &err);
	if (r < 0) {
		backend_set_error(b, "split: exchanging the groups' addresses: %s", err ? err : strerror(-r));
		free(err);
		return r;
	}
	sg_table_unpack(table, s->nprocs, nonce, all);
	return 0;
}

struct sg_member {
	int proc, key;
};

static int sg_member_cmp(const void *a, const void *b)
{
	const struct sg_member *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* The group of color: its members' parent processes in group order into
 * procs[], how many into *g, this process's place into *idx. A member
 * whose record cannot be used fails the group. */
static int sg_members(struct backend *b, const struct sg_entry *all, int n, int color, int *procs, int *g, int *idx)
{
	_cleanup_free_ struct sg_member *m = xcalloc((size_t)n, sizeof(*m));
	int k = 0, me = b->env.sync->proc;

	for (int p = 0; p < n; p++) {
		if (all[p].color != color)
			continue;
		_cleanup_free_ char *why = sg_entry_problem(&all[p], p);
		if (why) {
			backend_set_error(b, "split: group %d cannot form: %s", color, why);
			return -EPROTO;
		}
		m[k++] = (struct sg_member){ .proc = p, .key = all[p].key };
	}
	qsort(m, (size_t)k, sizeof(*m), sg_member_cmp);
	*idx = -1;
	for (int i = 0; i < k; i++) {
		procs[i] = m[i].proc;
		if (m[i].proc == me)
			*idx = i;
	}
	*g = k;
	if (*idx < 0) {
		backend_set_error(b, "split: process 0's table does not put this process (%d) in group %d", me, color);
		return -EPROTO;
	}
	return 0;
}

static void sg_peer_of(struct sg_peer *p, const struct sg_entry *all, int proc)
{
	const struct sg_entry *e = &all[proc];
	bool v6 = strchr(e->addr, ':') != NULL;
	p->proc = proc;
	p->port = e->port;
	snprintf(p->addr, sizeof(p->addr), "%s", e->addr);
	snprintf(p->name, sizeof(p->name), "process %d at %s%s%s:%d", proc, v6 ? "[" : "", e->addr, v6 ? "]" : "",
		 e->port);
}

static void sg_close(struct sock_group *G)
{
	if (G->send_fd >= 0)
		close(G->send_fd);
	if (G->recv_fd >= 0)
		close(G->recv_fd);
	G->send_fd = G->recv_fd = -1;
}

/* The connection to the next member, opened with our hello. */
static int sg_connect_next(struct sock_group *G, uint64_t nonce, double deadline)
{
	_cleanup_free_ char *e = NULL;
	uint8_t hello[SG_HELLO_BYTES];
	int fd = tcp_connect(G->next.addr, G->next.port, deadline, &e);
	if (fd < 0) {
		backend_set_error(&G->b, "group %d: cannot connect to %s (the next in the ring): %s", G->color,
				  G->next.name, e ? e : strerror(-fd));
		return fd;
	}
	sg_hello_pack(hello, nonce, G->color, G->idx);
	int r = tcp_write_all(fd, hello, sizeof(hello), deadline);
	if (r < 0) {
		close(fd);
		backend_set_error(&G->b, "group %d: %s (the next in the ring) took the connection but not the hello: %s",
				  G->color, G->next.name, strerror(-r));
		return r;
	}
	G->send_fd = fd;
	return 0;
}

/* The connection from the previous member: the first whose hello is
 * exactly the one it sends; every other is closed. */
static int sg_accept_prev(struct sock_group *G, int lfd, uint64_t nonce, double deadline)
{
	uint8_t want[SG_HELLO_BYTES], got[SG_HELLO_BYTES];
	int refused = 0;

	sg_hello_pack(want, nonce, G->color, (G->idx + G->g - 1) % G->g);
	for (;;) {
		int fd = tcp_accept(lfd, deadline);
		if (fd == -EAGAIN)
			continue;
		if (fd < 0) {
			backend_set_error(&G->b, "group %d: %s (the previous in the ring) did not connect: %s; %d other "
					  "connection(s) refused", G->color, G->prev.name,
					  fd == -ETIMEDOUT ? "nothing arrived by the deadline" : strerror(-fd), refused);
			return fd;
		}
		double hd = clock_now() + SG_HELLO_WAIT_S;
		int r = tcp_read_all(fd, got, sizeof(got), deadline > 0 && deadline < hd ? deadline : hd);
		if (r == 0 && !memcmp(got, want, sizeof(want))) {
			G->recv_fd = fd;
			return 0;
		}
		close(fd); /* a stranger, or a connection from an earlier split */
		refused++;
	}
}

static const struct backend_ops group_ops;

static struct sock_group *sg_new(struct backend *parent, const struct backend_split *how, int idx, int g)
{
	struct sock_group *G = xcalloc(1, sizeof(*G));
	G->b.ops = &group_ops;
	G->b.env = parent->env;
	G->b.env.nranks = G->b.env.nprocs = g;
	G->b.env.proc_rank = idx;
	G->b.env.local = 1;
	G->b.env.sync = NULL; /* the group has no control plane of its own */
	G->b.env.oob_bcast = NULL;
	G->b.env.oob_ctx = NULL;
	G->parent = parent;
	G->idx = idx;
	G->g = g;
	G->color = how->color;
	G->send_fd = G->recv_fd = -1;
	G->timeout = how->timeout > 0 ? how->timeout : SG_DEFAULT_TIMEOUT_S;
	return G;
}

static void sg_fini(struct backend *b);

/* This process's group from the table, its ring connected. */
static int sg_form(struct backend *b, const struct backend_split *how, const struct sg_entry *all, int lfd,
		   uint64_t nonce, double deadline, struct backend **child)
{
	int n = b->env.sync->nprocs, g = 0, idx = -1;
	_cleanup_free_ int *procs = xcalloc((size_t)n, sizeof(*procs));
	int r = sg_members(b, all, n, how->color, procs, &g, &idx);
	if (r < 0)
		return r;
	struct sock_group *G = sg_new(b, how, idx, g);
	sg_peer_of(&G->next, all, procs[(idx + 1) % g]);
	sg_peer_of(&G->prev, all, procs[(idx + g - 1) % g]);
	/* connect first: every listener is open before the table went out,
	 * so the kernel completes the connection before the next accepts */
	if (g > 1) {
		r = sg_connect_next(G, nonce, deadline);
		if (r == 0)
			r = sg_accept_prev(G, lfd, nonce, deadline);
	}
	if (r < 0) {
		backend_set_error(b, "split: %s", G->b.error);
		sg_fini(&G->b);
		return r;
	}
	*child = &G->b;
	return 0;
}

int backend_socket_split(struct backend *b, const struct backend_split *how, double deadline, struct backend **child)
{
	struct sg_entry mine = { .color = how->color, .key = how->key };
	_cleanup_free_ char *lerr = NULL;
	_cleanup_free_ struct sg_entry *all = NULL;
	uint64_t nonce = 0;

	*child = NULL;
	if (!b->env.sync) {
		backend_set_error(b, "split: the socket backend was not initialised");
		return -EINVAL;
	}
	/* a process in no group listens on nothing and announces port 0 */
	_cleanup_close_ int lfd = how->color >= 0 ? sg_listen(how->addr, &mine, &lerr) : -1;
	all = xcalloc((size_t)b->env.sync->nprocs, sizeof(*all));
	int r = sg_exchange(b, &mine, deadline, &nonce, all); /* even when this process cannot take part */
	if (r < 0)
		return r;
	if (how->color < -1) {
		backend_set_error(b, "split: group %d: a group is 0 or more (-1: none)", how->color);
		return -EINVAL;
	}
	if (how->color == -1)
		return 0;
	if (lfd < 0) {
		backend_set_error(b, "split: group %d: %s", how->color, lerr ? lerr : strerror(-lfd));
		return lfd;
	}
	return sg_form(b, how, all, lfd, nonce, deadline, child);
}

/* ---- the group's backend ---- */

static int sg_fail(struct sock_group *G, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A failed step breaks the ring: closing this member's connections makes
 * its neighbours fail now rather than at their timeout, and so on round. */
static int sg_fail(struct sock_group *G, int r, const char *fmt, ...)
{
	char msg[sizeof(G->b.error)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	backend_set_error(&G->b, "group %d, rank %d of %d: %s", G->color, G->idx, G->g, msg);
	sg_close(G);
	return r;
}

static int sg_ms_left(double deadline)
{
	double left = deadline - clock_now();
	return left <= 0 ? 0 : left > 3600.0 ? 3600000 : (int)(left * 1000.0) + 1;
}

static int sg_timeout(struct sock_group *G, size_t slen, size_t rlen)
{
	char s[sizeof(G->next.name) + 96] = "", r[sizeof(G->prev.name) + 96] = "";
	if (slen)
		snprintf(s, sizeof(s), "%s (the next in the ring) took no more data, %zu bytes left to send", G->next.name,
			 slen);
	if (rlen)
		snprintf(r, sizeof(r), "%s (the previous in the ring) sent nothing more, %zu bytes still to come",
			 G->prev.name, rlen);
	return sg_fail(G, -ETIMEDOUT, "all_reduce did not finish within %g s: %s%s%s", G->timeout, s,
		       slen && rlen ? "; " : "", r);
}

/* The next member's side of the sending connection said something: it
 * never sends, so this is its end (or a protocol error). */
static int sg_next_gone(struct sock_group *G)
{
	if (tcp_peer_state(G->send_fd) == TCP_PEER_DATA)
		return sg_fail(G, -EPROTO, "%s (the next in the ring) sent data on a connection that only carries ours",
			       G->next.name);
	return sg_fail(G, -ECONNRESET, "%s (the next in the ring) closed the connection", G->next.name);
}

/* Sends slen bytes to the next member while rlen bytes arrive from the
 * previous one, by the deadline. */
static int sg_step(struct sock_group *G, const char *sbuf, size_t slen, char *rbuf, size_t rlen, double deadline)
{
	while (slen || rlen) {
		struct pollfd p[2] = {
			{ .fd = slen ? G->send_fd : -1, .events = POLLOUT | POLLRDHUP },
			{ .fd = rlen ? G->recv_fd : -1, .events = POLLIN },
		};
		int n = poll(p, 2, sg_ms_left(deadline));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sg_fail(G, -errno, "poll: %s", strerror(errno));
		if (n == 0)
			return sg_timeout(G, slen, rlen);
		if (p[0].revents & (POLLRDHUP | POLLIN | POLLHUP | POLLERR))
			return sg_next_gone(G);
		if (p[0].revents & POLLOUT) {
			ssize_t k = send(G->send_fd, sbuf, slen, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (k < 0 && errno != EAGAIN && errno != EINTR)
				return errno == EPIPE || errno == ECONNRESET ? sg_next_gone(G)
									      : sg_fail(G, -errno, "sending to %s: %s",
											G->next.name, strerror(errno));
			if (k > 0)
				sbuf += k, slen -= (size_t)k;
		}
		if (p[1].revents) {
			ssize_t k = recv(G->recv_fd, rbuf, rlen, MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno == ECONNRESET))
				return sg_fail(G, -ECONNRESET, "%s (the previous in the ring) closed the connection",
					       G->prev.name);
			if (k < 0 && errno != EAGAIN && errno != EINTR)
				return sg_fail(G, -errno, "receiving from %s: %s", G->prev.name, strerror(errno));
			if (k > 0)
				rbuf += k, rlen -= (size_t)k;
		}
	}
	return 0;
}

/* Chunk c of count elements cut in g: the first count % g chunks have one
 * element more; with count < g the last ones are empty. */
static void sg_chunk(size_t count, int g, int c, size_t *off, size_t *len)
{
	size_t base = count / (size_t)g, rem = count % (size_t)g, uc = (size_t)((c % g + g) % g);
	*off = uc * base + (uc < rem ? uc : rem);
	*len = base + (uc < rem);
}

/* The ring all_reduce (Patarasuk & Yuan 2009; NCCL's runRing).
 * Reduce-scatter: at step s member i sends chunk i - s and reduces chunk
 * i - s - 1 arriving from member i - 1, so after g - 1 steps it holds
 * chunk i + 1 reduced over every member. All-gather: at step s it sends
 * chunk i + 1 - s and receives chunk i - s, the previous member's latest. */
static int sg_all_reduce(struct sock_group *G, const void *send, void *recv, size_t count, enum dtype t,
			 enum redop op, double deadline)
{
	size_t ts = dtype_size(t), so, sl, ro, rl;
	int g = G->g, i = G->idx, r = 0;
	char *buf = recv;

	if (send != recv)
		memmove(recv, send, count * ts);
	if (g == 1)
		return 0; /* an average over one member is its own value */
	if (G->send_fd < 0 || G->recv_fd < 0)
		return sg_fail(G, -ENOTCONN, "the ring's connections were closed after an earlier error");
	if (G->tmp_len < (count / (size_t)g + 1) * ts) {
		G->tmp_len = (count / (size_t)g + 1) * ts;
		G->tmp = xreallocarray(G->tmp, G->tmp_len, 1);
	}
	for (int s = 0; r == 0 && s < g - 1; s++) {
		sg_chunk(count, g, i - s, &so, &sl);
		sg_chunk(count, g, i - s - 1, &ro, &rl);
		r = sg_step(G, buf + so * ts, sl * ts, G->tmp, rl * ts, deadline);
		if (r == 0)
			host_reduce(t, op, buf + ro * ts, G->tmp, rl);
	}
	if (r == 0 && op == OP_AVG) {
		sg_chunk(count, g, i + 1, &ro, &rl);
		host_avg_finish(t, buf + ro * ts, rl, g);
	}
	for (int s = 0; r == 0 && s < g - 1; s++) {
		sg_chunk(count, g, i + 1 - s, &so, &sl);
		sg_chunk(count, g, i - s, &ro, &rl);
		r = sg_step(G, buf + so * ts, sl * ts, buf + ro * ts, rl * ts, deadline);
	}
	return r;
}

static int sg_run(struct backend *b, enum coll c, void *const *send, void *const *recv, size_t count, enum dtype t,
		  enum redop op, int root)
{
	struct sock_group *G = sg_of(b);
	(void)root;
	if (c != COLL_ALL_REDUCE) {
		backend_set_error(b, "the socket backend's groups run all_reduce only, not %s", coll_name(c));
		return -ENOTSUP;
	}
	return sg_all_reduce(G, send[0], recv[0], count, t, op, clock_now() + G->timeout);
}

static int sg_barrier(struct backend *b, double deadline)
{
	struct sock_group *G = sg_of(b);
	uint8_t one = 1, sum = 0;
	double own = clock_now() + G->timeout;
	return sg_all_reduce(G, &one, &sum, 1, DT_UINT8, OP_SUM, deadline > 0 && deadline < own ? deadline : own);
}

static int sg_alloc(struct backend *b, int l, size_t bytes, void **ret)
{
	struct backend *p = sg_of(b)->parent;
	int r = p->ops->alloc(p, l, bytes, ret);
	if (r < 0)
		backend_set_error(b, "%s", p->error);
	return r;
}

static void sg_free(struct backend *b, int l, void *ptr)
{
	struct backend *p = sg_of(b)->parent;
	p->ops->free(p, l, ptr);
}

static int sg_copy_in(struct backend *b, int l, void *dst, const void *host, size_t bytes)
{
	struct backend *p = sg_of(b)->parent;
	return p->ops->copy_in(p, l, dst, host, bytes);
}

static int sg_copy_out(struct backend *b, int l, void *host, const void *src, size_t bytes)
{
	struct backend *p = sg_of(b)->parent;
	return p->ops->copy_out(p, l, host, src, bytes);
}

static int sg_wait(struct backend *b, double deadline)
{
	(void)b;
	(void)deadline;
	return 0; /* run() completes before it returns */
}

static int sg_timer_begin(struct backend *b)
{
	sg_of(b)->t0 = clock_now();
	return 0;
}

static int sg_timer_end(struct backend *b, double deadline, double *seconds)
{
	(void)deadline;
	*seconds = clock_now() - sg_of(b)->t0;
	return 0;
}

static void sg_device(struct backend *b, int l, struct backend_device *out)
{
	(void)b;
	(void)l;
	*out = (struct backend_device){ .ordinal = -1, .name = "host memory (socket backend group)" };
}

static const char *sg_version(struct backend *b)
{
	(void)b;
	return "gpuready TCP ring";
}

static void sg_abort(struct backend *b)
{
	sg_close(sg_of(b));
}

static void sg_fini(struct backend *b)
{
	struct sock_group *G = sg_of(b);
	sg_close(G);
	free(G->tmp);
	free(G);
}

static const struct backend_ops group_ops = {
	.name = "socket", .alloc = sg_alloc, .free = sg_free, .copy_in = sg_copy_in, .copy_out = sg_copy_out,
	.run = sg_run, .wait = sg_wait, .barrier = sg_barrier, .timer_begin = sg_timer_begin,
	.timer_end = sg_timer_end, .device = sg_device, .version = sg_version, .abort = sg_abort, .fini = sg_fini,
};
