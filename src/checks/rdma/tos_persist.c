/* rdma.tos_persist: the rdma_cm ToS setting survives a reboot.
 *
 * configfs is rebuilt empty at boot (Linux Documentation/ABI/testing/configfs-rdma_cm), so a non-default ToS
 * needs something that writes it at boot: an enabled systemd unit (bring-up
 * scripts commonly install an rdma-cm-tos.service), a udev rule, or rc.local (inventory/
 * persist.c finds them by what they write). None is a warn; a unit that
 * exists but is not enabled is a warn naming `systemctl enable`. When the
 * expected ToS is the kernel default 0 nothing needs persisting. */
#include "checks/check.h"
#include "common.h"

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct persist_info *ps = &inv->persist;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	bool roce = false;
	for_each_rdma_port(&inv->rdma, d, p)
		roce |= port_is_roce(p) || port_link_unknown(p);
	if (!roce) {
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RoCE ports");
		return 0;
	}
	if (tos_dscp(c->expect->tos) == 0) {
		check_add(c, STATUS_OK, SUBJECT_NODE, "expected ToS is the kernel default (DSCP 0): nothing to persist");
		return 0;
	}
	const struct tos_writer *disabled = NULL;
	for (size_t i = 0; i < ps->n; i++) {
		const struct tos_writer *w = &ps->v[i];
		if (!w->enabled) {
			disabled = w;
			continue;
		}
		struct finding *f = check_add(c, STATUS_OK, w->unit ? w->unit : w->path,
					      "%s%s sets default_roce_tos at boot%s%s", w->unit ? "enabled unit " : "",
					      w->path, w->via ? " via " : "", w->via ? w->via : "");
		finding_detail(f, "found by its text mentioning default_roce_tos or cma_roce_tos");
		return 0;
	}
	struct finding *f;
	if (disabled) {
		f = check_add(c, STATUS_WARN, disabled->unit, "%s writes default_roce_tos but is not enabled: the ToS "
							     "is lost at the next reboot",
			      disabled->path);
		finding_hint(f, "`systemctl enable --now %s`", disabled->unit);
		return 0;
	}
	for (size_t i = 0; i < ps->unreadable.n; i++) {
		f = check_add(c, STATUS_WARN, SUBJECT_NODE, "%s: cannot tell whether it sets default_roce_tos at boot",
			      ps->unreadable.v[i]);
		finding_hint(f, "run gpuready as root (`sudo gpuready check`), or record the snapshot as root");
	}
	if (ps->unreadable.n)
		return 0;
	f = check_add(c, STATUS_WARN, SUBJECT_NODE,
		      "nothing sets default_roce_tos at boot (no systemd unit, udev rule or rc.local mentions it): "
		      "configfs values are lost at reboot");
	finding_hint(f,
		     "create /etc/systemd/system/rdma-cm-tos.service (Type=oneshot, RemainAfterExit=yes, "
		     "After=network.target) whose ExecStart runs a script doing, for each RDMA device D: "
		     "mkdir -p /sys/kernel/config/rdma_cm/D && echo %d > /sys/kernel/config/rdma_cm/D/ports/1/"
		     "default_roce_tos; then `systemctl enable --now rdma-cm-tos`",
		     c->expect->tos);
	return 0;
}

const struct check_def check_rdma_tos_persist = {
	.id = "rdma.tos_persist",
	.section = "RoCE Traffic Class (QoS)",
	.summary = "an enabled systemd unit, udev rule or rc.local re-applies the rdma_cm ToS at boot",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
