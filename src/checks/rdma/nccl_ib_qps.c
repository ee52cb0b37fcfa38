/* rdma.nccl_ib_qps: NCCL opens more than one queue pair per connection
 * over a RoCE LAG device.
 *
 * A RoCE LAG device puts each QP on one of the bond's ports: by queue
 * affinity, or by the hash of its packets' headers, which are the same for
 * all of one QP's packets (NVIDIA DOCA, "Link Aggregation": queue affinity
 * and hash modes; Linux commit cdf611d17094 "net/mlx5: Lag, use hash when
 * in roce lag on 4 ports"). NCCL opens NCCL_IB_QPS_PER_CONNECTION QPs per
 * connection, 1 by default (NCCL User Guide, "Environment Variables"), and
 * rates a bond at one port's speed, so with the default one connection
 * uses one port: the NCCL maintainers' explanation of half the bandwidth
 * ib_write_bw reaches, with NCCL_IB_QPS_PER_CONNECTION=2 and
 * NCCL_IB_SPLIT_DATA_ON_QPS=0 as the remedy (NVIDIA/nccl#1015; also
 * NVIDIA/nccl-tests#191, NVIDIA/nccl#2136). Only devices NCCL would use
 * (active, selected by NCCL_IB_HCA) count. */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>
#include <string.h>

/* Is this port a LAG: its netdev a bond of two or more slaves, or the
 * device an mlx5 "_bond_" device? */
static bool lag_port(const struct inventory *inv, const struct rdma_dev *d, const struct rdma_port *p)
{
	const struct bond *b = port_bond(inv, p);
	return (b && b->n_slaves >= 2) || strstr(d->name, "_bond_") != NULL;
}

/* Where to set the variable: where it is set, else beside NCCL_IB_HCA,
 * else /etc/nccl.conf (NCCL reads it system-wide). */
static const char *where(const struct inventory *inv, const struct nccl_var *v, char *buf, size_t size)
{
	const struct nccl_var *hca = nccl_get(&inv->nccl, "NCCL_IB_HCA");
	if (v)
		return nccl_var_place(v, buf, size);
	if (hca && hca->source[0] == '/')
		return nccl_var_place(hca, buf, size);
	snprintf(buf, size, "/etc/nccl.conf");
	return buf;
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_IB_QPS_PER_CONNECTION");
	struct nccl_list hca;
	nccl_hca(inv, &hca);
	struct strbuf lags = STRBUF_INIT;
	size_t n = 0, lag = 0;
	const char *first = NULL;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		if (!lag_port(inv, d, p))
			continue;
		lag++;
		if (!nccl_uses_port(&hca, d, p))
			continue;
		const struct bond *b = port_bond(inv, p);
		strbuf_addf(&lags, "%s%s", n++ ? ", " : "", d->name);
		if (!first)
			first = d->name;
		if (b)
			strbuf_addf(&lags, " (%s, %zu ports)", b->name, b->n_slaves);
	}
	nccl_list_free(&hca);
	if (lag == 0) {
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no bond carries RDMA");
	} else if (n == 0) {
		check_add(c, STATUS_SKIP, "NCCL_IB_QPS_PER_CONNECTION", "NCCL uses no RoCE LAG device");
	} else if (!nccl_skip_computed(c, v)) {
		long long qps = 1;
		if (v && nccl_param_int(v->value, &qps, NULL) < 0)
			qps = 1; /* unparsable: NCCL keeps its default (rdma.nccl_ranges reports it) */
		char place[256];
		if (qps >= 2) {
			check_add(c, STATUS_OK, "NCCL_IB_QPS_PER_CONNECTION",
				  "=%lld (%s): each connection can use every port of the RoCE LAG device%s it goes "
				  "over (%s)",
				  qps, v->source, n == 1 ? "" : "s", lags.buf);
		} else {
			struct finding *f = check_add(
				c, STATUS_WARN, "NCCL_IB_QPS_PER_CONNECTION",
				"%s%s%s%s: NCCL opens one queue pair per connection over %zu RoCE LAG device%s, "
				"which send%s each QP on one port, so a connection gets one port's bandwidth",
				v ? "=" : "not set (default 1)", v ? v->value : "", v ? " in " : "", v ? v->source : "", n,
				n == 1 ? "" : "s", n == 1 ? "s" : "");
			finding_detail(f, "RoCE LAG devices NCCL uses: %s", lags.buf);
			finding_hint(f, "set NCCL_IB_QPS_PER_CONNECTION=2 and NCCL_IB_SPLIT_DATA_ON_QPS=0 in %s "
					"(NVIDIA/nccl#1015), then compare with `ib_write_bw -d %s -q 2 --report_gbits`",
				     where(inv, v, place, sizeof(place)), first);
		}
	}
	strbuf_release(&lags);
	return 0;
}

const struct check_def check_rdma_nccl_ib_qps = {
	.id = "rdma.nccl_ib_qps",
	.section = "NCCL Configuration",
	.summary = "NCCL opens more than one queue pair per connection over a RoCE LAG device",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
	.nccl_vars = true,
};
