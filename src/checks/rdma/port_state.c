/* rdma.port_state: every RDMA port is ACTIVE and LinkUp.
 *
 * States are the numbers sysfs prints (Linux drivers/infiniband/core/sysfs.c). On mlx5 RoCE ports
 * ACTIVE/LinkUp needs the netdev running with carrier, so a DOWN port is
 * usually a cable, a switch port, or an interface set down. A down port
 * that NCCL_IB_HCA excludes is a warn: NCCL will not use it, but the node
 * has less bandwidth than its NICs suggest. A down port that nothing is
 * configured to use (no address, no bond, not named in NCCL_IB_HCA:
 * port_unused) is information: one port of a dual-port card is often
 * left unconnected by design. An NVSwitch management port (T07) that is
 * not ACTIVE is skipped: nvlsm, not the compute fabric, manages it. */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>
#include <string.h>

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct nccl_list hca;
	const struct nccl_var *hv = nccl_hca(inv, &hca);
	size_t ports = 0;
	char lbl[96];

	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		ports++;
		port_label(d, p, lbl, sizeof(lbl));
		const char *ll = port_is_roce(p) ? "RoCE" : port_is_ib(p) ? "InfiniBand"
									 : p->link_layer ? p->link_layer : "link layer unreadable";
		const char *st = p->state_name ? p->state_name : "unknown";
		const char *ph = p->phys_name ? p->phys_name : "unknown";
		if (port_active(p) && p->phys_state == PHYS_LINKUP) {
			check_add(c, STATUS_OK, lbl, "%s, %s/%s, %s", ll, st, ph, p->rate ? p->rate : "rate unknown");
			continue;
		}
		if (p->state < 0) {
			check_add(c, STATUS_SKIP, lbl, "state unreadable under the root");
			continue;
		}
		if (rdma_dev_nvswitch_mgmt(inv, d)) {
			/* nvlsm brings these up, not the compute fabric's subnet manager */
			check_add(c, STATUS_SKIP, lbl, "%s port is %s/%s: %s, not judged against the compute fabric",
				  ll, st, ph, NVSWITCH_MGMT_WHY);
			continue;
		}
		if (port_active(p) && p->phys_state < 0) {
			check_add(c, STATUS_OK, lbl, "%s, ACTIVE (phys_state unreadable), %s", ll,
				  p->rate ? p->rate : "rate unknown");
			continue;
		}
		if (port_active(p)) {
			/* A port cannot be ACTIVE without a physical link,
			 * so ACTIVE with another phys_state (one capture
			 * echoes the port state there) is contradictory
			 * data, not a verdict about the link. */
			struct finding *f = check_add(c, STATUS_WARN, lbl,
						      "%s port is ACTIVE but phys_state reads '%d: %s', which "
						      "contradicts it: the recording is inconsistent",
						      ll, p->phys_state, ph);
			finding_hint(f, "re-read /sys/class/infiniband/%s/ports/%u/phys_state on the live node "
					"(`rdma link show %s`)",
				     d->name, p->num, lbl);
			continue;
		}
		if (port_unused(inv, &hca, d, p)) {
			check_add(c, STATUS_INFO, lbl,
				  "%s port is %s/%s, with no address, no bond and no NCCL_IB_HCA entry naming it: "
				  "unused (NCCL ignores ports that are not ACTIVE)",
				  ll, st, ph);
			continue;
		}
		bool excluded = hv && !nccl_list_selects(&hca, d->name, (int)p->num);
		struct finding *f = check_add(c, excluded ? STATUS_WARN : STATUS_FAIL, lbl,
					      "%s port is %s/%s (expected ACTIVE/LinkUp)%s", ll, st, ph,
					      excluded ? "; NCCL_IB_HCA excludes it, so NCCL will not use it" : "");
		if (port_is_roce(p) && p->netdev)
			finding_hint(f, "check the cable and switch port; `ip link set dev %s up`; "
					"`cat /sys/class/net/%s/carrier` must be 1",
				     p->netdev, p->netdev);
		else if (port_is_ib(p))
			finding_hint(f, "check the cable and switch port; phys state Polling means no link "
					"partner, ACTIVE needs a running subnet manager (`sminfo`)");
		else
			finding_hint(f, "check the cable and switch port (`rdma link show`)");
	}
	if (ports == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA ports to check");
	nccl_list_free(&hca);
	return 0;
}

const struct check_def check_rdma_port_state = {
	.id = "rdma.port_state",
	.section = "RDMA Ports",
	.summary = "every RDMA port is ACTIVE and LinkUp, with its link layer",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
