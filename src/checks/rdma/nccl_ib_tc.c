/* rdma.nccl_ib_tc: NCCL's RoCE traffic is in the lossless class.
 *
 * NCCL writes NCCL_IB_TC into the GRH traffic class of its QPs (default 0;
 * Linux Documentation/ABI/testing/configfs-rdma_cm), and programs each QP with the value the peer advertised,
 * so every node must agree. It must carry the expected DSCP (--tos,
 * default 104 = DSCP 26). 104 and 106 are both DSCP 26: 106 adds ECT(0),
 * marking packets ECN-capable so switches can mark instead of drop
 * (DCQCN). NCCL's class should also match the rdma_cm ToS, or NCCL and
 * RDMA-CM traffic land in different switch queues. Only RoCE uses it. */
#include "checks/check.h"
#include "common.h"

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_IB_TC");
	int want = c->expect->tos;
	char d1[96], d2[96];
	struct finding *f;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	bool roce = false;

	for_each_rdma_port(&inv->rdma, d, p)
		roce |= port_is_roce(p) || port_link_unknown(p);
	if (!roce) {
		check_add(c, STATUS_SKIP, "NCCL_IB_TC", "no RoCE ports (InfiniBand uses NCCL_IB_SL)");
		return 0;
	}
	if (nccl_skip_computed(c, v))
		return 0;
	int tc = 0;
	long long n = -1;
	enum nccl_int_outcome r = nccl_int_var(c, v, -1, 255, "a traffic class", &n);
	if (r == NCCL_INT_INVALID)
		return 0;
	if (r == NCCL_INT_UNSET || n == -1)
		v = NULL; /* NCCL's automatic value: ncclConfig_t.trafficClass, else 0 */
	else
		tc = (int)n;
	if (tos_dscp(tc) != tos_dscp(want)) {
		f = check_add(c, STATUS_FAIL, "NCCL_IB_TC", "%s%s: %s, expected DSCP %d (%s): NCCL traffic is not in the "
							    "lossless class",
			      v ? "set in " : "not set", v ? v->source : " (NCCL default 0)",
			      tos_describe(tc, d1, sizeof(d1)), tos_dscp(want), tos_describe(want, d2, sizeof(d2)));
		finding_hint(f, "`echo 'export NCCL_IB_TC=%d' >> /etc/profile.d/nccl-rdma.sh` (and the same on every "
				"node: NCCL programs each QP with the peer's value)",
			     want);
		return 0;
	}
	f = check_add(c, STATUS_OK, "NCCL_IB_TC", "%s%d (%s): %s%s", v ? "=" : "not set, NCCL uses ", tc,
		      v ? v->source : "NCCL default", tos_describe(tc, d1, sizeof(d1)),
		      tos_ecn(tc) != tos_ecn(want) ? "; same DSCP as the expected ToS, only the ECN bits differ" : "");
	if (tos_ecn(tc) == 2)
		finding_detail(f, "ECN field ECT(0): packets are ECN-capable, so congested switches mark them "
				  "(CNPs, DCQCN) instead of dropping; needs ECN enabled on the fabric");
	/* RDMA-CM traffic on a port in another class than NCCL's: two queues */
	struct strbuf other = STRBUF_INIT;
	char lbl[96];
	for_each_rdma_port(&inv->rdma, d, p) {
		int t = p->roce_tos >= 0 ? p->roce_tos : 0;
		if (port_is_roce(p) && tos_dscp(t) != tos_dscp(tc))
			strbuf_addf(&other, "%s%s DSCP %d", other.len ? ", " : "", port_label(d, p, lbl, sizeof(lbl)),
				    tos_dscp(t));
	}
	if (other.len) {
		f = check_add(c, STATUS_WARN, "default_roce_tos",
			      "NCCL marks DSCP %d but RDMA-CM marks another class on %s: the two land in different "
			      "switch queues",
			      tos_dscp(tc), other.buf);
		finding_hint(f, "make default_roce_tos carry DSCP %d on every port (see rdma.roce_tos)", tos_dscp(tc));
	}
	strbuf_release(&other);
	return 0;
}

const struct check_def check_rdma_nccl_ib_tc = {
	.id = "rdma.nccl_ib_tc",
	.section = "NCCL Configuration",
	.summary = "NCCL_IB_TC carries the expected DSCP and matches the rdma_cm ToS",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
	.nccl_vars = true,
};
