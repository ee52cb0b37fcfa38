/* The audit log of `gpuready fix` (FIX_LOG, fix_int.h): one line per
 * change, appended, never rewritten; `fix --revert` reads it back. */
#include "fix/fix_int.h"

#include "core/cleanup.h"
#include "core/root.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void fix_time(double now, char buf[32])
{
	time_t t = (time_t)now;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A field without tabs and newlines (they separate fields and lines). */
static void field(struct strbuf *sb, const char *s)
{
	if (!s || !*s) {
		strbuf_addch(sb, '-');
		return;
	}
	for (; *s; s++)
		strbuf_addch(sb, *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

int fix_log_append(const struct root *root, const struct fix_log_entry *e)
{
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	const char *f[] = { e->time, e->action, e->checks, e->path, e->kind, e->before, e->after, e->detail };
	for (size_t i = 0; i < 8; i++) {
		if (i)
			strbuf_addch(&line, '\t');
		field(&line, f[i]);
	}
	strbuf_addch(&line, '\n');
	int fd = fix_open_append(root, FIX_LOG, 0640), r;
	if (fd < 0)
		return fd;
	ssize_t w = write(fd, line.buf, line.len);
	r = w == (ssize_t)line.len ? 0 : w < 0 ? -errno : -EIO;
	if (!r && fsync(fd) < 0 && errno != EINVAL)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	return r;
}

void fix_log_free(struct fix_log_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char **f[] = { &v[i].time, &v[i].action, &v[i].checks, &v[i].path, &v[i].kind, &v[i].before, &v[i].after,
			       &v[i].detail };
		for (size_t k = 0; k < 8; k++)
			free(*f[k]);
	}
	free(v);
}

int fix_log_read(const struct root *root, struct fix_log_entry **ret, size_t *ret_n)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	*ret = NULL;
	*ret_n = 0;
	int r = root_read(root, FIX_LOG, 64u << 20, &sb);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	struct fix_log_entry *v = NULL;
	size_t n = 0;
	char *save = NULL;
	for (char *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[8] = { 0 }, *s2 = NULL;
		size_t k = 0;
		for (char *p = strtok_r(line, "\t", &s2); p && k < 8; p = strtok_r(NULL, "\t", &s2))
			f[k++] = p;
		if (k != 8)
			continue; /* not ours, or cut: ignored */
		if (!strcmp(f[1], "revert") && !strcmp(f[4], "done")) {
			fix_log_free(v, n);
			v = NULL;
			n = 0;
			continue;
		}
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n++] = (struct fix_log_entry){ xstrdup(f[0]), xstrdup(f[1]), xstrdup(f[2]), xstrdup(f[3]),
						 xstrdup(f[4]), xstrdup(f[5]), xstrdup(f[6]), xstrdup(f[7]) };
	}
	*ret = v;
	*ret_n = n;
	return 0;
}
