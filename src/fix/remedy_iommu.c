/* gpudirect.iommu: the IOMMU translating GPU and NIC DMA, answered with
 * passthrough on the kernel command line (the kernel's admin-guide
 * kernel-parameters: `iommu=pt` on x86, Intel and AMD alike, leaves
 * host devices untranslated while the IOMMU stays on, so intel_iommu=on
 * is kept; `iommu.passthrough=1` on arm64; the CUDA programming guide's
 * "IOMMU on Linux" asks for passthrough on bare metal).
 *
 * On the Debian family (os-release(5) ID or ID_LIKE debian or ubuntu)
 * GRUB's configuration is shell that update-grub (grub-mkconfig) sources,
 * /etc/default/grub and then the .cfg files of /etc/default/grub.d in order: our
 * drop-in /etc/default/grub.d/gpuready.cfg appends the switch to
 * GRUB_CMDLINE_LINUX_DEFAULT, and update-grub runs when it changes. The
 * new command line takes effect at the next boot (FIX_REBOOT), which
 * restarts everything on the node: disruptive. Elsewhere (RHEL, Rocky,
 * Fedora: `grubby` edits the boot entries), or without GRUB, or when the
 * command line already holds the switch or one that undoes it, it is a
 * manual step saying so. */
#include "fix/fix.h"

#include "core/cleanup.h"
#include "core/root.h"

#include <stdlib.h>
#include <string.h>

#define GRUB_DROPIN "/etc/default/grub.d/gpuready.cfg"

/* Is word one of the blank-separated words of list (NULL none)? */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list ? list : ""; *p;) {
		p += strspn(p, " \t\"");
		size_t k = strcspn(p, " \t\"");
		if (k == n && !strncmp(p, word, n))
			return true;
		p += k;
	}
	return false;
}

static bool debian_family(const struct kernel_info *k)
{
	return has_word(k->os_id, "debian") || has_word(k->os_id, "ubuntu") || has_word(k->os_id_like, "debian") ||
	       has_word(k->os_id_like, "ubuntu");
}

/* Why no drop-in serves here: malloc'd, NULL when one does. sw is the switch. */
static char *why_not(const struct fix_ctx *c, const char *sw)
{
	const struct kernel_info *k = &c->inv->kernel;
	if (!debian_family(k))
		return xasprintf("%s: add %s with `grubby --update-kernel=ALL --args=%s` (RHEL, Rocky, Fedora) or in "
				 "the boot loader's configuration, then reboot",
				 k->os_err < 0 ? "the distribution is unknown (/etc/os-release unreadable)"
					       : "not a Debian or Ubuntu system",
				 sw, sw);
	if (!root_exists(c->root, "/etc/default/grub"))
		return xasprintf("no /etc/default/grub: the boot loader is not GRUB; add %s to its kernel command line", sw);
	if (has_word(k->cmdline, sw))
		return xasprintf("the running kernel's command line already has %s, yet the IOMMU translates: see the "
				 "groups' types in /sys/kernel/iommu_groups/*/type",
				 sw);
	static const char *const undo[] = { "iommu=nopt", "iommu.passthrough=0", "iommu.passthrough=n",
					    "iommu.passthrough=off" };
	for (size_t i = 0; i < sizeof(undo) / sizeof(*undo); i++)
		if (has_word(k->cmdline, undo[i]))
			return xasprintf("the kernel command line has %s: remove it from /etc/default/grub (or a file in "
					 "/etc/default/grub.d) and add %s",
					 undo[i], sw);
	return NULL;
}

static int plan(struct fix_ctx *c)
{
	const char *arch = c->inv->kernel.arch;
	const char *sw = arch && !strcmp(arch, "aarch64") ? "iommu.passthrough=1" : "iommu=pt";
	for (const struct finding *f = fix_next(c, "gpudirect.iommu", NULL); f; f = fix_next(c, "gpudirect.iommu", f)) {
		_cleanup_free_ char *why = why_not(c, sw);
		if (why) {
			fix_decline(c, f, "%s", why);
			continue;
		}
		struct fix_remedy *r = fix_remedy_new(c, "iommu", FIX_REBOOT, "boot with %s (IOMMU passthrough)", sw);
		r->disruptive = true;
		int err = 0;
		struct fix_file *file = fix_file_add(c, r, GRUB_DROPIN, 0644, &err);
		if (!file)
			return err;
		fix_header(&file->new, "# ", "gpudirect.iommu");
		strbuf_addf(&file->new,
			    "# IOMMU passthrough for GPUDirect P2P and RDMA (kernel-parameters: %s); update-grub\n"
			    "# reads this after /etc/default/grub.\n"
			    "GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT %s\"\n",
			    sw, sw);
		fix_cmd_add(r, (const char *const[]){ "update-grub", NULL })->after_files = true;
		fix_note(r, "takes effect at the next reboot; drain the node first");
		fix_answer(c, r, f);
	}
	return 0;
}

const struct fix_def fix_iommu = {
	.id = "iommu",
	.checks = (const char *const[]){ "gpudirect.iommu", NULL },
	.plan = plan,
};
