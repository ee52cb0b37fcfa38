/* What sets the rdma_cm ToS again after a reboot.
 *
 * configfs values (REFERENCE §2) vanish at reboot, so something must write
 * them at boot: a systemd unit (directly, or through the script its Exec*=
 * lines run), a udev rule (or the program its RUN+= names), or rc.local.
 * We look for text that writes `default_roce_tos` or calls MLNX_OFED's
 * `cma_roce_tos`. A unit counts as enabled when a `*.wants/` or
 * `*.requires/` directory under /etc/systemd/system links to it, which is
 * what `systemctl enable` creates. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <string.h>

static const char *const unit_dirs[] = {
	"/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
	"/lib/systemd/system", "/usr/lib/systemd/system",
};
static const char *const udev_dirs[] = { "/etc/udev/rules.d", "/lib/udev/rules.d", "/usr/lib/udev/rules.d" };

static bool mentions_tos(const struct strbuf *sb)
{
	return !memchr(sb->buf, '\0', sb->len) &&
	       (strstr(sb->buf, "default_roce_tos") || strstr(sb->buf, "cma_roce_tos"));
}

/* Files are scanned without recording: a snapshot keeps only the ones that
 * matter (they mention the ToS), not every unit and program on the host. */
static bool file_mentions_tos(const struct root *r, const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (root_read_unrecorded(r, path, 1u << 20, &sb) < 0 || !mentions_tos(&sb))
		return false;
	root_record_kept(r, path, sb.buf, sb.len);
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

/* Program paths a unit runs: Exec*= values' first words, without the
 * systemd prefixes (@ - : + !). */
static char *unit_script_mentioning(const struct root *r, const struct strbuf *unit)
{
	_cleanup_free_ char *copy = xstrdup(unit->buf);
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *t = str_trim(l);
		if (!str_startswith(t, "Exec"))
			continue;
		char *eq = strchr(t, '=');
		if (!eq)
			continue;
		char *v = eq + 1;
		while (*v && strchr("@-:+! \t", *v))
			v++;
		char *end = v;
		while (*end && *end != ' ' && *end != '\t')
			end++;
		*end = '\0';
		if (v[0] == '/' && file_mentions_tos(r, v))
			return xstrdup(v);
	}
	return NULL;
}

static bool unit_enabled(const struct root *r, const char *unit)
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
			if (root_read_unrecorded(r, path, 1u << 20, &sb) < 0)
				continue;
			_cleanup_free_ char *via = NULL;
			if (!mentions_tos(&sb) && !(via = unit_script_mentioning(r, &sb)))
				continue;
			root_record_kept(r, path, sb.buf, sb.len);
			add(p, "systemd", path, names.v[i], unit_enabled(r, names.v[i]), via);
		}
	}
	strv_free(&seen);
}

/* RUN+="/path/prog args" programs of a udev rules file. */
static char *udev_program_mentioning(const struct root *r, const char *text)
{
	for (const char *s = strstr(text, "RUN"); s; s = strstr(s + 3, "RUN")) {
		const char *q = strchr(s, '"');
		if (!q || q - s > 6)
			continue;
		q++;
		size_t n = strcspn(q, " \t\"");
		if (n == 0 || q[0] != '/')
			continue;
		_cleanup_free_ char *prog = xstrndup(q, n);
		if (file_mentions_tos(r, prog))
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
			if (root_read_unrecorded(r, path, 1u << 20, &sb) < 0)
				continue;
			_cleanup_free_ char *via = NULL;
			if (mentions_tos(&sb) || (via = udev_program_mentioning(r, sb.buf))) {
				root_record_kept(r, path, sb.buf, sb.len);
				add(p, "udev", path, NULL, true, via);
			}
		}
	}
}

int persist_load(const struct root *r, struct persist_info *p)
{
	scan_units(r, p);
	scan_udev(r, p);
	if (file_mentions_tos(r, "/etc/rc.local"))
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
}
