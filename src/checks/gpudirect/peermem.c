/* gpudirect.peermem: the legacy peer-memory module. Bring-up guides want
 * nvidia_peermem NOT loaded when DMA-BUF is usable (NCCL prefers DMA-BUF;
 * the module only adds an out-of-tree path): warn. When DMA-BUF is not
 * usable it is the only way: ok when present (gpudirect.method fails
 * otherwise). */
#include "checks/check.h"
#include "common.h"

static int run(struct check_ctx *c)
{
	struct gdr_state s;
	gdr_state_get(c->inv, &s);
	if (s.gpus == 0 || s.nics == 0) {
		check_add(c, STATUS_SKIP, "nvidia_peermem", "%s", s.why);
		return 0;
	}
	if (s.peermem_present && s.dmabuf_usable) {
		struct finding *f = check_add(c, STATUS_WARN, "nvidia_peermem",
					      "loaded (%s) although DMA-BUF is usable: NCCL prefers DMA-BUF, and the legacy module is not needed",
					      s.peermem_how);
		finding_hint(f, "`modprobe -r nvidia_peermem` and remove it from /etc/modules-load.d (e.g. "
				"gpudirect.conf) and from any optimisation service");
		finding_requires(f, "dmabuf_possible");
	} else if (s.peermem_present) {
		check_add(c, STATUS_OK, "nvidia_peermem", "loaded (%s): the GPUDirect RDMA path while DMA-BUF is unusable",
			  s.peermem_how);
	} else if (s.dmabuf_usable) {
		check_add(c, STATUS_OK, "nvidia_peermem", "not loaded (using DMA-BUF instead)");
	} else {
		check_add(c, STATUS_OK, "nvidia_peermem", "not loaded (and DMA-BUF is unusable: see gpudirect.method)");
	}
	return 0;
}

const struct check_def check_gpudirect_peermem = {
	.id = "gpudirect.peermem",
	.section = "Legacy nvidia-peermem",
	.summary = "nvidia_peermem is not loaded when DMA-BUF is usable, and present when it is the only way",
	.run = run,
	.needs = NEEDS_GPU,
};
