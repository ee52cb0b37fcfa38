/* rdma.roce_tos and rdma.tos_persist: the RDMA-CM ToS of every RoCE port
 * (Linux Documentation/ABI/testing/configfs-rdma_cm: mkdir
 * /sys/kernel/config/rdma_cm/<dev> makes ports/<n>/default_roce_tos
 * appear; the value is the IP ToS byte of RDMA-CM connections).
 *
 * configfs starts empty at every boot, so one script we own,
 * /usr/local/sbin/gpuready-rdma-cm-tos, sets the site's ToS on every port
 * whose link layer is Ethernet (loading rdma_cm and mounting configfs
 * first when needed), and a oneshot unit, rdma-cm-tos.service, runs it at
 * boot, enabled by its link in multi-user.target.wants (what `systemctl
 * enable` makes, systemd.unit(5) [Install] WantedBy=). Now, the same
 * script runs once per port that differs, with the device and port as
 * arguments: commands are argv without a shell, so the mkdir and the
 * write are the script's, and each run sets exactly one configfs file
 * (under a sysroot that file is written in the tree). Running the script
 * that boot runs also proves it works.
 *
 * Where another enabled unit, udev rule or rc.local already writes the ToS
 * at boot, no unit is added (two writers would race): only the script is
 * written, for the ports now. A unit that exists but is not enabled, an
 * unreadable unit, or an rdma-cm-tos.service that is not ours are manual
 * steps. rdma.nccl_ib_tc's default_roce_tos warning is answered too when
 * NCCL_IB_TC itself carries the expected DSCP: every RoCE port that
 * differs is set. */
#include "fix/fix.h"

#include "checks/expect.h"
#include "checks/rdma/common.h"
#include "core/cleanup.h"
#include "core/root.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TOS_SCRIPT "/usr/local/sbin/gpuready-rdma-cm-tos"
#define TOS_UNIT "rdma-cm-tos.service"
#define TOS_UNIT_PATH "/etc/systemd/system/" TOS_UNIT
#define TOS_WANTS "/etc/systemd/system/multi-user.target.wants/" TOS_UNIT
#define TOS_HW_WANTS "/etc/systemd/system/rdma-hw.target.wants/" TOS_UNIT
#define CM_DIR "/sys/kernel/config/rdma_cm"

static void script_text(struct strbuf *out, int tos)
{
	strbuf_adds(out, "#!/bin/sh\n");
	fix_header(out, "# ", "rdma.roce_tos");
	strbuf_addf(out,
		    "# Sets the RDMA-CM default ToS of every RoCE port (Linux\n"
		    "# Documentation/ABI/testing/configfs-rdma_cm); with DEVICE [PORT], of those only.\n"
		    "# configfs starts empty at boot: rdma-cm-tos.service runs this at every boot.\n"
		    "set -u\n"
		    "TOS=%d\n"
		    "CM=" CM_DIR "\n"
		    "[ -d \"$CM\" ] || modprobe rdma_cm || exit 1\n"
		    "if [ ! -d \"$CM\" ]; then\n"
		    "\tmount -t configfs none /sys/kernel/config || exit 1\n"
		    "fi\n"
		    "rc=0\n"
		    "for dev in ${1:-$(ls /sys/class/infiniband)}; do\n"
		    "\tfor port in ${2:-$(ls \"/sys/class/infiniband/$dev/ports\")}; do\n"
		    "\t\t[ \"$(cat \"/sys/class/infiniband/$dev/ports/$port/link_layer\" 2>/dev/null)\" = Ethernet ] || continue\n"
		    "\t\tmkdir -p \"$CM/$dev\" && echo \"$TOS\" > \"$CM/$dev/ports/$port/default_roce_tos\" || rc=1\n"
		    "\tdone\n"
		    "done\n"
		    "exit $rc\n",
		    tos);
}

/* Ordered after the RDMA devices appear and configfs is mounted
 * (sys-kernel-config.mount). rdma-core's Documentation/udev.md: udev wants
 * rdma-hw.target when RDMA hardware appears, and provider modules listed
 * in modules-load.d (systemd-modules-load.service) are loaded before
 * sysinit.target, which a unit with default dependencies follows. */
static void unit_text(struct strbuf *out)
{
	fix_header(out, "# ", "rdma.tos_persist");
	strbuf_adds(out, "[Unit]\n"
			 "Description=Set the RDMA-CM default RoCE ToS of every RoCE port (configfs rdma_cm)\n"
			 "After=sys-kernel-config.mount systemd-modules-load.service rdma-hw.target\n"
			 "Wants=sys-kernel-config.mount\n"
			 "\n"
			 "\n"
			 "# Not RemainAfterExit: when RDMA hardware appears after boot has passed\n"
			 "# multi-user.target (udev loads providers asynchronously, rdma-core's\n"
			 "# Documentation/udev.md), rdma-hw.target starts it again.\n"
			 "[Service]\n"
			 "Type=oneshot\n"
			 "ExecStart=" TOS_SCRIPT "\n"
			 "\n"
			 "[Install]\n"
			 "WantedBy=multi-user.target rdma-hw.target\n");
}

static bool is_ours(const struct strbuf *sb)
{
	return strstr(sb->buf, "Written by `gpuready fix`") != NULL;
}

/* The tos_persist findings: the one saying nothing persists the ToS is
 * returned; the others are manual steps. */
static const struct finding *persist_finding(struct fix_ctx *c)
{
	const struct finding *want = NULL;
	for (const struct finding *f = fix_next(c, "rdma.tos_persist", NULL); f;
	     f = fix_next(c, "rdma.tos_persist", f)) {
		if (!strcmp(f->subject, SUBJECT_NODE) && strstr(f->message, "nothing sets default_roce_tos"))
			want = f;
		else if (strstr(f->message, "not enabled"))
			fix_decline(c, f, "%s exists and is the operator's: enable it with `systemctl enable --now %s` "
					  "(its [Install] section says where)",
				    f->subject, f->subject);
		else
			fix_decline(c, f, "a file that may set the ToS at boot could not be read");
	}
	if (!want)
		return NULL;
	_cleanup_strbuf_ struct strbuf cur = STRBUF_INIT;
	int r = root_read(c->root, TOS_UNIT_PATH, ROOT_READ_MAX, &cur);
	if (r == 0 && !is_ours(&cur)) {
		fix_decline(c, want, "%s exists and was not written by gpuready: make it run %s", TOS_UNIT_PATH,
			    TOS_SCRIPT);
		return NULL;
	}
	if (r < 0 && r != -ENOENT) {
		fix_decline(c, want, "%s cannot be read: %s", TOS_UNIT_PATH, strerror(-r));
		return NULL;
	}
	return want;
}

/* Is the roce_tos finding about a port the remedy sets? */
static bool port_of(const struct fix_ctx *c, const struct finding *f, int want)
{
	char lbl[96];
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&c->inv->rdma, d, p)
		if (!strcmp(port_label(d, p, lbl, sizeof(lbl)), f->subject))
			return port_is_roce(p) && (p->roce_tos_err == 0 || p->roce_tos_err == -ENOENT) &&
			       tos_dscp(p->roce_tos >= 0 ? p->roce_tos : 0) != tos_dscp(want);
	return false;
}

/* NCCL_IB_TC carries another DSCP than the expected one (rdma.nccl_ib_tc
 * says so): then setting the ports to the expected ToS does not end its
 * default_roce_tos warning. */
static bool nccl_tc_wrong(const struct fix_ctx *c)
{
	for (size_t i = 0; i < c->rep->n; i++) {
		const struct finding *f = c->rep->v[i];
		if (!strcmp(f->id, "rdma.nccl_ib_tc") && !strcmp(f->subject, "NCCL_IB_TC") &&
		    (f->status == STATUS_WARN || f->status == STATUS_FAIL))
			return true;
	}
	return false;
}

static int add_files(struct fix_ctx *c, struct fix_remedy *r, bool unit)
{
	int err = 0;
	struct fix_file *f = fix_file_add(c, r, TOS_SCRIPT, 0755, &err);
	if (!f)
		return err;
	script_text(&f->new, c->expect->tos);
	if (!unit)
		return 0;
	if (!(f = fix_file_add(c, r, TOS_UNIT_PATH, 0644, &err)))
		return err;
	unit_text(&f->new);
	if (!fix_link_add(c, r, TOS_WANTS, TOS_UNIT_PATH, &err))
		return err;
	/* the second WantedBy= link, unless something else is there already */
	_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;
	int rl = root_readlink(c->root, TOS_HW_WANTS, &t);
	if ((rl == 0 && !strcmp(t.buf, TOS_UNIT_PATH)) || (rl < 0 && !root_exists(c->root, TOS_HW_WANTS)))
		if (!fix_link_add(c, r, TOS_HW_WANTS, TOS_UNIT_PATH, &err))
			return err;
	return 0;
}

static int plan(struct fix_ctx *c)
{
	int want = c->expect->tos;
	const struct finding *persist = persist_finding(c);
	bool any_port = false;
	for (const struct finding *f = fix_next(c, "rdma.roce_tos", NULL); f; f = fix_next(c, "rdma.roce_tos", f)) {
		if (port_of(c, f, want))
			any_port = true;
		else
			fix_decline(c, f, "its port's default_roce_tos could not be read");
	}
	if (!persist && !any_port)
		return 0;
	_cleanup_strbuf_ struct strbuf target = STRBUF_INIT;
	int rl = persist ? root_readlink(c->root, TOS_WANTS, &target) : -ENOENT;
	if (persist && (rl == 0 ? strcmp(target.buf, TOS_UNIT_PATH) != 0 : root_exists(c->root, TOS_WANTS))) {
		fix_decline(c, persist, "%s exists and is not a link to %s: remove it, then run gpuready fix again",
			    TOS_WANTS, TOS_UNIT_PATH);
		persist = NULL;
	}
	struct fix_remedy *r = fix_remedy_new(c, "rdma-cm-tos", FIX_NOW, "set the RDMA-CM ToS to %d on the RoCE ports%s",
					      want, persist ? ", now and at every boot" : "");
	int err = add_files(c, r, persist != NULL);
	if (err)
		return err;
	if (persist)
		fix_answer(c, r, persist);
	else
		fix_note(r, "another unit, udev rule or rc.local sets default_roce_tos at boot (rdma.tos_persist): "
			    "make sure it writes %d",
			 want);
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&c->inv->rdma, d, p) {
		if (!port_is_roce(p) || (p->roce_tos_err < 0 && p->roce_tos_err != -ENOENT) ||
		    tos_dscp(p->roce_tos >= 0 ? p->roce_tos : 0) == tos_dscp(want))
			continue;
		char num[16];
		snprintf(num, sizeof(num), "%u", p->num);
		struct fix_cmd *cmd = fix_cmd_add(r, (const char *const[]){ TOS_SCRIPT, d->name, num, NULL });
		_cleanup_free_ char *path = xasprintf(CM_DIR "/%s/ports/%u/default_roce_tos", d->name, p->num);
		fix_cmd_sets(cmd, path, "%d\n", want);
	}
	for (const struct finding *f = fix_next(c, "rdma.roce_tos", NULL); f; f = fix_next(c, "rdma.roce_tos", f))
		if (port_of(c, f, want))
			fix_answer(c, r, f);
	for (const struct finding *f = fix_next(c, "rdma.nccl_ib_tc", NULL); f; f = fix_next(c, "rdma.nccl_ib_tc", f))
		if (!strcmp(f->subject, "default_roce_tos") && !nccl_tc_wrong(c))
			fix_answer(c, r, f);
	return 0;
}

const struct fix_def fix_tos = {
	.id = "rdma-cm-tos",
	.checks = (const char *const[]){ "rdma.roce_tos", "rdma.tos_persist", "rdma.nccl_ib_tc", NULL },
	.plan = plan,
};
