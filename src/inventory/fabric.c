/* NVSwitch systems as their files show them: the fabric manager's unit,
 * enablement and runtime marker, its package version, and IMEX.
 *
 * "Running" is read without asking systemd: while a unit is started,
 * systemd keeps the symlink /run/systemd/units/invocation:<unit> (its
 * invocation ID; systemd src/core/unit.c unit_export_invocation_id()), and
 * removes it when the unit becomes inactive or failed (unit_notify() calls
 * unit_unlink_state_files()). A tree without /run/systemd/units does not
 * record it: active stays unknown.
 *
 * The package version comes from /var/lib/dpkg/status (deb-control(5)).
 * That file lists every package of the node; a snapshot keeps only the
 * stanzas of the packages read here. */
#include "inventory.h"
#include "nvl5.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>

#define FM_UNIT "nvidia-fabricmanager.service"
#define IMEX_UNIT "nvidia-imex.service"
#define DPKG_STATUS "/var/lib/dpkg/status"
#define DPKG_STATUS_MAX (64u << 20)

/* name, or name-<digits> (a driver branch) */
static bool pkg_matches(const char *pkg, size_t n, const char *name)
{
	size_t k = strlen(name);
	if (n < k || strncmp(pkg, name, k))
		return false;
	if (n == k)
		return true;
	if (pkg[k] != '-' || n == k + 1)
		return false;
	for (size_t i = k + 1; i < n; i++)
		if (!isdigit((unsigned char)pkg[i]))
			return false;
	return true;
}

/* The value of field `key` in the stanza [s, e), trimmed, malloc'd; NULL. */
static char *stanza_field(const char *s, const char *e, const char *key)
{
	size_t k = strlen(key);
	for (const char *l = s; l < e;) {
		const char *nl = memchr(l, '\n', (size_t)(e - l));
		const char *end = nl ? nl : e;
		if ((size_t)(end - l) > k && !strncmp(l, key, k) && l[k] == ':') {
			_cleanup_free_ char *v = xstrndup(l + k + 1, (size_t)(end - l - k - 1));
			return xstrdup(str_trim(v));
		}
		l = end + 1;
	}
	return NULL;
}

/* "1:570.124.06-1ubuntu1" -> "570.124.06" */
static char *upstream_version(const char *v)
{
	const char *colon = strchr(v, ':');
	const char *b = colon ? colon + 1 : v;
	const char *dash = strrchr(b, '-');
	return xstrndup(b, dash ? (size_t)(dash - b) : strlen(b));
}

/* Calls fn for each stanza [s, e) of a deb-control text until it returns true. */
static bool each_stanza(const char *text, bool (*fn)(void *ud, const char *s, const char *e), void *ud)
{
	for (const char *s = text; *s;) {
		const char *e = strstr(s, "\n\n");
		const char *end = e ? e + 1 : s + strlen(s);
		if (fn(ud, s, end))
			return true;
		s = e ? e + 2 : end;
	}
	return false;
}

struct pkg_query {
	const char *name;
	char *pkg, *version;
	const char *at, *end; /* the stanza found */
};

static bool match_stanza(void *ud, const char *s, const char *e)
{
	struct pkg_query *q = ud;
	_cleanup_free_ char *pkg = stanza_field(s, e, "Package");
	_cleanup_free_ char *status = stanza_field(s, e, "Status");
	_cleanup_free_ char *version = stanza_field(s, e, "Version");
	if (!pkg || !version || !status || strcmp(status, "install ok installed") ||
	    !pkg_matches(pkg, strlen(pkg), q->name))
		return false;
	q->pkg = TAKE_PTR(pkg);
	q->version = upstream_version(version);
	q->at = s, q->end = e;
	return true;
}

bool dpkg_find_installed(const char *status, const char *name, char **pkg, char **version)
{
	struct pkg_query q = { .name = name };
	if (!each_stanza(status, match_stanza, &q))
		return false;
	*pkg = q.pkg;
	*version = q.version;
	return true;
}

static void load_fm_package(const struct root *r, struct fabric_info *f)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	f->pkg_err = root_read_unrecorded(r, DPKG_STATUS, DPKG_STATUS_MAX, &sb);
	if (f->pkg_err < 0) {
		f->rpm_db = root_exists(r, "/var/lib/rpm");
		return;
	}
	if (memchr(sb.buf, '\0', sb.len)) {
		f->pkg_err = -EINVAL;
		return;
	}
	struct pkg_query q = { .name = "nvidia-fabricmanager" };
	if (each_stanza(sb.buf, match_stanza, &q)) {
		f->fm_pkg = q.pkg;
		f->fm_pkg_version = q.version;
		/* a snapshot keeps this stanza only */
		root_record_kept(r, DPKG_STATUS, q.at, (size_t)(q.end - q.at));
	} else {
		root_record_kept(r, DPKG_STATUS, "", 0);
	}
}

static void load_service(const struct root *r, const char *unit, struct service_info *s)
{
	s->unit_path = systemd_unit_find(r, unit);
	s->enabled = systemd_unit_enabled(r, unit);
	_cleanup_strv_ struct strv names = STRV_INIT;
	s->active = -1;
	s->active_err = root_list(r, "/run/systemd/units", &names);
	if (s->active_err < 0)
		return;
	_cleanup_free_ char *marker = xasprintf("invocation:%s", unit);
	s->active = strv_contains(&names, marker);
	if (s->active) {
		/* read the link, so that a snapshot records it */
		_cleanup_free_ char *path = xasprintf("/run/systemd/units/%s", marker);
		_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;
		root_readlink(r, path, &t);
	}
}

int fabric_load(const struct root *r, struct fabric_info *f)
{
	load_service(r, FM_UNIT, &f->fm);
	load_fm_package(r, f);
	load_service(r, IMEX_UNIT, &f->imex);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	f->imex_nodes_err = read_all(r, &sb, "/etc/nvidia-imex/nodes_config.cfg");
	if (f->imex_nodes_err == 0 && sb.len == 0)
		f->imex_nodes_err = -ENODATA;
	f->imex_channels_err = root_list(r, "/dev/nvidia-caps-imex-channels", &f->imex_channels);
	/* the paths siderolabs/extensions#893 shows the fabric manager's
	 * start script running: nvlsm --config NVLSM_CONF */
	f->nvlsm_bin = root_exists(r, NVLSM_BIN);
	f->nvlsm_conf = root_exists(r, NVLSM_CONF);
	return 0;
}

static void service_free(struct service_info *s)
{
	free(s->unit_path);
}

void fabric_free(struct fabric_info *f)
{
	service_free(&f->fm);
	service_free(&f->imex);
	free(f->fm_pkg);
	free(f->fm_pkg_version);
	strv_free(&f->imex_channels);
	memset(f, 0, sizeof(*f));
}
