/* Starting the ranks of a multi-process command (bench, nccl): who this
 * process is (launcher or MPI), the control plane, and the backend, each
 * step under a deadline. Shared by src/cmd/bench.c and src/cmd/nccl.c.
 *
 * Order: the MPI backend starts first (MPI_Init tells the ranks) and
 * announces process 0's control address through MPI_Bcast; every other
 * backend reads the launcher's environment, meets at the master address,
 * and then starts (NCCL's unique id travels over the control plane).
 *
 * Errors are printed here, prefixed with the rank when there are several,
 * so every caller reports them the same way. */
#ifndef GPUREADY_SESSION_H
#define GPUREADY_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench/backend.h"
#include "core/auth.h"
#include "bench/sync.h"
#include "job/job.h"
#include "job/launch.h"

/* What a command tells the session (from its options): who this process
 * is, if the launcher does not say, and the backend's settings. */
struct session_plan {
	int rank, nranks;            /* -1 / 0: from the launcher */
	const char *master;          /* rank 0's host, if the launcher does not say */
	const char *bind;            /* --bind: where rank 0 listens (NULL: the master address) */
	const char *token_file;      /* --token-file (NULL: $GPUREADY_JOB_TOKEN, if set) */
	double connect_timeout;      /* seconds for the rendezvous and setup */
	bool blocking;               /* -z */
	int graph;                   /* -G */
	bool memory;                 /* -M */
	int reg;                     /* -R */
	const char *nccl_lib;        /* --nccl-lib */
	uint64_t max_frame;          /* the control plane's largest frame (job_opts; 0: its default) */
	double verdict_wait;         /* session_close: seconds the others wait for process 0's exit code
				      * (0: 30; more where process 0 waits for them first) */
};

struct session {
	const char *cmdname;         /* "bench", "nccl" for messages */
	struct session_plan plan;
	bool sigs_blocked;
	sigset_t oldmask;
	struct backend *b;
	struct backend_env env;
	struct job *cl;
	struct bench_sync sync;      /* cl for the benchmarks (job_bench_sync) */
	struct launch launch;
	bool have_launch;
	struct auth_key key;         /* the job token's (plan.token_file or $GPUREADY_JOB_TOKEN), if any */
	int proc, nprocs, local, nranks;
	/* what the fatal handler adds: called on process 0 before exiting
	 * (writes the JSON with the error), from any thread; may be NULL */
	void (*on_fatal)(void *ctx, const char *why);
	void *fatal_ctx;
};

/* Creates the backend `name` with `local` ranks per process and brings up
 * every process. fatal (may be NULL) is called on process 0 whenever the
 * run ends early, from here on, with the reason. Returns 0, or
 * EXIT_TOOL_ERROR / EXIT_STALLED after printing why. */
int session_open(struct session *s, const struct session_plan *plan, const char *cmdname, const char *backend,
		 int local, void (*fatal)(void *ctx, const char *why), void *fatal_ctx);
/* Ends the run: every process returns `code` as process 0 decided (it is
 * broadcast), backend and control plane are closed. */
int session_close(struct session *s, int code);

/* Prints "gpuready CMD: msg" (with "[rank R host]" when several
 * processes) on stderr. */
void session_error(const struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Ends the whole job from the main thread after an error: exit code 2, or
 * EXIT_STALLED when err is -ETIMEDOUT (a deadline passed). */
__attribute__((noreturn)) void session_fail(struct session *s, const char *msg, int err);

#endif
