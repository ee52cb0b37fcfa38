/* Redirecting fd 1 around library calls; see stdout_guard.h. */
#define _GNU_SOURCE
#include "stdout_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* An anonymous file for the capture, close-on-exec: a memfd, or where the
 * kernel or a seccomp filter refuses that, an unlinked tmpfile(3). */
static int capture_open(void)
{
	int fd = memfd_create("gpuready-stdout", MFD_CLOEXEC);
	if (fd >= 0)
		return fd;
	FILE *f = tmpfile();
	if (!f)
		return -errno;
	fd = fcntl(fileno(f), F_DUPFD_CLOEXEC, 3);
	int e = errno;
	fclose(f);
	return fd >= 0 ? fd : -e;
}

static int dup2_retry(int from, int to)
{
	int r;
	do
		r = dup2(from, to);
	while (r < 0 && (errno == EINTR || errno == EBUSY));
	return r < 0 ? -errno : 0;
}

bool stdout_guard_active(const struct stdout_guard *g)
{
	return g->saved >= 0;
}

int stdout_guard_begin(struct stdout_guard *g)
{
	*g = (struct stdout_guard)STDOUT_GUARD_INIT;
	/* what gpuready already wrote goes to the real stdout first */
	if (fflush(stdout) != 0)
		return -errno;
	int saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (saved < 0)
		return -errno;
	int cap = capture_open();
	if (cap < 0) {
		close(saved);
		return cap;
	}
	int r = dup2_retry(cap, STDOUT_FILENO);
	if (r < 0) {
		close(cap);
		close(saved);
		return r;
	}
	g->saved = saved;
	g->capture = cap;
	return 0;
}

/* Up to STDOUT_GUARD_KEEP bytes from the start of the capture into said. */
static int capture_read(int fd, struct strbuf *said)
{
	char buf[STDOUT_GUARD_KEEP];
	size_t n = 0;

	while (n < sizeof(buf)) {
		ssize_t k = pread(fd, buf + n, sizeof(buf) - n, (off_t)n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		n += (size_t)k;
	}
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = '?';
	strbuf_add(said, buf, n);
	return 0;
}

int stdout_guard_end(struct stdout_guard *g, struct strbuf *said)
{
	if (!stdout_guard_active(g))
		return 0;
	/* a library's buffered printf output belongs to the capture; a failure
	 * to write it there is the capture's, not the real stdout's */
	if (fflush(stdout) != 0)
		clearerr(stdout);
	int ret = dup2_retry(g->saved, STDOUT_FILENO);
	if (ret == 0 && said)
		ret = capture_read(g->capture, said);
	close(g->saved);
	close(g->capture);
	*g = (struct stdout_guard)STDOUT_GUARD_INIT;
	return ret;
}
