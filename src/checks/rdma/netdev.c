/* rdma.netdev: each RoCE port's network interface is up with carrier.
 *
 * RoCE runs over the port's Ethernet netdev (found through gid_attrs/ndevs
 * or the PCI function's net/ directory, Linux Documentation/ABI/testing/sysfs-class-net). An interface that is
 * administratively down reads no carrier at all. */
#include "checks/check.h"
#include "common.h"

#include <string.h>

struct netdev_ctx {
	struct nccl_list hca;
	const struct nccl_var *hv;
};

static void judge(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *lbl,
		  void *ud)
{
	const struct inventory *inv = c->inv;
	struct netdev_ctx *x = ud;
	const struct netdev *n = net_find(&inv->net, p->netdev);
	if (!n) {
		struct finding *f = check_add(c, STATUS_FAIL, lbl, "RoCE port has no network interface%s%s%s",
					      p->netdev ? " (" : "", p->netdev ? p->netdev : "",
					      p->netdev ? " is named but missing)" : "");
		finding_hint(f, "the mlx5_core/mlx4_en Ethernet driver must create the netdev: "
				"`dmesg | grep -i mlx`");
		return;
	}
	bool up = n->operstate && !strcmp(n->operstate, "up");
	if (up && n->carrier == 1) {
		check_add(c, STATUS_OK, n->name, "up with carrier (%s)", lbl);
		return;
	}
	if (port_unused(inv, &x->hca, d, p)) {
		check_add(c, STATUS_INFO, n->name, "operstate %s (%s): no address, no bond, not named in "
						   "NCCL_IB_HCA: unused, see rdma.port_state",
			  n->operstate ? n->operstate : "unknown", lbl);
		return;
	}
	if (x->hv && !nccl_list_selects(&x->hca, d->name, (int)p->num)) {
		check_add(c, STATUS_SKIP, n->name, "operstate %s (%s); NCCL_IB_HCA excludes this port, "
						   "see rdma.port_state",
			  n->operstate ? n->operstate : "unknown", lbl);
		return;
	}
	struct finding *f = check_add(c, STATUS_FAIL, n->name, "operstate %s, carrier %s (%s)",
				      n->operstate ? n->operstate : "unknown",
				      n->carrier == 1 ? "1" : n->carrier == 0 ? "0" : "unreadable (link down)", lbl);
	finding_hint(f, "`ip link set dev %s up`; if it stays down, check the cable/transceiver "
			"(`ethtool %s`) and the switch port",
		     n->name, n->name);
}

static int run(struct check_ctx *c)
{
	struct netdev_ctx x;
	x.hv = nccl_hca(c->inv, &x.hca);
	roce_ports_each(c, false, "a RoCE network interface is needed", "nothing runs over Ethernet netdevs", judge,
			&x);
	nccl_list_free(&x.hca);
	return 0;
}

const struct check_def check_rdma_netdev = {
	.id = "rdma.netdev",
	.section = "RDMA Ports",
	.summary = "each RoCE port's network interface is up with carrier",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
