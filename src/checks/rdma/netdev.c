/* rdma.netdev: each RoCE port's network interface is up with carrier.
 *
 * RoCE runs over the port's Ethernet netdev (found through gid_attrs/ndevs
 * or the PCI function's net/ directory, Linux Documentation/ABI/testing/sysfs-class-net). An interface that is
 * administratively down reads no carrier at all. */
#include "checks/check.h"
#include "common.h"

#include <string.h>

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct nccl_list hca;
	const struct nccl_var *hv = nccl_hca(inv, &hca);
	const struct rdma_dev *d;
	const struct rdma_port *p;
	size_t roce = 0;
	char lbl[96];
	for_each_rdma_port(&inv->rdma, d, p) {
		if (!port_link_known(c, d, p, "a RoCE network interface is needed")) {
			roce++;
			continue;
		}
		if (!port_is_roce(p))
			continue;
		roce++;
		port_label(d, p, lbl, sizeof(lbl));
		const struct netdev *n = net_find(&inv->net, p->netdev);
		if (!n) {
			struct finding *f = check_add(c, STATUS_FAIL, lbl, "RoCE port has no network interface%s%s%s",
						      p->netdev ? " (" : "", p->netdev ? p->netdev : "",
						      p->netdev ? " is named but missing)" : "");
			finding_hint(f, "the mlx5_core/mlx4_en Ethernet driver must create the netdev: "
					"`dmesg | grep -i mlx`");
			continue;
		}
		bool up = n->operstate && !strcmp(n->operstate, "up");
		if (up && n->carrier == 1) {
			check_add(c, STATUS_OK, n->name, "up with carrier (%s)", lbl);
			continue;
		}
		if (port_unused(inv, &hca, d, p)) {
			check_add(c, STATUS_INFO, n->name, "operstate %s (%s): no address, no bond, not named in "
							   "NCCL_IB_HCA: unused, see rdma.port_state",
				  n->operstate ? n->operstate : "unknown", lbl);
			continue;
		}
		if (hv && !nccl_list_selects(&hca, d->name, (int)p->num)) {
			check_add(c, STATUS_SKIP, n->name, "operstate %s (%s); NCCL_IB_HCA excludes this port, "
							   "see rdma.port_state",
				  n->operstate ? n->operstate : "unknown", lbl);
			continue;
		}
		struct finding *f = check_add(c, STATUS_FAIL, n->name, "operstate %s, carrier %s (%s)",
					      n->operstate ? n->operstate : "unknown",
					      n->carrier == 1 ? "1" : n->carrier == 0 ? "0" : "unreadable (link down)", lbl);
		finding_hint(f, "`ip link set dev %s up`; if it stays down, check the cable/transceiver "
				"(`ethtool %s`) and the switch port",
			     n->name, n->name);
	}
	if (roce == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RoCE ports (nothing runs over Ethernet netdevs)");
	nccl_list_free(&hca);
	return 0;
}

const struct check_def check_rdma_netdev = {
	.id = "rdma.netdev",
	.section = "RDMA Ports",
	.summary = "each RoCE port's network interface is up with carrier",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
