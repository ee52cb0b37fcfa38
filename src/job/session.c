/* Bringing up the processes of a run (see session.h).
 *
 * From the first step SIGINT and SIGTERM are blocked in every thread
 * (libraries start threads of their own, MPI at MPI_Init) and reported:
 * during startup by a small watchdog thread, which also bounds the steps
 * no other deadline covers (MPI_Init and the bootstrap broadcast), then by
 * the control plane's watchdog (src/job/watchdog.c). */
#include "session.h"
#include "bench/sync.h"
#include "core/exitcodes.h"
#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

/* The library's teardown (ncclCommDestroy, MPI_Finalize) gets this long. */
#define TEARDOWN_S 60.0
/* ncclCommAbort on the way out gets this long before the process exits
 * anyway. */
#define ABORT_S 5.0

/* "gpuready bench [rank 3 node2]: " or "[ranks 8-15 node2]" with -g. */
static void prefix(const struct session *s, char *buf, size_t len)
{
	char host[64];
	int k = s->local > 0 ? s->local : 1;
	if (s->nprocs <= 1) {
		snprintf(buf, len, "gpuready %s: ", s->cmdname);
		return;
	}
	tcp_hostname(host, sizeof(host));
	if (k == 1)
		snprintf(buf, len, "gpuready %s [rank %d %s]: ", s->cmdname, s->proc, host);
	else
		snprintf(buf, len, "gpuready %s [ranks %d-%d %s]: ", s->cmdname, s->proc * k, s->proc * k + k - 1, host);
}

/* One write(2): safe from any thread, even while another holds stdio. */
static void vreport(const struct session *s, const char *fmt, va_list ap)
{
	char line[4096];
	prefix(s, line, sizeof(line));
	size_t n = strlen(line);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	n = strlen(line);
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}

void session_error(const struct session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(s, fmt, ap);
	va_end(ap);
}

/* ---- aborting the library, bounded ---- */

struct abort_job {
	struct backend *b;
	pthread_mutex_t m;
	pthread_cond_t cv;
	bool done;
};

static void *abort_main(void *arg)
{
	struct abort_job *j = arg;
	j->b->ops->abort(j->b);
	pthread_mutex_lock(&j->m);
	j->done = true;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->m);
	return NULL;
}

/* ncclCommAbort (or the backend's equivalent) from whichever thread is
 * exiting, while the main thread may be stuck inside the library; given up
 * on after ABORT_S. The job leaks on purpose when it hangs: the process is
 * about to exit. */
static void abort_backend(struct backend *b)
{
	if (!b || !b->ops->abort)
		return;
	struct abort_job *j = calloc(1, sizeof(*j));
	pthread_t t;
	if (!j)
		return;
	j->b = b;
	pthread_mutex_init(&j->m, NULL);
	pthread_cond_init(&j->cv, NULL);
	if (pthread_create(&t, NULL, abort_main, j)) {
		free(j);
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)ABORT_S;
	pthread_mutex_lock(&j->m);
	while (!j->done && pthread_cond_timedwait(&j->cv, &j->m, &ts) == 0)
		;
	bool done = j->done;
	pthread_mutex_unlock(&j->m);
	if (done) {
		pthread_join(t, NULL);
		free(j);
	} else {
		pthread_detach(t);
	}
}

/* The job's fatal handler: every process says why it stops and aborts
 * its communicators; process 0 also lets the command write its JSON. */
static void on_fatal(void *ctx, const char *why, int code)
{
	struct session *s = ctx;
	(void)code;
	session_error(s, "stopping: %s", why);
	abort_backend(s->b);
	if (s->proc == 0 && s->on_fatal)
		s->on_fatal(s->fatal_ctx, why);
}

/* Rank 0, while the job runs: a late connection it turned away (a second
 * copy of a rank, a rank of a restarted launcher). One write(2). */
static void on_late(void *ctx, const char *line)
{
	session_error(ctx, "%s", line);
}

void session_fail(struct session *s, const char *msg, int err)
{
	int code = err == -ETIMEDOUT ? EXIT_STALLED : EXIT_TOOL_ERROR;
	if (s->cl && err == -ETIMEDOUT)
		job_stalled(s->cl, msg); /* the watchdog names who stalled */
	if (s->cl)
		job_fatal(s->cl, msg, code);
	session_error(s, "%s", msg);
	abort_backend(s->b);
	if (s->proc == 0 && s->on_fatal)
		s->on_fatal(s->fatal_ctx, msg);
	exit(code);
}

/* ---- the startup watchdog ---- */

struct startup {
	struct session *s;
	int sfd, stop[2];
	double deadline;
	const char *what;
	pthread_t t;
	bool running;
};

static void *startup_main(void *arg)
{
	struct startup *w = arg;
	struct pollfd pf[2] = { { .fd = w->sfd, .events = POLLIN }, { .fd = w->stop[0], .events = POLLIN } };
	for (;;) {
		double left = w->deadline - clock_now();
		int r = poll(pf, 2, left > 0 ? (int)(left * 1000) + 1 : 0);
		if (r > 0 && pf[1].revents)
			return NULL;
		if (r > 0 && pf[0].revents) {
			struct signalfd_siginfo si;
			if (read(w->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				session_error(w->s, "stopped by %s during %s", strsignal((int)si.ssi_signo), w->what);
				_exit(128 + (int)si.ssi_signo);
			}
		}
		if (r == 0 || clock_now() >= w->deadline) {
			session_error(w->s, "%s did not finish within %.0f s", w->what, w->s->plan.connect_timeout);
			_exit(EXIT_STALLED);
		}
	}
}

static void startup_begin(struct startup *w, struct session *s, const char *what, double deadline)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	*w = (struct startup){ .s = s, .deadline = deadline, .what = what, .stop = { -1, -1 } };
	w->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (w->sfd >= 0 && pipe(w->stop) == 0 && pthread_create(&w->t, NULL, startup_main, w) == 0)
		w->running = true;
}

static void startup_end(struct startup *w)
{
	if (w->running) {
		ssize_t n = write(w->stop[1], "x", 1);
		(void)n;
		pthread_join(w->t, NULL);
	}
	for (int i = 0; i < 2; i++)
		if (w->stop[i] >= 0)
			close(w->stop[i]);
	if (w->sfd >= 0)
		close(w->sfd);
	w->running = false;
}

/* ---- backends and bootstrap ---- */

static int create_backend(const char *name, struct backend **ret, char **err)
{
	if (!strcmp(name, "nccl"))
		return backend_nccl_create(ret, err);
	if (!strcmp(name, "mpi"))
		return backend_mpi_create(ret, err);
	if (!strcmp(name, "socket"))
		return backend_socket_create(ret, err);
	*err = xasprintf("unknown backend '%s' (nccl, mpi or socket)", name);
	return -EINVAL;
}

static int oob_bcast(void *ctx, void *buf, size_t len, double deadline)
{
	struct session *s = ctx;
	char *err = NULL;
	int r = job_bcast(s->cl, buf, len, deadline, &err);
	if (r < 0)
		session_error(s, "%s", err);
	free(err);
	return r;
}

static const char *env_get(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

/* MPI: the ranks come from MPI_Init; process 0's control address goes out
 * with MPI_Bcast. Neither can be interrupted: the startup watchdog bounds
 * them. */
/* Rank 0, once the others are here: what it listens on says who may
 * join (no token, an address others reach), and whom it turned away. */
static void listen_notes(struct session *s, const char *addrs, const char *note)
{
	if (s->proc != 0 || s->nprocs < 2)
		return;
	if (note)
		session_error(s, "%s", note);
	bool exposed = !*addrs;
	_cleanup_free_ char *list = xstrdup(addrs);
	char *save = NULL;
	for (char *a = strtok_r(list, ",", &save); a && !exposed; a = strtok_r(NULL, ",", &save))
		exposed = strncmp(a, "127.", 4) && strcmp(a, "::1") && strcmp(a, "localhost");
	if (exposed && !s->key.set)
		session_error(s, "the control port %d on %s is unauthenticated: any process that reaches it may take a "
			      "rank that has not arrived; give every rank the same GPUREADY_JOB_TOKEN (or --token-file)",
			      job_port(s->cl), *addrs ? addrs : "every address");
}

static void refusal_notes(const struct session *s)
{
	const char *r = s->cl && s->proc == 0 ? job_refusals(s->cl) : NULL;
	if (r)
		session_error(s, "the rendezvous turned connections away:\n%s", r);
}

static int open_mpi(struct session *s, double deadline, char **err)
{
	int local_rank = 0, r;
	char addr[1024] = "";
	struct startup w;

	startup_begin(&w, s, "MPI startup (MPI_Init and the bootstrap broadcast)", deadline);
	s->env = (struct backend_env){ .local = 1 };
	r = s->b->ops->init(s->b, &s->env, deadline);
	if (r == 0 && s->b->ops->proc_info)
		r = s->b->ops->proc_info(s->b, &s->proc, &s->nprocs, &local_rank);
	if (r < 0) {
		startup_end(&w);
		*err = xasprintf("MPI: %s", s->b->error);
		return r;
	}
	s->local = 1;
	s->nranks = s->nprocs;
	/* rank 0 listens where it tells the others to connect, unless --bind */
	_cleanup_free_ char *hosts = tcp_local_addresses();
	const char *bind = s->plan.bind && *s->plan.bind ? s->plan.bind : hosts;
	if (!strcmp(bind, "0.0.0.0") || !strcmp(bind, "::") || !strcmp(bind, "*"))
		bind = "";
	struct job_opts o = { .proc = s->proc, .nprocs = s->nprocs, .ranks_per_proc = 1, .local_rank = local_rank,
				  .host = bind, .port = 0, .job = "mpi", .deadline = deadline, .on_fatal = on_fatal,
				  .on_late = on_late, .fatal_ctx = s, .key = &s->key,
				  .max_frame = s->plan.max_frame };
	r = job_create(&o, &s->cl, err);
	if (r == 0 && s->proc == 0)
		snprintf(addr, sizeof(addr), "%d %s", job_port(s->cl), *bind ? bind : hosts);
	/* process 0 sends "" when its listener failed: everyone stops */
	int b = s->b->ops->bcast(s->b, addr, sizeof(addr));
	startup_end(&w);
	if (b < 0 && r == 0) {
		*err = xasprintf("MPI_Bcast of the control address: %s", s->b->error);
		return -EIO;
	}
	if (r < 0)
		return r;
	char *sp = strchr(addr, ' ');
	if (!addr[0] || !sp) {
		*err = xstrdup("rank 0 could not open its control port (see its message)");
		return -EIO;
	}
	*sp = '\0';
	r = job_join(s->cl, sp + 1, atoi(addr), err);
	if (r == 0) {
		s->sync = job_bench_sync(s->cl);
		listen_notes(s, bind, NULL);
		refusal_notes(s);
	}
	return r;
}

/* The first CUDA device of this process's ranks: local rank × GPUs per
 * process, unless the launcher already gave each process only its own GPUs
 * (CUDA_VISIBLE_DEVICES with exactly that many entries, as Slurm's
 * --gpus-per-task does). */
static int first_gpu(int local_rank, int local)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	int entries = 0;
	if (v && *v) {
		entries = 1;
		for (const char *p = v; *p; p++)
			entries += *p == ',';
	}
	return entries == local ? 0 : local_rank * local;
}

/* Every other backend: the launcher's environment, then the backend. */
static int open_launcher(struct session *s, const struct session_plan *plan, int local, double deadline, char **err)
{
	struct launch_cli cli = { .rank = plan->rank, .nranks = plan->nranks, .master = plan->master };
	int r = launch_detect(&cli, env_get, NULL, &s->launch, err);
	if (r < 0)
		return r;
	s->have_launch = true;
	s->proc = s->launch.rank;
	s->nprocs = s->launch.nranks;
	s->local = local;
	s->nranks = s->nprocs * local;
	_cleanup_free_ char *note = NULL, *addrs = NULL;
	if (s->proc == 0 && s->nprocs > 1) {
		addrs = launch_listen_addresses(&s->launch, plan->bind, &note, err);
		if (!addrs)
			return -EADDRNOTAVAIL;
	}
	struct job_opts o = { .proc = s->proc, .nprocs = s->nprocs, .ranks_per_proc = local,
				  .local_rank = s->launch.local_rank, .host = addrs ? addrs : "",
				  .port = s->launch.master_port, .job = s->launch.job, .deadline = deadline,
				  .on_fatal = on_fatal, .on_late = on_late, .fatal_ctx = s, .key = &s->key,
				  .max_frame = s->plan.max_frame };
	r = job_create(&o, &s->cl, err);
	if (r == 0)
		r = job_join(s->cl, s->launch.master_host, s->launch.master_port, err);
	if (r == 0 && addrs) {
		listen_notes(s, addrs, note);
		refusal_notes(s);
	}
	if (r < 0) {
		char *why = *err;
		*err = xasprintf("%s (%s: rank %d of %d, rank 0 at %s:%d, port %s)", why, s->launch.source, s->proc,
				 s->nprocs, s->launch.master_host, s->launch.master_port, s->launch.port_source);
		free(why);
		return r;
	}
	s->sync = job_bench_sync(s->cl);
	s->env = (struct backend_env){
		.nranks = s->nranks, .proc_rank = s->proc, .nprocs = s->nprocs, .local = local,
		.first_gpu = first_gpu(s->launch.local_rank, local), .blocking = plan->blocking,
		.graph = plan->graph, .memory = plan->memory, .reg = plan->reg, .nccl_lib = plan->nccl_lib, .oob_bcast = oob_bcast, .oob_ctx = s, .sync = &s->sync,
	};
	/* communicator setup gets a deadline of its own: ranks that arrived
	 * late at the rendezvous must not have used it up */
	double setup = clock_now() + plan->connect_timeout;
	job_phase(s->cl, "communicator setup", setup);
	r = s->b->ops->init(s->b, &s->env, setup);
	if (r < 0) {
		*err = xstrdup(s->b->error[0] ? s->b->error : strerror(-r));
		return r;
	}
	job_phase_done(s->cl);
	return 0;
}

/* Frees what a failed start left behind. */
static void abandon(struct session *s)
{
	if (s->b)
		s->b->ops->fini(s->b);
	job_close(s->cl);
	if (s->have_launch)
		launch_free(&s->launch);
	s->b = NULL;
	s->cl = NULL;
	s->have_launch = false;
	auth_key_wipe(&s->key);
	if (s->sigs_blocked)
		pthread_sigmask(SIG_SETMASK, &s->oldmask, NULL);
	s->sigs_blocked = false;
}

int session_open(struct session *s, const struct session_plan *plan, const char *cmdname, const char *backend, int local,
		 void (*fatal)(void *ctx, const char *why), void *fatal_ctx)
{
	_cleanup_free_ char *err = NULL;
	double deadline = clock_now() + plan->connect_timeout;
	sigset_t sigs;
	int r;

	memset(s, 0, sizeof(*s));
	s->cmdname = cmdname;
	s->plan = *plan;
	s->nprocs = 1;
	s->on_fatal = fatal;
	s->fatal_ctx = fatal_ctx;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	s->sigs_blocked = pthread_sigmask(SIG_BLOCK, &sigs, &s->oldmask) == 0;
	r = auth_key_load(plan->token_file, &s->key, &err);
	if (r < 0) {
		/* err says why */
	} else if ((r = create_backend(backend, &s->b, &err)) < 0) {
		char *msg = xasprintf("the %s backend is not available: %s", backend, err);
		free(err);
		err = msg;
	} else if (!strcmp(backend, "mpi")) {
		if (local != 1) {
			err = xasprintf("-g %d: the MPI backend runs one rank per process", local);
			r = -EINVAL;
		} else {
			r = open_mpi(s, deadline, &err);
		}
	} else {
		r = open_launcher(s, plan, local, deadline, &err);
	}
	if (r < 0) {
		/* ranks that did meet learn of it through the control plane */
		if (s->cl && s->nprocs > 1 && job_members(s->cl)[0].pid)
			session_fail(s, err, r);
		session_error(s, "%s", err);
		if (s->proc == 0 && s->on_fatal)
			s->on_fatal(s->fatal_ctx, err);
		abandon(s);
		return r == -ETIMEDOUT ? EXIT_STALLED : EXIT_TOOL_ERROR;
	}
	return 0;
}

int session_close(struct session *s, int code)
{
	int32_t c = code;
	_cleanup_free_ char *err = NULL;
	int r;
	double wait = s->plan.verdict_wait > 0 ? s->plan.verdict_wait : 30.0;
	if (s->cl && s->nprocs > 1 && (r = job_bcast(s->cl, &c, sizeof(c), clock_now() + wait, &err)) < 0)
		session_fail(s, err, r);
	if (s->cl)
		job_finishing(s->cl, c, s->b ? "the backend's teardown (ncclCommDestroy, MPI_Finalize)" : NULL,
				  s->b ? clock_now() + TEARDOWN_S : 0);
	if (s->b)
		s->b->ops->fini(s->b);
	s->b = NULL;
	abandon(s);
	memset(s, 0, sizeof(*s));
	return c;
}
