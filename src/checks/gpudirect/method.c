/* gpudirect.method: which GPUDirect RDMA method this node can use —
 * DMA-BUF, legacy peer memory, or none — and why, in one line at the top
 * of the GPUDirect report (decided in common.c). None is a fail: NCCL
 * then stages every inter-node transfer through host memory. */
#include "checks/check.h"
#include "common.h"

static int run(struct check_ctx *c)
{
	struct gdr_state s;
	gdr_state_get(c->inv, &s);
	if (s.method == GDR_NONE) {
		struct finding *f = check_add(c, STATUS_FAIL, "gpudirect", "GPUDirect RDMA method: none: %s", s.why);
		if (s.gpus == 0)
			finding_hint(f, "see gpu.pci: GPUDirect RDMA needs NVIDIA GPUs and RDMA NICs");
		else if (s.nics == 0)
			finding_hint(f, "single-server training does not need it; for multi-server training install "
					"ConnectX-4 or later NICs (see rdma.devices)");
		else if (s.gdr_nics == 0)
			finding_hint(f, "replace the ConnectX-3 NICs with ConnectX-4 or later (mlx5: GPUDirect RDMA capable)");
		else
			finding_hint(f, "use the open driver for DMA-BUF (apt remove nvidia-driver-570 && apt install "
					"nvidia-driver-570-open, kernel 6.2+), or load nvidia-peermem (modprobe nvidia-peermem)");
		return 0;
	}
	check_add(c, STATUS_OK, "gpudirect", "GPUDirect RDMA method: %s (%s)", gdr_method_name(s.method), s.why);
	return 0;
}

const struct check_def check_gpudirect_method = {
	.id = "gpudirect.method",
	.section = "GPUDirect RDMA Method",
	.summary = "which GPUDirect RDMA method the node can use (DMA-BUF, legacy peer memory, none) and why",
	.run = run,
	.needs = NEEDS_GPU,
};
