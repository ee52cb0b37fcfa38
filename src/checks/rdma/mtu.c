/* rdma.mtu: RDMA runs at the largest MTU the port supports.
 *
 * RoCE: sysfs has no MTU attribute; the kernel derives the port's active
 * MTU from the netdev MTU (Linux include/rdma/ib_addr.h, iboe_get_mtu: minus 96 bytes of
 * headers, rounded down to an IB MTU, at most 4096). Below 4096 is a warn
 * naming the netdev MTU to set: 9000, as RoCE bring-up scripts commonly do (anything
 * from 4192 gives 4096). RDMA netdevs with different MTUs in one node are a
 * warn: NCCL uses the smaller of the two sides' MTU per connection.
 * InfiniBand: the MTU is negotiated with the subnet manager; only a live
 * verbs query knows it, so it is a skip under a recorded root. */
#include "checks/check.h"
#include "common.h"

#include <string.h>

static void roce_port(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *lbl)
{
	const struct netdev *n = net_find(&c->inv->net, p->netdev);
	struct finding *f;
	if (!n || n->mtu <= 0) {
		check_add(c, STATUS_SKIP, lbl, "netdev MTU unknown%s%s", n ? " for " : "", n ? n->name : "");
		return;
	}
	int active = roce_active_mtu(n->mtu);
	if (p->verbs_ok && p->active_mtu)
		active = p->active_mtu;
	if (active < 4096) {
		f = check_add(c, STATUS_WARN, lbl, "active_mtu=%d (max 4096): %s has MTU %lld", active, n->name,
			      (long long)n->mtu);
		finding_compare_num(f, active, 4096);
		finding_hint(f, "`ip link set dev %s mtu 9000`, and make it persistent (mtu: 9000 under %s in "
				"/etc/netplan/, then `netplan apply`); the switch ports must allow jumbo frames too",
			     n->name, n->name);
	} else if (c->expect->mtu > 0 && n->mtu != c->expect->mtu) {
		f = check_add(c, STATUS_WARN, lbl, "active_mtu=4096 but %s has MTU %lld, site expects %d (--mtu)",
			      n->name, (long long)n->mtu, c->expect->mtu);
		finding_compare_num(f, (double)n->mtu, c->expect->mtu);
		finding_hint(f, "`ip link set dev %s mtu %d` (and in netplan)", n->name, c->expect->mtu);
	} else {
		check_add(c, STATUS_OK, lbl, "active_mtu=4096 (max supported), %s MTU %lld%s", n->name,
			  (long long)n->mtu, p->verbs_ok ? ", confirmed by verbs" : "");
	}
	(void)d;
}

static void ib_port(struct check_ctx *c, const struct rdma_port *p, const char *lbl)
{
	if (!p->verbs_ok) {
		check_add(c, STATUS_SKIP, lbl, "InfiniBand MTU needs a live verbs query (%s)",
			  c->inv->rdma.verbs_status ? c->inv->rdma.verbs_status : "the port could not be queried");
		return;
	}
	if (p->active_mtu < p->max_mtu) {
		struct finding *f = check_add(c, STATUS_WARN, lbl, "active_mtu=%d below max_mtu=%d", p->active_mtu,
					      p->max_mtu);
		finding_hint(f, "the subnet manager's partition MTU limits it: set mtu=4096 (mtu=5) for the "
				"partition in the SM's partitions.conf");
		return;
	}
	check_add(c, STATUS_OK, lbl, "active_mtu=%d (max supported)", p->active_mtu);
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	char lbl[96];
	size_t ports = 0;
	int64_t first_mtu = -1;
	const char *first_name = NULL;
	bool mixed = false;

	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		port_label(d, p, lbl, sizeof(lbl));
		ports++;
		if (!port_active(p)) {
			check_add(c, STATUS_SKIP, lbl, "port not active");
			continue;
		}
		if (port_is_roce(p)) {
			roce_port(c, d, p, lbl);
			const struct netdev *n = net_find(&inv->net, p->netdev);
			if (n && n->mtu > 0) {
				if (first_mtu < 0) {
					first_mtu = n->mtu;
					first_name = n->name;
				} else if (n->mtu != first_mtu) {
					mixed = true;
				}
			}
		} else if (port_is_ib(p)) {
			ib_port(c, p, lbl);
		} else if (port_link_known(c, d, p, "the RoCE or the InfiniBand MTU rule")) {
			check_add(c, STATUS_SKIP, lbl, "link layer %s: no MTU rule", p->link_layer);
		}
	}
	if (ports == 0) {
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA ports to check");
		return 0;
	}
	if (mixed) {
		struct finding *f = check_add(c, STATUS_WARN, SUBJECT_NODE,
					      "RoCE interfaces have different MTUs (%s has %lld); each connection "
					      "runs at the smaller side's MTU",
					      first_name, (long long)first_mtu);
		for_each_rdma_port(&inv->rdma, d, p) {
			const struct netdev *n = port_is_roce(p) && port_active(p) ? net_find(&inv->net, p->netdev) : NULL;
			if (n)
				finding_detail(f, "%s: MTU %lld", n->name, (long long)n->mtu);
		}
		finding_hint(f, "set the same MTU (9000) on every RDMA interface");
	}
	return 0;
}

const struct check_def check_rdma_mtu = {
	.id = "rdma.mtu",
	.section = "MTU Configuration",
	.summary = "RoCE active MTU (derived from the netdev MTU) is 4096; InfiniBand active = max",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
