/* What sets the rdma_cm ToS again after a reboot.
 *
 * configfs values (Linux Documentation/ABI/testing/configfs-rdma_cm) vanish at reboot, so something must write
 * them at boot: a systemd unit (directly, or through the script its Exec*=
 * lines run), a udev rule (or the program its RUN+= names), or rc.local.
 * We look for text that writes `default_roce_tos` or calls MLNX_OFED's
 * `cma_roce_tos`. A unit counts as enabled when a `*.wants/` or
 * `*.requires/` directory under /etc/systemd/system links to it, which is
 * what `systemctl enable` creates.
 *
 * The files read here may hold secrets (a unit's Environment=, a script's
 * tokens), so a snapshot keeps only what this scan reads of them: the lines
 * that mention the ToS, the program each Exec*= line runs (units) and each
 * RUN program (udev rules); everything else is dropped, newlines stay. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <string.h>

static const char *const unit_dirs[] = {
	"/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
	"/lib/systemd/system", "/usr/lib/systemd/system",
};
static const char *const udev_dirs[] = { "/etc/udev/rules.d", "/lib/udev/rules.d", "/usr/lib/udev/rules.d" };

static bool line_mentions_tos(const char *s)
{
	return strstr(s, "default_roce_tos") || strstr(s, "cma_roce_tos");
}

static bool mentions_tos(const struct strbuf *sb)
{
	return !memchr(sb->buf, '\0', sb->len) && line_mentions_tos(sb->buf);
}

/* The program an Exec*= line of a unit runs: the value's first word,
 * without the systemd prefixes (@ - : + !), if it is an absolute path; as
 * the offsets [*start, *end) into the line (n bytes, trimmed as the scan
 * trims it). */
static bool exec_program(const char *line, size_t n, size_t *start, size_t *end)
{
	_cleanup_free_ char *copy = xstrndup(line, n);
	char *t = str_trim(copy);
	char *eq = strchr(t, '=');
	if (!str_startswith(t, "Exec") || !eq)
		return false;
	char *v = eq + 1;
	while (*v && strchr("@-:+! \t", *v))
		v++;
	char *e = v;
	while (*e && *e != ' ' && *e != '\t')
		e++;
	*start = (size_t)(v - copy);
	*end = (size_t)(e - copy);
	return v[0] == '/';
}

/* The next RUN program of udev rules text from *s on: RUN, a '"' at most
 * six bytes on, then an absolute path up to a blank or '"'. Returns it (n
 * bytes) and moves *s past that RUN; NULL when there is none. */
static const char *udev_program(const char **s, size_t *n)
{
	for (const char *run = strstr(*s, "RUN"); run; run = strstr(run + 3, "RUN")) {
		const char *q = strchr(run, '"');
		if (!q || q - run > 6)
			continue;
		q++;
		*n = strcspn(q, " \t\"");
		if (*n == 0 || q[0] != '/')
			continue;
		*s = run;
		return q;
	}
	return NULL;
}

/* ---- what a snapshot keeps ----
 * A mask over the text's bytes: kept bytes and every newline are written.
 * The scans read the text as a C string, so bytes after a NUL are never
 * read: of those only one NUL is kept, which also keeps the text from
 * mentioning the ToS (mentions_tos()). */
enum keep_kind { KEEP_SCRIPT, KEEP_UNIT, KEEP_UDEV };

static void keep_mark(const struct strbuf *sb, char *mask, enum keep_kind kind)
{
	size_t clen = strlen(sb->buf);
	for (size_t i = 0; i < clen;) {
		size_t n = strcspn(sb->buf + i, "\n"), a, b;
		_cleanup_free_ char *line = xstrndup(sb->buf + i, n);
		if (clen == sb->len && line_mentions_tos(line))
			memset(mask + i, 1, n);
		else if (kind == KEEP_UNIT && exec_program(line, n, &a, &b))
			memset(mask + i, 1, b);
		i += n + 1;
	}
	size_t n;
	for (const char *s = sb->buf, *q; kind == KEEP_UDEV && (q = udev_program(&s, &n)); s += 3) {
		/* from RUN to the byte that ends the program */
		size_t from = (size_t)(s - sb->buf), to = (size_t)(q - sb->buf) + n + (q[n] != '\0');
		memset(mask + from, 1, to - from);
	}
}

static void record_kept(const struct root *r, const char *path, const struct strbuf *sb, enum keep_kind kind)
{
	_cleanup_free_ char *mask = xcalloc(sb->len + 1, 1);
	_cleanup_strbuf_ struct strbuf kept = STRBUF_INIT;
	keep_mark(sb, mask, kind);
	size_t clen = strlen(sb->buf);
	for (size_t i = 0; i < clen; i++)
		if (mask[i] || sb->buf[i] == '\n')
			strbuf_addch(&kept, sb->buf[i]);
	if (clen < sb->len)
		strbuf_addch(&kept, '\0');
	root_record_kept(r, path, kept.buf, kept.len);
}

/* Files are scanned without recording: a snapshot keeps only the ones that
 * matter (they mention the ToS), not every unit and program on the host. */
/* A file that exists but cannot be read: whether it persists the ToS is
 * unknown, which the check must say rather than "nothing persists it". */
static int note_unreadable(struct persist_info *p, const char *path, int err)
{
	if (err < 0 && err != -ENOENT)
		strv_push(&p->unreadable, xasprintf("%s (%s)", path, read_strerror(err)));
	return err;
}

static bool file_mentions_tos(const struct root *r, struct persist_info *p, const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (note_unreadable(p, path, root_read_unrecorded(r, path, 1u << 20, &sb)) < 0 || !mentions_tos(&sb))
		return false;
	record_kept(r, path, &sb, KEEP_SCRIPT);
	return true;
}

static void add(struct persist_info *p, const char *kind, const char *path, const char *unit, bool enabled,
		const char *via)
{
	p->v = xreallocarray(p->v, p->n + 1, sizeof(*p->v));
	struct tos_writer *w = &p->v[p->n++];
	w->kind = xstrdup(kind);
	w->path = xstrdup(path);
	w->unit = unit ? xstrdup(unit) : NULL;
	w->enabled = enabled;
	w->via = via ? xstrdup(via) : NULL;
}

/* The first program a unit's Exec*= lines run whose text mentions the ToS. */
static char *unit_script_mentioning(const struct root *r, struct persist_info *p, const struct strbuf *unit)
{
	for (const char *l = unit->buf; *l;) {
		size_t n = strcspn(l, "\n"), a, b;
		if (exec_program(l, n, &a, &b)) {
			_cleanup_free_ char *prog = xstrndup(l + a, b - a);
			if (file_mentions_tos(r, p, prog))
				return TAKE_PTR(prog);
		}
		l += n + (l[n] == '\n');
	}
	return NULL;
}

bool systemd_unit_enabled(const struct root *r, const char *unit)
{
	_cleanup_strv_ struct strv dirs = STRV_INIT;
	if (root_list(r, "/etc/systemd/system", &dirs) < 0)
		return false;
	for (size_t i = 0; i < dirs.n; i++) {
		if (!str_endswith(dirs.v[i], ".wants") && !str_endswith(dirs.v[i], ".requires"))
			continue;
		_cleanup_free_ char *p = xasprintf("/etc/systemd/system/%s/%s", dirs.v[i], unit);
		struct strbuf t = STRBUF_INIT;
		bool linked = root_readlink(r, p, &t) == 0 || root_exists(r, p);
		strbuf_release(&t);
		if (linked)
			return true;
	}
	return false;
}

char *systemd_unit_find(const struct root *r, const char *unit)
{
	for (size_t d = 0; d < ARRAY_SIZE(unit_dirs); d++) {
		char *path = xasprintf("%s/%s", unit_dirs[d], unit);
		if (root_exists(r, path))
			return path;
		free(path);
	}
	return NULL;
}

static void scan_units(const struct root *r, struct persist_info *p)
{
	struct strv seen = STRV_INIT;
	for (size_t d = 0; d < ARRAY_SIZE(unit_dirs); d++) {
		_cleanup_strv_ struct strv names = STRV_INIT;
		if (root_list(r, unit_dirs[d], &names) < 0)
			continue;
		for (size_t i = 0; i < names.n; i++) {
			if (!str_endswith(names.v[i], ".service") || strv_contains(&seen, names.v[i]))
				continue;
			/* the first directory that has a unit wins, as in systemd */
			strv_add(&seen, names.v[i]);
			_cleanup_free_ char *path = xasprintf("%s/%s", unit_dirs[d], names.v[i]);
			_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
			if (note_unreadable(p, path, root_read_unrecorded(r, path, 1u << 20, &sb)) < 0)
				continue;
			_cleanup_free_ char *via = NULL;
			if (!mentions_tos(&sb) && !(via = unit_script_mentioning(r, p, &sb)))
				continue;
			record_kept(r, path, &sb, KEEP_UNIT);
			add(p, "systemd", path, names.v[i], systemd_unit_enabled(r, names.v[i]), via);
		}
	}
	strv_free(&seen);
}

/* The first RUN+="/path/prog args" program of a udev rules file whose text
 * mentions the ToS. */
static char *udev_program_mentioning(const struct root *r, struct persist_info *p, const char *text)
{
	size_t n;
	for (const char *s = text, *q; (q = udev_program(&s, &n)); s += 3) {
		_cleanup_free_ char *prog = xstrndup(q, n);
		if (file_mentions_tos(r, p, prog))
			return TAKE_PTR(prog);
	}
	return NULL;
}

static void scan_udev(const struct root *r, struct persist_info *p)
{
	for (size_t d = 0; d < ARRAY_SIZE(udev_dirs); d++) {
		_cleanup_strv_ struct strv names = STRV_INIT;
		if (root_list(r, udev_dirs[d], &names) < 0)
			continue;
		for (size_t i = 0; i < names.n; i++) {
			if (!str_endswith(names.v[i], ".rules"))
				continue;
			_cleanup_free_ char *path = xasprintf("%s/%s", udev_dirs[d], names.v[i]);
			_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
			if (note_unreadable(p, path, root_read_unrecorded(r, path, 1u << 20, &sb)) < 0)
				continue;
			_cleanup_free_ char *via = NULL;
			if (mentions_tos(&sb) || (via = udev_program_mentioning(r, p, sb.buf))) {
				record_kept(r, path, &sb, KEEP_UDEV);
				add(p, "udev", path, NULL, true, via);
			}
		}
	}
}

int persist_load(const struct root *r, struct persist_info *p)
{
	scan_units(r, p);
	scan_udev(r, p);
	if (file_mentions_tos(r, p, "/etc/rc.local"))
		add(p, "script", "/etc/rc.local", NULL, true, NULL);
	return 0;
}

void persist_free(struct persist_info *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].kind);
		free(p->v[i].path);
		free(p->v[i].unit);
		free(p->v[i].via);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
	strv_free(&p->unreadable);
}
