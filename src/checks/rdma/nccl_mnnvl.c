/* rdma.nccl_mnnvl: NCCL_MNNVL_ENABLE and NCCL_CUMEM_ENABLE do not switch
 * multi-node NVLink off on a node of an NVLink domain.
 *
 * On GB200/GB300 NVL racks NCCL reaches the GPUs of the other trays over
 * NVLink (MNNVL) only with CUDA fabric handles, which it allocates with
 * cuMem: NCCL_MNNVL_ENABLE=0 turns MNNVL off, and NCCL_CUMEM_ENABLE=0
 * turns cuMem off and MNNVL with it; NCCL then runs between trays over IB
 * or TCP at a fraction of NVLink's bandwidth, without an error (NCCL
 * documentation, Environment Variables; vllm-project/vllm#16992). Both
 * default to automatic (MNNVL 2, cuMem -2) and both are read as integers
 * (nccl_param_int: only the value 0 turns them off). The domain is
 * decided as gpu.imex decides it (IMEX service installed or configured:
 * imex_domain()); elsewhere the variables do no harm here and the check
 * skips. */
#include "checks/check.h"
#include "common.h"
#include "checks/gpu/common.h"

#include <stdio.h>

static const char *const vars[] = { "NCCL_MNNVL_ENABLE", "NCCL_CUMEM_ENABLE" };

static void judge(struct check_ctx *c, const char *name, const char *domain)
{
	const struct nccl_var *v = nccl_get(&c->inv->nccl, name);
	if (!v) {
		check_add(c, STATUS_OK, name, "not set: NCCL decides by itself (automatic)");
		return;
	}
	if (nccl_skip_computed(c, v))
		return;
	long long val;
	enum nccl_int_outcome o = nccl_int_var(c, v, -2, 2, "a valid setting", &val);
	if (o == NCCL_INT_INVALID || o == NCCL_INT_UNSET)
		return;
	if (val != 0) {
		if (o == NCCL_INT_OK)
			check_add(c, STATUS_OK, name, "=%s (%s): multi-node NVLink stays possible", v->value, v->source);
		return;
	}
	char place[256];
	nccl_var_place(v, place, sizeof(place));
	struct finding *f = check_add(c, STATUS_FAIL, name, "=%s (%s) switches %s off on a node of a multi-node NVLink "
							  "domain (%s): NCCL runs between the domain's trays over the "
							  "network instead of NVLink, without an error",
				      v->value, v->source,
				      name == vars[0] ? "multi-node NVLink (MNNVL)" : "cuMem allocation, and with it "
										     "multi-node NVLink (MNNVL),",
				      domain);
	finding_hint(f, "remove %s from %s (NCCL's default is automatic); with NCCL_DEBUG=INFO, NCCL's log names "
			"MNNVL at communicator setup once it is on",
		     name, place);
}

static int run(struct check_ctx *c)
{
	const char *domain = imex_domain(c->inv);
	if (!domain) {
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "not in a multi-node NVLink domain (no nvidia-imex.service, "
							IMEX_NODES_CONFIG " missing or empty): NCCL_MNNVL_ENABLE and "
							"NCCL_CUMEM_ENABLE are not judged");
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++)
		judge(c, vars[i], domain);
	return 0;
}

const struct check_def check_rdma_nccl_mnnvl = {
	.id = "rdma.nccl_mnnvl",
	.section = "NCCL Configuration",
	.summary = "in a multi-node NVLink domain: NCCL_MNNVL_ENABLE / NCCL_CUMEM_ENABLE do not switch multi-node NVLink "
		   "off",
	.run = run,
	.nccl_vars = true,
};
