/* rdma.bond_links: every slave of a bond that carries RDMA has its link.
 *
 * A RoCE LAG device (mlx5_bond_<n>) stays ACTIVE while one of its ports
 * is up, so the RDMA port checks pass on a bond that lost a link; the
 * bond's slaves tell (bonding_slave/mii_status, Linux
 * drivers/net/bonding/bond_sysfs_slave.c; UCX counts the LAG's active
 * ports the same way, openucx/ucx#5401). In balance-xor and 802.3ad the
 * bond spreads flows over its up slaves, so a slave down takes its share
 * of the bandwidth (a fail); in active-backup one slave carries
 * everything anyway, so a backup down leaves the bandwidth and takes the
 * redundancy (a warn). Bandwidth is the sum of the up slaves' speeds
 * (/sys/class/net/<slave>/speed, Mb/s); a down slave's speed is unknown
 * and taken as the fastest slave's. */
#include "checks/check.h"
#include "common.h"

#include "core/readers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct tally {
	size_t up, down, unknown;
	int64_t up_mbps, max_mbps;
	struct strbuf down_list, unknown_list, up_list;
	const char *first_down;
};

static void count(const struct inventory *inv, const struct bond *b, struct tally *t)
{
	for (size_t i = 0; i < b->n_slaves; i++) {
		const struct bond_slave *s = &b->slaves[i];
		int64_t mbps = netdev_mbps(inv, s->name);
		if (mbps > t->max_mbps)
			t->max_mbps = mbps;
		if (!s->mii_status) {
			strbuf_addf(&t->unknown_list, "%s/sys/class/net/%s/bonding_slave/mii_status (%s)",
				    t->unknown++ ? ", " : "", s->name, read_strerror(s->mii_err));
		} else if (bond_slave_up(s)) {
			strbuf_addf(&t->up_list, "%s%s", t->up++ ? ", " : "", s->name);
			t->up_mbps += mbps;
		} else {
			strbuf_addf(&t->down_list, "%s%s (mii_status %s", t->down++ ? ", " : "", s->name, s->mii_status);
			if (s->link_failures > 0)
				strbuf_addf(&t->down_list, ", %lld link failure%s", (long long)s->link_failures,
					    s->link_failures == 1 ? "" : "s");
			strbuf_addch(&t->down_list, ')');
			if (!t->first_down)
				t->first_down = s->name;
		}
	}
}

static void degraded(struct check_ctx *c, const struct bond *b, const struct tally *t)
{
	size_t n = b->n_slaves;
	struct finding *f;
	char left[96] = "";
	if (t->max_mbps > 0)
		snprintf(left, sizeof(left), "; %lld of %lld Gb/s left", (long long)(t->up_mbps / 1000),
			 (long long)((int64_t)n * t->max_mbps / 1000));
	if (t->up == 0) {
		f = check_add(c, STATUS_FAIL, b->name, "every slave is down (%s): the bond has no link", t->down_list.buf);
	} else if (b->mode == BOND_ACTIVE_BACKUP) {
		f = check_add(c, STATUS_WARN, b->name,
			      "%zu of %zu slaves down: %s; active-backup keeps one link's bandwidth on %s, but no "
			      "redundancy is left",
			      t->down, n, t->down_list.buf, b->active_slave ? b->active_slave : t->up_list.buf);
	} else {
		f = check_add(c, STATUS_FAIL, b->name, "%zu of %zu slaves down: %s%s (%s: traffic only on %s)", t->down,
			      n, t->down_list.buf, left, b->mode_name ? b->mode_name : "mode unreadable", t->up_list.buf);
	}
	finding_hint(f, "check the cable, optic and switch port of %s (`ethtool %s`), then `ip link set dev %s up`; "
			"`cat /proc/net/bonding/%s` shows each slave's MII status",
		     t->first_down, t->first_down, t->first_down, b->name);
}

static void judge(struct check_ctx *c, const struct bond *b)
{
	struct tally t = { .down_list = STRBUF_INIT, .unknown_list = STRBUF_INIT, .up_list = STRBUF_INIT };
	count(c->inv, b, &t);
	if (t.down) {
		degraded(c, b, &t);
	} else if (t.unknown) {
		struct finding *f = check_add(c, STATUS_WARN, b->name, "cannot tell whether every slave has its link: %s",
					      t.unknown_list.buf);
		finding_hint(f, "`cat /proc/net/bonding/%s`", b->name);
	} else {
		char bw[64] = "";
		if (t.max_mbps > 0)
			snprintf(bw, sizeof(bw), ", %lld Gb/s", (long long)(t.up_mbps / 1000));
		check_add(c, STATUS_OK, b->name, "%zu of %zu slaves up (%s)%s", t.up, b->n_slaves, t.up_list.buf, bw);
	}
	strbuf_release(&t.down_list);
	strbuf_release(&t.unknown_list);
	strbuf_release(&t.up_list);
}

static void one(struct check_ctx *c, const struct bond *b)
{
	if (b->slaves_err < 0 && b->slaves_err != -ENODATA) {
		check_add(c, STATUS_SKIP, b->name, "/sys/class/net/%s/bonding/slaves: %s", b->name,
			  read_strerror(b->slaves_err));
	} else if (b->n_slaves == 0) {
		struct finding *f = check_add(c, STATUS_FAIL, b->name,
					      "carries RDMA but has no slaves (/sys/class/net/%s/bonding/slaves is empty)",
					      b->name);
		finding_hint(f, "add the ConnectX ports to %s in its network configuration, then "
				"`netplan apply`; `cat /proc/net/bonding/%s` lists them",
			     b->name, b->name);
	} else {
		judge(c, b);
	}
}

static int run(struct check_ctx *c)
{
	bonds_with_rdma(c, one);
	return 0;
}

const struct check_def check_rdma_bond_links = {
	.id = "rdma.bond_links",
	.section = "RoCE Link Aggregation",
	.summary = "every slave of a bond that carries RDMA has its link, with the bandwidth left when not",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
