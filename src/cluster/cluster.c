/* The control plane (see cluster.h): rendezvous, framed messages over a
 * star of TCP connections, a receiver thread that owns every read, and the
 * failure verdicts.
 *
 * Wire format (little-endian, same on every process): a 16-byte header
 * {u32 type, u32 reserved, u64 length} and the payload. DATA payloads
 * start with {u32 op, u32 reserved, u64 seq}: every process performs the
 * same exchanges in the same order, so a mismatch means the processes run
 * different programs or options, and is reported as such. */
#define _GNU_SOURCE
#include "cluster.h"
#include "net.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum msg {
	MSG_HELLO = 1, MSG_WELCOME, MSG_REJECT, MSG_DATA, MSG_PHASE, MSG_DONE, MSG_ABORT, MSG_FAIL, MSG_BYE,
	MSG_HEARTBEAT,
};

/* Frames bigger than this are a protocol error, not a buffer to allocate:
 * 16 GiB covers the socket backend's largest gather. */
#define MAX_FRAME (16ull << 30)
#define MAGIC "GPURDY\0\1"

/* Every process's receiver thread says it is alive this often, with the
 * main thread's progress; a peer silent for SILENT_S is frozen (stopped,
 * swapping, its host hung) or cut off. */
#define HEARTBEAT_S 1.0
#define SILENT_S 3.0

struct hdr {
	uint32_t type, reserved;
	uint64_t len;
};

struct hello {
	char magic[8];
	uint32_t proc, nprocs, ranks_per_proc, local_rank, pid, reserved;
	char host[64];
	char job[128];
};

struct member_wire {
	uint32_t proc, pid, local_rank, reserved;
	char host[64];
};

struct data_hdr {
	uint32_t op, reserved;
	uint64_t seq;
};

struct frame {
	struct frame *next;
	size_t len;
	unsigned char *buf;
};

struct peer {
	int fd;
	bool dead, bye;
	/* frame being assembled by the receiver thread */
	struct hdr hdr;
	size_t got;                 /* bytes of header + payload read so far */
	unsigned char *payload;
	/* DATA frames for the main thread */
	struct frame *head, **tail;
	/* progress (process 0 only) */
	uint64_t begun, done;
	uint64_t progress;          /* launches its main thread finished in the phase */
	double last_seen;           /* net_now() of the last bytes from it */
	char phase[160];
	pthread_mutex_t wlock;      /* one writer at a time */
};

struct cluster {
	struct cluster_opts o;
	char host[64], job[128];
	struct cluster_member *members;
	struct peer *peers;         /* process 0: one per process (index 0 unused); others: [0] = process 0 */
	int lfd, sfd, wake[2];
	bool thread_started, sigs_blocked;
	sigset_t oldmask;
	pthread_t thread;
	pthread_mutex_t m;
	pthread_cond_t cv;
	atomic_int fatal;
	atomic_bool stopping;
	atomic_ullong progress;     /* this process's, for heartbeats */
	atomic_int finished;        /* 1 + the decided exit code, 0 while undecided */
	double last_beat;
	uint64_t op_seq;
	/* the main thread's current phase */
	uint64_t phase_seq;
	bool in_phase;
	char note[512];             /* the main thread's own account of a timeout (cluster_stalled) */
	char phase[160];
	double phase_deadline, phase_start;
};

static int npeers(const struct cluster *c)
{
	return c->o.proc == 0 ? c->o.nprocs : 1;
}

void cluster_describe(const struct cluster *c, int proc, char *buf, size_t len)
{
	int k = c->o.ranks_per_proc > 0 ? c->o.ranks_per_proc : 1;
	const struct cluster_member *m = c->members && proc >= 0 && proc < c->o.nprocs ? &c->members[proc] : NULL;
	char ranks[48];
	if (k == 1)
		snprintf(ranks, sizeof(ranks), "rank %d", proc);
	else
		snprintf(ranks, sizeof(ranks), "ranks %d-%d", proc * k, proc * k + k - 1);
	if (m && m->pid)
		snprintf(buf, len, "%s (%s, pid %d)", ranks, m->host, m->pid);
	else
		snprintf(buf, len, "%s", ranks);
}

static void put_hdr(struct hdr *h, enum msg type, uint64_t len)
{
	h->type = htole32(type);
	h->reserved = 0;
	h->len = htole64(len);
}

/* Sends one frame (header, optional data header, body) to peer i by the
 * deadline. With lock_wait >= 0, waits at most that long for another
 * thread writing to that peer (the abort path and heartbeats must not wait
 * behind a stuck transfer); -1 waits as long as it takes. */
static int send_frame_ex(struct cluster *c, int i, enum msg type, const void *pre, size_t prelen, const void *body,
			 size_t len, double deadline, double lock_wait)
{
	struct peer *p = &c->peers[i];
	struct hdr h;
	int r;

	if (p->fd < 0 || p->dead)
		return -ECONNRESET;
	put_hdr(&h, type, prelen + len);
	if (lock_wait >= 0) {
		/* another thread's frame to this peer finishes first, unless it
		 * is stuck: wait for it lock_wait seconds, not forever */
		struct timespec ts;
		double left = lock_wait;
		clock_gettime(CLOCK_REALTIME, &ts);
		if (left > 0) {
			ts.tv_sec += (time_t)left;
			ts.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
		}
		if (pthread_mutex_timedlock(&p->wlock, &ts))
			return -EBUSY;
	} else {
		pthread_mutex_lock(&p->wlock);
	}
	r = net_write_all(p->fd, &h, sizeof(h), deadline);
	if (r == 0 && prelen)
		r = net_write_all(p->fd, pre, prelen, deadline);
	if (r == 0 && len)
		r = net_write_all(p->fd, body, len, deadline);
	pthread_mutex_unlock(&p->wlock);
	return r;
}

static int send_frame(struct cluster *c, int i, enum msg type, const void *pre, size_t prelen, const void *body,
		      size_t len, double deadline)
{
	return send_frame_ex(c, i, type, pre, prelen, body, len, deadline, -1);
}

/* ---- failure ---- */

/* Before exiting: a socket closed with unread data in it resets the
 * connection, and a reset can make the peer drop what we just sent (our
 * ABORT or FAIL). So say we are done writing, and read (and discard) until
 * the peers close, for at most LINGER_S. */
#define LINGER_S 1.0

static void linger(struct cluster *c)
{
	int n = c->peers ? npeers(c) : 0, open = 0;
	struct pollfd pf[n > 0 ? n : 1];
	for (int i = 0; i < n; i++) {
		pf[i] = (struct pollfd){ .fd = c->peers[i].fd, .events = POLLIN };
		if (pf[i].fd >= 0) {
			shutdown(pf[i].fd, SHUT_WR);
			open++;
		}
	}
	double end = net_now() + LINGER_S;
	char buf[4096];
	while (open > 0 && net_now() < end) {
		if (poll(pf, (nfds_t)n, 100) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			ssize_t r = recv(pf[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				pf[i].fd = -1;
				open--;
			}
		}
	}
}

/* Ends the process with this explanation, once. Process 0 tells everyone
 * (ABORT); another process tells process 0 (FAIL) when the reason is its
 * own (tell_root), not something process 0 told it or the loss of process
 * 0. A second caller on the main thread waits for the first to exit. */
static void do_fatal(struct cluster *c, const char *why, int code, bool from_receiver, bool tell_root)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&c->fatal, &expected, 1)) {
		if (from_receiver)
			return;
		for (;;)
			pause(); /* the other thread is exiting the process */
	}
	struct {
		uint32_t code, reserved;
	} pre = { htole32((uint32_t)code), 0 };
	double dl = net_now() + 2.0;
	if (c->o.proc == 0) {
		for (int i = 1; i < c->o.nprocs; i++)
			send_frame_ex(c, i, MSG_ABORT, &pre, sizeof(pre), why, strlen(why), dl, 2.0);
	} else if (c->peers && tell_root) {
		/* tell process 0, which tells everyone */
		send_frame_ex(c, 0, MSG_FAIL, &pre, sizeof(pre), why, strlen(why), dl, 2.0);
	}
	/* no stdio here: the main thread may hold stdout's lock, blocked on a
	 * full pipe; what it printed was flushed row by row */
	if (c->o.on_fatal)
		c->o.on_fatal(c->o.fatal_ctx, why, code);
	linger(c);
	_exit(code);
}

void cluster_fatal(struct cluster *c, const char *why, int code)
{
	do_fatal(c, why, code, false, true);
	_exit(code); /* not reached */
}

/* One line per process that did not finish the phase. Returns how many
 * were silent (the likely culprits), via counts. */
struct tally {
	int absent, late, silent;
};

static void describe_laggard(struct cluster *c, int i, double now, struct strbuf *out, struct tally *t)
{
	char d[128];
	uint64_t begun = i == 0 ? c->phase_seq : c->peers[i].begun;
	uint64_t done = i == 0 ? (c->in_phase ? c->phase_seq - 1 : c->phase_seq) : c->peers[i].done;
	uint64_t prog = i == 0 ? atomic_load(&c->progress) : c->peers[i].progress;
	double quiet = i == 0 ? 0 : now - c->peers[i].last_seen;

	cluster_describe(c, i, d, sizeof(d));
	if (quiet > SILENT_S) {
		strbuf_addf(out, "\n  %s has been silent for %.0f s: its process is stopped or its host is frozen or "
				 "unreachable", d, quiet);
		t->silent++;
	} else if (begun < c->phase_seq) {
		strbuf_addf(out, "\n  %s never started it; its last step was '%s'", d,
			    c->peers[i].phase[0] ? c->peers[i].phase : "startup");
		t->absent++;
	} else if (done < c->phase_seq) {
		strbuf_addf(out, "\n  %s started it and reported launch %llu", d, (unsigned long long)prog);
		t->late++;
	}
}

/* The verdict when process 0's phase passes its deadline. */
static char *stall_verdict(struct cluster *c)
{
	struct strbuf sb = STRBUF_INIT, lines = STRBUF_INIT;
	struct tally t = { 0 };
	double now = net_now();

	pthread_mutex_lock(&c->m);
	strbuf_addf(&sb, "'%s' did not finish within its deadline (%.0f s)", c->phase, c->phase_deadline - c->phase_start);
	for (int i = 0; i < c->o.nprocs; i++)
		describe_laggard(c, i, now, &lines, &t);
	pthread_mutex_unlock(&c->m);
	if (t.silent)
		strbuf_addf(&sb, "; the others wait for the silent rank%s:", t.silent > 1 ? "s" : "");
	else if (t.absent)
		strbuf_addf(&sb, "; the others wait for the rank%s that never started it:", t.absent > 1 ? "s" : "");
	else if (t.late == c->o.nprocs && c->o.nprocs > 1)
		strbuf_adds(&sb, "; every rank is alive and inside it: the collective is stuck or "
				 "far slower than expected (network, NCCL or MPI; rerun with NCCL_DEBUG=INFO and run "
				 "`gpuready check` on each host):");
	else
		strbuf_adds(&sb, ":");
	strbuf_add(&sb, lines.buf, lines.len);
	strbuf_release(&lines);
	pthread_mutex_lock(&c->m);
	if (c->note[0]) {
		char d[128];
		cluster_describe(c, 0, d, sizeof(d));
		strbuf_addf(&sb, "\n  %s reports: %s", d, c->note);
	}
	pthread_mutex_unlock(&c->m);
	return strbuf_detach(&sb);
}

static void peer_lost(struct cluster *c, int i, const char *how)
{
	char d[128], *why;
	struct peer *p = &c->peers[i];

	if (!(atomic_load(&c->stopping) && p->bye) && !atomic_load(&c->finished)) {
		/* the verdict goes out before the main thread can see the loss
		 * as a mere error of its own */
		cluster_describe(c, c->o.proc == 0 ? i : 0, d, sizeof(d));
		pthread_mutex_lock(&c->m);
		why = xasprintf("%s %s during '%s'", d, how, c->phase[0] ? c->phase : "startup");
		pthread_mutex_unlock(&c->m);
		do_fatal(c, why, 3, true, false);
		free(why);
	}
	pthread_mutex_lock(&c->m);
	p->dead = true;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->m);
}

/* ---- receiving ---- */

static void dispatch(struct cluster *c, int i, enum msg type, unsigned char *payload, size_t len)
{
	struct peer *p = &c->peers[i];
	char d[128];

	switch (type) {
	case MSG_DATA: {
		struct frame *f = xcalloc(1, sizeof(*f));
		f->buf = payload;
		f->len = len;
		pthread_mutex_lock(&c->m);
		*p->tail = f;
		p->tail = &f->next;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->m);
		return; /* payload now owned by the queue */
	}
	case MSG_PHASE:
	case MSG_DONE:
		if (len >= 8 && c->o.proc == 0) {
			uint64_t seq;
			memcpy(&seq, payload, 8);
			pthread_mutex_lock(&c->m);
			if (type == MSG_PHASE) {
				p->begun = le64toh(seq);
				snprintf(p->phase, sizeof(p->phase), "%.*s", (int)(len - 8), payload + 8);
			} else {
				/* a DONE may come without its PHASE (the rendezvous) */
				p->done = le64toh(seq);
				if (p->begun < p->done)
					p->begun = p->done;
			}
			pthread_mutex_unlock(&c->m);
		}
		break;
	case MSG_ABORT:
	case MSG_FAIL:
		if (len >= 8) {
			uint32_t code;
			memcpy(&code, payload, 4);
			char *text = xstrndup((char *)payload + 8, len - 8), *why = text;
			if (type == MSG_FAIL) {
				cluster_describe(c, i, d, sizeof(d));
				if (strncmp(text, d, strlen(d)))
					why = xasprintf("%s failed: %s", d, text);
			}
			do_fatal(c, why, (int)le32toh(code), true, false);
			if (why != text)
				free(why);
			free(text);
		}
		break;
	case MSG_HEARTBEAT:
		if (len >= 8) {
			uint64_t v;
			memcpy(&v, payload, 8);
			pthread_mutex_lock(&c->m);
			p->progress = le64toh(v);
			pthread_mutex_unlock(&c->m);
		}
		break;
	case MSG_BYE:
		pthread_mutex_lock(&c->m);
		p->bye = true;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->m);
		break;
	default:
		break;
	}
	free(payload);
}

/* Reads what is available from peer i; dispatches complete frames. */
static void peer_readable(struct cluster *c, int i)
{
	struct peer *p = &c->peers[i];
	for (;;) {
		ssize_t n;
		if (p->got < sizeof(p->hdr)) {
			n = recv(p->fd, (char *)&p->hdr + p->got, sizeof(p->hdr) - p->got, MSG_DONTWAIT);
		} else {
			size_t len = le64toh(p->hdr.len);
			n = len ? recv(p->fd, p->payload + (p->got - sizeof(p->hdr)), len - (p->got - sizeof(p->hdr)),
				       MSG_DONTWAIT)
				: 0;
			if (!len)
				n = 0;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0 || (n == 0 && (p->got < sizeof(p->hdr) || le64toh(p->hdr.len) > 0))) {
			peer_lost(c, i, n < 0 ? "lost its connection (reset: its process died or its host dropped it)"
					  : "disconnected (its process exited or was killed)");
			return;
		}
		p->got += (size_t)n;
		p->last_seen = net_now();
		if (p->got == sizeof(p->hdr)) {
			uint64_t len = le64toh(p->hdr.len);
			if (len > MAX_FRAME) {
				peer_lost(c, i, "sent a malformed frame");
				return;
			}
			p->payload = len ? malloc(len) : NULL;
			if (len && !p->payload) {
				peer_lost(c, i, "sent a frame too large for this host's memory");
				return;
			}
		}
		if (p->got >= sizeof(p->hdr) && p->got == sizeof(p->hdr) + le64toh(p->hdr.len)) {
			unsigned char *pl = p->payload;
			size_t len = le64toh(p->hdr.len);
			p->payload = NULL;
			p->got = 0;
			dispatch(c, i, (enum msg)le32toh(p->hdr.type), pl, len);
		}
	}
}

/* Process 0 gives its verdict this long after the deadline: by then a
 * frozen rank has missed enough heartbeats to be called silent. */
#define VERDICT_DELAY_S (SILENT_S + HEARTBEAT_S)

static void check_deadline(struct cluster *c)
{
	pthread_mutex_lock(&c->m);
	double delay = c->o.proc == 0 ? VERDICT_DELAY_S : CLUSTER_GRACE_S;
	bool late = c->in_phase && c->phase_deadline > 0 && net_now() > c->phase_deadline + delay;
	pthread_mutex_unlock(&c->m);
	if (!late)
		return;
	char *why;
	int done = atomic_load(&c->finished);
	if (done) {
		/* the result stands; the library's teardown hangs */
		why = xasprintf("the run's result was decided, but '%s' did not finish within %.0f s", c->phase,
				c->phase_deadline - c->phase_start);
	} else if (c->o.proc == 0) {
		why = stall_verdict(c);
	} else {
		char d[128], d0[128];
		cluster_describe(c, c->o.proc, d, sizeof(d));
		cluster_describe(c, 0, d0, sizeof(d0));
		double quiet = net_now() - c->peers[0].last_seen;
		why = quiet > SILENT_S
			? xasprintf("%s: '%s' passed its deadline and %s has been silent for %.0f s: its process is "
				    "stopped or its host is frozen or unreachable", d, c->phase, d0, quiet)
			: xasprintf("%s: '%s' passed its deadline and %s gave no verdict within %.0f s more", d, c->phase,
				    d0, CLUSTER_GRACE_S);
	}
	/* a run decided to pass still ends with "stalled": its teardown hung */
	do_fatal(c, why, done && done - 1 != 0 ? done - 1 : 3, true, !done);
	free(why);
}

static void on_signal(struct cluster *c)
{
	struct signalfd_siginfo si;
	if (read(c->sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	int done = atomic_load(&c->finished);
	if (done)
		_exit(done - 1); /* the launcher tears the job down after the result */
	char d[128];
	cluster_describe(c, c->o.proc, d, sizeof(d));
	pthread_mutex_lock(&c->m);
	char *why = xasprintf("%s stopped by %s during '%s'%s", d, strsignal((int)si.ssi_signo),
			      c->phase[0] ? c->phase : "startup",
			      c->o.nprocs > 1 ? " (a launcher stops every rank when one of them fails: look for "
						"the first rank that reported)" : "");
	pthread_mutex_unlock(&c->m);
	do_fatal(c, why, 128 + (int)si.ssi_signo, true, true);
	free(why);
}

static void heartbeat(struct cluster *c)
{
	double now = net_now();
	if (now - c->last_beat < HEARTBEAT_S)
		return;
	c->last_beat = now;
	uint64_t v = htole64((uint64_t)atomic_load(&c->progress));
	for (int i = c->o.proc == 0 ? 1 : 0; i < npeers(c); i++)
		send_frame_ex(c, i, MSG_HEARTBEAT, NULL, 0, &v, sizeof(v), now + 1.0, 0);
}

static void *receiver(void *arg)
{
	struct cluster *c = arg;
	int n = npeers(c);
	struct pollfd *pf = xcalloc((size_t)n + 2, sizeof(*pf));

	for (;;) {
		int k = 0;
		pf[k++] = (struct pollfd){ .fd = c->wake[0], .events = POLLIN };
		pf[k++] = (struct pollfd){ .fd = c->sfd, .events = POLLIN };
		for (int i = 0; i < n; i++)
			pf[k++] = (struct pollfd){ .fd = c->peers[i].fd >= 0 && !c->peers[i].dead ? c->peers[i].fd : -1,
						   .events = POLLIN };
		int r = poll(pf, (nfds_t)k, 250);
		if (r < 0 && errno != EINTR)
			break;
		if (pf[0].revents) {
			char b;
			if (read(c->wake[0], &b, 1) == 1 && b == 'q')
				break;
		}
		if (pf[1].revents)
			on_signal(c);
		for (int i = 0; i < n; i++)
			if (pf[i + 2].revents)
				peer_readable(c, i);
		heartbeat(c);
		check_deadline(c);
	}
	free(pf);
	return NULL;
}

/* ---- setup ---- */

int cluster_create(const struct cluster_opts *o, struct cluster **ret, char **err)
{
	struct cluster *c = xcalloc(1, sizeof(*c));
	char msg[256] = "";

	c->o = *o;
	c->lfd = c->sfd = c->wake[0] = c->wake[1] = -1;
	snprintf(c->job, sizeof(c->job), "%s", o->job ? o->job : "");
	c->o.job = c->job;
	c->o.host = NULL; /* not kept: the caller's string */
	net_hostname(c->host, sizeof(c->host));
	pthread_mutex_init(&c->m, NULL);
	pthread_cond_init(&c->cv, NULL);
	c->members = xcalloc((size_t)o->nprocs, sizeof(*c->members));
	c->peers = xcalloc((size_t)npeers(c), sizeof(*c->peers));
	for (int i = 0; i < npeers(c); i++) {
		c->peers[i].fd = -1;
		c->peers[i].tail = &c->peers[i].head;
		pthread_mutex_init(&c->peers[i].wlock, NULL);
	}
	if (o->proc == 0 && o->nprocs > 1) {
		c->lfd = net_listen(o->host, o->port, msg, sizeof(msg));
		if (c->lfd < 0) {
			int r = c->lfd;
			*err = xstrdup(msg);
			cluster_close(c);
			return r;
		}
	}
	*ret = c;
	return 0;
}

int cluster_port(const struct cluster *c)
{
	return c->lfd >= 0 ? net_local_port(c->lfd) : 0;
}

const struct cluster_member *cluster_members(const struct cluster *c)
{
	return c->members;
}

int cluster_nprocs(const struct cluster *c)
{
	return c->o.nprocs;
}

int cluster_proc(const struct cluster *c)
{
	return c->o.proc;
}

static void fill_hello(const struct cluster *c, struct hello *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MAGIC, 8);
	h->proc = htole32((uint32_t)c->o.proc);
	h->nprocs = htole32((uint32_t)c->o.nprocs);
	h->ranks_per_proc = htole32((uint32_t)c->o.ranks_per_proc);
	h->local_rank = htole32((uint32_t)c->o.local_rank);
	h->pid = htole32((uint32_t)getpid());
	snprintf(h->host, sizeof(h->host), "%s", c->host);
	snprintf(h->job, sizeof(h->job), "%s", c->job);
}

/* Reads one whole frame synchronously (before the receiver thread runs). */
static int read_frame(int fd, enum msg *type, char **payload, size_t *len, double deadline)
{
	struct hdr h;
	int r = net_read_all(fd, &h, sizeof(h), deadline);
	if (r < 0)
		return r;
	*len = le64toh(h.len);
	*type = (enum msg)le32toh(h.type);
	if (*len > (1u << 20))
		return -EPROTO;
	*payload = xcalloc(1, *len + 1);
	r = net_read_all(fd, *payload, *len, deadline);
	if (r < 0) {
		free(*payload);
		*payload = NULL;
	}
	return r;
}

/* Why process 0 refuses a HELLO, or NULL. */
static char *hello_problem(const struct cluster *c, const struct hello *h)
{
	int proc = (int)le32toh(h->proc);
	if (memcmp(h->magic, MAGIC, 8))
		return xstrdup("not a gpuready process of this version");
	if (strncmp(h->job, c->job, sizeof(h->job)))
		return xasprintf("it belongs to job '%.*s', this is '%s'", (int)sizeof(h->job), h->job, c->job);
	if ((int)le32toh(h->nprocs) != c->o.nprocs)
		return xasprintf("it counts %u processes, rank 0 counts %d", le32toh(h->nprocs), c->o.nprocs);
	if ((int)le32toh(h->ranks_per_proc) != c->o.ranks_per_proc)
		return xasprintf("it drives %u GPUs per process (-g), rank 0 drives %d", le32toh(h->ranks_per_proc),
				 c->o.ranks_per_proc);
	if (proc <= 0 || proc >= c->o.nprocs)
		return xasprintf("it claims process rank %d", proc);
	if (c->peers[proc].fd >= 0)
		return xasprintf("process rank %d is already here (%s, pid %d): two processes have the same rank",
				 proc, c->members[proc].host, c->members[proc].pid);
	return NULL;
}

static void set_member(struct cluster_member *m, int proc, int pid, int local_rank, const char *host)
{
	m->proc = proc;
	m->pid = pid;
	m->local_rank = local_rank;
	size_t n = strnlen(host, sizeof(m->host) - 1);
	memcpy(m->host, host, n);
	m->host[n] = '\0';
}

/* Process 0: accept until everyone is here or the deadline passes. */
static int accept_all(struct cluster *c, struct strbuf *rejected)
{
	int arrived = 1;
	while (arrived < c->o.nprocs) {
		int fd = net_accept(c->lfd, c->o.deadline);
		if (fd == -EAGAIN)
			continue;
		if (fd < 0)
			return fd;
		struct hello h;
		if (net_read_all(fd, &h, sizeof(h), net_now() + 5.0) < 0) {
			close(fd);
			continue;
		}
		h.host[sizeof(h.host) - 1] = '\0';
		_cleanup_free_ char *why = hello_problem(c, &h);
		if (why) {
			strbuf_addf(rejected, "\n  refused a connection from %.64s (pid %u): %s", h.host, le32toh(h.pid), why);
			struct hdr hd;
			put_hdr(&hd, MSG_REJECT, strlen(why));
			if (net_write_all(fd, &hd, sizeof(hd), net_now() + 2.0) == 0)
				net_write_all(fd, why, strlen(why), net_now() + 2.0);
			close(fd);
			continue;
		}
		int p = (int)le32toh(h.proc);
		c->peers[p].fd = fd;
		c->peers[p].last_seen = net_now();
		set_member(&c->members[p], p, (int)le32toh(h.pid), (int)le32toh(h.local_rank), h.host);
		arrived++;
	}
	return 0;
}

static char *missing_list(const struct cluster *c)
{
	struct strbuf sb = STRBUF_INIT;
	int k = c->o.ranks_per_proc > 0 ? c->o.ranks_per_proc : 1;
	for (int i = 1; i < c->o.nprocs; i++) {
		if (c->peers[i].fd >= 0)
			continue;
		if (k == 1)
			strbuf_addf(&sb, "%s%d", sb.len ? ", " : "", i);
		else
			strbuf_addf(&sb, "%s%d-%d", sb.len ? ", " : "", i * k, i * k + k - 1);
	}
	return strbuf_detach(&sb);
}

static int join_as_root(struct cluster *c, char **err)
{
	_cleanup_strbuf_ struct strbuf rejected = STRBUF_INIT;
	double start = net_now();
	int r = accept_all(c, &rejected);
	struct member_wire *w = xcalloc((size_t)c->o.nprocs, sizeof(*w));

	if (r < 0) {
		_cleanup_free_ char *missing = missing_list(c);
		*err = xasprintf("rendezvous on port %d: rank%s %s did not arrive within %.0f s%s%s", cluster_port(c),
				 strchr(missing, ',') || strchr(missing, '-') ? "s" : "", missing, net_now() - start,
				 rejected.len ? ";" : "", rejected.buf);
		/* those that did come learn why the run ends (ABORT: a rank is
		 * missing, not something wrong with them) */
		struct {
			uint32_t code, reserved;
		} pre = { htole32(3), 0 };
		for (int i = 1; i < c->o.nprocs; i++)
			if (c->peers[i].fd >= 0)
				send_frame(c, i, MSG_ABORT, &pre, sizeof(pre), *err, strlen(*err), net_now() + 2.0);
		free(w);
		return r;
	}
	for (int i = 0; i < c->o.nprocs; i++) {
		w[i].proc = htole32((uint32_t)i);
		w[i].pid = htole32((uint32_t)c->members[i].pid);
		w[i].local_rank = htole32((uint32_t)c->members[i].local_rank);
		memcpy(w[i].host, c->members[i].host, sizeof(w[i].host));
	}
	for (int i = 1; i < c->o.nprocs && r == 0; i++)
		r = send_frame(c, i, MSG_WELCOME, NULL, 0, w, (size_t)c->o.nprocs * sizeof(*w), c->o.deadline);
	free(w);
	if (r < 0)
		*err = xasprintf("rendezvous: sending the roster failed: %s", strerror(-r));
	return r;
}

/* Connects to the first reachable address of hosts (comma-separated). */
static int connect_any(struct cluster *c, const char *hosts, int port, char **err)
{
	_cleanup_free_ char *list = xstrdup(hosts);
	char msg[256] = "", *save = NULL;
	int n = 0, fd = -ETIMEDOUT;
	for (char *h = list; *h; h++)
		n += *h == ',';
	for (char *h = strtok_r(list, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
		/* one address: the whole deadline; several: a few seconds each */
		double dl = n == 0 ? c->o.deadline : net_now() + 3.0;
		fd = net_connect(h, port, dl, msg, sizeof(msg));
		if (fd >= 0)
			return fd;
	}
	*err = xasprintf("rank 0: %s (rank 0 did not come up: look at its output)", msg);
	return fd;
}

static int join_as_peer(struct cluster *c, const char *hosts, int port, char **err)
{
	struct hello h;
	enum msg type = 0;
	char *payload = NULL;
	size_t len = 0;
	int fd = connect_any(c, hosts, port, err), r;

	if (fd < 0)
		return fd;
	c->peers[0].fd = fd;
	c->peers[0].last_seen = net_now();
	fill_hello(c, &h);
	r = net_write_all(fd, &h, sizeof(h), c->o.deadline);
	if (r == 0)
		r = read_frame(fd, &type, &payload, &len, c->o.deadline + 5.0);
	if (r < 0) {
		*err = xasprintf("rendezvous with rank 0 at %s:%d: %s", hosts, port,
				 r == -ECONNRESET ? "rank 0 closed the connection" : strerror(-r));
		return r;
	}
	if (type == MSG_ABORT && len >= 8) {
		*err = xasprintf("rank 0 ended the rendezvous: %s", payload + 8);
		free(payload);
		return -ETIMEDOUT;
	}
	if (type != MSG_WELCOME || len != (size_t)c->o.nprocs * sizeof(struct member_wire)) {
		*err = type == MSG_REJECT ? xasprintf("rank 0 refused this process: %s", payload)
					  : xstrdup("rank 0 answered with something that is not a roster");
		free(payload);
		return -EPROTO;
	}
	const struct member_wire *w = (const void *)payload;
	for (int i = 0; i < c->o.nprocs; i++) {
		char host[65];
		memcpy(host, w[i].host, 64);
		host[64] = '\0';
		set_member(&c->members[i], i, (int)le32toh(w[i].pid), (int)le32toh(w[i].local_rank), host);
	}
	free(payload);
	return 0;
}

int cluster_join(struct cluster *c, const char *hosts, int port, char **err)
{
	sigset_t set;
	int r = 0;

	set_member(&c->members[c->o.proc], c->o.proc, getpid(), c->o.local_rank, c->host);
	if (c->o.nprocs > 1) {
		cluster_phase(c, "rendezvous", c->o.deadline);
		r = c->o.proc == 0 ? join_as_root(c, err) : join_as_peer(c, hosts, port, err);
		if (r < 0)
			return r;
	}
	/* SIGINT/SIGTERM go to the receiver thread (signalfd), which reports
	 * them with the phase they interrupted */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (pthread_sigmask(SIG_BLOCK, &set, &c->oldmask) == 0)
		c->sigs_blocked = true;
	c->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (c->sfd < 0 || pipe2(c->wake, O_CLOEXEC) < 0) {
		*err = xasprintf("cannot set up the watchdog: %s", strerror(errno));
		return -errno;
	}
	r = pthread_create(&c->thread, NULL, receiver, c);
	if (r) {
		*err = xasprintf("cannot start the watchdog thread: %s", strerror(r));
		return -r;
	}
	c->thread_started = true;
	if (c->o.nprocs > 1)
		cluster_phase_done(c);
	return 0;
}

/* ---- phases ---- */

void cluster_phase(struct cluster *c, const char *desc, double deadline)
{
	uint64_t seq;
	pthread_mutex_lock(&c->m);
	seq = ++c->phase_seq;
	c->in_phase = true;
	snprintf(c->phase, sizeof(c->phase), "%s", desc);
	c->phase_start = net_now();
	c->phase_deadline = deadline;
	atomic_store(&c->progress, 0);
	pthread_mutex_unlock(&c->m);
	if (c->o.proc != 0 && c->thread_started) {
		uint64_t le = htole64(seq);
		send_frame(c, 0, MSG_PHASE, &le, sizeof(le), desc, strlen(c->phase), net_now() + 10.0);
	}
}

void cluster_progress(struct cluster *c, uint64_t launches)
{
	atomic_store(&c->progress, launches);
}

void cluster_phase_done(struct cluster *c)
{
	uint64_t seq;
	pthread_mutex_lock(&c->m);
	c->in_phase = false;
	seq = c->phase_seq;
	pthread_mutex_unlock(&c->m);
	if (c->o.proc != 0 && c->thread_started) {
		uint64_t le = htole64(seq);
		send_frame(c, 0, MSG_DONE, &le, sizeof(le), NULL, 0, net_now() + 10.0);
	}
}

/* ---- data exchanges (main thread) ---- */

enum { OP_BCAST = 1, OP_GATHER, OP_SCATTER, OP_BARRIER, OP_ALLREDUCE };

static const char *op_name(uint32_t op)
{
	static const char *const names[] = { "?", "broadcast", "gather", "scatter", "barrier", "allreduce" };
	return op < ARRAY_SIZE(names) ? names[op] : "?";
}

static int send_data(struct cluster *c, int i, uint32_t op, const void *buf, size_t len, double deadline,
		     char **err)
{
	struct data_hdr dh = { .op = htole32(op), .seq = htole64(c->op_seq) };
	int r = send_frame(c, i, MSG_DATA, &dh, sizeof(dh), buf, len, deadline);
	if (r < 0) {
		char d[128];
		cluster_describe(c, c->o.proc == 0 ? i : 0, d, sizeof(d));
		*err = xasprintf("%s: sending to %s: %s", op_name(op), d,
				 r == -ETIMEDOUT ? "timed out (it stopped reading)" : strerror(-r));
	}
	return r;
}

/* Waits for the next DATA frame from peer i and copies its body to buf. */
static int recv_data(struct cluster *c, int i, uint32_t op, void *buf, size_t len, double deadline, char **err)
{
	struct peer *p = &c->peers[i];
	struct frame *f = NULL;
	char d[128];
	int r = 0;

	cluster_describe(c, c->o.proc == 0 ? i : 0, d, sizeof(d));
	pthread_mutex_lock(&c->m);
	while (!p->head && !p->dead) {
		if (deadline > 0 && net_now() >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&c->cv, &c->m, &ts);
	}
	if (p->head) {
		f = p->head;
		p->head = f->next;
		if (!p->head)
			p->tail = &p->head;
	} else if (!r) {
		r = -ECONNRESET;
	}
	pthread_mutex_unlock(&c->m);
	if (!f) {
		*err = xasprintf("%s: waiting for %s: %s", op_name(op), d,
				 r == -ETIMEDOUT ? "timed out" : "it disconnected");
		return r;
	}
	struct data_hdr dh;
	if (f->len >= sizeof(dh))
		memcpy(&dh, f->buf, sizeof(dh));
	if (f->len != sizeof(dh) + len || le32toh(dh.op) != op || le64toh(dh.seq) != c->op_seq) {
		*err = xasprintf("%s: %s sent a %s of %zu bytes (#%llu) where this process expected %zu bytes (#%llu): "
				 "the ranks run different gpuready versions or options",
				 op_name(op), d, f->len >= sizeof(dh) ? op_name(le32toh(dh.op)) : "?",
				 f->len >= sizeof(dh) ? f->len - sizeof(dh) : 0,
				 (unsigned long long)(f->len >= sizeof(dh) ? le64toh(dh.seq) : 0), len,
				 (unsigned long long)c->op_seq);
		r = -EPROTO;
	} else if (len) {
		memcpy(buf, f->buf + sizeof(dh), len);
	}
	free(f->buf);
	free(f);
	return r;
}

int cluster_bcast(struct cluster *c, void *buf, size_t len, double deadline, char **err)
{
	int r = 0;
	c->op_seq++;
	if (c->o.proc != 0)
		return recv_data(c, 0, OP_BCAST, buf, len, deadline, err);
	for (int i = 1; i < c->o.nprocs && r == 0; i++)
		r = send_data(c, i, OP_BCAST, buf, len, deadline, err);
	return r;
}

int cluster_gather(struct cluster *c, const void *mine, size_t len, void *all, double deadline, char **err)
{
	int r = 0;
	c->op_seq++;
	if (c->o.proc != 0)
		return send_data(c, 0, OP_GATHER, mine, len, deadline, err);
	if (len)
		memmove(all, mine, len);
	for (int i = 1; i < c->o.nprocs && r == 0; i++)
		r = recv_data(c, i, OP_GATHER, (char *)all + (size_t)i * len, len, deadline, err);
	return r;
}

int cluster_scatter(struct cluster *c, const void *all, void *mine, size_t len, double deadline, char **err)
{
	int r = 0;
	c->op_seq++;
	if (c->o.proc != 0)
		return recv_data(c, 0, OP_SCATTER, mine, len, deadline, err);
	for (int i = 1; i < c->o.nprocs && r == 0; i++)
		r = send_data(c, i, OP_SCATTER, (const char *)all + (size_t)i * len, len, deadline, err);
	if (r == 0 && len)
		memmove(mine, all, len);
	return r;
}

int cluster_allgather(struct cluster *c, const void *mine, size_t len, void *all, double deadline, char **err)
{
	int r = cluster_gather(c, mine, len, all, deadline, err);
	return r < 0 ? r : cluster_bcast(c, all, len * (size_t)c->o.nprocs, deadline, err);
}

int cluster_barrier(struct cluster *c, double deadline, char **err)
{
	int r = cluster_gather(c, NULL, 0, NULL, deadline, err);
	return r < 0 ? r : cluster_bcast(c, NULL, 0, deadline, err);
}

int cluster_allreduce_f64(struct cluster *c, double *v, size_t n, enum cluster_op op, double deadline, char **err)
{
	size_t len = n * sizeof(double);
	_cleanup_free_ double *all = c->o.proc == 0 ? xcalloc((size_t)c->o.nprocs, len ? len : 1) : NULL;
	int r = cluster_gather(c, v, len, all, deadline, err);
	if (r < 0)
		return r;
	if (c->o.proc == 0) {
		for (int p = 1; p < c->o.nprocs; p++)
			for (size_t i = 0; i < n; i++) {
				double x = all[(size_t)p * n + i];
				if (op == CLUSTER_SUM)
					all[i] += x;
				else if (op == CLUSTER_MIN ? x < all[i] : x > all[i])
					all[i] = x;
			}
		memcpy(v, all, len);
	}
	return cluster_bcast(c, v, len, deadline, err);
}

/* ---- teardown ---- */

void cluster_finishing(struct cluster *c, int code, const char *teardown, double deadline)
{
	pthread_mutex_lock(&c->m);
	c->in_phase = deadline > 0;
	snprintf(c->phase, sizeof(c->phase), "%s", teardown ? teardown : "the end of the run");
	c->phase_start = net_now();
	c->phase_deadline = deadline;
	pthread_mutex_unlock(&c->m);
	atomic_store(&c->finished, code + 1);
}

void cluster_stalled(struct cluster *c, const char *why)
{
	pthread_mutex_lock(&c->m);
	snprintf(c->note, sizeof(c->note), "%s", why);
	bool watched = c->thread_started && c->in_phase && c->phase_deadline > 0;
	double until = c->phase_deadline + CLUSTER_GRACE_S + VERDICT_DELAY_S + 5.0;
	pthread_mutex_unlock(&c->m);
	/* the watchdog names the culprit (process 0 sees every rank); this
	 * process only reports itself if the watchdog says nothing */
	while (watched && net_now() < until)
		usleep(100000);
	do_fatal(c, why, 3, false, true);
	_exit(3);
}

static bool all_bye(struct cluster *c)
{
	for (int i = c->o.proc == 0 ? 1 : 0; i < npeers(c); i++)
		if (c->peers[i].fd >= 0 && !c->peers[i].bye && !c->peers[i].dead)
			return false;
	return true;
}

void cluster_close(struct cluster *c)
{
	if (!c)
		return;
	if (c->thread_started) {
		double dl = net_now() + 5.0;
		atomic_store(&c->stopping, true);
		for (int i = c->o.proc == 0 ? 1 : 0; i < npeers(c); i++)
			send_frame(c, i, MSG_BYE, NULL, 0, NULL, 0, dl);
		pthread_mutex_lock(&c->m);
		while (!all_bye(c) && net_now() < dl) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&c->cv, &c->m, &ts);
		}
		pthread_mutex_unlock(&c->m);
		if (write(c->wake[1], "q", 1) == 1)
			pthread_join(c->thread, NULL);
	}
	if (c->sigs_blocked)
		pthread_sigmask(SIG_SETMASK, &c->oldmask, NULL);
	for (int i = 0; c->peers && i < npeers(c); i++) {
		struct peer *p = &c->peers[i];
		if (p->fd >= 0)
			close(p->fd);
		while (p->head) {
			struct frame *f = p->head;
			p->head = f->next;
			free(f->buf);
			free(f);
		}
		free(p->payload);
		pthread_mutex_destroy(&p->wlock);
	}
	int fds[] = { c->lfd, c->sfd, c->wake[0], c->wake[1] };
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	pthread_mutex_destroy(&c->m);
	pthread_cond_destroy(&c->cv);
	free(c->peers);
	free(c->members);
	free(c);
}
