/* Running a helper program, the only way gpuready starts one.
 *
 * No shell: argv is executed directly (execvp). stdout and stderr are
 * captured (each up to SPAWN_MAX_OUTPUT bytes; more is dropped and
 * flagged), stdin is /dev/null, and the child gets its own process group so
 * that a timeout kills it and everything it started. Never hangs: after
 * timeout_ms the group gets SIGTERM, then SIGKILL 1 s later. */
#ifndef GPUREADY_SPAWN_H
#define GPUREADY_SPAWN_H

#include <stdbool.h>

#include "strbuf.h"

#define SPAWN_MAX_OUTPUT (1u << 20)

struct spawn_result {
	int exit_code;       /* exit status, or -1 if killed by a signal */
	int signal;          /* terminating signal, 0 if it exited */
	bool timed_out;
	bool abandoned;      /* timed out, killed, and still not gone after SPAWN_REAP_MS (stuck in the kernel) */
	bool truncated;      /* output beyond SPAWN_MAX_OUTPUT was dropped */
	struct strbuf out;
	struct strbuf err;
};

/* Returns 0 when the program ran (see result for how it ended), or -errno
 * when it could not be started (-ENOENT: not found). envp NULL keeps the
 * environment. The caller releases result->out/err with spawn_result_free. */
/* After a timeout's SIGKILL, how long the child is waited for before it is
 * abandoned: a process blocked in a driver call cannot die until that call
 * returns, and must not hold the caller. */
#define SPAWN_REAP_MS 2000

int spawn_run(const char *const *argv, const char *const *envp, int timeout_ms, struct spawn_result *result);
void spawn_result_free(struct spawn_result *r);

/* The Python interpreter gpuready asks about a Python environment (PyTorch,
 * a pip NCCL wheel): explicit_path if given, else $VIRTUAL_ENV/bin/python,
 * /opt/pytorch-venv/bin/python (a common location for the PyTorch venv), else "python3" from
 * PATH. Returns a malloc'd string. */
char *spawn_find_python(const char *explicit_path);

#endif
