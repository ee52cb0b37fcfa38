/* Subprocesses with a deadline; see spawn.h. */
#define _GNU_SOURCE
#include "spawn.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void drain(int fd, struct strbuf *sb, bool *truncated, bool *open_)
{
	char buf[8192];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n > 0) {
		size_t room = sb->len < SPAWN_MAX_OUTPUT ? SPAWN_MAX_OUTPUT - sb->len : 0;
		if ((size_t)n > room)
			*truncated = true;
		strbuf_add(sb, buf, (size_t)n < room ? (size_t)n : room);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		*open_ = false;
	}
}

static void child(const char *const *argv, const char *const *envp, int out, int err, int report)
{
	setpgid(0, 0);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0)
		dup2(devnull, 0);
	dup2(out, 1);
	dup2(err, 2);
	if (envp)
		execvpe(argv[0], (char *const *)argv, (char *const *)envp);
	else
		execvp(argv[0], (char *const *)argv);
	int e = errno;
	if (write(report, &e, sizeof(e)) < 0) {
		/* nothing more to do */
	}
	_exit(127);
}

/* The child's stdout, stderr and exec-error pipes, all close-on-exec. */
static int open_pipes(int po[2], int pe[2], int pr[2])
{
	if (pipe2(po, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		int e = -errno;
		close(po[0]), close(po[1]);
		return e;
	}
	if (pipe2(pr, O_CLOEXEC) < 0) {
		int e = -errno;
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return e;
	}
	return 0;
}

/* Waits for pid; after a timeout (it was sent SIGKILL) for at most
 * SPAWN_REAP_MS. False when it is still there then. */
static bool reap(pid_t pid, bool killed, int *status)
{
	long long give_up = now_ms() + SPAWN_REAP_MS;
	for (;;) {
		pid_t r = waitpid(pid, status, killed ? WNOHANG : 0);
		if (r == pid)
			return true;
		if (r < 0 && errno != EINTR)
			return true; /* not our child any more: nothing to wait for */
		if (r == 0) {
			if (now_ms() >= give_up)
				return false;
			poll(NULL, 0, 10);
		}
	}
}

int spawn_run(const char *const *argv, const char *const *envp, int timeout_ms, struct spawn_result *res)
{
	int po[2], pe[2], pr[2];
	memset(res, 0, sizeof(*res));
	strbuf_init(&res->out);
	strbuf_init(&res->err);
	int e = open_pipes(po, pe, pr);
	if (e < 0)
		return e;
	pid_t pid = fork();
	if (pid < 0) {
		e = -errno;
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]), close(pr[0]), close(pr[1]);
		return e;
	}
	if (pid == 0)
		child(argv, envp, po[1], pe[1], pr[1]);
	setpgid(pid, pid);
	close(po[1]), close(pe[1]), close(pr[1]);

	int exec_errno = 0;
	ssize_t got = read(pr[0], &exec_errno, sizeof(exec_errno));
	close(pr[0]);
	bool out_open = true, err_open = true;
	long long deadline = now_ms() + timeout_ms, kill_at = 0;
	while (out_open || err_open) {
		long long left = (kill_at ? kill_at : deadline) - now_ms();
		if (left <= 0) {
			if (!kill_at) {
				res->timed_out = true;
				kill(-pid, SIGTERM);
				kill_at = now_ms() + 1000;
				continue;
			}
			kill(-pid, SIGKILL);
			break;
		}
		struct pollfd fds[2] = { { .fd = out_open ? po[0] : -1, .events = POLLIN },
					 { .fd = err_open ? pe[0] : -1, .events = POLLIN } };
		int n = poll(fds, 2, (int)(left > 1000 ? 1000 : left));
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (fds[0].revents)
			drain(po[0], &res->out, &res->truncated, &out_open);
		if (fds[1].revents)
			drain(pe[0], &res->err, &res->truncated, &err_open);
	}
	close(po[0]), close(pe[0]);
	if (res->timed_out)
		kill(-pid, SIGKILL); /* the group: grandchildren that kept the pipes open */
	int status = 0;
	if (!reap(pid, res->timed_out, &status)) {
		/* killed but not gone: stuck in the kernel (a driver call), where
		 * no signal reaches it; waiting would hang the caller */
		res->abandoned = true;
		res->exit_code = -1;
		res->signal = SIGKILL;
		return 0;
	}
	if (got == (ssize_t)sizeof(exec_errno) && exec_errno) {
		spawn_result_free(res);
		return -exec_errno;
	}
	if (WIFEXITED(status)) {
		res->exit_code = WEXITSTATUS(status);
	} else {
		res->exit_code = -1;
		res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	}
	return 0;
}

void spawn_result_free(struct spawn_result *r)
{
	strbuf_release(&r->out);
	strbuf_release(&r->err);
}

char *spawn_find_python(const char *explicit_path)
{
	if (explicit_path)
		return xstrdup(explicit_path);
	const char *venv = getenv("VIRTUAL_ENV");
	if (venv && *venv) {
		char *p = xasprintf("%s/bin/python", venv);
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	if (access("/opt/pytorch-venv/bin/python", X_OK) == 0)
		return xstrdup("/opt/pytorch-venv/bin/python");
	return xstrdup("python3");
}
