/* rdma.roce_subnets: RoCE interfaces that share an IPv4 subnet answer for
 * each other only when ARP is told not to.
 *
 * With default sysctls Linux answers ARP for any local address on any
 * interface (arp_ignore 0) and may announce any local source address
 * (arp_announce 0) (Linux Documentation/networking/ip-sysctl.rst). With
 * several RoCE NICs in one subnet, a peer may then learn rail 1's MAC for
 * rail 3's address, and RoCE v2, which resolves its peer through the
 * kernel's neighbour table, sends over the wrong port or gets completion
 * errors between some NIC pairs only (NVIDIA/nccl issues 1269 and 1405;
 * openucx/ucx issue 5598). The remedy is one subnet per rail, or
 * arp_ignore 1 and arp_announce 2 (the kernel takes the larger of
 * conf/all and conf/<interface>) with a routing table per interface.
 * Policy rules (`ip rule`) are not in any file, so that part is named, not
 * judged. Addresses come from the inventory (live getifaddrs, or
 * .gpuready/ifaddrs). */
#include "checks/check.h"
#include "common.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

struct roce_if {
	const char *netdev, *dev;  /* "ens1f0np0", "mlx5_0" */
	unsigned port;
	const struct netdev *nd;
	uint32_t net, mask;        /* host order */
	unsigned prefix;
	const char *addr;
	bool grouped;
};

static int eff(int all, int one)
{
	return all < 0 || one < 0 ? -1 : all > one ? all : one;
}

/* Collects each RoCE port's netdev IPv4 addresses (routable ones). */
static size_t collect(const struct inventory *inv, struct roce_if **out)
{
	size_t n = 0, cap = 0;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		if (!p->link_layer || strcmp(p->link_layer, "Ethernet") || !p->netdev)
			continue;
		for (size_t i = 0; i < inv->net.n_addrs; i++) {
			const struct net_addr *a = &inv->net.addrs[i];
			if (a->family != AF_INET || strcmp(a->ifname, p->netdev) || !net_addr_routable(a))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				*out = xreallocarray(*out, cap, sizeof(**out));
			}
			uint32_t mask = a->prefix ? 0xffffffffu << (32 - a->prefix) : 0;
			(*out)[n++] = (struct roce_if){ .netdev = p->netdev, .dev = d->name, .port = p->num, .nd = net_find(&inv->net, p->netdev),
							.net = ntohl(a->a4.s_addr) & mask, .mask = mask, .prefix = a->prefix,
							.addr = a->text };
		}
	}
	return n;
}

/* One subnet shared by v[first] and later entries: judge its ARP settings. */
static void judge_group(struct check_ctx *c, struct roce_if *v, size_t n, size_t first)
{
	const struct net_info *ni = &c->inv->net;
	struct strbuf who = STRBUF_INIT, bad = STRBUF_INIT;
	size_t members = 0;
	bool unknown = false;
	for (size_t i = first; i < n; i++) {
		if (v[i].grouped || v[i].net != v[first].net || v[i].prefix != v[first].prefix)
			continue;
		v[i].grouped = true;
		members++;
		strbuf_addf(&who, "%s%s (%s/%u, %s)", who.len ? ", " : "", v[i].netdev, v[i].dev, v[i].port, v[i].addr);
		int ig = v[i].nd ? eff(ni->all_arp_ignore, v[i].nd->arp_ignore) : -1;
		int an = v[i].nd ? eff(ni->all_arp_announce, v[i].nd->arp_announce) : -1;
		if (ig < 0 || an < 0)
			unknown = true;
		else if (ig < 1 || an < 2)
			strbuf_addf(&bad, "%s%s arp_ignore=%d arp_announce=%d", bad.len ? ", " : "", v[i].netdev, ig, an);
	}
	struct in_addr net = { .s_addr = htonl(v[first].net) };
	char subnet[64];
	snprintf(subnet, sizeof(subnet), "%s/%u", inet_ntoa(net), v[first].prefix);
	if (members < 2) {
		check_add(c, STATUS_OK, subnet, "only %s in this subnet", who.buf);
	} else if (bad.len) {
		struct finding *f = check_add(c, STATUS_WARN, subnet,
					      "%zu RoCE interfaces share one subnet: %s; with %s any of them may answer ARP "
					      "for the others' addresses, so RoCE traffic can leave through the wrong port",
					      members, who.buf, bad.buf);
		finding_hint(f, "give each rail its own subnet, or `sysctl -w net.ipv4.conf.all.arp_ignore=1` and "
				"`sysctl -w net.ipv4.conf.all.arp_announce=2` (persist them in /etc/sysctl.d/) with a "
				"routing table per interface (`ip rule show` lists the rules)");
	} else if (unknown) {
		check_add(c, STATUS_SKIP, subnet,
			  "%zu RoCE interfaces share one subnet (%s), and their ARP settings cannot be read "
			  "(/proc/sys/net/ipv4/conf/*/arp_ignore, arp_announce)",
			  members, who.buf);
	} else {
		check_add(c, STATUS_OK, subnet,
			  "%zu RoCE interfaces share one subnet (%s) with arp_ignore >= 1 and arp_announce >= 2; "
			  "the per-interface routing rules are not in any file (`ip rule show`)",
			  members, who.buf);
	}
	strbuf_release(&who);
	strbuf_release(&bad);
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	if (!inv->net.addrs_known) {
		check_add(c, STATUS_SKIP, "addresses", "the RoCE interfaces' subnets cannot be told: %s",
			  inv->net.addrs_why ? inv->net.addrs_why : "addresses unknown");
		return 0;
	}
	struct roce_if *v = NULL;
	size_t n = collect(inv, &v);
	if (n == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RoCE port whose interface has an IPv4 address (%s)", inv->net.addrs_source);
	for (size_t i = 0; i < n; i++)
		if (!v[i].grouped)
			judge_group(c, v, n, i);
	free(v);
	return 0;
}

const struct check_def check_rdma_roce_subnets = {
	.id = "rdma.roce_subnets",
	.section = "RoCE",
	.summary = "RoCE interfaces in one IPv4 subnet have arp_ignore >= 1 and arp_announce >= 2 (else ARP answers "
		   "from the wrong port)",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
