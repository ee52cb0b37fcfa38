/* Which network manager configures an interface, from the files of the
 * root (mtu_persist.h), for the MTU remedy:
 *   - netplan: a definition in a .yaml file of /run, /etc or /lib/netplan (netplan's
 *     YAML reference; a file in /run hides one of the same name in /etc,
 *     which hides /lib) whose ID or match: names the interface;
 *   - systemd-networkd, when systemd-networkd.service is enabled: the first
 *     .network file, in the order of the file names, whose [Match] matches
 *     it (systemd.network(5); /etc hides /usr/lib and /lib; /run is left
 *     out: what is there is generated at boot, by netplan among others);
 *   - NetworkManager, when NetworkManager.service is enabled: the keyfile in
 *     /etc/NetworkManager/system-connections whose [connection]
 *     interface-name is the interface (nm-settings-keyfile(5));
 *   - ifupdown, when networking.service is enabled: an `iface` stanza in
 *     /etc/network/interfaces or a file it sources (interfaces(5)).
 * A unit is enabled when a .wants/ or .requires/ directory links to it
 * (systemd_unit_enabled(), the inventory's rule). None or more than one is
 * a decline naming what was found. */
#include "fix/mtu_persist.h"

#include "core/cleanup.h"
#include "core/parse.h"
#include "core/root.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

void mtu_claim_free(struct mtu_claim *m)
{
	free(m->path);
	free(m->conn);
	mtu_netplan_dev_free(&m->np);
	memset(m, 0, sizeof(*m));
}

const char *mtu_manager_name(enum mtu_manager k)
{
	static const char *const names[] = { "netplan", "systemd-networkd", "NetworkManager", "ifupdown" };
	return names[k];
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int by_base(const void *a, const void *b)
{
	return strcmp(base_name(*(char *const *)a), base_name(*(char *const *)b));
}

/* The files named *suffix in dirs (earlier dirs hide later ones' files of
 * the same name), in the order of their names. */
static void list_merged(const struct root *r, const char *const *dirs, size_t n_dirs, const char *suffix,
			struct strv *out)
{
	_cleanup_strv_ struct strv seen = { 0 };
	for (size_t d = 0; d < n_dirs; d++) {
		_cleanup_strv_ struct strv names = { 0 };
		if (root_list(r, dirs[d], &names) < 0)
			continue;
		for (size_t i = 0; i < names.n; i++) {
			if (!str_endswith(names.v[i], suffix) || strv_contains(&seen, names.v[i]))
				continue;
			strv_add(&seen, names.v[i]);
			strv_push(out, xasprintf("%s/%s", dirs[d], names.v[i]));
		}
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), by_base);
}

/* What the search found, for the decline message and the claims. */
struct found {
	struct mtu_claim claims[4];
	size_t n;
	struct strv seen;    /* "a .network file matches but systemd-networkd is not enabled" */
	char *why;           /* a file we cannot judge: decline */
};

static struct mtu_claim *claim(struct found *f, enum mtu_manager kind, const char *path)
{
	struct mtu_claim *m = &f->claims[f->n++];
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->path = xstrdup(path);
	return m;
}

/* A netplan file read after ours that sets mtu: for the definition. */
static void netplan_later(const struct fix_ctx *c, const struct strv *files, const struct mtu_netplan_dev *dev,
			  int64_t mtu, struct found *f)
{
	for (size_t i = 0; i < files->n && !f->why; i++) {
		if (strcmp(base_name(files->v[i]), base_name(MTU_NETPLAN_FILE)) <= 0)
			continue;
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		_cleanup_free_ char *err = NULL;
		struct mtu_netplan_dev d = { 0 };
		if (root_read(c->root, files->v[i], ROOT_READ_MAX, &sb) < 0)
			continue;
		if (mtu_netplan_find(sb.buf, dev->id, &d, &err) > 0 && d.mtu && d.mtu != mtu &&
		    !strcmp(d.type, dev->type))
			f->why = xasprintf("%s sets mtu: %lld for %s and netplan reads it after %s: change it there",
					   files->v[i], (long long)d.mtu, dev->id, MTU_NETPLAN_FILE);
		mtu_netplan_dev_free(&d);
	}
}

static int find_netplan(const struct fix_ctx *c, const char *iface, int64_t mtu, struct found *f)
{
	static const char *const dirs[] = { "/run/netplan", "/etc/netplan", "/lib/netplan" };
	_cleanup_strv_ struct strv files = { 0 };
	list_merged(c->root, dirs, 3, ".yaml", &files);
	struct mtu_claim *m = NULL;
	for (size_t i = 0; i < files.n && !f->why; i++) {
		if (!strcmp(files.v[i], MTU_NETPLAN_FILE))
			continue;
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		_cleanup_free_ char *err = NULL;
		struct mtu_netplan_dev d = { 0 };
		int r = root_read(c->root, files.v[i], ROOT_READ_MAX, &sb);
		if (r < 0) {
			f->why = xasprintf("%s cannot be read (%s)", files.v[i], strerror(-r));
			break;
		}
		r = mtu_netplan_find(sb.buf, iface, &d, &err);
		if (r < 0) {
			f->why = xasprintf("%s: %s", files.v[i], err);
		} else if (r > 0 && m && (strcmp(m->np.type, d.type) || strcmp(m->np.id, d.id))) {
			f->why = xasprintf("%s and %s configure %s under different IDs (%s, %s)", m->path, files.v[i],
					   iface, m->np.id, d.id);
		} else if (r > 0 && !m) {
			m = claim(f, MTU_NETPLAN, files.v[i]);
			m->np = d;
			memset(&d, 0, sizeof(d));
		} else if (r > 0 && d.renderer) { /* a later file's renderer wins */
			free(m->np.renderer);
			m->np.renderer = xstrdup(d.renderer);
			m->np.renderer_level = d.renderer_level;
		}
		mtu_netplan_dev_free(&d);
	}
	if (m && !f->why)
		netplan_later(c, &files, &m->np, mtu, f);
	return 0;
}

static int find_networkd(const struct fix_ctx *c, const char *iface, struct found *f)
{
	static const char *const dirs[] = { "/etc/systemd/network", "/usr/lib/systemd/network",
					    "/lib/systemd/network" };
	_cleanup_strv_ struct strv files = { 0 };
	list_merged(c->root, dirs, 3, ".network", &files);
	for (size_t i = 0; i < files.n; i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		int r = root_read(c->root, files.v[i], ROOT_READ_MAX, &sb);
		if (r < 0) {
			f->why = xasprintf("%s cannot be read (%s)", files.v[i], strerror(-r));
			return 0;
		}
		r = mtu_networkd_match(sb.buf, iface);
		if (r == 0)
			continue;
		bool enabled = systemd_unit_enabled(c->root, "systemd-networkd.service");
		if (r < 0 && enabled)
			f->why = xasprintf("%s has [Match] conditions other than Name=: whether it configures %s "
					   "cannot be told from the files",
					   files.v[i], iface);
		else if (!enabled)
			strv_push(&f->seen, xasprintf("%s matches %s but systemd-networkd.service is not enabled",
						      files.v[i], iface));
		else
			claim(f, MTU_NETWORKD, files.v[i]);
		return 0; /* the first matching file is the one networkd applies */
	}
	return 0;
}

/* The keyfiles whose interface-name is iface. */
static int find_nm(const struct fix_ctx *c, const char *iface, struct found *f)
{
	static const char dir[] = "/etc/NetworkManager/system-connections";
	_cleanup_strv_ struct strv names = { 0 };
	if (root_list(c->root, dir, &names) < 0)
		return 0;
	strv_sort(&names);
	bool enabled = systemd_unit_enabled(c->root, "NetworkManager.service");
	for (size_t i = 0; i < names.n && !f->why; i++) {
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, names.v[i]);
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		int r = root_read(c->root, path, ROOT_READ_MAX, &sb);
		if (r < 0) {
			f->why = xasprintf("%s cannot be read (%s)", path, strerror(-r));
			break;
		}
		_cleanup_free_ char *ifname = mtu_keyfile_get(sb.buf, "connection", "interface-name");
		if (!ifname || strcmp(ifname, iface))
			continue;
		if (!enabled) {
			strv_push(&f->seen, xasprintf("%s names %s but NetworkManager.service is not enabled", path, iface));
			continue;
		}
		if (f->n && f->claims[f->n - 1].kind == MTU_NM) {
			f->why = xasprintf("NetworkManager has more than one connection for %s (%s, %s)", iface,
					   f->claims[f->n - 1].path, path);
			break;
		}
		struct mtu_claim *m = claim(f, MTU_NM, path);
		m->conn = mtu_keyfile_get(sb.buf, "connection", "id");
		if (!m->conn)
			m->conn = xstrdup(iface);
	}
	return 0;
}

/* The files an interfaces file (path) sources (interfaces(5): `source`
 * takes a path or a glob, `source-directory` the files of a directory whose
 * names are letters, digits, '_' and '-'; a relative path is relative to
 * the directory of the file that says it). */
static void ifupdown_sources(const struct fix_ctx *c, const char *path, const char *text, struct strv *files)
{
	_cleanup_free_ char *here = xstrndup(path, (size_t)(strrchr(path, '/') - path));
	_cleanup_strv_ struct strv src = { 0 };
	mtu_ifupdown_sources(text, &src);
	for (size_t i = 0; i < src.n; i++) {
		char *tab = strchr(src.v[i], '\t');
		*tab = '\0';
		const char *arg = tab + 1;
		_cleanup_free_ char *abs = arg[0] == '/' ? xstrdup(arg) : xasprintf("%s/%s", here, arg);
		bool dir = !strcmp(src.v[i], "source-directory");
		_cleanup_free_ char *d = dir ? xstrdup(abs) : xstrndup(abs, (size_t)(strrchr(abs, '/') - abs));
		const char *pat = dir ? "*" : strrchr(abs, '/') + 1;
		_cleanup_strv_ struct strv names = { 0 };
		if (root_list(c->root, d, &names) < 0)
			continue;
		strv_sort(&names);
		for (size_t k = 0; k < names.n; k++)
			if (!fnmatch(pat, names.v[k], 0) &&
			    (!dir || strspn(names.v[k], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
					     strlen(names.v[k])) &&
			    !str_endswith(names.v[k], FIX_BAK_SUFFIX))
				strv_push(files, xasprintf("%s/%s", d, names.v[k]));
	}
}

static int find_ifupdown(const struct fix_ctx *c, const char *iface, struct found *f)
{
	_cleanup_strv_ struct strv files = { 0 };
	strv_add(&files, "/etc/network/interfaces");
	bool enabled = systemd_unit_enabled(c->root, "networking.service");
	for (size_t i = 0; i < files.n && i < 64 && !f->why; i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		int r = root_read(c->root, files.v[i], ROOT_READ_MAX, &sb);
		if (r == -ENOENT || r == -EISDIR)
			continue;
		if (r < 0) {
			f->why = xasprintf("%s cannot be read (%s)", files.v[i], strerror(-r));
			break;
		}
		ifupdown_sources(c, files.v[i], sb.buf, &files);
		if (!mtu_ifupdown_has(sb.buf, iface))
			continue;
		if (!enabled)
			strv_push(&f->seen, xasprintf("%s has a stanza for %s but networking.service (ifupdown) is "
						      "not enabled",
						      files.v[i], iface));
		else if (f->n && f->claims[f->n - 1].kind == MTU_IFUPDOWN)
			f->why = xasprintf("ifupdown has stanzas for %s in %s and %s", iface, f->claims[f->n - 1].path,
					   files.v[i]);
		else
			claim(f, MTU_IFUPDOWN, files.v[i]);
	}
	return 0;
}

/* Does the claimed configuration also configure other (netplan: the same
 * definition; networkd: the same first matching file)? */
static bool also_configures(const struct fix_ctx *c, const struct mtu_claim *m, const char *other)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (m->kind == MTU_NETPLAN) {
		struct mtu_netplan_dev d = { 0 };
		_cleanup_free_ char *err = NULL;
		bool same = root_read(c->root, m->path, ROOT_READ_MAX, &sb) == 0 &&
			    mtu_netplan_find(sb.buf, other, &d, &err) > 0 && !strcmp(d.type, m->np.type) &&
			    !strcmp(d.id, m->np.id);
		mtu_netplan_dev_free(&d);
		return same;
	}
	struct found f = { 0 };
	bool same = false;
	if (m->kind == MTU_NETWORKD) {
		find_networkd(c, other, &f);
		same = f.n == 1 && !strcmp(f.claims[0].path, m->path);
	}
	for (size_t i = 0; i < f.n; i++)
		mtu_claim_free(&f.claims[i]);
	strv_free(&f.seen);
	free(f.why);
	return same;
}

/* A netplan definition or a .network file may match more interfaces than
 * the one fixed (a glob): its MTU would change theirs too. The first such
 * interface that neither has the MTU nor gets it in this plan (fixing) nor
 * is a slave of iface; NULL when none. */
static const struct netdev *other_affected(const struct fix_ctx *c, const struct mtu_claim *m, const char *iface,
					   int64_t mtu, const struct strv *fixing)
{
	if (m->kind != MTU_NETPLAN && m->kind != MTU_NETWORKD)
		return NULL;
	for (size_t i = 0; i < c->inv->net.n; i++) {
		const struct netdev *n = &c->inv->net.v[i];
		if (!strcmp(n->name, iface) || n->mtu == mtu || strv_contains(fixing, n->name) ||
		    (n->master && !strcmp(n->master, iface)))
			continue;
		if (also_configures(c, m, n->name))
			return n;
	}
	return NULL;
}

/* "netplan (/etc/netplan/50-x.yaml), NetworkManager (...)" */
static char *claims_text(const struct found *f)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < f->n; i++)
		strbuf_addf(&sb, "%s%s (%s)", i ? ", " : "", mtu_manager_name(f->claims[i].kind), f->claims[i].path);
	return strbuf_detach(&sb);
}

int mtu_detect(const struct fix_ctx *c, const char *iface, int64_t mtu, const struct strv *fixing,
	       struct mtu_claim *out, char **why)
{
	struct found f = { 0 };
	find_netplan(c, iface, mtu, &f);
	if (!f.why)
		find_networkd(c, iface, &f);
	if (!f.why)
		find_nm(c, iface, &f);
	if (!f.why)
		find_ifupdown(c, iface, &f);
	int ret = 0;
	if (f.why) {
		*why = f.why;
		f.why = NULL;
	} else if (f.n > 1) {
		_cleanup_free_ char *t = claims_text(&f);
		*why = xasprintf("more than one network manager configures %s: %s; keep one", iface, t);
	} else if (f.n == 0) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "no network manager configures %s (looked for netplan, systemd-networkd, "
				 "NetworkManager and ifupdown configuration)",
			    iface);
		for (size_t i = 0; i < f.seen.n; i++)
			strbuf_addf(&sb, "; %s", f.seen.v[i]);
		*why = strbuf_detach(&sb);
	} else {
		const struct netdev *o = other_affected(c, &f.claims[0], iface, mtu, fixing);
		if (o) {
			*why = xasprintf("%s configures %s too (MTU %lld), whose MTU would change with it: give %s a "
					 "configuration of its own",
					 f.claims[0].path, o->name, (long long)o->mtu, iface);
		} else {
			*out = f.claims[0];
			f.n = 0;
			ret = 1;
		}
	}
	for (size_t i = 0; i < f.n; i++)
		mtu_claim_free(&f.claims[i]);
	strv_free(&f.seen);
	return ret;
}
