/* The control plane of a multi-process run: rendezvous, small collective
 * exchanges, phase tracking and the watchdog that names stalled ranks.
 *
 * Process 0 listens; every other process connects to it (a star), says who
 * it is (HELLO: process rank, count, host, pid, job), and gets the roster
 * back (WELCOME). Process 0 keeps listening until job_close and refuses
 * every later HELLO, naming who holds the rank (job_opts.on_late says so
 * on its side). The connections stay open for the whole run:
 *   - the main thread exchanges data over them (bcast, gather, barrier,
 *     allreduce of a few doubles; the socket backend moves whole buffers);
 *   - one receiver thread per process reads every frame, queues DATA for
 *     the main thread and handles the rest itself: PHASE/DONE progress
 *     reports (process 0 keeps them per process), ABORT, BYE.
 *
 * Phases: the main thread marks each step that involves other processes
 * (rendezvous, communicator init, each timed loop) with job_phase()
 * and job_phase_done(), with a deadline. When a deadline passes, a
 * peer's connection drops, or SIGTERM/SIGINT arrives, the receiver thread
 * of process 0 decides who is to blame — processes that never began the
 * phase ("did not arrive"), that began it and did not finish it, or that
 * disconnected — and sends ABORT with that text to everyone. The fatal
 * handler (job_opts.on_fatal) then prints it, and the process exits:
 * the main thread may be stuck inside NCCL or MPI and is never waited
 * for. Other processes exit on ABORT, on losing process 0, or on their own
 * deadline plus a grace period if process 0 says nothing.
 *
 * Thread safety: the job_* data calls are for the main thread only. */
#ifndef GPUREADY_JOB_H
#define GPUREADY_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long a process other than 0 waits past its own deadline for process
 * 0's verdict before giving its own (process 0 sees more). */
#define JOB_GRACE_S 10.0

struct job;

struct job_member {
	int proc;
	int pid;
	int local_rank;
	char host[64];
	/* process 0 only: the numeric address its control connection came
	 * from, as the kernel saw it ("" for process 0 itself and elsewhere):
	 * what a process announces of itself is checked against it */
	char addr[64];
};

/* Called once, from whichever thread detects the failure first, with the
 * whole explanation (several lines, no trailing newline) and the exit code
 * to use. It must not return to the caller's work: it prints, writes what
 * it must, and calls _exit (job_fatal does that after it returns). */
typedef void (*job_fatal_fn)(void *ctx, const char *why, int code);
/* Process 0, once the job formed: called from the receiver thread for each
 * late connection it refused or dropped after its HELLO (one line, no
 * newline, peer text already made printable), e.g. "refused a late
 * connection from 10.0.0.7:40112 (node3, pid 881): rank 3 is already held
 * by host node2 pid 1234 (the job formed 12 s ago)". It must not block:
 * one write(2), no stdio (the main thread may hold stdout's lock). */
typedef void (*job_note_fn)(void *ctx, const char *line);

/* Process 0 listens on at most this many addresses. */
#define JOB_MAX_LISTEN 8

struct auth_key;

struct job_opts {
	int proc, nprocs;
	int ranks_per_proc;     /* for messages: process p holds ranks p*k .. p*k+k-1 */
	int local_rank;
	const char *host;       /* process 0: addresses to listen on, comma-separated ("" = every address) */
	int port;               /* process 0: port to bind; 0 = any free port (announced through MPI) */
	const char *job;        /* must match on every process */
	double deadline;        /* for the rendezvous (absolute, clock_now()) */
	const struct auth_key *key; /* the job token's key (core/auth.h), or NULL: copied */
	job_fatal_fn on_fatal;
	job_note_fn on_late;    /* may be NULL */
	uint64_t max_frame;     /* a frame longer than this is a protocol error (0: 16 GiB, the socket
				 * backend's largest gather) */
	void *fatal_ctx;        /* for on_fatal and on_late */
};

/* Process 0 binds its listening socket; others do nothing yet. Returns 0
 * or -errno with *err. */
int job_create(const struct job_opts *o, struct job **ret, char **err);
/* Process 0's listening port (after job_create). */
int job_port(const struct job *c);
/* Process 0, after job_join: the connections it refused or dropped while
 * the others arrived (one per line, each starting "  "), or NULL. Those
 * that come later go to job_opts.on_late as they come. */
const char *job_refusals(const struct job *c);
/* Rendezvous: process 0 waits for every other process; the others connect
 * to `hosts` (a comma-separated list tried in order) at `port`.
 * Starts the receiver thread. On failure *err says which processes did
 * not arrive, or why this one could not connect. */
int job_join(struct job *c, const char *hosts, int port, char **err);

const struct job_member *job_members(const struct job *c); /* nprocs entries */
int job_nprocs(const struct job *c);
int job_proc(const struct job *c);

/* Phases (main thread). desc is copied. deadline absolute. */
void job_phase(struct job *c, const char *desc, double deadline);
void job_phase_done(struct job *c);
/* How many launches the main thread finished in this phase (reported in
 * heartbeats, so a stall verdict can tell a lagging rank). Cheap: one
 * atomic store. */
void job_progress(struct job *c, uint64_t launches);

/* Data exchanges among all processes, by the deadline. Each returns 0 or
 * -errno with *err (a peer lost, a timeout). */
int job_bcast(struct job *c, void *buf, size_t len, double deadline, char **err);
/* all (process 0 only, nprocs * len bytes) receives every process's mine. */
int job_gather(struct job *c, const void *mine, size_t len, void *all, double deadline, char **err);
/* Process 0 sends part p of all (nprocs * len) to process p. */
int job_scatter(struct job *c, const void *all, void *mine, size_t len, double deadline, char **err);
/* Variable-sized gather into process 0, which waits for each process until
 * the deadline and goes on without those that sent nothing by then:
 * parts[p] (process 0 only, nprocs entries) gets process p's bytes
 * (malloc'd, the caller frees; part 0 is a copy of mine) and their length,
 * or buf NULL and err saying why not (malloc'd, about the part: "it
 * sent a broadcast where ...", "disconnected", "sent nothing by the
 * deadline"). Returns 0, or -errno with *err when this process could not
 * send its part. A part is at most the job's max_frame. */
struct job_part {
	char *buf;
	size_t len;
	char *err;
	bool timed_out;  /* err: nothing came by the deadline */
};
int job_gatherv(struct job *c, const void *mine, size_t len, struct job_part *parts, double deadline, char **err);
int job_allgather(struct job *c, const void *mine, size_t len, void *all, double deadline, char **err);
int job_barrier(struct job *c, double deadline, char **err);
enum job_op { JOB_SUM, JOB_MIN, JOB_MAX };
int job_allreduce_f64(struct job *c, double *v, size_t n, enum job_op op, double deadline, char **err);

/* Ends the run everywhere with this explanation (from the main thread,
 * after an error it cannot recover from). Does not return. */
__attribute__((noreturn)) void job_fatal(struct job *c, const char *why, int code);

/* The run's outcome is decided and every process knows it: from now on a
 * lost peer is no failure, and SIGINT/SIGTERM (a launcher tearing the job
 * down because another rank already exited with `code`) end this process
 * quietly with `code`. The library's teardown (`teardown`, e.g.
 * "ncclCommDestroy") must finish by the deadline (0: none), or the
 * watchdog says so and exits 3. */
void job_finishing(struct job *c, int code, const char *teardown, double deadline);

/* A step of the main thread timed out (why): lets the watchdog name the
 * culprit — process 0's verdict reaches every process — and falls back to
 * reporting this process's own view if none comes. Does not return. */
__attribute__((noreturn)) void job_stalled(struct job *c, const char *why);

/* Orderly end: says BYE, waits (briefly) for the others, stops the
 * receiver thread, frees. NULL is fine. */
void job_close(struct job *c);

/* "rank 3 (node2, pid 1234)" or "ranks 4-7 (node2, pid 1234)". */
void job_describe(const struct job *c, int proc, char *buf, size_t len);

/* The job as the benchmarks' bench_sync (bench/sync.h, bench_sync.c),
 * valid while j is open. */
struct bench_sync;
struct bench_sync job_bench_sync(struct job *j);

#endif
