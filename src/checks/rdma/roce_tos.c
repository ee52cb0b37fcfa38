/* rdma.roce_tos: RDMA-CM marks RoCE traffic with the site's lossless class.
 *
 * /sys/kernel/config/rdma_cm/<dev>/ports/<n>/default_roce_tos (Linux
 * Documentation/ABI/testing/configfs-rdma_cm) is the IP ToS byte of RDMA-CM connections (librdmacm users: perftest
 * -R, rping, MPI/UCX over rdmacm, storage). A missing directory means the
 * kernel default 0. The expected class is --tos (default 104 = DSCP 26, the
 * common RoCE lossless class: "ToS 104 = DSCP 26 = TC3"); values with the same DSCP but other
 * ECN bits are the same class. Wrong or unset is a fail for RDMA-CM users.
 * NCCL does not use these files (it sets NCCL_IB_TC itself; see
 * rdma.nccl_ib_tc). */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <errno.h>

#include <string.h>

static void judge(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *lbl,
		  void *ud)
{
	int want = c->expect->tos;
	char d1[96], d2[96];
	(void)ud;
	if (p->roce_tos_err < 0 && p->roce_tos_err != -ENOENT) {
		check_add(c, STATUS_SKIP, lbl, "default_roce_tos unreadable: %s", read_strerror(p->roce_tos_err));
		return;
	}
	int tos = p->roce_tos >= 0 ? p->roce_tos : 0;
	bool unset = p->roce_tos < 0;
	/* DSCP>>3 is the priority in the default DSCP->priority map (NVIDIA mlnx_qos, trust dscp: DSCP 8n to 8n+7 map to priority n). */
	if (tos_dscp(tos) == tos_dscp(want)) {
		struct finding *ok = check_add(c, STATUS_OK, lbl, "RDMA-CM %s%s (priority %d by the default DSCP map)",
			  tos_describe(tos, d1, sizeof(d1)), unset ? ", kernel default" : "",
			  tos_dscp(tos) >> 3);
		finding_compare_num(ok, tos, want);
		return;
	}
	struct finding *f =
		check_add(c, STATUS_FAIL, lbl, "RDMA-CM %s%s, expected %s: RDMA-CM traffic is not in "
					       "the lossless class",
			  tos_describe(tos, d1, sizeof(d1)),
			  unset ? " (no rdma_cm configfs entry: kernel default)" : "",
			  tos_describe(want, d2, sizeof(d2)));
	finding_compare_num(f, tos, want);
	finding_hint(f,
		     "`modprobe rdma_cm; mount -t configfs none /sys/kernel/config 2>/dev/null; "
		     "mkdir -p /sys/kernel/config/rdma_cm/%s && echo %d > "
		     "/sys/kernel/config/rdma_cm/%s/ports/%u/default_roce_tos`",
		     d->name, want, d->name, p->num);
}

static int run(struct check_ctx *c)
{
	roce_ports_each(c, true, "the RDMA-CM ToS (RoCE only)", "InfiniBand uses service levels, not ToS", judge, NULL);
	return 0;
}

const struct check_def check_rdma_roce_tos = {
	.id = "rdma.roce_tos",
	.section = "RoCE Traffic Class (QoS)",
	.summary = "rdma_cm default_roce_tos of every RoCE port carries the expected DSCP (--tos)",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
