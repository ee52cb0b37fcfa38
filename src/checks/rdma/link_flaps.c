/* rdma.link_flaps: the links of the RDMA ports did not go down again and
 * again since boot.
 *
 * A flapping link (a marginal cable or optic, a switch port resetting)
 * shows as sporadic NCCL timeouts while the port looks ACTIVE whenever
 * someone looks (Azure/azurehpc-health-checks azure_ib_link_flapping.nhc
 * counts "lost carrier" events). The kernel counts the transitions of a
 * netdev's carrier since the interface was created: carrier_changes, and
 * from Linux 4.16 carrier_up_count and carrier_down_count
 * (Documentation/ABI/testing/sysfs-class-net; net/core/dev.c
 * netif_carrier_off() counts a down only when the carrier was on, and a
 * driver turns the carrier off when the interface is opened). So a boot
 * gives one down (and one up): only the downs after the first are drops
 * of a link that had come up. InfiniBand ports count link_downed, the
 * times the port training state machine gave up and downed the link
 * (IBTA PortCounters LinkDownedCounter; Linux
 * Documentation/ABI/stable/sysfs-class-infiniband), which a link's normal
 * bring-up does not count.
 *
 * Drops are judged against the time since boot (/proc/uptime): one a day
 * or more on average is a link that flaps; fewer are old events (switch
 * maintenance, a reseated cable) and are ok, shown with their count. This
 * check owns the link-down counts; rdma.port_errors the other error
 * counters. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* one unexplained link drop a day of uptime, on average */
#define FLAPS_PER_DAY 1.0

struct drops {
	int64_t n;           /* drops of a link that had come up; -1 unknown */
	char how[160];       /* where n comes from */
	char unknown[160];   /* why a source could not be read */
};

static void carrier_drops(const struct netdev *nd, struct drops *out)
{
	int64_t downs;
	if (nd->carrier_down >= 0) {
		downs = nd->carrier_down;
		snprintf(out->how, sizeof(out->how), "%s carrier_down_count %lld, the first when it was opened", nd->name,
			 (long long)downs);
	} else if (nd->carrier_changes >= 0) {
		/* without the split counts: half the changes, rounded up (a link down now ended on a down) */
		downs = (nd->carrier_changes + 1) / 2;
		snprintf(out->how, sizeof(out->how), "%s carrier_changes %lld, the first down when it was opened",
			 nd->name, (long long)nd->carrier_changes);
	} else {
		snprintf(out->unknown, sizeof(out->unknown), "/sys/class/net/%s/carrier_changes: %s", nd->name,
			 read_strerror(nd->carrier_changes_err));
		return;
	}
	out->n = downs > 1 ? downs - 1 : 0;
}

static void link_downed(const struct rdma_dev *d, const struct rdma_port *p, struct drops *out)
{
	for (size_t i = 0; i < p->n_counters; i++) {
		const struct counter *k = &p->counters[i];
		if (strcmp(k->name, "link_downed"))
			continue;
		if (k->err < 0) {
			snprintf(out->unknown, sizeof(out->unknown), "/sys/class/infiniband/%s/ports/%u/counters/link_downed: %s",
				 d->name, p->num, read_strerror(k->err));
			return;
		}
		if (out->n < 0 || (int64_t)k->value > out->n) {
			out->n = (int64_t)k->value;
			snprintf(out->how, sizeof(out->how), "link_downed %llu", (unsigned long long)k->value);
		}
		return;
	}
}

static void judge(struct check_ctx *c, const char *lbl, const struct rdma_dev *d, const struct drops *dr)
{
	const struct kernel_info *k = &c->inv->kernel;
	struct finding *f;
	if (dr->n == 0) {
		check_add(c, STATUS_OK, lbl, "no link drops since the link came up (%s)", dr->how);
		return;
	}
	const char *dev = d->pci_bdf ? d->pci_bdf : d->name;
	if (k->uptime_err < 0) {
		f = check_add(c, STATUS_WARN, lbl, "the link went down %lld time%s after it came up (%s); how recently "
						   "cannot be told (/proc/uptime: %s)",
			      (long long)dr->n, dr->n == 1 ? "" : "s", dr->how, read_strerror(k->uptime_err));
	} else {
		double days = k->uptime / 86400.0;
		if ((double)dr->n < FLAPS_PER_DAY * days) {
			check_add(c, STATUS_OK, lbl, "%lld link drop%s in %.1f days since boot (%s): fewer than one a day, "
						     "old events such as switch maintenance",
				  (long long)dr->n, dr->n == 1 ? "" : "s", days, dr->how);
			return;
		}
		f = check_add(c, STATUS_WARN, lbl, "the link went down %lld time%s in %.1f hours since boot (%s): it "
						   "flaps, and NCCL jobs over it time out",
			      (long long)dr->n, dr->n == 1 ? "" : "s", k->uptime / 3600.0, dr->how);
	}
	finding_compare_num(f, (double)dr->n, 0);
	finding_hint(f, "check the cable or optic and the switch port: `mlxlink -d %s -m` shows the link's error "
			"counters and the module; `dmesg -T | grep -i -e 'link down' -e 'lost carrier'` lists when it "
			"dropped",
		     dev);
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	char lbl[96];
	size_t ports = 0;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		port_label(d, p, lbl, sizeof(lbl));
		ports++;
		const struct netdev *nd = p->netdev ? net_find(&inv->net, p->netdev) : NULL;
		if (nd && bond_find(&inv->net, nd->name)) {
			check_add(c, STATUS_SKIP, lbl, "its netdev %s is a bond: its slaves' link failures are "
						       "judged by rdma.bond_links", nd->name);
			continue;
		}
		struct drops dr = { .n = -1 };
		if (nd)
			carrier_drops(nd, &dr);
		link_downed(d, p, &dr);
		/* a source that could not be read may hide drops: no ok without it */
		if (dr.n <= 0 && (dr.unknown[0] || dr.n < 0)) {
			check_add(c, STATUS_SKIP, lbl, "link drops cannot be counted: %s",
				  dr.unknown[0] ? dr.unknown : nd ? "no carrier counts" : "no netdev and no link_downed counter");
			continue;
		}
		judge(c, lbl, d, &dr);
	}
	if (ports == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA ports to check");
	return 0;
}

const struct check_def check_rdma_link_flaps = {
	.id = "rdma.link_flaps",
	.section = "Port Health",
	.summary = "links of RDMA ports do not flap: carrier drops and link_downed since boot, against the uptime",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
