/* gpudirect.registration: the real proof. For each GPU and its nearest
 * NIC, GPU memory is registered with the NIC through ibv_reg_dmabuf_mr
 * (DMA-BUF) and through plain ibv_reg_mr (peer memory); probe/
 * gdr_probe.c does it (live only, in a child process under a deadline per
 * call). The method the node should use must succeed; the exact errno and
 * its likely cause are reported on failure. A CUDA or verbs call that did
 * not return fails its pair whatever the method, naming the call: the
 * driver is stuck, and so would NCCL be. */
#include "checks/check.h"
#include "common.h"

#include <stdbool.h>
#include <stdio.h>

/* The verdict of one pair that the probe finished, by the method wanted. */
static void pair_verdict(struct check_ctx *c, const struct gdr_probe *g, bool want_dmabuf, const char *subj)
{
	bool ok = want_dmabuf ? g->dmabuf_ok : g->peermem_ok;
	const char *error = want_dmabuf ? g->dmabuf_error : g->peermem_error;

	if (ok) {
		check_add(c, STATUS_OK, subj, "GPU memory registered with %s through %s%s", g->ibdev,
			  want_dmabuf ? "ibv_reg_dmabuf_mr (DMA-BUF)" : "ibv_reg_mr (peer memory)",
			  want_dmabuf && g->peermem_ok ? "; peer memory works too" : "");
		return;
	}
	struct finding *f = check_add(c, STATUS_FAIL, subj, "%s registration failed: %s",
				      want_dmabuf ? "DMA-BUF" : "peer-memory", error[0] ? error : "not attempted");
	finding_hint(f, "%s", want_dmabuf ? "check gpudirect.dmabuf (open driver, kernel, IB user memory/ODP) "
					    "and that the NIC firmware is current; `dmesg | tail` right after the run"
					  : "`modprobe nvidia-peermem` (its version must match the driver), then retry");
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct gdr_state s;
	size_t hung = 0;
	char subj[128];

	gdr_state_get(inv, &s);
	if (!inv->live) {
		check_add(c, STATUS_SKIP, "gpudirect", "registering GPU memory needs the live machine");
		return 0;
	}
	for (size_t i = 0; i < inv->n_gdr; i++) {
		const struct gdr_probe *g = &inv->gdr[i];
		if (g->fail != GPU_LIB_FAIL_TIMEOUT)
			continue;
		snprintf(subj, sizeof(subj), "%s<->%s", g->gpu_bdf, g->ibdev);
		gpu_call_hung(c, subj, g->dmabuf_error[0] ? g->dmabuf_error : g->peermem_error);
		hung++;
	}
	if (s.method == GDR_NONE || inv->n_gdr == 0) {
		if (!hung)
			check_add(c, STATUS_SKIP, "gpudirect", "nothing to register: %s",
				  s.method == GDR_NONE ? s.why : "no GPU with an RDMA NIC (or not asked for)");
		return 0;
	}
	for (size_t i = 0; i < inv->n_gdr; i++) {
		const struct gdr_probe *g = &inv->gdr[i];
		if (g->fail == GPU_LIB_FAIL_TIMEOUT)
			continue;
		snprintf(subj, sizeof(subj), "%s<->%s", g->gpu_bdf, g->ibdev);
		pair_verdict(c, g, s.method == GDR_DMABUF, subj);
	}
	return 0;
}

const struct check_def check_gpudirect_registration = {
	.id = "gpudirect.registration",
	.section = "GPUDirect RDMA Live Tests",
	.summary = "live: GPU memory registers with each GPU's nearest NIC (ibv_reg_dmabuf_mr / ibv_reg_mr)",
	.run = run,
	.needs = NEEDS_LIVE | NEEDS_GPU,
};
