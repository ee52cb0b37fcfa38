/* Keeps what a loaded library prints off gpuready's stdout.
 *
 * Some of NVIDIA's libraries write to stdout on their own: the CUDA
 * toolkit's stub libnvidia-ml.so prints a multi-line "WARNING: You should
 * always run with libnvidia-ml.so that is installed with your NVIDIA Display
 * Driver" banner at every nvmlInit_v2, which would corrupt `--json` output.
 * A guard points file descriptor 1 at an anonymous file (memfd_create(2),
 * tmpfile(3) where that is refused) for the duration of such calls and then
 * restores it, handing back the start of what was written, so the caller
 * can recognise it (the stub's banner) and report it as data.
 *
 * Process-wide: while a guard is active, whatever any thread writes to
 * fd 1 (or through stdout) lands in the capture. Use it only while no other
 * thread of the process may write to stdout: gpuready's inventory probes
 * run single-threaded, before any report is written. Threads a library
 * starts itself (libcuda's, in cuInit) are covered for as long as the guard
 * lasts, and not after. Guards nest (an inner one captures and restores the
 * outer capture). Not async-signal-safe. */
#ifndef GPUREADY_STDOUT_GUARD_H
#define GPUREADY_STDOUT_GUARD_H

#include "core/strbuf.h"

#include <stdbool.h>

/* How much of the captured output is handed back: enough for any banner
 * worth recognising; the rest is dropped. */
#define STDOUT_GUARD_KEEP 4096

struct stdout_guard {
	int saved;   /* the real stdout (a CLOEXEC dup of fd 1) while active, else -1 */
	int capture; /* the file fd 1 points at meanwhile, else -1 */
};

#define STDOUT_GUARD_INIT { .saved = -1, .capture = -1 }

/* Flushes stdout, then points fd 1 at a fresh capture file. Returns 0, or
 * -errno with fd 1 and *g left inactive (a caller goes on unguarded: with
 * fd 1 closed, for example, there is nothing to protect). */
int stdout_guard_begin(struct stdout_guard *g);

/* Flushes stdout into the capture, points fd 1 back at the real stdout and
 * appends the first STDOUT_GUARD_KEEP bytes that were written (NUL bytes
 * shown as '?') to said, which may be NULL. The guard is inactive
 * afterwards. Returns 0 (also for a guard that never began), or -errno
 * when fd 1 could not be restored or the capture not read. */
int stdout_guard_end(struct stdout_guard *g, struct strbuf *said);

/* Whether g is between a successful begin and its end. */
bool stdout_guard_active(const struct stdout_guard *g);

#endif
