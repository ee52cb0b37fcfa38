/* Running in-process work that may block forever in a forked child, under
 * a deadline per step.
 *
 * A library call can block without end: a GPU that has fallen off the bus
 * leaves the NVIDIA driver's NVML and CUDA calls waiting on hardware that
 * never answers (NVIDIA's XID documentation, Xid 79; nvml.h's
 * NVML_ERROR_GPU_IS_LOST). No thread can abandon such a call, so the work
 * runs in a child process forked before the library is loaded: the child
 * loads it, makes the calls and sends its result back through a pipe; the
 * parent never maps the library.
 *
 * Before each call that may block, the child names it (isolate_step); the
 * name goes to a page shared with the parent, and the parent's deadline
 * starts again. A step that has not ended within step_timeout_s gets the
 * child SIGKILL, and the result names the step in progress. A child that
 * SIGKILL cannot end at once (a task stuck in the kernel dies only when its
 * system call returns) is given a second and then left behind unreaped, so
 * the parent never waits on it.
 *
 * The result is the child's memory image of what it filled: the same
 * binary on the same machine on both ends, never stored or sent elsewhere.
 * The parent flushes stdio before forking, the child ends with _exit (no
 * atexit handlers, no stdio flush), and it is killed if the parent dies.
 * Call it while no other thread of the process runs (fork copies only the
 * calling thread). */
#ifndef GPUREADY_ISOLATE_H
#define GPUREADY_ISOLATE_H

#include "core/strbuf.h"

#include <stdbool.h>
#include <stddef.h>

/* How long a step's name may be (longer names are cut). */
#define ISOLATE_STEP_MAX 128

/* The child's end: given to the work, NULL where the same work runs in
 * the calling process (isolate_step and isolate_send then do nothing). */
struct isolate_ctx;

/* The work, run in the child: isolate_step before each call that may
 * block, isolate_send with its result. */
typedef void (*isolate_fn)(struct isolate_ctx *ctx, void *arg);

/* In the child: names the call about to be made (printf-style) and starts
 * its deadline again. Async-signal-unsafe, like the work itself. */
void isolate_step(struct isolate_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same for a call whose work grows with its size (waiting for queued
 * copies): this step may last extra_s seconds beyond the run's deadline. */
void isolate_step_longer(struct isolate_ctx *ctx, double extra_s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* In the child: appends n bytes to the result the parent receives.
 * Returns 0, or -errno (-EMSGSIZE past the caller's max_out). */
int isolate_send(struct isolate_ctx *ctx, const void *p, size_t n);

enum isolate_end {
	ISOLATE_DONE,     /* the work returned; out holds what it sent */
	ISOLATE_TIMEOUT,  /* a step overran: killed; step names it */
	ISOLATE_CRASHED,  /* the child died of a signal, or exited non-zero */
	ISOLATE_TOO_BIG,  /* it sent more than max_out: killed */
};

struct isolate_result {
	enum isolate_end end;
	int signal;                  /* CRASHED: the signal, 0 if it exited */
	int exit_code;               /* CRASHED without a signal: its status */
	bool reaped;                 /* false: SIGKILL did not end it within a second */
	char step[ISOLATE_STEP_MAX]; /* the step in progress at the end, "" if none was named */
	double step_timeout_s;       /* the deadline that step had */
	struct strbuf out;           /* what the work sent (complete only when DONE) */
};

/* Runs fn(ctx, arg) in a forked child; each step may last step_timeout_s
 * (> 0) seconds. Returns 0 with *res filled (the caller releases res->out
 * with isolate_result_free), or -errno when the child could not be started
 * (pipe, mmap, fork), with *res empty. */
int isolate_run(isolate_fn fn, void *arg, double step_timeout_s, size_t max_out, struct isolate_result *res);
void isolate_result_free(struct isolate_result *res);

#endif
