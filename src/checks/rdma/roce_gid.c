/* rdma.roce_gid: every active RoCE port has a RoCE v2 GID bound to an IP.
 *
 * The kernel adds a RoCE v2 GID for each IP address of the port's netdev
 * (IPv4 as ::ffff:a.b.c.d); NCCL (>= 2.21, NCCL_IB_GID_INDEX unset) and
 * perftest pick it by default (NCCL documentation, Environment Variables, NCCL_IB_GID_INDEX;
 * perftest src/perftest_communication.c). No such GID means the
 * interface has no IP address: RoCE v2 cannot route. The finding reports the
 * index the way `show_gids` does, with the whole table in the details. */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>
#include <string.h>

static void table(struct finding *f, const struct rdma_dev *d, const struct rdma_port *p)
{
	finding_detail(f, "DEV     PORT INDEX GID                                     IPv4            VER DEV");
	for (size_t i = 0; i < p->n_gids; i++) {
		const struct rdma_gid *g = &p->gids[i];
		char ip[32] = "";
		gid_ipv4(g, ip, sizeof(ip));
		const char *ver = !g->type ? "?" : gid_is_v2(g) ? "v2" : "v1";
		finding_detail(f, "%-7s %-4u %-5u %-39s %-15s %-3s %s", d->name, p->num, g->index, g->gid, ip, ver,
			       g->ndev ? g->ndev : "");
	}
}

static void one(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p)
{
	char lbl[96], ip[32];
	port_label(d, p, lbl, sizeof(lbl));
	struct finding *f;
	if (!p->gid_types_known) {
		/* Recorded trees from old kernels lack gid_attrs. */
		for (size_t i = 0; i < p->n_gids; i++)
			if (gid_ipv4(&p->gids[i], ip, sizeof(ip))) {
				f = check_add(c, STATUS_WARN, lbl,
					      "GID index %u holds %s, but gid_attrs/types is missing: cannot confirm "
					      "it is RoCE v2",
					      p->gids[i].index, ip);
				finding_hint(f, "read /sys/class/infiniband/%s/ports/%u/gid_attrs/types/%u on the live "
						"node (needs kernel 4.9+)",
					     d->name, p->num, p->gids[i].index);
				table(f, d, p);
				return;
			}
	}
	const struct rdma_gid *g = port_best_gid(p);
	if (!g) {
		f = check_add(c, STATUS_FAIL, lbl, "no RoCE v2 GID with an IPv4 or global IPv6 address%s%s%s",
			      p->netdev ? ": " : "", p->netdev ? p->netdev : "",
			      p->netdev ? " has no IP address" : "");
		finding_hint(f, "give the interface its RDMA-network address, e.g. `ip addr add 10.0.0.1/24 dev %s` "
				"and persist it in netplan; the kernel then adds the RoCE v2 GID",
			     p->netdev ? p->netdev : "<netdev>");
		table(f, d, p);
		return;
	}
	const char *addr = gid_ipv4(g, ip, sizeof(ip)) ? ip : g->gid;
	f = check_add(c, STATUS_OK, lbl, "RoCE v2 GID index %u = %s (%s)", g->index, addr,
		      g->ndev ? g->ndev : p->netdev ? p->netdev : "netdev unknown");
	table(f, d, p);
}

static void judge(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *lbl,
		  void *ud)
{
	(void)lbl;
	(void)ud;
	one(c, d, p);
}

static int run(struct check_ctx *c)
{
	roce_ports_each(c, true, "a RoCE v2 GID is needed", "InfiniBand ports address by LID", judge, NULL);
	return 0;
}

const struct check_def check_rdma_roce_gid = {
	.id = "rdma.roce_gid",
	.section = "RoCE v2 GIDs",
	.summary = "each active RoCE port has a RoCE v2 GID bound to an IPv4 or global IPv6 address",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
