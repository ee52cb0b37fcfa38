/* rdma.roce_ecn: DCQCN (ECN-based congestion control) is on for the RoCE
 * priority.
 *
 * With MLNX_OFED or DOCA-OFED, mlx5 exposes DCQCN per priority 0..7 in
 * /sys/class/net/<if>/ecn/roce_np/enable/<prio> (notification point: the
 * receiver turns ECN marks into CNPs) and ecn/roce_rp/enable/<prio>
 * (reaction point: the sender slows down on CNPs), 1 on, 0 off (NVIDIA
 * MLNX_OFED documentation and DOCA documentation, "Explicit Congestion
 * Notification (ECN)"). With either off for the priority RoCE uses,
 * congestion turns into PFC storms on a lossless fabric, or drops and
 * retransmissions on a lossy one. The priority is the one the expected
 * ToS (--tos, default 104 = DSCP 26) maps to in the NIC's DSCP APP table
 * when its DCB state is known (rdma.roce_pfc reads it), else in the
 * default DSCP map (DSCP 8n..8n+7 to priority n: DSCP 26, priority 3).
 * The inbox mlx5 driver has no ecn/ directory and leaves DCQCN at the
 * firmware's defaults, which no file shows: skip, not a finding. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <errno.h>
#include <stdio.h>

static const char *const proto_name[2] = { [ECN_NP] = "roce_np", [ECN_RP] = "roce_rp" };

static void judge_netdev(struct check_ctx *c, const char *subject, const struct netdev *nd, void *ud)
{
	(void)ud;
	bool from_map;
	int prio = roce_dscp_prio(c->inv, nd->name, tos_dscp(c->expect->tos), &from_map);
	char dscp[112];
	snprintf(dscp, sizeof(dscp), "priority %d (DSCP %d of the expected ToS %d, %s)", prio, tos_dscp(c->expect->tos),
		 c->expect->tos, from_map ? "the NIC's DSCP map" : "default DSCP map");
	if (nd->ecn_err == -ENOENT) {
		check_add(c, STATUS_SKIP, subject, "%s has no ecn/ directory: the inbox mlx5 driver does not expose "
						   "DCQCN in sysfs (the firmware's defaults apply; mlxconfig shows them)",
			  nd->name);
		return;
	}
	if (nd->ecn_err < 0) {
		check_add(c, STATUS_SKIP, subject, "/sys/class/net/%s/ecn: %s", nd->name, read_strerror(nd->ecn_err));
		return;
	}
	struct strbuf off = STRBUF_INIT, unknown = STRBUF_INIT, fix = STRBUF_INIT;
	for (int k = 0; k < 2; k++) {
		int v = nd->ecn[k][prio];
		if (v == 0) {
			strbuf_addf(&off, "%s%s", off.len ? " and " : "", proto_name[k]);
			strbuf_addf(&fix, "%s`echo 1 > /sys/class/net/%s/ecn/%s/enable/%d`", fix.len ? ", " : "", nd->name,
				    proto_name[k], prio);
		} else if (v < 0) {
			strbuf_addf(&unknown, "%s/sys/class/net/%s/ecn/%s/enable/%d: %s", unknown.len ? ", " : "", nd->name,
				    proto_name[k], prio, read_strerror(v));
		}
	}
	if (off.len) {
		struct finding *f = check_add(c, STATUS_WARN, subject, "ECN (DCQCN) is off on %s for %s: %s disabled; "
								       "under congestion RoCE gets PFC pauses or drops "
								       "and retransmissions instead of rate control",
					      nd->name, dscp, off.buf);
		if (unknown.len)
			finding_detail(f, "unreadable: %s", unknown.buf);
		finding_hint(f, "%s, and again at every boot (a systemd unit or udev rule)", fix.buf);
	} else if (unknown.len) {
		check_add(c, STATUS_SKIP, subject, "ECN state for %s cannot be read: %s", dscp, unknown.buf);
	} else {
		check_add(c, STATUS_OK, subject, "ECN (DCQCN) on for %s on %s (roce_np and roce_rp)", dscp, nd->name);
	}
	strbuf_release(&off);
	strbuf_release(&unknown);
	strbuf_release(&fix);
}

static void judge(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *lbl,
		  void *ud)
{
	(void)d;
	roce_port_netdevs(c, lbl, p, "ECN", judge_netdev, ud);
}

static int run(struct check_ctx *c)
{
	roce_ports_each(c, true, "ECN (RoCE only)", "InfiniBand has its own congestion control", judge, NULL);
	return 0;
}

const struct check_def check_rdma_roce_ecn = {
	.id = "rdma.roce_ecn",
	.section = "RoCE Traffic Class (QoS)",
	.summary = "MLNX_OFED/DOCA: ECN (DCQCN roce_np and roce_rp) is on for the priority of the expected ToS (--tos)",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
