/* Process 0's door (job.h): its listening sockets, and every connection
 * that has not yet been admitted, each with a deadline of its own, so a
 * silent or slow connection costs nothing but its slot and never holds up
 * the others.
 *
 * A connection has ADMIT_HELLO_S to send its HELLO. Process 0 first checks
 * the version and whether both sides hold a job token; with one it then
 * sends CHALLENGE (its nonce and its own proof) and the process has
 * ADMIT_HELLO_S more to answer with PROOF (core/auth.h). Only a process
 * that proved the token learns why it does not fit the job (another job
 * ID, process count, GPUs per process, a rank out of range or held).
 * Refusals are answered with REJECT and collected, with the host and pid
 * of both processes when two claim one rank. At most ADMIT_PENDING_MAX
 * connections wait at once; one more drops the oldest.
 *
 * The door stays open for the job's lifetime: during the rendezvous
 * (job_admit_all) it admits; once the job has formed, the receiver thread
 * (watchdog.c) polls it (job_door_poll, job_door_ready) and refuses every
 * HELLO with the reason (a rank already held: by whom, since when), and
 * job_opts.on_late reports it. Nothing a late connection sends reaches the
 * job, and nothing there waits: a refusal that cannot be sent at once is
 * not sent. */
#define _GNU_SOURCE
#include "job_int.h"
#include "config.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "core/tcp.h"
#include "core/wire.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ADMIT_HELLO_S 5.0
#define PROOF_FRAME_LEN (JOB_HDR_LEN + AUTH_PROOF_LEN)
/* How long a refusal or a challenge may wait to be sent: a fresh socket
 * takes a few hundred bytes at once, so only a peer that is not reading
 * can make it wait. Once the job runs nothing waits (the receiver thread
 * sends heartbeats). */
#define ADMIT_WRITE_S 2.0

struct pending {
	int fd;
	bool hello, challenged;     /* its HELLO is here; it was sent CHALLENGE */
	double deadline;
	size_t got, want;
	uint8_t buf[JOB_HELLO_LEN];
	struct hello h;
	unsigned char nonce_l[AUTH_NONCE_LEN];
	char addr[80];
};

struct admit {
	struct job *c;
	struct strbuf *rejected;    /* the rendezvous: what it turned away; NULL once the job formed */
	struct pending v[ADMIT_PENDING_MAX];
	size_t n;
	int arrived;
	/* the rendezvous: processes refused for running another gpuready
	 * version (a proven HELLO of this job): why, per rank, until a process
	 * of this version takes the rank; and their list at the end */
	char **odd;
	int nodd;
	struct strbuf *odd_list;
};

/* Records what became of a connection: during the rendezvous in the list
 * job_refusals() returns; once the job formed, through job_opts.on_late,
 * only for connections that said HELLO (a port scanner or a health check
 * is not worth a line for every visit over a long run). */
static void note(struct admit *a, const struct pending *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(struct admit *a, const struct pending *p, const char *fmt, ...)
{
	va_list ap;
	if (a->rejected) {
		strbuf_adds(a->rejected, "\n  ");
		va_start(ap, fmt);
		strbuf_vaddf(a->rejected, fmt, ap);
		va_end(ap);
		return;
	}
	if (!p->hello || !a->c->o.on_late)
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	a->c->o.on_late(a->c->o.fatal_ctx, sb.buf);
}

/* "a connection" or, once the job formed, "a late connection". */
static const char *conn(const struct admit *a)
{
	return a->rejected ? "a connection" : "a late connection";
}

/* Why a HELLO cannot go on to the job's checks: another version, or one
 * side holds a job token and the other does not. Says nothing about the
 * job: the peer has proved nothing yet. */
static char *door_problem(const struct job *c, const struct hello *h)
{
	bool has = h->flags & HELLO_HAS_TOKEN;
	if (memcmp(h->magic, MAGIC, 8))
		return xstrdup("not a gpuready process of this version");
	if (c->key.set && !has)
		return xstrdup("it has no job token and rank 0 requires one: give every rank the same "
			       "GPUREADY_JOB_TOKEN or --token-file");
	if (!c->key.set && has)
		return xstrdup("it has a job token and rank 0 has none: give rank 0 the same GPUREADY_JOB_TOKEN or "
			       "--token-file");
	return NULL;
}

/* "rank 3" or, with -g 4, "ranks 12-15": what process proc holds. */
static void ranks_of(const struct job *c, int proc, char *buf, size_t len)
{
	int k = c->o.ranks_per_proc > 0 ? c->o.ranks_per_proc : 1;
	if (k == 1)
		snprintf(buf, len, "rank %d", proc);
	else
		snprintf(buf, len, "ranks %d-%d", proc * k, proc * k + k - 1);
}

/* Why a proven HELLO does not fit this job (formed: the job has formed,
 * and no process joins any more), or NULL. */
static char *job_problem(const struct job *c, const struct hello *h, bool formed)
{
	int proc = (int)h->proc;
	if (strncmp(h->job, c->job, sizeof(h->job)))
		return xasprintf("it belongs to job '%.*s', this is '%s'", (int)strnlen(h->job, sizeof(h->job)),
				 str_printable(strndupa(h->job, sizeof(h->job)), false), c->job);
	if ((int)h->nprocs != c->o.nprocs)
		return formed ? xasprintf("the job has formed with %d %s; this HELLO says %u", c->o.nprocs,
					  c->o.ranks_per_proc > 1 ? "processes" : "ranks", h->nprocs)
			      : xasprintf("it counts %u processes, rank 0 counts %d", h->nprocs, c->o.nprocs);
	if ((int)h->ranks_per_proc != c->o.ranks_per_proc)
		return xasprintf("it drives %u GPUs per process (-g), rank 0 drives %d", h->ranks_per_proc,
				 c->o.ranks_per_proc);
	if (proc < (formed ? 0 : 1) || proc >= c->o.nprocs)
		return xasprintf("it claims process rank %d", proc);
	if (!formed && c->peers[proc].fd < 0)
		return NULL;
	char r[48];
	const struct job_member *m = &c->members[proc];
	ranks_of(c, proc, r, sizeof(r));
	if (!formed)
		return xasprintf("process rank %d is already here (%s, pid %d): two processes have the same rank",
				 proc, m->host, m->pid);
	return xasprintf("%s %s already held by host %s pid %d (the job formed %.0f s ago)", r,
			 c->o.ranks_per_proc > 1 ? "are" : "is", m->host, m->pid, clock_now() - c->formed);
}

static void drop(struct admit *a, size_t i)
{
	if (a->v[i].fd >= 0)
		close(a->v[i].fd);
	a->v[i] = a->v[--a->n];
}

/* Sends one frame to connection i in one write, by the rendezvous's short
 * deadline, or once the job formed only if it goes at once. */
static int say(struct admit *a, size_t i, enum msg type, const void *body, size_t len)
{
	_cleanup_free_ uint8_t *f = xcalloc(1, JOB_HDR_LEN + len);
	job_hdr_encode(f, type, len);
	memcpy(f + JOB_HDR_LEN, body, len);
	return tcp_write_all(a->v[i].fd, f, JOB_HDR_LEN + len, clock_now() + (a->rejected ? ADMIT_WRITE_S : 0));
}

/* Refuses connection i, whose HELLO is here: tells it why (briefly, it
 * may not listen) and records it. */
static void refuse(struct admit *a, size_t i, const char *why)
{
	struct pending *p = &a->v[i];
	say(a, i, MSG_REJECT, why, strlen(why));
	note(a, p, "refused %s from %s (%s, pid %u): %s", conn(a), p->addr, p->h.host, p->h.pid, why);
	drop(a, i);
}

static void admit_one(struct admit *a, size_t i)
{
	struct pending *p = &a->v[i];
	struct job *c = a->c;
	int proc = (int)p->h.proc;
	c->peers[proc].fd = p->fd;
	c->peers[proc].last_seen = clock_now();
	job_set_member(&c->members[proc], proc, (int)p->h.pid, (int)p->h.local_rank, p->h.host);
	job_member_addr(&c->members[proc], p->addr);
	p->fd = -1;
	drop(a, i);
	a->arrived++;
	if (a->odd && a->odd[proc]) { /* a process of this version holds the rank now */
		free(a->odd[proc]);
		a->odd[proc] = NULL;
		a->nodd--;
	}
}

/* Connection i has proved what it must: it holds its rank, or (always,
 * once the job formed) it is told why not. */
static void settle(struct admit *a, size_t i)
{
	struct pending *p = &a->v[i];
	_cleanup_free_ char *why = job_problem(a->c, &p->h, !a->rejected);
	if (!why && a->odd && strcmp(p->h.version, GPUREADY_VERSION)) {
		why = xasprintf("it runs gpuready %s and rank 0 runs %s: every rank needs the same version", p->h.version,
				GPUREADY_VERSION);
		if (!a->odd[p->h.proc])
			a->nodd++;
		free(a->odd[p->h.proc]);
		a->odd[p->h.proc] = xasprintf("rank %u (%s, pid %u) runs %s", p->h.proc, p->h.host, p->h.pid,
					      p->h.version);
	}
	if (why)
		refuse(a, i, why);
	else
		admit_one(a, i);
}

/* The whole HELLO of connection i is here. */
static void on_hello(struct admit *a, size_t i)
{
	struct pending *p = &a->v[i];
	struct job *c = a->c;
	job_hello_decode(p->buf, &p->h);
	str_printable(p->h.host, false);
	str_printable(p->h.version, false);
	p->hello = true;
	_cleanup_free_ char *why = door_problem(c, &p->h);
	if (why) {
		refuse(a, i, why);
		return;
	}
	if (!c->key.set) {
		settle(a, i);
		return;
	}
	uint8_t body[2 * AUTH_NONCE_LEN];
	auth_nonce(p->nonce_l);
	memcpy(body, p->nonce_l, AUTH_NONCE_LEN);
	auth_proof(&c->key, AUTH_LISTENER, p->h.nonce, p->nonce_l, c->job, p->h.proc, body + AUTH_NONCE_LEN);
	if (say(a, i, MSG_CHALLENGE, body, sizeof(body)) < 0) {
		note(a, p, "dropped %s from %s (%s, pid %u): it did not take the challenge", conn(a), p->addr,
		     p->h.host, p->h.pid);
		drop(a, i);
		return;
	}
	p->challenged = true;
	p->got = 0;
	p->want = PROOF_FRAME_LEN;
	p->deadline = clock_now() + ADMIT_HELLO_S;
}

/* The whole PROOF frame of connection i is here. */
static void on_proof(struct admit *a, size_t i)
{
	struct pending *p = &a->v[i];
	struct job *c = a->c;
	struct hdr hd = job_hdr_decode(p->buf);
	if (hd.type != MSG_PROOF || hd.len != AUTH_PROOF_LEN ||
	    !auth_verify(&c->key, AUTH_CONNECTOR, p->h.nonce, p->nonce_l, c->job, p->h.proc, p->buf + JOB_HDR_LEN))
		refuse(a, i, "it could not prove the job token (a different GPUREADY_JOB_TOKEN or --token-file?)");
	else
		settle(a, i); /* another connection may have proved the same rank meanwhile */
}

/* Reads what connection i has sent; handles a whole HELLO or PROOF. */
static void on_readable(struct admit *a, size_t i)
{
	struct pending *p = &a->v[i];
	ssize_t n = recv(p->fd, p->buf + p->got, p->want - p->got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* closed: before its HELLO nothing is known; after the
		 * challenge, it did not accept rank 0's proof */
		if (p->challenged)
			note(a, p, "%s (%s, pid %u) hung up on the job token's challenge: it holds a different token",
			     p->addr, p->h.host, p->h.pid);
		drop(a, i);
		return;
	}
	p->got += (size_t)n;
	if (p->got < p->want)
		return;
	if (p->challenged)
		on_proof(a, i);
	else
		on_hello(a, i);
}

static void on_listener(struct admit *a, int lfd)
{
	int fd = tcp_accept(lfd, clock_now());
	if (fd < 0)
		return;
	if (a->n == ADMIT_PENDING_MAX) {
		/* the oldest connection that has not proved anything goes */
		size_t oldest = 0;
		for (size_t i = 1; i < a->n; i++)
			if (a->v[i].deadline < a->v[oldest].deadline)
				oldest = i;
		note(a, &a->v[oldest], "dropped %s: %d connections were waiting", a->v[oldest].addr,
		     ADMIT_PENDING_MAX);
		drop(a, oldest);
	}
	struct pending *p = &a->v[a->n++];
	*p = (struct pending){ .fd = fd, .deadline = clock_now() + ADMIT_HELLO_S, .want = JOB_HELLO_LEN };
	tcp_peer_name(fd, p->addr, sizeof(p->addr));
}

/* Drops the connections whose own deadline passed. */
static void expire(struct admit *a, double now)
{
	for (size_t i = a->n; i-- > 0;) {
		struct pending *p = &a->v[i];
		if (p->deadline > now)
			continue;
		note(a, p, "dropped %s: no %s within %.0f s", p->addr,
		     p->challenged ? "answer to the job token's challenge" : "HELLO", ADMIT_HELLO_S);
		drop(a, i);
	}
}

/* Drops what expired; fills pf with the listeners, then the waiting
 * connections (at most JOB_DOOR_FDS); *wake moves up to the first
 * connection's deadline. Returns how many. */
static size_t door_fill(struct admit *a, struct pollfd *pf, double now, double *wake)
{
	struct job *c = a->c;
	size_t k = 0;
	expire(a, now);
	for (int l = 0; l < c->nlfd; l++)
		pf[k++] = (struct pollfd){ .fd = c->lfds[l], .events = POLLIN };
	for (size_t i = 0; i < a->n; i++) {
		pf[k++] = (struct pollfd){ .fd = a->v[i].fd, .events = POLLIN };
		if (a->v[i].deadline < *wake)
			*wake = a->v[i].deadline;
	}
	return k;
}

/* Handles what poll() found on the fds door_fill gave it. */
static void door_handle(struct admit *a, const struct pollfd *pf)
{
	struct job *c = a->c;
	/* waiting connections first, from the end: drop() moves the last
	 * into i (the listeners may add more) */
	for (size_t i = a->n; i-- > 0;)
		if (pf[(size_t)c->nlfd + i].revents)
			on_readable(a, i);
	for (int l = 0; l < c->nlfd; l++)
		if (pf[l].revents & POLLIN)
			on_listener(a, c->lfds[l]);
}

static void door_free(struct admit *a)
{
	while (a->n)
		drop(a, a->n - 1);
	free(a);
}

/* Accepts until everyone is here (0), every process not here was refused
 * for running another gpuready version (-EPROTO, odd lists them), or the
 * job's deadline passes (-ETIMEDOUT). */
int job_admit_all(struct job *c, struct strbuf *rejected, struct strbuf *odd)
{
	struct admit *a = xcalloc(1, sizeof(*a));
	struct pollfd pf[JOB_DOOR_FDS];
	int r = 0;

	*a = (struct admit){ .c = c, .rejected = rejected, .arrived = 1,
			     .odd = xcalloc((size_t)c->o.nprocs, sizeof(char *)), .odd_list = odd };
	while (a->arrived + a->nodd < c->o.nprocs) {
		double now = clock_now(), wake = c->o.deadline;
		if (now >= c->o.deadline) {
			r = -ETIMEDOUT;
			break;
		}
		size_t k = door_fill(a, pf, now, &wake);
		int ms = (int)((wake - now) * 1000.0) + 1;
		int n = poll(pf, k, ms > 1000 ? 1000 : ms);
		if (n < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		if (n > 0)
			door_handle(a, pf);
	}
	if (r == 0 && a->nodd)
		r = -EPROTO;
	for (int i = 0; i < c->o.nprocs; i++) {
		if (a->odd[i])
			strbuf_addf(odd, "%s%s", odd->len ? "; " : "", a->odd[i]);
		free(a->odd[i]);
	}
	free(a->odd);
	door_free(a);
	return r;
}

void job_door_open(struct job *c)
{
	c->formed = clock_now();
	c->door = xcalloc(1, sizeof(*c->door));
	*c->door = (struct admit){ .c = c };
}

size_t job_door_poll(struct job *c, struct pollfd *pf)
{
	double wake = 0;
	return c->door ? door_fill(c->door, pf, clock_now(), &wake) : 0;
}

void job_door_ready(struct job *c, const struct pollfd *pf)
{
	if (c->door)
		door_handle(c->door, pf);
}

void job_door_close(struct job *c)
{
	if (c->door)
		door_free(c->door);
	c->door = NULL;
}
