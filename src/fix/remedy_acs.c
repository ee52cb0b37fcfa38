/* gpudirect.acs: ACS redirection cleared on the bridges between GPUs and
 * NICs, with NCCL's troubleshooting command `setpci -s BDF
 * ECAP_ACS+0x6.w=0000` (pciutils' setpci(8): the ACS extended
 * capability's Control register, Linux include/uapi/linux/pci_regs.h
 * PCI_ACS_CTRL) per bridge, now and at every boot by a oneshot unit we
 * own, gpuready-acs-off.service, enabled by its link in
 * multi-user.target.wants (what `systemctl enable` makes). The kernel
 * sets ACS again when it enumerates the bridges at boot, and a hot reset
 * may too, hence the unit; it runs before the GPU and NIC users.
 *
 * Under a sysroot each command stands for the bridge's config space in
 * the tree with the Control word cleared at the capability's offset (the
 * inventory's PCI reader found it: pci_find_ext_cap). Changing how the
 * switch routes P2P traffic under running work is disruptive. In a VM
 * ACS is what keeps devices apart: the check's hint says to keep it
 * there, and so does the note. */
#include "fix/fix.h"

#include "core/cleanup.h"
#include "core/root.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ACS_UNIT "gpuready-acs-off.service"
#define ACS_UNIT_PATH "/etc/systemd/system/" ACS_UNIT
#define ACS_WANTS "/etc/systemd/system/multi-user.target.wants/" ACS_UNIT
#define ACS_EXEC "ExecStart=setpci -s "

/* The BDFs of the ExecStart lines of our unit as it is (kept: bridges
 * fixed before), added to bdfs. */
static void unit_bdfs(const struct strbuf *unit, struct strv *bdfs)
{
	for (const char *l = unit->buf; *l; l += strcspn(l, "\n"), l += *l == '\n')
		if (!strncmp(l, ACS_EXEC, strlen(ACS_EXEC))) {
			const char *b = l + strlen(ACS_EXEC);
			_cleanup_free_ char *bdf = xstrndup(b, strcspn(b, " \n"));
			if (!strv_contains(bdfs, bdf))
				strv_add(bdfs, bdf);
		}
}

static void unit_text(struct strbuf *out, const struct strv *bdfs)
{
	fix_header(out, "# ", "gpudirect.acs");
	strbuf_adds(out, "# Clears ACS redirection on the PCIe bridges between GPUs and NICs at boot (NCCL\n"
			 "# troubleshooting: ACS breaks or slows GPUDirect P2P and RDMA). Bare metal only.\n"
			 "[Unit]\n"
			 "Description=Clear PCIe ACS redirection on GPU-NIC bridges (GPUDirect P2P and RDMA)\n"
			 "DefaultDependencies=no\n"
			 "After=sysinit.target\n"
			 "Before=nvidia-persistenced.service nvidia-fabricmanager.service openibd.service "
			 "slurmd.service kubelet.service\n"
			 "\n"
			 "[Service]\n"
			 "Type=oneshot\n"
			 "RemainAfterExit=yes\n");
	for (size_t i = 0; i < bdfs->n; i++)
		strbuf_addf(out, ACS_EXEC "%s ECAP_ACS+0x6.w=0000\n", bdfs->v[i]);
	strbuf_adds(out, "\n[Install]\nWantedBy=multi-user.target\n");
}

/* The bridge's config space with the ACS Control word cleared, into out;
 * 0 or -errno (-ENODATA: no ACS capability where the inventory saw one). */
static int cleared_config(const struct fix_ctx *c, const struct pci_dev *b, const char *path, struct strbuf *out)
{
	int r = root_read(c->root, path, ROOT_READ_MAX, out);
	if (r < 0)
		return r;
	size_t off = (size_t)b->acs_off;
	if (!b->acs_off || out->len < off + 8 || (unsigned char)out->buf[off] != 0x0d || out->buf[off + 1] != 0)
		return -ENODATA;
	out->buf[off + 6] = out->buf[off + 7] = 0;
	return 0;
}

/* Why our unit or its link cannot be written: malloc'd, NULL when they can. */
static char *blocked(const struct fix_ctx *c)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r = root_read(c->root, ACS_UNIT_PATH, ROOT_READ_MAX, &sb);
	if (r == 0 && !strstr(sb.buf, "Written by `gpuready fix`"))
		return xasprintf("%s exists and was not written by gpuready", ACS_UNIT_PATH);
	if (r < 0 && r != -ENOENT)
		return xasprintf("%s cannot be read: %s", ACS_UNIT_PATH, strerror(-r));
	strbuf_reset(&sb);
	r = root_readlink(c->root, ACS_WANTS, &sb);
	if (r == 0 ? strcmp(sb.buf, ACS_UNIT_PATH) != 0 : root_exists(c->root, ACS_WANTS))
		return xasprintf("%s exists and is not a link to %s", ACS_WANTS, ACS_UNIT_PATH);
	return NULL;
}

static int plan(struct fix_ctx *c)
{
	_cleanup_free_ char *why = blocked(c);
	struct fix_remedy *r = NULL;
	size_t unit = 0; /* r->files[unit]: the unit (pointers move as files are added) */
	_cleanup_strv_ struct strv bdfs = { 0 };
	int err = 0;
	for (const struct finding *f = fix_next(c, "gpudirect.acs", NULL); f; f = fix_next(c, "gpudirect.acs", f)) {
		const struct pci_dev *b = pci_find(&c->inv->pci, f->subject);
		_cleanup_strbuf_ struct strbuf cfg = STRBUF_INIT;
		_cleanup_free_ char *path = b && b->path ? xasprintf("%s/config", b->path) : NULL;
		int ret = path ? cleared_config(c, b, path, &cfg) : -ENOENT;
		if (ret < 0 || why) {
			if (why)
				fix_decline(c, f, "%s: run `setpci -s %s ECAP_ACS+0x6.w=0000` at boot another way", why,
					    f->subject);
			else
				fix_decline(c, f, "the ACS capability of %s could not be read from its config space: %s",
					    f->subject, strerror(-ret));
			continue;
		}
		if (!r) {
			r = fix_remedy_new(c, "acs", FIX_NOW, "clear ACS redirection on the GPU-NIC bridges, now and at every boot");
			r->disruptive = true;
			struct fix_file *u = fix_file_add(c, r, ACS_UNIT_PATH, 0644, &err);
			if (!u)
				return err;
			unit = r->n_files - 1;
			if (u->existed)
				unit_bdfs(&u->old, &bdfs);
			if (!fix_link_add(c, r, ACS_WANTS, ACS_UNIT_PATH, &err))
				return err;
			fix_note(r, "only on bare metal: in a virtual machine ACS keeps the devices apart (use ATS there)");
		}
		if (!strv_contains(&bdfs, b->bdf))
			strv_add(&bdfs, b->bdf);
		struct fix_cmd *cmd = fix_cmd_add(r, (const char *const[]){ "setpci", "-s", b->bdf, "ECAP_ACS+0x6.w=0000", NULL });
		fix_cmd_sets_bytes(cmd, path, cfg.buf, cfg.len);
		fix_answer(c, r, f);
	}
	if (r)
		unit_text(&r->files[unit].new, &bdfs);
	return 0;
}

const struct fix_def fix_acs = {
	.id = "acs",
	.checks = (const char *const[]){ "gpudirect.acs", NULL },
	.plan = plan,
};
