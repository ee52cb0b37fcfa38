/* rdma.modules: the RDMA modules that are not loaded, loaded at every boot
 * by /etc/modules-load.d/gpuready-rdma.conf (modules-load.d(5): one module
 * name per line, '#' and ';' start comments; systemd-modules-load.service
 * loads each at boot) and now with `modprobe MOD` (modprobe(8) loads its
 * dependencies first). Loading adds a driver and takes nothing away: not
 * disruptive. modprobe sets no file, so under a sysroot the finding stays
 * pending (FIX_RELOAD).
 *
 * Only a module installed for the running kernel is loaded: one that
 * /lib/modules/<release>/modules.dep (depmod(8)) does not list needs its
 * package first (the distribution's kernel modules, or DOCA-OFED):
 * a manual step, as is every module when modules.dep cannot be read. */
#include "fix/fix.h"

#include "core/cleanup.h"

#include <string.h>

#define MODULES_FILE "/etc/modules-load.d/gpuready-rdma.conf"

/* Does the modules-load.d text load name (a line that is the name, "-"
 * and "_" alike, as modprobe reads them)? */
static bool listed(const char *text, const char *name)
{
	for (const char *l = text; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		size_t n = strcspn(l, "\n");
		while (n && strchr(" \t\r", l[n - 1]))
			n--;
		if (n != strlen(name))
			continue;
		bool same = true;
		for (size_t i = 0; i < n && same; i++)
			same = l[i] == name[i] || (strchr("-_", l[i]) && strchr("-_", name[i]));
		if (same)
			return true;
	}
	return false;
}

static bool plain_name(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(s);
}

static int plan(struct fix_ctx *c)
{
	const struct modules_info *m = &c->inv->modules;
	const char *rel = c->inv->kernel.release ? c->inv->kernel.release : "(unknown release)";
	struct fix_remedy *r = NULL;
	struct fix_file *file = NULL;
	for (const struct finding *f = fix_next(c, "rdma.modules", NULL); f; f = fix_next(c, "rdma.modules", f)) {
		if (!plain_name(f->subject) || modules_state(m, f->subject) != MODULE_ABSENT) {
			fix_decline(c, f, "whether %s is loaded is unknown", f->subject);
			continue;
		}
		if (m->dep_err < 0) {
			fix_decline(c, f, "cannot tell whether %s is installed for kernel %s: /lib/modules/%s/modules.dep: %s",
				    f->subject, rel, rel, strerror(-m->dep_err));
			continue;
		}
		if (!strv_contains(&m->installed, f->subject)) {
			fix_decline(c, f, "%s is not installed for kernel %s (not in /lib/modules/%s/modules.dep): install "
					  "the package that ships it (the distribution's kernel modules, or DOCA-OFED), then run "
					  "gpuready fix again",
				    f->subject, rel, rel);
			continue;
		}
		if (!r) {
			r = fix_remedy_new(c, "rdma-modules", FIX_RELOAD, "load the missing RDMA modules now and at every boot");
			int err = 0;
			if (!(file = fix_file_add(c, r, MODULES_FILE, 0644, &err)))
				return err;
			if (file->existed)
				strbuf_add(&file->new, file->old.buf, file->old.len);
			else
				fix_header(&file->new, "# ", "rdma.modules");
		}
		if (!listed(file->new.buf, f->subject))
			strbuf_addf(&file->new, "%s%s\n", file->new.len && file->new.buf[file->new.len - 1] != '\n' ? "\n" : "",
				    f->subject);
		fix_cmd_add(r, (const char *const[]){ "modprobe", f->subject, NULL });
		fix_answer(c, r, f);
	}
	return 0;
}

const struct fix_def fix_modules = {
	.id = "rdma-modules",
	.checks = (const char *const[]){ "rdma.modules", NULL },
	.plan = plan,
};
