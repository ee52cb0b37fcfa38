/* gpudirect.peermem: the legacy peer-memory module loaded although DMA-BUF
 * is usable (NCCL prefers DMA-BUF; NVIDIA's GPUDirect RDMA documentation:
 * with the open kernel modules and Linux 5.12+ no peer-memory module is
 * needed). /etc/modprobe.d/gpuready-peermem.conf blacklists it
 * (modprobe.d(5): `blacklist` only stops loading by alias, e.g. when the
 * NVIDIA or RDMA driver asks for it) and gives it `install MOD /bin/false`
 * (run instead of loading it: a load by name from a script or a unit that
 * the remedy cannot see fails too), `modprobe -r` unloads it now.
 *
 * A name in a modules-load.d file (modules-load.d(5): /etc, /run,
 * /usr/local/lib, /usr/lib; a file in /etc overrides one of the same name
 * below) is loaded by name at boot, which a blacklist does not stop: the
 * line is removed from a file under /etc (every other byte kept); a file
 * of a package, or a systemd unit that runs `modprobe` for it, is a manual
 * step naming it. Unloading breaks RDMA jobs that use it: disruptive. The
 * unload sets no file, so under a sysroot the finding stays pending
 * (FIX_RELOAD). Never where a finding says DMA-BUF is not possible (the
 * finding's `requires`): then the module is the only GPUDirect RDMA path. */
#include "fix/fix.h"

#include "core/cleanup.h"
#include "core/root.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PEERMEM_FILE "/etc/modprobe.d/gpuready-peermem.conf"

static const char *const load_dirs[] = { "/etc/modules-load.d", "/run/modules-load.d", "/usr/local/lib/modules-load.d",
					 "/usr/lib/modules-load.d", "/lib/modules-load.d" };
static const char *const unit_dirs[] = { "/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
					 "/usr/lib/systemd/system", "/lib/systemd/system" };

/* Is line (n bytes) the module's name, '-' and '_' alike? */
static bool names_module(const char *line, size_t n, const char *mod)
{
	while (n && strchr(" \t\r", line[n - 1]))
		n--;
	while (n && strchr(" \t", *line)) {
		line++;
		n--;
	}
	if (n != strlen(mod))
		return false;
	for (size_t i = 0; i < n; i++)
		if (line[i] != mod[i] && !(strchr("-_", line[i]) && strchr("-_", mod[i])))
			return false;
	return true;
}

/* text without the lines naming mod; true when there were some. */
static bool drop_lines(const struct strbuf *text, const char *mod, struct strbuf *out)
{
	bool dropped = false;
	for (size_t i = 0; i < text->len;) {
		const char *l = text->buf + i;
		const char *nl = memchr(l, '\n', text->len - i);
		size_t n = nl ? (size_t)(nl - l) : text->len - i;
		if (names_module(l, n, mod))
			dropped = true;
		else
			strbuf_add(out, l, n + (nl ? 1 : 0));
		i += n + (nl ? 1 : 0);
	}
	return dropped;
}

/* A unit whose Exec lines run `modprobe MOD`: its path, malloc'd; NULL none. */
static char *unit_loading(const struct fix_ctx *c, const char *mod, const char *dashed)
{
	for (size_t d = 0; d < sizeof(unit_dirs) / sizeof(*unit_dirs); d++) {
		_cleanup_strv_ struct strv names = { 0 };
		if (root_list(c->root, unit_dirs[d], &names) < 0)
			continue;
		for (size_t i = 0; i < names.n; i++) {
			size_t n = strlen(names.v[i]);
			if (n < 9 || strcmp(names.v[i] + n - 8, ".service"))
				continue;
			char *path = xasprintf("%s/%s", unit_dirs[d], names.v[i]);
			_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
			if (root_read_unrecorded(c->root, path, 1u << 20, &sb) == 0 && strstr(sb.buf, "modprobe") &&
			    (strstr(sb.buf, mod) || strstr(sb.buf, dashed)))
				return path;
			free(path);
		}
	}
	return NULL;
}

/* The modules-load.d files that name mod: those under /etc into edit;
 * *why gets the first one that cannot be edited (a package's file). */
static void load_files(const struct fix_ctx *c, const char *mod, struct strv *edit, char **why)
{
	_cleanup_strv_ struct strv seen = { 0 };
	for (size_t d = 0; d < sizeof(load_dirs) / sizeof(*load_dirs) && !*why; d++) {
		_cleanup_strv_ struct strv names = { 0 };
		if (root_list(c->root, load_dirs[d], &names) < 0)
			continue;
		for (size_t i = 0; i < names.n && !*why; i++) {
			size_t n = strlen(names.v[i]);
			if (n < 6 || strcmp(names.v[i] + n - 5, ".conf") || strv_contains(&seen, names.v[i]))
				continue;
			strv_add(&seen, names.v[i]);
			char *path = xasprintf("%s/%s", load_dirs[d], names.v[i]);
			_cleanup_strbuf_ struct strbuf text = STRBUF_INIT, kept = STRBUF_INIT;
			if (root_read(c->root, path, ROOT_READ_MAX, &text) < 0 || !drop_lines(&text, mod, &kept))
				free(path);
			else if (d == 0)
				strv_push(edit, path);
			else {
				*why = xasprintf("%s loads %s by name at boot, which a blacklist does not stop: copy it to "
						 "/etc/modules-load.d/%s without that line (a file in /etc overrides it)",
						 path, mod, names.v[i]);
				free(path);
			}
		}
	}
}

/* A requirement of f ("key" or "key=value") that another finding's fact
 * contradicts: the fact, malloc'd; NULL when none. */
static char *contradicted(const struct fix_ctx *c, const struct finding *f)
{
	for (size_t k = 0; k < f->requires.n; k++) {
		const char *req = f->requires.v[k], *eq = strchr(req, '=');
		_cleanup_free_ char *key = eq ? xstrndup(req, (size_t)(eq - req)) : xstrdup(req);
		for (size_t i = 0; i < c->rep->n; i++) {
			const char *v = finding_fact_get(c->rep->v[i], key);
			if (v && (eq ? strcmp(v, eq + 1) : !strcmp(v, "false")))
				return xasprintf("%s says %s=%s", c->rep->v[i]->id, key, v);
		}
	}
	return NULL;
}

static int plan(struct fix_ctx *c)
{
	const struct modules_info *m = &c->inv->modules;
	for (const struct finding *f = fix_next(c, "gpudirect.peermem", NULL); f; f = fix_next(c, "gpudirect.peermem", f)) {
		_cleanup_free_ char *no = contradicted(c, f);
		if (no || !strstr(f->message, "although DMA-BUF is usable")) {
			fix_decline(c, f, "the peer-memory module may be the GPUDirect RDMA path here%s%s", no ? ": " : "",
				    no ? no : "");
			continue;
		}
		/* Mellanox's older nv_peer_mem when only it is loaded */
		const char *mod = modules_state(m, "nv_peer_mem") == MODULE_LOADED &&
						  modules_state(m, "nvidia_peermem") != MODULE_LOADED
					  ? "nv_peer_mem"
					  : "nvidia_peermem";
		_cleanup_free_ char *dashed = xstrdup(mod), *why = NULL;
		for (char *p = dashed; *p; p++)
			if (*p == '_')
				*p = '-';
		_cleanup_free_ char *unit = unit_loading(c, mod, dashed);
		if (unit) {
			fix_decline(c, f, "%s runs modprobe for %s, which a blacklist does not stop: remove that line, then "
					  "run gpuready fix again",
				    unit, mod);
			continue;
		}
		_cleanup_strv_ struct strv edit = { 0 };
		load_files(c, mod, &edit, &why);
		if (why) {
			fix_decline(c, f, "%s", why);
			continue;
		}
		struct fix_remedy *r = fix_remedy_new(c, "peermem", FIX_RELOAD, "unload %s and keep it from loading again",
						      mod);
		r->disruptive = true;
		int err = 0;
		struct fix_file *file = fix_file_add(c, r, PEERMEM_FILE, 0644, &err);
		if (!file)
			return err;
		fix_header(&file->new, "# ", "gpudirect.peermem");
		strbuf_addf(&file->new, "# DMA-BUF serves GPUDirect RDMA here; the legacy peer-memory module is not needed.\n"
					"# modprobe.d(5): blacklist stops loading by alias only; install runs the command\n"
					"# instead of loading it, which stops `modprobe %s` by name too (a script that\n"
					"# loads it then fails, and says so).\n"
					"blacklist %s\ninstall %s /bin/false\n",
			    mod, mod, mod);
		for (size_t i = 0; i < edit.n; i++) {
			struct fix_file *lf = fix_file_add(c, r, edit.v[i], 0644, &err);
			if (!lf)
				return err;
			drop_lines(&lf->old, mod, &lf->new);
		}
		fix_cmd_add(r, (const char *const[]){ "modprobe", "-r", mod, NULL });
		fix_note(r, "RDMA jobs using GPUDirect RDMA through %s break when it is unloaded: run when the node is idle",
			 mod);
		fix_answer(c, r, f);
	}
	return 0;
}

const struct fix_def fix_peermem = {
	.id = "peermem",
	.checks = (const char *const[]){ "gpudirect.peermem", NULL },
	.plan = plan,
};
