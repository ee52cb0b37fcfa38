/* Process 0's admission of the other processes (job.h): its listening
 * sockets, and every connection that has not yet been admitted, each with
 * a deadline of its own, so a silent or slow connection costs nothing but
 * its slot and never holds up the others.
 *
 * A connection has ADMIT_HELLO_S to send its HELLO. Process 0 checks that
 * it belongs to this job (version, job ID, process count, GPUs per
 * process, a rank in range and not held yet); with a job token it then
 * sends CHALLENGE (its nonce and its own proof) and the process has
 * ADMIT_HELLO_S more to answer with PROOF (core/auth.h). Only then does it
 * hold its rank. Refusals are answered with REJECT and collected, with the
 * host and pid of both processes when two claim one rank. At most
 * ADMIT_PENDING_MAX connections wait at once; one more drops the oldest. */
#define _GNU_SOURCE
#include "job_int.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "core/tcp.h"
#include "core/wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ADMIT_HELLO_S 5.0
#define ADMIT_PENDING_MAX 64
#define PROOF_FRAME_LEN (JOB_HDR_LEN + AUTH_PROOF_LEN)

struct pending {
	int fd;
	bool challenged;
	double deadline;
	size_t got, want;
	uint8_t buf[JOB_HELLO_LEN];
	struct hello h;
	unsigned char nonce_l[AUTH_NONCE_LEN];
	char addr[80];
};

struct admit {
	struct job *c;
	struct strbuf *rejected;
	struct pending v[ADMIT_PENDING_MAX];
	size_t n;
	int arrived;
};

/* Why process 0 refuses a HELLO, or NULL. */
static char *hello_problem(const struct job *c, const struct hello *h)
{
	int proc = (int)h->proc;
	bool has = h->flags & HELLO_HAS_TOKEN;
	if (memcmp(h->magic, MAGIC, 8))
		return xstrdup("not a gpuready process of this version");
	if (strncmp(h->job, c->job, sizeof(h->job)))
		return xasprintf("it belongs to job '%.*s', this is '%s'", (int)strnlen(h->job, sizeof(h->job)),
				 str_printable(strndupa(h->job, sizeof(h->job)), false), c->job);
	if ((int)h->nprocs != c->o.nprocs)
		return xasprintf("it counts %u processes, rank 0 counts %d", h->nprocs, c->o.nprocs);
	if ((int)h->ranks_per_proc != c->o.ranks_per_proc)
		return xasprintf("it drives %u GPUs per process (-g), rank 0 drives %d", h->ranks_per_proc,
				 c->o.ranks_per_proc);
	if (proc <= 0 || proc >= c->o.nprocs)
		return xasprintf("it claims process rank %d", proc);
	if (c->key.set && !has)
		return xstrdup("it has no job token and rank 0 requires one: give every rank the same "
			       "GPUREADY_JOB_TOKEN or --token-file");
	if (!c->key.set && has)
		return xstrdup("it has a job token and rank 0 has none: give rank 0 the same GPUREADY_JOB_TOKEN or "
			       "--token-file");
	if (c->peers[proc].fd >= 0)
		return xasprintf("process rank %d is already here (%s, pid %d): two processes have the same rank",
				 proc, c->members[proc].host, c->members[proc].pid);
	return NULL;
}

static void drop(struct admit *a, size_t i)
{
	if (a->v[i].fd >= 0)
		close(a->v[i].fd);
	a->v[i] = a->v[--a->n];
}

/* Refuses connection i: tells it why (briefly, it may not listen) and
 * records it. */
static void refuse(struct admit *a, size_t i, const char *why)
{
	struct pending *p = &a->v[i];
	uint8_t hd[JOB_HDR_LEN];
	job_hdr_encode(hd, MSG_REJECT, strlen(why));
	if (tcp_write_all(p->fd, hd, sizeof(hd), clock_now() + 2.0) == 0)
		tcp_write_all(p->fd, why, strlen(why), clock_now() + 2.0);
	if (p->got >= JOB_HELLO_LEN || p->challenged)
		strbuf_addf(a->rejected, "\n  refused a connection from %s (%s, pid %u): %s", p->addr, p->h.host,
			    p->h.pid, why);
	else
		strbuf_addf(a->rejected, "\n  refused a connection from %s: %s", p->addr, why);
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
	p->fd = -1;
	drop(a, i);
	a->arrived++;
}

/* The whole HELLO of connection i is here. */
static void on_hello(struct admit *a, size_t i)
{
	struct pending *p = &a->v[i];
	struct job *c = a->c;
	job_hello_decode(p->buf, &p->h);
	str_printable(p->h.host, false);
	_cleanup_free_ char *why = hello_problem(c, &p->h);
	if (why) {
		refuse(a, i, why);
		return;
	}
	if (!c->key.set) {
		admit_one(a, i);
		return;
	}
	uint8_t body[2 * AUTH_NONCE_LEN];
	auth_nonce(p->nonce_l);
	memcpy(body, p->nonce_l, AUTH_NONCE_LEN);
	auth_proof(&c->key, AUTH_LISTENER, p->h.nonce, p->nonce_l, c->job, p->h.proc, body + AUTH_NONCE_LEN);
	uint8_t hd[JOB_HDR_LEN];
	job_hdr_encode(hd, MSG_CHALLENGE, sizeof(body));
	if (tcp_write_all(p->fd, hd, sizeof(hd), clock_now() + 2.0) < 0 ||
	    tcp_write_all(p->fd, body, sizeof(body), clock_now() + 2.0) < 0) {
		strbuf_addf(a->rejected, "\n  dropped %s (%s, pid %u): it did not take the challenge", p->addr,
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
	    !auth_verify(&c->key, AUTH_CONNECTOR, p->h.nonce, p->nonce_l, c->job, p->h.proc, p->buf + JOB_HDR_LEN)) {
		refuse(a, i, "it could not prove the job token (a different GPUREADY_JOB_TOKEN or --token-file?)");
		return;
	}
	/* another connection may have proved the same rank meanwhile */
	_cleanup_free_ char *why = hello_problem(c, &p->h);
	if (why)
		refuse(a, i, why);
	else
		admit_one(a, i);
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
			strbuf_addf(a->rejected, "\n  %s (%s, pid %u) hung up on the job token's challenge: it holds a "
				    "different token", p->addr, p->h.host, p->h.pid);
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
		strbuf_addf(a->rejected, "\n  dropped %s: %d connections were waiting", a->v[oldest].addr,
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
		strbuf_addf(a->rejected, "\n  dropped %s: no %s within %.0f s", p->addr,
			    p->challenged ? "answer to the job token's challenge" : "HELLO", ADMIT_HELLO_S);
		drop(a, i);
	}
}

/* Accepts until everyone is here (0) or the job's deadline passes
 * (-ETIMEDOUT). */
int job_admit_all(struct job *c, struct strbuf *rejected)
{
	struct admit a = { .c = c, .rejected = rejected, .arrived = 1 };
	struct pollfd pf[JOB_MAX_LISTEN + ADMIT_PENDING_MAX];
	int r = 0;

	while (a.arrived < c->o.nprocs) {
		double now = clock_now(), wake = c->o.deadline;
		if (now >= c->o.deadline) {
			r = -ETIMEDOUT;
			break;
		}
		expire(&a, now);
		size_t k = 0;
		for (int l = 0; l < c->nlfd; l++)
			pf[k++] = (struct pollfd){ .fd = c->lfds[l], .events = POLLIN };
		for (size_t i = 0; i < a.n; i++) {
			pf[k++] = (struct pollfd){ .fd = a.v[i].fd, .events = POLLIN };
			if (a.v[i].deadline < wake)
				wake = a.v[i].deadline;
		}
		int ms = (int)((wake - now) * 1000.0) + 1;
		int n = poll(pf, k, ms > 1000 ? 1000 : ms);
		if (n < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		/* pending first, from the end: drop() moves the last into i */
		for (size_t i = a.n; n > 0 && i-- > 0;)
			if (pf[(size_t)c->nlfd + i].revents)
				on_readable(&a, i);
		for (int l = 0; n > 0 && l < c->nlfd; l++)
			if (pf[l].revents & POLLIN)
				on_listener(&a, c->lfds[l]);
	}
	while (a.n)
		drop(&a, a.n - 1);
	return r;
}
