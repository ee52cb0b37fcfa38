/* Work in a forked child with a deadline per step; see isolate.h. */
#define _GNU_SOURCE
#include "isolate.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* How often the parent looks at the step counter, and how long it gives a
 * killed child to be reaped before leaving it behind. */
#define ISOLATE_TICK_MS 20
#define ISOLATE_REAP_GRACE_S 1.0

/* The page the child and the parent share: the step in progress, and a
 * counter the child bumps after naming each step. */
struct isolate_shared {
	atomic_uint seq;
	atomic_uint extra_ms;   /* the step's time beyond the run's deadline */
	char step[ISOLATE_STEP_MAX];
};

struct isolate_ctx {
	struct isolate_shared *sh;
	int fd;         /* the pipe's write end */
	size_t sent, max;
	bool failed;    /* a send failed: the child exits non-zero */
};

static void step_v(struct isolate_ctx *ctx, double extra_s, const char *fmt, va_list ap)
{
	double ms = extra_s > 0 ? extra_s * 1e3 : 0;
	atomic_store_explicit(&ctx->sh->extra_ms, ms < 4e9 ? (unsigned)ms : 4000000000u, memory_order_relaxed);
	vsnprintf(ctx->sh->step, sizeof(ctx->sh->step), fmt, ap);
	atomic_fetch_add_explicit(&ctx->sh->seq, 1, memory_order_release);
}

void isolate_step(struct isolate_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (!ctx)
		return;
	va_start(ap, fmt);
	step_v(ctx, 0, fmt, ap);
	va_end(ap);
}

void isolate_step_longer(struct isolate_ctx *ctx, double extra_s, const char *fmt, ...)
{
	va_list ap;

	if (!ctx)
		return;
	va_start(ap, fmt);
	step_v(ctx, extra_s, fmt, ap);
	va_end(ap);
}

int isolate_send(struct isolate_ctx *ctx, const void *p, size_t n)
{
	const char *at = p;

	if (!ctx)
		return 0;
	if (n > ctx->max - ctx->sent) {
		ctx->failed = true;
		return -EMSGSIZE;
	}
	while (n > 0) {
		ssize_t w = write(ctx->fd, at, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ctx->failed = true;
			return w < 0 ? -errno : -EIO;
		}
		at += w;
		n -= (size_t)w;
		ctx->sent += (size_t)w;
	}
	return 0;
}

static _Noreturn void child_main(isolate_fn fn, void *arg, struct isolate_shared *sh, int fd, size_t max,
				 pid_t parent)
{
	struct isolate_ctx ctx = { .sh = sh, .fd = fd, .max = max };

	/* killed with the parent; a parent already gone is no one to answer */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(125);
	fn(&ctx, arg);
	close(fd);
	_exit(ctx.failed ? 3 : 0);
}

/* Waits up to ISOLATE_REAP_GRACE_S for pid; true once reaped. */
static bool reap_within_grace(pid_t pid, int *status)
{
	double until = clock_now() + ISOLATE_REAP_GRACE_S;

	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			return w == pid;
		if (clock_now() >= until)
			return false;
		(void)poll(NULL, 0, ISOLATE_TICK_MS);
	}
}

/* Reads what is there; false at end of file or on an error. */
static bool read_some(int fd, struct strbuf *out)
{
	char buf[16384];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n > 0)
		strbuf_add(out, buf, (size_t)n);
	return n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN));
}

/* The parent's side: reads the pipe until it closes and the child is
 * reaped, restarting the deadline whenever the step counter moves. */
static void parent_wait(pid_t pid, int fd, const struct isolate_shared *sh, double timeout, size_t max,
			struct isolate_result *res)
{
	unsigned seen = atomic_load_explicit(&sh->seq, memory_order_acquire);
	double started = clock_now(), limit = timeout;
	bool open_ = true, reaped = false;
	int status = 0;

	res->end = ISOLATE_DONE;
	while (open_ || !reaped) {
		struct pollfd p = { .fd = open_ ? fd : -1, .events = POLLIN };
		if (poll(&p, 1, ISOLATE_TICK_MS) > 0 && p.revents)
			open_ = read_some(fd, &res->out);
		if (!reaped) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			reaped = w == pid || (w < 0 && errno == ECHILD);
		}
		if (res->out.len > max) {
			res->end = ISOLATE_TOO_BIG;
			break;
		}
		unsigned now_seq = atomic_load_explicit(&sh->seq, memory_order_acquire);
		if (now_seq != seen) {
			seen = now_seq;
			started = clock_now();
			/* the step's name and its extra time are written before seq */
			limit = timeout + atomic_load_explicit(&sh->extra_ms, memory_order_relaxed) / 1e3;
		} else if (clock_now() - started > limit) {
			res->end = ISOLATE_TIMEOUT;
			break;
		}
	}
	if (!reaped) {
		kill(pid, SIGKILL);
		reaped = reap_within_grace(pid, &status);
	}
	res->reaped = reaped;
	res->step_timeout_s = limit;
	/* the child is dead or stuck in the kernel: the page no longer moves */
	memcpy(res->step, sh->step, sizeof(res->step));
	res->step[sizeof(res->step) - 1] = '\0';
	if (res->end != ISOLATE_DONE || !reaped)
		return;
	if (WIFSIGNALED(status)) {
		res->end = ISOLATE_CRASHED;
		res->signal = WTERMSIG(status);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		res->end = ISOLATE_CRASHED;
		res->exit_code = WEXITSTATUS(status);
	}
}

int isolate_run(isolate_fn fn, void *arg, double step_timeout_s, size_t max_out, struct isolate_result *res)
{
	int fds[2];
	pid_t parent = getpid();

	*res = (struct isolate_result){ .end = ISOLATE_DONE };
	strbuf_init(&res->out);
	struct isolate_shared *sh =
		mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	atomic_init(&sh->seq, 0);
	atomic_init(&sh->extra_ms, 0);
	sh->step[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) < 0) {
		int e = -errno;
		munmap(sh, sizeof(*sh));
		return e;
	}
	/* what stdio holds now must not be written twice, by both processes */
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(fds[0]);
		close(fds[1]);
		munmap(sh, sizeof(*sh));
		return e;
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(fn, arg, sh, fds[1], max_out, parent);
	}
	close(fds[1]);
	parent_wait(pid, fds[0], sh, step_timeout_s, max_out, res);
	close(fds[0]);
	munmap(sh, sizeof(*sh));
	return 0;
}

void isolate_result_free(struct isolate_result *res)
{
	if (res)
		strbuf_release(&res->out);
}
