/* The job's rendezvous (job.h): process 0 listens and accepts every
 * other process's HELLO, checks that it belongs to this job, and answers
 * with the roster (WELCOME); the others connect and wait for it. */
#define _GNU_SOURCE
#include "job_int.h"
#include "core/cleanup.h"
#include "core/strbuf.h"
#include "core/tcp.h"

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

void job_describe(const struct job *c, int proc, char *buf, size_t len)
{
	int k = c->o.ranks_per_proc > 0 ? c->o.ranks_per_proc : 1;
	const struct job_member *m = c->members && proc >= 0 && proc < c->o.nprocs ? &c->members[proc] : NULL;
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

int job_create(const struct job_opts *o, struct job **ret, char **err)
{
	struct job *c = xcalloc(1, sizeof(*c));

	c->o = *o;
	c->lfd = c->sfd = c->wake[0] = c->wake[1] = -1;
	snprintf(c->job, sizeof(c->job), "%s", o->job ? o->job : "");
	c->o.job = c->job;
	c->o.host = NULL; /* not kept: the caller's string */
	tcp_hostname(c->host, sizeof(c->host));
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
		c->lfd = tcp_listen(o->host, o->port, err);
		if (c->lfd < 0) {
			int r = c->lfd;
			job_close(c);
			return r;
		}
	}
	*ret = c;
	return 0;
}

int job_port(const struct job *c)
{
	return c->lfd >= 0 ? tcp_local_port(c->lfd) : 0;
}

const struct job_member *job_members(const struct job *c)
{
	return c->members;
}

int job_nprocs(const struct job *c)
{
	return c->o.nprocs;
}

int job_proc(const struct job *c)
{
	return c->o.proc;
}

static void fill_hello(const struct job *c, struct hello *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MAGIC, 8);
	h->proc = (uint32_t)c->o.proc;
	h->nprocs = (uint32_t)c->o.nprocs;
	h->ranks_per_proc = (uint32_t)c->o.ranks_per_proc;
	h->local_rank = (uint32_t)c->o.local_rank;
	h->pid = (uint32_t)getpid();
	snprintf(h->host, sizeof(h->host), "%s", c->host);
	snprintf(h->job, sizeof(h->job), "%s", c->job);
}

/* Why process 0 refuses a HELLO, or NULL. */
static char *hello_problem(const struct job *c, const struct hello *h)
{
	int proc = (int)h->proc;
	if (memcmp(h->magic, MAGIC, 8))
		return xstrdup("not a gpuready process of this version");
	if (strncmp(h->job, c->job, sizeof(h->job)))
		return xasprintf("it belongs to job '%.*s', this is '%s'", (int)sizeof(h->job), h->job, c->job);
	if ((int)h->nprocs != c->o.nprocs)
		return xasprintf("it counts %u processes, rank 0 counts %d", h->nprocs, c->o.nprocs);
	if ((int)h->ranks_per_proc != c->o.ranks_per_proc)
		return xasprintf("it drives %u GPUs per process (-g), rank 0 drives %d", h->ranks_per_proc,
				 c->o.ranks_per_proc);
	if (proc <= 0 || proc >= c->o.nprocs)
		return xasprintf("it claims process rank %d", proc);
	if (c->peers[proc].fd >= 0)
		return xasprintf("process rank %d is already here (%s, pid %d): two processes have the same rank",
				 proc, c->members[proc].host, c->members[proc].pid);
	return NULL;
}

static void set_member(struct job_member *m, int proc, int pid, int local_rank, const char *host)
{
	m->proc = proc;
	m->pid = pid;
	m->local_rank = local_rank;
	size_t n = strnlen(host, sizeof(m->host) - 1);
	memcpy(m->host, host, n);
	m->host[n] = '\0';
}

/* Process 0: accept until everyone is here or the deadline passes. */
static int accept_all(struct job *c, struct strbuf *rejected)
{
	int arrived = 1;
	while (arrived < c->o.nprocs) {
		int fd = tcp_accept(c->lfd, c->o.deadline);
		if (fd == -EAGAIN)
			continue;
		if (fd < 0)
			return fd;
		struct hello h;
		uint8_t raw[JOB_HELLO_LEN];
		if (tcp_read_all(fd, raw, sizeof(raw), clock_now() + 5.0) < 0) {
			close(fd);
			continue;
		}
		job_hello_decode(raw, &h);
		_cleanup_free_ char *why = hello_problem(c, &h);
		if (why) {
			strbuf_addf(rejected, "\n  refused a connection from %.64s (pid %u): %s", h.host, h.pid, why);
			uint8_t hd[JOB_HDR_LEN];
			job_hdr_encode(hd, MSG_REJECT, strlen(why));
			if (tcp_write_all(fd, hd, sizeof(hd), clock_now() + 2.0) == 0)
				tcp_write_all(fd, why, strlen(why), clock_now() + 2.0);
			close(fd);
			continue;
		}
		int p = (int)h.proc;
		c->peers[p].fd = fd;
		c->peers[p].last_seen = clock_now();
		set_member(&c->members[p], p, (int)h.pid, (int)h.local_rank, h.host);
		arrived++;
	}
	return 0;
}

static char *missing_list(const struct job *c)
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

static int join_as_root(struct job *c, char **err)
{
	_cleanup_strbuf_ struct strbuf rejected = STRBUF_INIT;
	double start = clock_now();
	int r = accept_all(c, &rejected);

	if (r < 0) {
		_cleanup_free_ char *missing = missing_list(c);
		*err = xasprintf("rendezvous on port %d: rank%s %s did not arrive within %.0f s%s%s", job_port(c),
				 strchr(missing, ',') || strchr(missing, '-') ? "s" : "", missing, clock_now() - start,
				 rejected.len ? ";" : "", rejected.buf);
		/* those that did come learn why the run ends (ABORT: a rank is
		 * missing, not something wrong with them) */
		for (int i = 1; i < c->o.nprocs; i++)
			if (c->peers[i].fd >= 0)
				job_send_code(c, i, MSG_ABORT, 3, *err, clock_now() + 2.0, -1);
		return r;
	}
	size_t len = (size_t)c->o.nprocs * JOB_MEMBER_LEN;
	_cleanup_free_ uint8_t *w = xcalloc(1, len);
	job_roster_encode(c->members, c->o.nprocs, w);
	for (int i = 1; i < c->o.nprocs && r == 0; i++)
		r = job_send_frame(c, i, MSG_WELCOME, NULL, 0, w, len, c->o.deadline);
	if (r < 0)
		*err = xasprintf("rendezvous: sending the roster failed: %s", strerror(-r));
	return r;
}

/* Connects to the first reachable address of hosts (comma-separated). */
static int connect_any(struct job *c, const char *hosts, int port, char **err)
{
	_cleanup_free_ char *list = xstrdup(hosts), *msg = NULL;
	char *save = NULL;
	int n = 0, fd = -ETIMEDOUT;
	for (char *h = list; *h; h++)
		n += *h == ',';
	for (char *h = strtok_r(list, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
		/* one address: the whole deadline; several: a few seconds each */
		double dl = n == 0 ? c->o.deadline : clock_now() + 3.0;
		free(msg);
		msg = NULL;
		fd = tcp_connect(h, port, dl, &msg);
		if (fd >= 0)
			return fd;
	}
	*err = xasprintf("rank 0: %s (rank 0 did not come up: look at its output)", msg ? msg : "");
	return fd;
}

static int join_as_peer(struct job *c, const char *hosts, int port, char **err)
{
	struct hello h;
	uint8_t raw[JOB_HELLO_LEN];
	enum msg type = 0;
	char *payload = NULL;
	size_t len = 0;
	int fd = connect_any(c, hosts, port, err), r;

	if (fd < 0)
		return fd;
	c->peers[0].fd = fd;
	c->peers[0].last_seen = clock_now();
	fill_hello(c, &h);
	job_hello_encode(&h, raw);
	r = tcp_write_all(fd, raw, sizeof(raw), c->o.deadline);
	if (r == 0)
		r = job_read_frame(fd, &type, &payload, &len, c->o.deadline + 5.0);
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
	if (type != MSG_WELCOME || len != (size_t)c->o.nprocs * JOB_MEMBER_LEN) {
		*err = type == MSG_REJECT ? xasprintf("rank 0 refused this process: %s", payload)
					  : xstrdup("rank 0 answered with something that is not a roster");
		free(payload);
		return -EPROTO;
	}
	for (int i = 0; i < c->o.nprocs; i++) {
		struct job_member m;
		job_member_decode((const uint8_t *)payload + (size_t)i * JOB_MEMBER_LEN, &m);
		set_member(&c->members[i], i, m.pid, m.local_rank, m.host);
	}
	free(payload);
	return 0;
}

int job_join(struct job *c, const char *hosts, int port, char **err)
{
	sigset_t set;
	int r = 0;

	set_member(&c->members[c->o.proc], c->o.proc, getpid(), c->o.local_rank, c->host);
	if (c->o.nprocs > 1) {
		job_phase(c, "rendezvous", c->o.deadline);
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
	r = pthread_create(&c->thread, NULL, job_receiver, c);
	if (r) {
		*err = xasprintf("cannot start the watchdog thread: %s", strerror(r));
		return -r;
	}
	c->thread_started = true;
	if (c->o.nprocs > 1)
		job_phase_done(c);
	return 0;
}
