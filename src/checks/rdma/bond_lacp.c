/* rdma.bond_lacp: an 802.3ad bond that carries RDMA has an LACP partner
 * on every slave that is up.
 *
 * In 802.3ad mode each slave exchanges LACPDUs with the switch; a slave
 * that hears none keeps default partner values (its actor state has the
 * Defaulted bit, 0x40, and lacks Synchronization, 0x08: IEEE 802.1AX;
 * bits in include/uapi/linux/if_bonding.h, read from
 * bonding_slave/ad_actor_oper_port_state, Linux
 * drivers/net/bonding/bond_sysfs_slave.c), ends in an aggregator of its
 * own, and the bond's active aggregator (bonding/ad_num_ports) holds fewer
 * ports than are up; the partner MAC (bonding/ad_partner_mac, readable
 * with CAP_NET_ADMIN only) reads 00:00:00:00:00:00 (Linux
 * Documentation/networking/bonding.rst, 802.3ad). The usual cause: the
 * switch ports are not one LACP port-channel (MLAG across two switches);
 * 802.3ad needs LACP on the switch side (NVIDIA Onyx User Manual, "Server
 * Configuration"). The switch's configuration itself cannot be read here;
 * this is the host's half. Slaves that are down are rdma.bond_links'. */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>
#include <string.h>

struct lacp {
	size_t up, no_partner, known, aggs;
	int agg_ids[8];
	struct strbuf lonely, up_list;
};

static void scan(const struct bond *b, struct lacp *l)
{
	for (size_t i = 0; i < b->n_slaves; i++) {
		const struct bond_slave *s = &b->slaves[i];
		if (!bond_slave_up(s))
			continue;
		strbuf_addf(&l->up_list, "%s%s", l->up++ ? ", " : "", s->name);
		if (s->actor_state >= 0) {
			l->known++;
			if ((s->actor_state & BOND_LACP_DEFAULTED) || !(s->actor_state & BOND_LACP_SYNC))
				strbuf_addf(&l->lonely, "%s%s (actor state 0x%02x%s)", l->no_partner++ ? ", " : "",
					    s->name, (unsigned)s->actor_state,
					    s->actor_state & BOND_LACP_DEFAULTED ? ": Defaulted, no LACPDU received"
										 : ": not in sync");
		}
		if (s->aggregator_id < 0)
			continue;
		size_t k = 0;
		while (k < l->aggs && l->agg_ids[k] != s->aggregator_id)
			k++;
		if (k == l->aggs && l->aggs < sizeof(l->agg_ids) / sizeof(l->agg_ids[0]))
			l->agg_ids[l->aggs++] = s->aggregator_id;
	}
}

static void judge(struct check_ctx *c, const struct bond *b)
{
	struct lacp l = { .lonely = STRBUF_INIT, .up_list = STRBUF_INIT };
	scan(b, &l);
	bool zero_mac = b->ad_partner_mac && !strcmp(b->ad_partner_mac, "00:00:00:00:00:00");
	bool short_agg = b->ad_num_ports >= 0 && (size_t)b->ad_num_ports < l.up;
	if (l.up == 0) {
		check_add(c, STATUS_SKIP, b->name, "802.3ad with no slave up (see rdma.bond_links)");
	} else if (l.no_partner || zero_mac || l.aggs > 1 || short_agg) {
		struct finding *f = check_add(c, STATUS_FAIL, b->name,
					      "802.3ad without an LACP partner on %s: the switch does not aggregate "
					      "the links, so traffic stays on %s",
					      l.no_partner ? l.lonely.buf : l.up_list.buf,
					      b->ad_num_ports == 1 ? "one link" : "the active aggregator's ports");
		if (zero_mac)
			finding_detail(f, "/sys/class/net/%s/bonding/ad_partner_mac reads 00:00:00:00:00:00", b->name);
		if (b->ad_num_ports >= 0)
			finding_detail(f, "active aggregator: %d of %zu up slave%s (bonding/ad_num_ports)", b->ad_num_ports,
				       l.up, l.up == 1 ? "" : "s");
		if (l.aggs > 1)
			finding_detail(f, "the up slaves are in %zu different aggregators (bonding_slave/ad_aggregator_id)",
				       l.aggs);
		finding_hint(f, "configure the switch ports of %s as one LACP port-channel (MLAG across two "
				"switches); `cat /proc/net/bonding/%s` then shows the partner's MAC on every slave",
			     l.up_list.buf, b->name);
	} else if (l.known == 0 && b->ad_num_ports < 0 && !b->ad_partner_mac) {
		check_add(c, STATUS_SKIP, b->name, "802.3ad, but neither bonding_slave/ad_actor_oper_port_state, "
						   "bonding/ad_num_ports nor bonding/ad_partner_mac could be read");
	} else {
		check_add(c, STATUS_OK, b->name, "802.3ad: LACP partner %s, %zu up slave%s in one aggregator",
			  b->ad_partner_mac ? b->ad_partner_mac : "in sync on every slave", l.up, l.up == 1 ? "" : "s");
	}
	strbuf_release(&l.lonely);
	strbuf_release(&l.up_list);
}

static void one(struct check_ctx *c, const struct bond *b)
{
	if (b->mode < 0)
		check_add(c, STATUS_SKIP, b->name, "/sys/class/net/%s/bonding/mode unreadable: LACP cannot be judged",
			  b->name);
	else if (b->mode != BOND_8023AD)
		check_add(c, STATUS_SKIP, b->name, "mode %s: no LACP", b->mode_name);
	else
		judge(c, b);
}

static int run(struct check_ctx *c)
{
	bonds_with_rdma(c, one);
	return 0;
}

const struct check_def check_rdma_bond_lacp = {
	.id = "rdma.bond_lacp",
	.section = "RoCE Link Aggregation",
	.summary = "an 802.3ad bond that carries RDMA has an LACP partner on every slave that is up (host side)",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
