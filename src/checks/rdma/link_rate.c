/* rdma.link_rate: each active port runs at the rate its siblings and its
 * Ethernet link say it should.
 *
 * A port slower than the fastest port of the same NIC model in the node, or
 * a RoCE port whose netdev speed is below the port's rate, is a warn: a bad
 * cable or transceiver, or a link that trained at a lower speed (a
 * typical case: 1139 MB/s = a 10G negotiation on a 40G ConnectX-3 link,
 * fixed by a new DAC cable). On RoCE the `rate` file only approximates the Ethernet speed
 * (Linux drivers/infiniband/hw/mlx5/main.c maps PTYS speeds to IB names), so the netdev speed
 * (Mb/s) is the real value. --link-rate sets a site minimum. */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

/* The rate of a port in Gb/s: the netdev speed for RoCE when known. The
 * netdev of a RoCE LAG port is the bond, whose speed is the sum of its up
 * slaves' (Linux drivers/net/bonding/bond_main.c), so one physical port's
 * rate is its fastest up slave's; a slave that is down is
 * rdma.bond_links'. */
static double port_gbps(const struct inventory *inv, const struct rdma_port *p)
{
	const struct bond *b = port_is_roce(p) ? port_bond(inv, p) : NULL;
	if (b) {
		int64_t best = 0;
		for (size_t i = 0; i < b->n_slaves; i++) {
			int64_t mbps = netdev_mbps(inv, b->slaves[i].name);
			if (bond_slave_up(&b->slaves[i]) && mbps > best)
				best = mbps;
		}
		return best > 0 ? (double)best / 1000.0 : p->rate_gbps;
	}
	const struct netdev *n = port_is_roce(p) ? net_find(&inv->net, p->netdev) : NULL;
	if (n && n->speed > 0)
		return (double)n->speed / 1000.0;
	return p->rate_gbps;
}

/* The fastest active port of each NIC model, found in one pass over the
 * ports: a node has a handful of models, and asking every port for its
 * model's best by scanning all ports again grew as the square of the ports
 * (perf/many-rdma.sh). */
struct model_best {
	const char *model;
	double gbps;
};

struct model_bests {
	struct model_best *v;
	size_t n;
};

static void model_bests_load(const struct inventory *inv, struct model_bests *mb)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		if (!port_active(p) || rdma_dev_nvswitch_mgmt(inv, d))
			continue;
		const char *model = rdma_dev_model(inv, d);
		double gbps = port_gbps(inv, p);
		size_t i = 0;
		while (i < mb->n && strcmp(mb->v[i].model, model))
			i++;
		if (i == mb->n) {
			mb->v = xreallocarray(mb->v, mb->n + 1, sizeof(*mb->v));
			mb->v[mb->n++] = (struct model_best){ .model = model, .gbps = 0 };
		}
		if (gbps > mb->v[i].gbps)
			mb->v[i].gbps = gbps;
	}
}

static double model_best(const struct model_bests *mb, const char *model)
{
	for (size_t i = 0; i < mb->n; i++)
		if (!strcmp(mb->v[i].model, model))
			return mb->v[i].gbps;
	return 0;
}

static void one(struct check_ctx *c, const struct model_bests *mb, const struct rdma_dev *d,
		const struct rdma_port *p)
{
	const struct inventory *inv = c->inv;
	char lbl[96];
	port_label(d, p, lbl, sizeof(lbl));
	if (rdma_dev_nvswitch_mgmt(inv, d)) {
		check_add(c, STATUS_SKIP, lbl, "%s: its rate is not judged (%s)", NVSWITCH_MGMT_WHY,
			  p->rate ? p->rate : "no rate");
		return;
	}
	if (!port_active(p)) {
		check_add(c, STATUS_SKIP, lbl, "port not active; no rate to judge (%s)", p->rate ? p->rate : "no rate");
		return;
	}
	if (p->rate_gbps <= 0) {
		check_add(c, STATUS_SKIP, lbl, "rate unreadable under the root");
		return;
	}
	if (p->netdev && !port_link_known(c, d, p, "the speed of its network interface"))
		return;
	const struct netdev *n = port_is_roce(p) && !port_bond(inv, p) ? net_find(&inv->net, p->netdev) : NULL;
	double gbps = port_gbps(inv, p);
	const char *model = rdma_dev_model(inv, d);
	double best = model_best(mb, model);
	struct finding *f;

	if (n && n->speed > 0 && (double)n->speed / 1000.0 < p->rate_gbps) {
		f = check_add(c, STATUS_WARN, lbl, "%s runs at %g Gb/s but the port reports %s",
			      n->name, (double)n->speed / 1000.0, p->rate);
		finding_compare_num(f, (double)n->speed / 1000.0, p->rate_gbps);
		finding_hint(f, "the link trained below its rate: reseat or replace the cable/transceiver, "
				"check `ethtool %s` (Speed, Link partner advertised) and the switch port",
			     n->name);
	} else if (gbps < best) {
		f = check_add(c, STATUS_WARN, lbl, "%g Gb/s, slower than other %s ports on this node (%g Gb/s)", gbps,
			      model, best);
		finding_compare_num(f, gbps, best);
		finding_hint(f, "a slow port drags down every collective that uses it: check the cable "
				"(`mlxlink -d %s` if MFT is installed) and the switch port speed",
			     d->pci_bdf ? d->pci_bdf : d->name);
	} else if (c->expect->link_rate > 0 && gbps < c->expect->link_rate) {
		f = check_add(c, STATUS_WARN, lbl, "%g Gb/s, below the expected %g Gb/s (--link-rate)", gbps,
			      c->expect->link_rate);
		finding_compare_num(f, gbps, c->expect->link_rate);
		finding_hint(f, "check the cable, transceiver and switch port; or set link_rate in "
				"/etc/gpuready.conf to what this site runs");
	} else {
		const char *via = n ? ", netdev " : port_bond(inv, p) ? ", each port of " : "";
		check_add(c, STATUS_OK, lbl, "%g Gb/s (%s)%s%s", gbps, p->rate, via, n ? n->name : *via ? p->netdev : "");
	}
}

static int run(struct check_ctx *c)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	struct model_bests mb = { 0 };
	size_t ports = 0;
	model_bests_load(c->inv, &mb);
	for_each_rdma_port(&c->inv->rdma, d, p) {
		one(c, &mb, d, p);
		ports++;
	}
	free(mb.v);
	if (ports == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA ports to check");
	return 0;
}

const struct check_def check_rdma_link_rate = {
	.id = "rdma.link_rate",
	.section = "Link Rate",
	.summary = "active ports run as fast as their siblings, their Ethernet link and --link-rate",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
