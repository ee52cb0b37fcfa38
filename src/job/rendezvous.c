/* The job's rendezvous (job.h): process 0 listens and accepts every
 * other process's HELLO, checks that it belongs to this job, and answers
 * with the roster (WELCOME); the others connect and wait for it. */
#define _GNU_SOURCE
#include "job_int.h"
#include "config.h"
#include "core/cleanup.h"
#include "core/parse.h"
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

/* Process 0 listens on each address of the comma-separated list hosts
 * ("" = every address), all on one port (the first picks it when 0). */
static int listen_all(struct job *c, const char *hosts, int port, char **err)
{
	_cleanup_free_ char *list = xstrdup(hosts ? hosts : "");
	char *save = NULL, *h = strtok_r(list, ",", &save);
	c->port = port;
	do {
		if (c->nlfd == JOB_MAX_LISTEN)
			break;
		int fd = tcp_listen(h ? h : "", c->port, err);
		if (fd < 0)
			return fd;
		c->lfds[c->nlfd++] = fd;
		c->port = tcp_local_port(fd);
	} while (h && (h = strtok_r(NULL, ",", &save)));
	return 0;
}

int job_create(const struct job_opts *o, struct job **ret, char **err)
{
	struct job *c = xcalloc(1, sizeof(*c));

	c->o = *o;
	c->sfd = c->wake[0] = c->wake[1] = -1;
	snprintf(c->job, sizeof(c->job), "%s", o->job ? o->job : "");
	c->o.job = c->job;
	c->o.host = NULL; /* not kept: the caller's string */
	c->o.key = NULL;
	if (o->key)
		c->key = *o->key;
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
		int r = listen_all(c, o->host, o->port, err);
		if (r < 0) {
			job_close(c);
			return r;
		}
	}
	*ret = c;
	return 0;
}

int job_port(const struct job *c)
{
	return c->port;
}

const char *job_refusals(const struct job *c)
{
	return c->refusals;
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
	h->flags = c->key.set ? HELLO_HAS_TOKEN : 0;
	auth_nonce(h->nonce);
	snprintf(h->host, sizeof(h->host), "%s", c->host);
	snprintf(h->job, sizeof(h->job), "%s", c->job);
	snprintf(h->version, sizeof(h->version), "%s", GPUREADY_VERSION);
}

void job_set_member(struct job_member *m, int proc, int pid, int local_rank, const char *host)
{
	m->proc = proc;
	m->pid = pid;
	m->local_rank = local_rank;
	size_t n = strnlen(host, sizeof(m->host) - 1);
	memcpy(m->host, host, n);
	m->host[n] = '\0';
}

void job_member_addr(struct job_member *m, const char *peer)
{
	/* "10.0.0.2:41234" or "[fd00::2]:41234" (tcp_peer_name) */
	const char *p = peer[0] == '[' ? peer + 1 : peer, *end = peer[0] == '[' ? strchr(p, ']') : strrchr(p, ':');
	size_t n = end ? (size_t)(end - p) : strlen(p);
	if (!strcmp(peer, "?") || n >= sizeof(m->addr))
		n = 0;
	memcpy(m->addr, p, n);
	m->addr[n] = '\0';
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
	_cleanup_strbuf_ struct strbuf rejected = STRBUF_INIT, odd = STRBUF_INIT;
	double start = clock_now();
	int r = job_admit_all(c, &rejected, &odd);

	if (r < 0) {
		_cleanup_free_ char *missing = missing_list(c);
		if (r == -EPROTO)
			*err = xasprintf("rendezvous on port %d: not every rank runs gpuready %s: %s", job_port(c),
					 GPUREADY_VERSION, odd.buf);
		else
			*err = xasprintf("rendezvous on port %d: rank%s %s did not arrive within %.0f s%s%s", job_port(c),
					 strchr(missing, ',') || strchr(missing, '-') ? "s" : "", missing,
					 clock_now() - start, rejected.len ? ";" : "", rejected.buf);
		/* those that did come learn why the run ends (ABORT: a rank is
		 * missing or odd, not something wrong with them) */
		for (int i = 1; i < c->o.nprocs; i++)
			if (c->peers[i].fd >= 0)
				job_send_code(c, i, MSG_ABORT, r == -EPROTO ? 2 : 3, *err, clock_now() + 2.0, -1);
		return r;
	}
	if (rejected.len)
		c->refusals = xstrdup(rejected.buf + 1);
	job_door_open(c); /* nothing else joins; late comers are told why */
	size_t len = (size_t)c->o.nprocs * JOB_MEMBER_LEN;
	_cleanup_free_ uint8_t *w = xcalloc(1, len);
	job_roster_encode(c->members, c->o.nprocs, w);
	for (int i = 1; i < c->o.nprocs && r == 0; i++)
		r = job_send_frame(c, i, MSG_WELCOME, NULL, 0, w, len, c->o.deadline);
	if (r < 0)
		*err = xasprintf("rendezvous: sending the roster failed: %s", strerror(-r));
	return r;
}

/* Connects to the first reachable address of hosts (comma-separated).
 * Refused to the end is still -ETIMEDOUT (the rendezvous's deadline
 * passed), but says that nothing listens there: rank 0 has not started,
 * or its job is over (a late rank); a rank 0 that never answered at all
 * did not come up. */
static int connect_any(struct job *c, const char *hosts, int port, char **err)
{
	_cleanup_free_ char *list = xstrdup(hosts), *msg = NULL, *last = NULL;
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
		free(last);
		last = xstrdup(h);
	}
	if (fd == -ECONNREFUSED) {
		*err = xasprintf("rank 0: no job is listening at %s:%d (connections were refused until the deadline: "
				 "rank 0 has not started, or its job has already ended)", last, port);
		return -ETIMEDOUT;
	}
	*err = xasprintf("rank 0: %s (rank 0 did not come up: look at its output)", msg ? msg : "");
	return fd;
}

/* With a job token: rank 0 proves it first (CHALLENGE), then this
 * process (PROOF). Without one, rank 0 must not ask. 0, or -errno with
 * *err. */
static int answer_challenge(struct job *c, const struct hello *h, const char *payload, size_t len, char **err)
{
	if (!c->key.set) {
		*err = xstrdup("rank 0 asks for a job token and this process has none: give every rank the same "
			       "GPUREADY_JOB_TOKEN or --token-file");
		return -EACCES;
	}
	const unsigned char *nonce_l = (const unsigned char *)payload;
	if (len != 2 * AUTH_NONCE_LEN ||
	    !auth_verify(&c->key, AUTH_LISTENER, h->nonce, nonce_l, c->job, h->proc, nonce_l + AUTH_NONCE_LEN)) {
		*err = xstrdup("rank 0 could not prove the job token: a different token, or not this job's rank 0");
		return -EACCES;
	}
	unsigned char proof[AUTH_PROOF_LEN];
	auth_proof(&c->key, AUTH_CONNECTOR, h->nonce, nonce_l, c->job, h->proc, proof);
	int r = job_send_frame(c, 0, MSG_PROOF, NULL, 0, proof, sizeof(proof), c->o.deadline);
	if (r < 0)
		*err = xasprintf("sending the job token's proof: %s", strerror(-r));
	return r;
}

/* Rank 0's answer to HELLO: the roster, after the challenge when there is
 * a token. Text from rank 0 is shown without its control characters. */
static int read_welcome(struct job *c, const struct hello *h, char **payload, size_t *len, char **err)
{
	enum msg type = 0;
	bool challenged = false;
	for (;;) {
		int r = job_read_frame(c->peers[0].fd, &type, payload, len, c->o.deadline + 5.0);
		if (r < 0)
			return r;
		if (type != MSG_CHALLENGE || challenged)
			break;
		challenged = true;
		r = answer_challenge(c, h, *payload, *len, err);
		free(*payload);
		*payload = NULL;
		if (r < 0)
			return r;
	}
	if (type != MSG_WELCOME)
		str_printable(*payload + (type == MSG_ABORT && *len >= 8 ? 8 : 0), true);
	if (type == MSG_ABORT && *len >= 8) {
		/* exit code 2: ranks of other versions (nothing timed out) */
		*err = xasprintf("rank 0 ended the rendezvous: %s", *payload + 8);
		return (uint8_t)(*payload)[0] == 2 ? -EPROTO : -ETIMEDOUT;
	}
	if (type == MSG_REJECT) {
		*err = xasprintf("rank 0 refused this process: %s", *payload);
		return -EPROTO;
	}
	if (type != MSG_WELCOME || *len != (size_t)c->o.nprocs * JOB_MEMBER_LEN) {
		*err = xstrdup("rank 0 answered with something that is not a roster");
		return -EPROTO;
	}
	if (c->key.set && !challenged) {
		*err = xstrdup("rank 0 did not ask for the job token: it has none, or it is not this job's rank 0");
		return -EACCES;
	}
	return 0;
}

static int join_as_peer(struct job *c, const char *hosts, int port, char **err)
{
	struct hello h;
	uint8_t raw[JOB_HELLO_LEN];
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
		r = read_welcome(c, &h, &payload, &len, err);
	if (r < 0) {
		if (!*err)
			*err = xasprintf("rendezvous with rank 0 at %s:%d: %s", hosts, port,
					 r == -ECONNRESET ? "rank 0 closed the connection" : strerror(-r));
		free(payload);
		return r;
	}
	for (int i = 0; i < c->o.nprocs; i++) {
		struct job_member m;
		job_member_decode((const uint8_t *)payload + (size_t)i * JOB_MEMBER_LEN, &m);
		job_set_member(&c->members[i], i, m.pid, m.local_rank, str_printable(m.host, false));
	}
	free(payload);
	return 0;
}

int job_join(struct job *c, const char *hosts, int port, char **err)
{
	sigset_t set;
	int r = 0;

	job_set_member(&c->members[c->o.proc], c->o.proc, getpid(), c->o.local_rank, c->host);
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
