/* The job's watchdog (job.h): the receiver thread that owns every read,
 * heartbeats, phases and their deadlines, signals, the stall verdicts that
 * name the culprit, the fatal path and the orderly teardown. */
#define _GNU_SOURCE
#include "job_int.h"
#include "core/exitcodes.h"
#include "core/parse.h"
#include "core/cleanup.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/tcp.h"
#include "core/wire.h"

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

/* ---- failure ---- */

/* Before exiting: a socket closed with unread data in it resets the
 * connection, and a reset can make the peer drop what we just sent (our
 * ABORT or FAIL). So say we are done writing, and read (and discard) until
 * the peers close, for at most LINGER_S. */
#define LINGER_S 1.0

static void linger(struct job *c)
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
	double end = clock_now() + LINGER_S;
	char buf[4096];
	while (open > 0 && clock_now() < end) {
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
static void do_fatal(struct job *c, const char *why, int code, bool from_receiver, bool tell_root)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&c->fatal, &expected, 1)) {
		if (from_receiver)
			return;
		for (;;)
			pause(); /* the other thread is exiting the process */
	}
	double dl = clock_now() + 2.0;
	if (c->o.proc == 0) {
		for (int i = 1; i < c->o.nprocs; i++)
			job_send_code(c, i, MSG_ABORT, code, why, dl, 2.0);
	} else if (c->peers && tell_root) {
		/* tell process 0, which tells everyone */
		job_send_code(c, 0, MSG_FAIL, code, why, dl, 2.0);
	}
	/* no stdio here: the main thread may hold stdout's lock, blocked on a
	 * full pipe; what it printed was flushed row by row */
	if (c->o.on_fatal)
		c->o.on_fatal(c->o.fatal_ctx, why, code);
	linger(c);
	file_pending_remove(); /* a file the main thread was writing (core/fileio.h) */
	_exit(code);
}

void job_fatal(struct job *c, const char *why, int code)
{
	do_fatal(c, why, code, false, true);
	_exit(code); /* not reached */
}

/* One line per process that did not finish the phase. Returns how many
 * were silent (the likely culprits), via counts. */
struct tally {
	int absent, late, silent;
};

static void describe_laggard(struct job *c, int i, double now, struct strbuf *out, struct tally *t)
{
	char d[128];
	uint64_t begun = i == 0 ? c->phase_seq : c->peers[i].begun;
	uint64_t done = i == 0 ? (c->in_phase ? c->phase_seq - 1 : c->phase_seq) : c->peers[i].done;
	uint64_t prog = i == 0 ? atomic_load(&c->progress) : c->peers[i].progress;
	double quiet = i == 0 ? 0 : now - c->peers[i].last_seen;

	job_describe(c, i, d, sizeof(d));
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
static char *stall_verdict(struct job *c)
{
	struct strbuf sb = STRBUF_INIT, lines = STRBUF_INIT;
	struct tally t = { 0 };
	double now = clock_now();

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
		job_describe(c, 0, d, sizeof(d));
		strbuf_addf(&sb, "\n  %s reports: %s", d, c->note);
	}
	pthread_mutex_unlock(&c->m);
	return strbuf_detach(&sb);
}

static void peer_lost(struct job *c, int i, const char *how)
{
	char d[128], *why;
	struct peer *p = &c->peers[i];

	if (!(atomic_load(&c->stopping) && p->bye) && !atomic_load(&c->finished)) {
		/* the verdict goes out before the main thread can see the loss
		 * as a mere error of its own */
		job_describe(c, c->o.proc == 0 ? i : 0, d, sizeof(d));
		pthread_mutex_lock(&c->m);
		/* process 0 said BYE: it finished the run without this process
		 * (cluster check reports a rank that is too slow as a row) */
		if (c->o.proc != 0 && p->bye)
			why = xasprintf("%s ended the run while this process was still in '%s': its result went out "
					"without this process", d, c->phase[0] ? c->phase : "startup");
		else
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

/* A DATA frame for the main thread (which takes ownership of payload):
 * queued, unless the peer is too far ahead of the exchanges. */
static void queue_data(struct job *c, int i, unsigned char *payload, size_t len)
{
	struct peer *p = &c->peers[i];
	pthread_mutex_lock(&c->m);
	bool over = p->queued >= JOB_MAX_QUEUED || (c->o.max_frame && p->queued_bytes + len > 2 * c->o.max_frame);
	if (!over) {
		struct frame *f = xcalloc(1, sizeof(*f));
		f->buf = payload;
		f->len = len;
		*p->tail = f;
		p->tail = &f->next;
		p->queued++;
		p->queued_bytes += len;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->m);
	if (over) {
		free(payload);
		peer_lost(c, i, "sent more data than the run asked for");
	}
}

static void dispatch(struct job *c, int i, enum msg type, unsigned char *payload, size_t len)
{
	struct peer *p = &c->peers[i];
	struct wire_r r = WIRE_R(payload, len);
	char d[128];

	switch (type) {
	case MSG_DATA:
		queue_data(c, i, payload, len);
		return; /* payload now owned by the queue */
	case MSG_PHASE:
	case MSG_DONE:
		if (len >= 8 && c->o.proc == 0) {
			uint64_t seq = wire_get_u64(&r);
			pthread_mutex_lock(&c->m);
			if (type == MSG_PHASE) {
				p->begun = seq;
				snprintf(p->phase, sizeof(p->phase), "%.*s", (int)wire_r_left(&r), payload + r.off);
			} else {
				/* a DONE may come without its PHASE (the rendezvous) */
				p->done = seq;
				if (p->begun < p->done)
					p->begun = p->done;
			}
			pthread_mutex_unlock(&c->m);
		}
		break;
	case MSG_ABORT:
	case MSG_FAIL:
		if (len >= 8) {
			uint32_t code = wire_get_u32(&r);
			wire_skip(&r, 4);
			char *text = str_printable(xstrndup((char *)payload + r.off, wire_r_left(&r)), true), *why = text;
			if (type == MSG_FAIL) {
				job_describe(c, i, d, sizeof(d));
				if (strncmp(text, d, strlen(d)))
					why = xasprintf("%s failed: %s", d, text);
			}
			/* a peer can end the run, never with success: only the
			 * failure codes pass (core/exitcodes.h) */
			if (code < EXIT_CHECK_FAILED || code > EXIT_STALLED) {
				char *t = xasprintf("%s (its frame carried exit code %u, which no peer may choose)", why, code);
				if (why != text)
					free(why);
				why = t;
				code = EXIT_TOOL_ERROR;
			}
			do_fatal(c, why, (int)code, true, false);
			if (why != text)
				free(why);
			free(text);
		}
		break;
	case MSG_HEARTBEAT:
		if (len >= 8) {
			uint64_t v = wire_get_u64(&r);
			pthread_mutex_lock(&c->m);
			p->progress = v;
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
static void peer_readable(struct job *c, int i)
{
	struct peer *p = &c->peers[i];
	for (;;) {
		ssize_t n;
		if (p->got < JOB_HDR_LEN) {
			n = recv(p->fd, p->raw_hdr + p->got, JOB_HDR_LEN - p->got, MSG_DONTWAIT);
		} else {
			size_t len = p->hdr.len;
			size_t at = p->got - JOB_HDR_LEN;
			n = len ? recv(p->fd, p->payload + at, len - at, MSG_DONTWAIT) : 0;
			if (!len)
				n = 0;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0 || (n == 0 && (p->got < JOB_HDR_LEN || p->hdr.len > 0))) {
			peer_lost(c, i, n < 0 ? "lost its connection (reset: its process died or its host dropped it)"
					  : "disconnected (its process exited or was killed)");
			return;
		}
		p->got += (size_t)n;
		p->last_seen = clock_now();
		if (p->got == JOB_HDR_LEN) {
			p->hdr = job_hdr_decode(p->raw_hdr);
			uint64_t len = p->hdr.len;
			if (len > (c->o.max_frame ? c->o.max_frame : MAX_FRAME)) {
				peer_lost(c, i, "sent a malformed frame");
				return;
			}
			p->payload = len ? malloc(len) : NULL;
			if (len && !p->payload) {
				peer_lost(c, i, "sent a frame too large for this host's memory");
				return;
			}
		}
		if (p->got >= JOB_HDR_LEN && p->got == JOB_HDR_LEN + p->hdr.len) {
			unsigned char *pl = p->payload;
			size_t len = p->hdr.len;
			p->payload = NULL;
			p->got = 0;
			dispatch(c, i, (enum msg)p->hdr.type, pl, len);
		}
	}
}

/* Process 0 gives its verdict this long after the deadline: by then a
 * frozen rank has missed enough heartbeats to be called silent. */
#define VERDICT_DELAY_S (SILENT_S + HEARTBEAT_S)

static void check_deadline(struct job *c)
{
	pthread_mutex_lock(&c->m);
	double delay = c->o.proc == 0 ? VERDICT_DELAY_S : JOB_GRACE_S;
	bool late = c->in_phase && c->phase_deadline > 0 && clock_now() > c->phase_deadline + delay;
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
		job_describe(c, c->o.proc, d, sizeof(d));
		job_describe(c, 0, d0, sizeof(d0));
		double quiet = clock_now() - c->peers[0].last_seen;
		why = quiet > SILENT_S
			? xasprintf("%s: '%s' passed its deadline and %s has been silent for %.0f s: its process is "
				    "stopped or its host is frozen or unreachable", d, c->phase, d0, quiet)
			: xasprintf("%s: '%s' passed its deadline and %s gave no verdict within %.0f s more", d, c->phase,
				    d0, JOB_GRACE_S);
	}
	/* a run decided to pass still ends with "stalled": its teardown hung */
	do_fatal(c, why, done && done - 1 != 0 ? done - 1 : 3, true, !done);
	free(why);
}

static void on_signal(struct job *c)
{
	struct signalfd_siginfo si;
	if (read(c->sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	int done = atomic_load(&c->finished);
	if (done)
		_exit(done - 1); /* the launcher tears the job down after the result */
	char d[128];
	job_describe(c, c->o.proc, d, sizeof(d));
	pthread_mutex_lock(&c->m);
	char *why = xasprintf("%s stopped by %s during '%s'%s", d, strsignal((int)si.ssi_signo),
			      c->phase[0] ? c->phase : "startup",
			      c->o.nprocs > 1 ? " (a launcher stops every rank when one of them fails: look for "
						"the first rank that reported)" : "");
	pthread_mutex_unlock(&c->m);
	do_fatal(c, why, 128 + (int)si.ssi_signo, true, true);
	free(why);
}

static void heartbeat(struct job *c)
{
	double now = clock_now();
	if (now - c->last_beat < HEARTBEAT_S)
		return;
	c->last_beat = now;
	uint64_t v = (uint64_t)atomic_load(&c->progress);
	for (int i = c->o.proc == 0 ? 1 : 0; i < npeers(c); i++)
		job_send_u64(c, i, MSG_HEARTBEAT, v, NULL, 0, now + 1.0, 0);
}

/* Polls the wake pipe, the signals, the peers and (process 0) the door,
 * where late connections are refused (admit.c): none of them waits on
 * another. */
void *job_receiver(void *arg)
{
	struct job *c = arg;
	int n = npeers(c);
	struct pollfd *pf = xcalloc((size_t)n + 2 + JOB_DOOR_FDS, sizeof(*pf));

	for (;;) {
		size_t k = 0;
		pf[k++] = (struct pollfd){ .fd = c->wake[0], .events = POLLIN };
		pf[k++] = (struct pollfd){ .fd = c->sfd, .events = POLLIN };
		for (int i = 0; i < n; i++)
			pf[k++] = (struct pollfd){ .fd = c->peers[i].fd >= 0 && !c->peers[i].dead ? c->peers[i].fd : -1,
						   .events = POLLIN };
		k += job_door_poll(c, pf + k);
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
		if (r > 0)
			job_door_ready(c, pf + 2 + n);
		heartbeat(c);
		check_deadline(c);
	}
	free(pf);
	return NULL;
}

/* ---- setup ---- */

/* ---- phases ---- */

void job_phase(struct job *c, const char *desc, double deadline)
{
	uint64_t seq;
	pthread_mutex_lock(&c->m);
	seq = ++c->phase_seq;
	c->in_phase = true;
	snprintf(c->phase, sizeof(c->phase), "%s", desc);
	c->phase_start = clock_now();
	c->phase_deadline = deadline;
	atomic_store(&c->progress, 0);
	pthread_mutex_unlock(&c->m);
	if (c->o.proc != 0 && c->thread_started)
		job_send_u64(c, 0, MSG_PHASE, seq, desc, strlen(c->phase), clock_now() + 10.0, -1);
}

void job_progress(struct job *c, uint64_t launches)
{
	atomic_store(&c->progress, launches);
}

void job_phase_done(struct job *c)
{
	uint64_t seq;
	pthread_mutex_lock(&c->m);
	c->in_phase = false;
	seq = c->phase_seq;
	pthread_mutex_unlock(&c->m);
	if (c->o.proc != 0 && c->thread_started)
		job_send_u64(c, 0, MSG_DONE, seq, NULL, 0, clock_now() + 10.0, -1);
}

/* ---- teardown ---- */

void job_finishing(struct job *c, int code, const char *teardown, double deadline)
{
	pthread_mutex_lock(&c->m);
	c->in_phase = deadline > 0;
	snprintf(c->phase, sizeof(c->phase), "%s", teardown ? teardown : "the end of the run");
	c->phase_start = clock_now();
	c->phase_deadline = deadline;
	pthread_mutex_unlock(&c->m);
	atomic_store(&c->finished, code + 1);
}

void job_stalled(struct job *c, const char *why)
{
	pthread_mutex_lock(&c->m);
	snprintf(c->note, sizeof(c->note), "%s", why);
	bool watched = c->thread_started && c->in_phase && c->phase_deadline > 0;
	double until = c->phase_deadline + JOB_GRACE_S + VERDICT_DELAY_S + 5.0;
	pthread_mutex_unlock(&c->m);
	/* the watchdog names the culprit (process 0 sees every rank); this
	 * process only reports itself if the watchdog says nothing */
	while (watched && clock_now() < until)
		usleep(100000);
	do_fatal(c, why, 3, false, true);
	_exit(3);
}

static bool all_bye(struct job *c)
{
	for (int i = c->o.proc == 0 ? 1 : 0; i < npeers(c); i++)
		if (c->peers[i].fd >= 0 && !c->peers[i].bye && !c->peers[i].dead)
			return false;
	return true;
}

void job_close(struct job *c)
{
	if (!c)
		return;
	if (c->thread_started) {
		double dl = clock_now() + 5.0;
		atomic_store(&c->stopping, true);
		for (int i = c->o.proc == 0 ? 1 : 0; i < npeers(c); i++)
			job_send_frame(c, i, MSG_BYE, NULL, 0, NULL, 0, dl);
		pthread_mutex_lock(&c->m);
		while (!all_bye(c) && clock_now() < dl) {
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
	job_door_close(c);
	for (int l = 0; l < c->nlfd; l++)
		close(c->lfds[l]);
	free(c->refusals);
	auth_key_wipe(&c->key);
	int fds[] = { c->sfd, c->wake[0], c->wake[1] };
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	pthread_mutex_destroy(&c->m);
	pthread_cond_destroy(&c->cv);
	free(c->peers);
	free(c->members);
	free(c);
}
