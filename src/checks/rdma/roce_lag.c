/* rdma.roce_lag: a bond over both ports of one ConnectX card has formed
 * RoCE LAG.
 *
 * mlx5 enters RoCE LAG when all the physical functions of one card, and
 * nothing else, are the slaves of one bond in mode active-backup (1),
 * balance-xor (2) or 802.3ad (4): one RDMA device, mlx5_bond_<n>, then
 * stands for both ports and fails over with the bond (Linux commit
 * 7907f23adc18; drivers/net/ethernet/mellanox/mlx5/core/lag/lag.c;
 * NVIDIA, "How to Configure RoCE over LAG (ConnectX-4/ConnectX-5/
 * ConnectX-6)"; NVIDIA DOCA, "Link Aggregation"). Two per-port devices
 * left on such a card mean the LAG did not form: RoCE does not follow the
 * bond, so a port failure breaks the QPs on it and NCCL sees two NICs of
 * one port each. The causes: a mode LAG does not support (balance-rr,
 * broadcast, balance-tlb, balance-alb), or, with a supported mode, SR-IOV
 * VFs or switchdev mode on a PF (lag.c requires neither), which the
 * kernel log names. A bond over ports of several cards, or with other
 * slaves, cannot form LAG and is not judged (NVIDIA DGX BasePOD bonds one
 * port of each of two cards for storage). */
#include "checks/check.h"
#include "common.h"

#include "core/readers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void slave_list(const struct bond *b, struct strbuf *sb)
{
	for (size_t i = 0; i < b->n_slaves; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", b->slaves[i].name);
}

static void not_formed(struct check_ctx *c, const struct bond *b, const struct bond_lag *l, const char *slaves)
{
	struct strbuf devs = STRBUF_INIT;
	for (size_t i = 0; i < l->n_per_port; i++)
		strbuf_addf(&devs, "%s%s", i ? " and " : "", l->per_port[i]->name);
	const char *mode = b->mode_name ? b->mode_name : "unreadable";
	bool capable = bond_mode_lag_capable(b->mode);
	struct finding *f = check_add(c, STATUS_FAIL, b->name,
				      "bonds both ports of the ConnectX card at %s (%s), but RoCE LAG is not formed: "
				      "%s remain%s, one per port, so RoCE traffic does not follow the bond (no failover, "
				      "one port per QP)",
				      l->card, slaves, devs.buf, l->n_per_port == 1 ? "s" : "");
	if (b->mode >= 0 && !capable) {
		finding_detail(f, "bond mode %s (%d) is not one mlx5 RoCE LAG supports: active-backup (1), "
				  "balance-xor (2) or 802.3ad (4)",
			       mode, b->mode);
		finding_hint(f, "set the bond's mode to 802.3ad (with an LACP port-channel on the switch), "
				"balance-xor or active-backup in its network configuration (netplan: mode: 802.3ad "
				"under bonds: %s: parameters:), then `netplan apply`; `rdma link show` then lists "
				"an mlx5_bond device",
			     b->name);
	} else {
		if (b->mode < 0)
			finding_detail(f, "/sys/class/net/%s/bonding/mode: %s", b->name, read_strerror(b->mode_err));
		else
			finding_detail(f, "bond mode %s supports RoCE LAG: SR-IOV virtual functions or switchdev "
					  "mode on a PF keep mlx5 from forming it",
				       mode);
		finding_hint(f, "`dmesg | grep -i lag` names the reason; remove unneeded VFs (`echo 0 > "
				"/sys/class/net/%s/device/sriov_numvfs`) and check `cat /proc/net/bonding/%s`",
			     b->n_slaves ? b->slaves[0].name : b->name, b->name);
	}
	strbuf_release(&devs);
}

static void judge(struct check_ctx *c, const struct bond *b)
{
	struct bond_lag l;
	bond_lag_describe(c->inv, b, &l);
	struct strbuf slaves = STRBUF_INIT;
	slave_list(b, &slaves);
	if (b->n_slaves == 0)
		check_add(c, STATUS_SKIP, b->name, "/sys/class/net/%s/bonding/slaves lists no slaves (see rdma.bond_links)",
			  b->name);
	else if (l.shape != BOND_ONE_CARD)
		check_add(c, STATUS_SKIP, b->name,
			  "its slaves (%s) are not exactly the ports of one ConnectX card: mlx5 RoCE LAG does not "
			  "apply, RDMA uses the per-port devices",
			  slaves.buf);
	else if (l.lag)
		check_add(c, STATUS_OK, b->name, "%s over both ports of the ConnectX card at %s (%s): RoCE LAG device %s",
			  b->mode_name ? b->mode_name : "mode unreadable", l.card, slaves.buf, l.lag->name);
	else if (l.n_per_port == 0)
		check_add(c, STATUS_SKIP, b->name, "bonds the ConnectX card at %s (%s), which has no RDMA device "
						   "(see rdma.devices)",
			  l.card, slaves.buf);
	else
		not_formed(c, b, &l, slaves.buf);
	strbuf_release(&slaves);
}

static int run(struct check_ctx *c)
{
	const struct net_info *n = &c->inv->net;
	size_t judged = 0;
	for (size_t i = 0; i < n->n_bonds; i++) {
		const struct bond *b = &n->bonds[i];
		if (b->slaves_err < 0 && b->slaves_err != -ENODATA) {
			struct finding *f = check_add(c, STATUS_WARN, b->name,
						      "/sys/class/net/%s/bonding/slaves: %s: cannot tell whether it "
						      "bonds ConnectX ports",
						      b->name, read_strerror(b->slaves_err));
			finding_hint(f, "`cat /proc/net/bonding/%s`", b->name);
			judged++;
			continue;
		}
		if (!bond_carries_rdma(c->inv, b))
			continue;
		judge(c, b);
		judged++;
	}
	if (judged == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no bond carries RDMA");
	return 0;
}

const struct check_def check_rdma_roce_lag = {
	.id = "rdma.roce_lag",
	.section = "RoCE Link Aggregation",
	.summary = "a bond over both ports of one ConnectX card has formed RoCE LAG (one mlx5_bond device)",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
