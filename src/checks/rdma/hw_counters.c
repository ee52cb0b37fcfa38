/* rdma.hw_counters: retransmission and timeout counters are zero.
 *
 * mlx5 hw_counters (Linux drivers/infiniband/hw/mlx5/counters.c): out_of_sequence and packet_seq_err
 * count packets that arrived out of order (drops upstream, so go-back-N
 * retransmission: a lossy fabric, usually missing PFC on RoCE);
 * local_ack_timeout_err counts transport timeouts (the peer did not ack in
 * time); rnr_nak_retry_err counts receivers that ran out of buffers. Other
 * drivers have no such files: skip. */
#include "checks/check.h"
#include "common.h"


static const char *const retrans[] = {
	"out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
};

static int run(struct check_ctx *c)
{
	char lbl[96];
	size_t ports = 0;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&c->inv->rdma, d, p) {
		port_label(d, p, lbl, sizeof(lbl));
		ports++;
		if (p->n_hw_counters == 0) {
			check_add(c, STATUS_SKIP, lbl, "no hw_counters (only some drivers, e.g. mlx5, have them)");
			continue;
		}
		struct strbuf bad = STRBUF_INIT, all = STRBUF_INIT, why = STRBUF_INIT, unread = STRBUF_INIT;
		counters_summary(p->hw_counters, p->n_hw_counters, retrans, ARRAY_SIZE(retrans), &bad, &all, &why,
				 &unread, false);
		if (unread.len) {
			counters_unread_warn(c, d, p, "retransmission", "hw_counters", &unread, &bad);
		} else if (bad.len) {
			struct finding *f = check_add(c, STATUS_WARN, lbl, "retransmission counters nonzero: %s",
						      bad.buf);
			finding_hint(f, "%s. For packet loss on RoCE, enable PFC for the RDMA priority "
					"(`mlnx_qos -i %s --trust dscp --pfc 0,0,0,1,0,0,0,0`) on hosts and "
					"switches",
				     why.buf, p->netdev ? p->netdev : "<interface>");
		} else {
			check_add(c, STATUS_OK, lbl, "%s", all.len ? all.buf : "no retransmission counters present");
		}
		strbuf_release(&bad);
		strbuf_release(&all);
		strbuf_release(&why);
		strbuf_release(&unread);
	}
	if (ports == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA ports to check");
	return 0;
}

const struct check_def check_rdma_hw_counters = {
	.id = "rdma.hw_counters",
	.section = "Port Health",
	.summary = "mlx5 retransmission/timeout hw_counters are zero (a lossy fabric shows here)",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
