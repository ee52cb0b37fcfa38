/* rdma.roce_pfc: the NIC trusts DSCP and has PFC on for the priority of
 * the RoCE class.
 *
 * On a lossless RoCE fabric the NIC classifies received packets by their
 * DSCP ("trust dscp"), maps the class's DSCP to a priority, and sends PFC
 * pause frames for that priority when its buffer fills; the switch does
 * the same the other way. When the NIC trusts PCP while the fabric marks
 * DSCP, or PFC is off for the class's priority, the class is lossy:
 * drops and retransmissions under load (NVIDIA MLNX_OFED documentation,
 * "Quality of Service" and "RoCE Lossless Configuration": `mlnx_qos
 * --trust dscp --pfc 0,0,0,1,0,0,0,0` for DSCP 26 on priority 3).
 *
 * The state comes from rtnetlink DCB (inventory net.dcb: live, or
 * .gpuready/dcb): the IEEE PFC bitmap and the DSCP APP entries, which mlx5
 * keeps exactly while the port trusts DSCP (en_dcbnl.c
 * mlx5e_dcbnl_dscp_app). The class judged is the expected ToS (--tos,
 * default 104 = DSCP 26), the one rdma.nccl_ib_tc requires NCCL_IB_TC to
 * carry; its priority is read from the APP table, not assumed.
 *
 * Lossy RoCE is a design, not a fault: NVIDIA's switch software has a
 * "lossy" RoCE mode with ECN and without PFC (NVIDIA Cumulus Linux User
 * Guide, "RDMA over Converged Ethernet - RoCE": PFC on priority 3 only in
 * lossless mode). So a port with PFC on no priority at all is information
 * (lossy RoCE, with what ECN shows), never a warning; PFC on some
 * priorities but not on the class's, or on an mlx5 port that trusts PCP,
 * shows a lossless design that misses the class: warn. A netdev without
 * DCB operations (a VF, veth, virtio) or a tree without .gpuready/dcb
 * gives skip. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* DCB_CAP_DCBX_HOST (include/uapi/linux/dcbnl.h): the host's LLDP agent
 * runs DCBX. mlx5 reports VER_CEE | VER_IEEE, with HOST only in host mode
 * (en_dcbnl.c mlx5e_dcbnl_initialize): 0x0d, or 0x0c with the firmware's
 * DCBX. */
#define DCBX_HOST 0x01

/* On a warning: DCBX run by the NIC's firmware takes PFC from the switch. */
static void dcbx_note(struct finding *f, const struct dcb_port *dp)
{
	if (dp->dcbx >= 0 && !(dp->dcbx & DCBX_HOST))
		finding_detail(f, "DCBX is not run by the host (dcbx 0x%02x): the NIC negotiates PFC with the switch over "
				  "LLDP, so the switch port's PFC configuration decides as well",
			       (unsigned)dp->dcbx);
}

static const char *prio_list(int bits, char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int k = 0; k < 8 && off < size; k++)
		if (bits & (1 << k))
			off += (size_t)snprintf(buf + off, size - off, "%s%d", off ? "," : "", k);
	return buf;
}

/* What ECN (DCQCN) shows for the priority, for the lossy case. */
static const char *ecn_state(const struct netdev *nd, int prio)
{
	if (nd->ecn_err < 0)
		return "the DCQCN state is not in sysfs (inbox driver: firmware defaults)";
	if (nd->ecn[ECN_NP][prio] == 1 && nd->ecn[ECN_RP][prio] == 1)
		return "DCQCN is on for it (roce_np and roce_rp)";
	if (nd->ecn[ECN_NP][prio] == 0 || nd->ecn[ECN_RP][prio] == 0)
		return "DCQCN is off for it (see rdma.roce_ecn)";
	return "its DCQCN state cannot be read (see rdma.roce_ecn)";
}

/* mlx5 trusting PCP (no DSCP APP entries) is a lossless design of its own
 * when untagged RoCE traffic (priority 0) has PFC, or when the port's RoCE
 * GIDs sit on an upper device (a VLAN), whose egress map sets the PCP:
 * information then, not a warning. */
static bool pcp_may_be_intended(struct check_ctx *c, const char *subject, const struct netdev *nd,
				const struct rdma_port *p, const struct dcb_port *dp, const char *on)
{
	const char *upper = NULL;
	for (size_t k = 0; p && k < p->n_gids && !upper; k++)
		if (p->gids[k].ndev && strcmp(p->gids[k].ndev, nd->name) && (!nd->master || strcmp(p->gids[k].ndev, nd->master)))
			upper = p->gids[k].ndev;
	if (!(dp->pfc_en & 1) && !upper)
		return false;
	struct finding *f = check_add(c, STATUS_INFO, subject, "%s trusts PCP (no DSCP APP entries), PFC on priority %s: "
							       "RoCE packets are classified by their VLAN priority",
				      nd->name, on);
	if (upper)
		finding_detail(f, "the port's RoCE GIDs are on %s (an upper device such as a VLAN): its egress map sets "
				  "the priority",
			       upper);
	else
		finding_detail(f, "untagged packets are priority 0, which has PFC");
	return true;
}

static void judge_netdev(struct check_ctx *c, const char *subject, const struct netdev *nd, void *ud)
{
	const struct dcb_info *di = &c->inv->net.dcb;
	const struct dcb_port *dp = dcb_find(di, nd->name);
	int dscp = tos_dscp(c->expect->tos);
	char on[32];
	struct finding *f;
	if (!dp) {
		check_add(c, STATUS_SKIP, subject, "no DCB state of %s in %s (not queried)", nd->name, di->source);
		return;
	}
	if (dp->err == -EOPNOTSUPP) {
		check_add(c, STATUS_SKIP, subject, "%s has no DCB support (EOPNOTSUPP; a virtual function, veth or "
						   "virtio NIC): its PFC and trust state are set elsewhere",
			  nd->name);
		return;
	}
	if (dp->err < 0 || dp->pfc_en < 0) {
		check_add(c, STATUS_SKIP, subject, "PFC state of %s cannot be read (%s: %s)", nd->name, di->source,
			  dp->err < 0 ? strerror(-dp->err) : "the driver reports no IEEE PFC");
		return;
	}
	if (dp->pfc_en == 0) {
		int prio = roce_dscp_prio(c->inv, nd->name, dscp, NULL);
		f = check_add(c, STATUS_INFO, subject, "lossy RoCE: PFC is on no priority of %s, so the RoCE class (DSCP %d) "
						       "relies on ECN and retransmission; for priority %d %s",
			      nd->name, dscp, prio, ecn_state(nd, prio));
		finding_detail(f, "a lossless fabric needs PFC on that priority here and on the switch ports");
		return;
	}
	prio_list(dp->pfc_en, on, sizeof(on));
	const struct pci_dev *fn = nd->pci_bdf ? pci_find(&c->inv->pci, nd->pci_bdf) : NULL;
	if (!dp->dscp_set && !(fn && fn->driver && !strcmp(fn->driver, "mlx5_core"))) {
		check_add(c, STATUS_SKIP, subject, "%s has no DSCP APP entries; whether its driver (%s) then trusts PCP is "
						   "not known (mlx5 keeps them exactly while it trusts DSCP)",
			  nd->name, fn && fn->driver ? fn->driver : "unknown");
		return;
	}
	if (!dp->dscp_set && pcp_may_be_intended(c, subject, nd, ud, dp, on))
		return;
	if (!dp->dscp_set) {
		/* the priority to map the class to: the default map's (DSCP/8) when
		 * PFC is on there, else the lowest lossless one */
		int to = dp->pfc_en & (1 << (dscp >> 3)) ? dscp >> 3 : __builtin_ctz((unsigned)dp->pfc_en);
		f = check_add(c, STATUS_WARN, subject, "%s trusts PCP (no DSCP APP entries) while PFC is on priority %s: "
						       "it classifies RoCE v2 packets by their VLAN priority, not by DSCP %d, "
						       "so the lossless class does not apply to them",
			      nd->name, on, dscp);
		finding_hint(f, "`dcb app add dev %s dscp-prio %d:%d` (mlx5 then trusts DSCP) or, with MLNX_OFED/DOCA, "
				"`mlnx_qos -i %s --trust dscp`; and again at every boot",
			     nd->name, dscp, to, nd->name);
		dcbx_note(f, dp);
		return;
	}
	if (!(dp->dscp_set & (UINT64_C(1) << dscp))) {
		check_add(c, STATUS_SKIP, subject, "%s trusts DSCP but no APP entry maps DSCP %d: its priority cannot be "
						   "told",
			  nd->name, dscp);
		return;
	}
	int prio = dp->dscp_prio[dscp];
	if (dp->pfc_en & (1 << prio)) {
		check_add(c, STATUS_OK, subject, "%s trusts DSCP, DSCP %d maps to priority %d, PFC on (priority %s)",
			  nd->name, dscp, prio, on);
		return;
	}
	f = check_add(c, STATUS_WARN, subject, "PFC is off on %s for priority %d, which the RoCE class (DSCP %d) maps to, "
					       "while on for priority %s: the class is lossy on a lossless fabric "
					       "(drops and retransmissions under load)",
		      nd->name, prio, dscp, on);
	char list[32];
	for (int k = 0; k < 8; k++)
		snprintf(list + 2 * k, sizeof(list) - 2 * (size_t)k, "%d%s", (dp->pfc_en | 1 << prio) >> k & 1,
			 k < 7 ? "," : "");
	finding_hint(f, "`dcb pfc set dev %s prio-pfc %d:on` or, with MLNX_OFED/DOCA, `mlnx_qos -i %s --pfc %s`, "
			"matching the switch, and again at every boot",
		     nd->name, prio, nd->name, list);
	dcbx_note(f, dp);
}

static void judge(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *lbl,
		  void *ud)
{
	(void)d;
	(void)ud;
	/* the port goes to judge_netdev: its GIDs say whether PCP trust is intended */
	roce_port_netdevs(c, lbl, p, "PFC", judge_netdev, (void *)p);
}

static int run(struct check_ctx *c)
{
	const struct dcb_info *di = &c->inv->net.dcb;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	bool roce = false;
	for_each_rdma_port(&c->inv->rdma, d, p)
		roce |= port_is_roce(p) && port_active(p);
	if (roce && !di->known) {
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "%s: PFC and DSCP trust are not judged", di->why);
		return 0;
	}
	roce_ports_each(c, true, "PFC (RoCE only)", "InfiniBand is lossless by credit-based flow control", judge, NULL);
	return 0;
}

const struct check_def check_rdma_roce_pfc = {
	.id = "rdma.roce_pfc",
	.section = "RoCE Traffic Class (QoS)",
	.summary = "the RoCE NICs trust DSCP and have PFC on for the priority of the expected ToS (--tos), or run lossy RoCE",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
