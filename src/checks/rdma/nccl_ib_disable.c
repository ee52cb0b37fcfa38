/* rdma.nccl_ib_disable: nothing forces NCCL off RDMA.
 *
 * NCCL_IB_DISABLE=1 disables the IB/RoCE transport and NCCL_NET=Socket
 * selects the socket transport: either way NCCL logs `Using network Socket`
 * and multi-node traffic goes over TCP (NCCL documentation, Environment
 * Variables). NCCL_NET=IB on a node without
 * RDMA devices makes NCCL fail to initialise instead of falling back. */
#include "checks/check.h"
#include "common.h"

#include <string.h>
#include <strings.h>

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_var *dis = nccl_get(&inv->nccl, "NCCL_IB_DISABLE");
	const struct nccl_var *net = nccl_get(&inv->nccl, "NCCL_NET");
	struct finding *f;
	bool bad = false;
	if (nccl_skip_computed(c, dis)) {
		dis = NULL;
		bad = true; /* no verdict for NCCL_IB_DISABLE */
	}
	if (nccl_skip_computed(c, net))
		net = NULL;

	long long off = 0;
	char place[256];
	/* NCCL_PARAM(IbDisable): read as an integer (strtoll base 0), any
	 * non-zero value disables IB; "no" or "false" read as 0 */
	if (dis && nccl_param_int(dis->value, &off, NULL) == 0 && off != 0) {
		f = check_add(c, STATUS_FAIL, "NCCL_IB_DISABLE", "=%s (%s): NCCL will not use RDMA and falls back "
								 "to TCP sockets (`Using network Socket`)",
			      dis->value, dis->source);
		finding_hint(f, "remove NCCL_IB_DISABLE from %s (or set it to 0)", nccl_var_place(dis, place, sizeof(place)));
		bad = true;
	}
	if (net && !strcasecmp(net->value, "Socket")) {
		f = check_add(c, STATUS_FAIL, "NCCL_NET", "=%s (%s): NCCL is forced onto TCP sockets", net->value,
			      net->source);
		finding_hint(f, "remove NCCL_NET from %s, or set NCCL_NET=IB", nccl_var_place(net, place, sizeof(place)));
		bad = true;
	} else if (net && !strcasecmp(net->value, "IB") && inv->rdma.n == 0) {
		f = check_add(c, STATUS_FAIL, "NCCL_NET", "=IB (%s) but this node has no RDMA device: NCCL "
							  "initialisation will fail instead of falling back",
			      net->source);
		finding_hint(f, "fix the RDMA devices (see rdma.devices) or unset NCCL_NET");
		bad = true;
	}
	if (!bad)
		check_add(c, STATUS_OK, "NCCL_IB_DISABLE", "%s%s%s: NCCL may use RDMA", dis ? "=" : "not set",
			  dis ? dis->value : "", net ? ", NCCL_NET allows IB" : "");
	return 0;
}

const struct check_def check_rdma_nccl_ib_disable = {
	.id = "rdma.nccl_ib_disable",
	.section = "NCCL Configuration",
	.summary = "NCCL_IB_DISABLE / NCCL_NET do not force NCCL onto TCP sockets",
	.run = run,
	.nccl_vars = true,
};
