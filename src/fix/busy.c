/* Is GPU or RDMA work running? Processes whose open files (/proc/PID/fd
 * links, read through the root) name /dev/nvidia* or /dev/infiniband/...:
 * a disruptive remedy (an MTU change, a module unload, ACS) would break
 * them, so it stays planned (fix.h). Processes that cannot be read (another
 * user's, without root) are not seen: `fix --apply` says it runs as root. */
#include "fix/fix.h"

#include "core/cleanup.h"
#include "core/root.h"

#include <stdlib.h>
#include <string.h>

#define BUSY_MAX_NAMED 3

static bool device_of_work(const char *target)
{
	return !strncmp(target, "/dev/nvidia", 11) || !strncmp(target, "/dev/infiniband/", 16);
}

/* The device one of pid's fds holds, malloc'd, or NULL. */
static char *holds(const struct root *root, const char *pid)
{
	_cleanup_free_ char *dir = xasprintf("/proc/%s/fd", pid);
	_cleanup_strv_ struct strv fds = { 0 };
	if (root_list(root, dir, &fds) < 0)
		return NULL;
	for (size_t i = 0; i < fds.n; i++) {
		_cleanup_free_ char *link = xasprintf("%s/%s", dir, fds.v[i]);
		_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;
		if (root_readlink(root, link, &t) == 0 && device_of_work(t.buf))
			return strbuf_detach(&t);
	}
	return NULL;
}

char *fix_busy(const struct root *root)
{
	_cleanup_strv_ struct strv procs = { 0 };
	if (root_list(root, "/proc", &procs) < 0)
		return NULL;
	struct strbuf out = STRBUF_INIT;
	size_t n = 0;
	for (size_t i = 0; i < procs.n; i++) {
		const char *pid = procs.v[i];
		if (strspn(pid, "0123456789") != strlen(pid))
			continue;
		_cleanup_free_ char *dev = holds(root, pid);
		if (!dev)
			continue;
		if (n++ < BUSY_MAX_NAMED) {
			_cleanup_free_ char *commf = xasprintf("/proc/%s/comm", pid);
			_cleanup_strbuf_ struct strbuf comm = STRBUF_INIT;
			if (root_read(root, commf, 256, &comm) < 0)
				strbuf_adds(&comm, "?");
			strbuf_rtrim(&comm);
			strbuf_addf(&out, "%spid %s (%s) holds %s", out.len ? ", " : "", pid, comm.buf, dev);
		}
	}
	if (n > BUSY_MAX_NAMED)
		strbuf_addf(&out, " and %zu more", n - BUSY_MAX_NAMED);
	if (!n) {
		strbuf_release(&out);
		return NULL;
	}
	return strbuf_detach(&out);
}
