/* slurmd.service's unit file and LimitMEMLOCK= (slurmd.h). */
#include "slurmd.h"

#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* systemd's system unit directories, highest priority first (systemd.unit(5)). */
static const char *const unit_dirs[] = {
	"/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
	"/lib/systemd/system", "/usr/lib/systemd/system",
};

struct scan {
	struct slurmd_info *s;
	const char *path;
	struct strbuf kept;
};

static int on_line(void *ud, char *line, unsigned lineno)
{
	struct scan *k = ud;
	char *t = str_trim(line);
	if (!str_startswith(t, "LimitMEMLOCK=")) {
		strbuf_addch(&k->kept, '\n');
		return 0;
	}
	strbuf_addf(&k->kept, "%s\n", t);
	char *v = str_trim(t + strlen("LimitMEMLOCK="));
	free(k->s->memlock);
	free(k->s->memlock_source);
	k->s->memlock = *v ? xstrdup(v) : NULL;
	k->s->memlock_source = *v ? xasprintf("%s:%u", k->path, lineno) : NULL;
	return 0;
}

/* Reads one file's LimitMEMLOCK= lines; 0, or -errno (-ENOENT: absent). */
static int scan_file(const struct root *r, struct slurmd_info *s, const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int err = root_read_unrecorded(r, path, 1u << 20, &sb);
	if (err < 0) {
		if (err != -ENOENT && !s->unreadable)
			s->unreadable = xasprintf("%s (%s)", path, read_strerror(err));
		return err;
	}
	struct scan k = { .s = s, .path = path, .kept = STRBUF_INIT };
	str_foreach_line(sb.buf, sb.len, on_line, &k);
	root_record_kept(r, path, k.kept.buf, k.kept.len);
	strbuf_release(&k.kept);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const char *x = strrchr(*(char *const *)a, '/'), *y = strrchr(*(char *const *)b, '/');
	return strcmp(x, y);
}

/* The drop-ins of the unit in the order systemd applies them. */
static void drop_ins(const struct root *r, struct strv *out)
{
	_cleanup_strv_ struct strv seen = STRV_INIT;
	for (size_t d = 0; d < ARRAY_SIZE(unit_dirs); d++) {
		_cleanup_strv_ struct strv names = STRV_INIT;
		_cleanup_free_ char *dir = xasprintf("%s/%s.d", unit_dirs[d], SLURMD_UNIT);
		if (root_list(r, dir, &names) < 0)
			continue;
		for (size_t i = 0; i < names.n; i++) {
			if (!str_endswith(names.v[i], ".conf") || strv_contains(&seen, names.v[i]))
				continue;
			strv_add(&seen, names.v[i]);
			strv_push(out, xasprintf("%s/%s", dir, names.v[i]));
		}
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), by_name);
}

struct slurmd_info *slurmd_load(const struct root *r)
{
	struct slurmd_info *s = xcalloc(1, sizeof(*s));
	/* the unit file that wins (as systemd_unit_find(), but read rather
	 * than probed, so that a snapshot keeps its LimitMEMLOCK= lines) */
	for (size_t d = 0; d < ARRAY_SIZE(unit_dirs) && !s->unit; d++) {
		char *path = xasprintf("%s/%s", unit_dirs[d], SLURMD_UNIT);
		if (scan_file(r, s, path) == -ENOENT)
			free(path);
		else
			s->unit = path;
	}
	if (!s->unit)
		return s;
	s->enabled = systemd_unit_enabled(r, SLURMD_UNIT);
	_cleanup_strv_ struct strv d = STRV_INIT;
	drop_ins(r, &d);
	for (size_t i = 0; i < d.n; i++)
		scan_file(r, s, d.v[i]);
	return s;
}

void slurmd_free(struct slurmd_info *s)
{
	if (!s)
		return;
	free(s->unit);
	free(s->memlock);
	free(s->memlock_source);
	free(s->unreadable);
	free(s);
}

bool slurmd_memlock_unlimited(const char *value)
{
	if (!value)
		return false;
	const char *colon = strchr(value, ':');
	if (!colon)
		return !strcmp(value, "infinity");
	return !strncmp(value, "infinity:", 9) && !strcmp(colon + 1, "infinity");
}
