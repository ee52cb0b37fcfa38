/* gpudirect.method: which GPUDirect RDMA method this node can use —
 * DMA-BUF, legacy peer memory, or none — and why, in one line at the top
 * of the GPUDirect report (decided in common.c). None is a fail: NCCL
 * then stages every inter-node transfer through host memory. */
#include "checks/check.h"
#include "common.h"

/* The fix when the hardware allows GPUDirect RDMA but no method is set up:
 * the open driver for DMA-BUF where the GPUs can run it, else legacy peer
 * memory, which is the only method on GPUs older than Turing. */
static void hint_driver(struct check_ctx *c, struct finding *f, const struct gdr_state *s)
{
	char pkg[48], old[48];
	finding_requires(f, "gdr_possible");
	if (s->pre_turing) {
		finding_hint(f, "load legacy peer memory: `modprobe nvidia-peermem` and add nvidia-peermem to "
				"/etc/modules-load.d/ (DMA-BUF is impossible: %s is older than Turing)",
			     s->pre_turing->bdf);
		return;
	}
	finding_requires(f, "open_driver_possible");
	finding_hint(f, "for DMA-BUF use the open driver (`apt remove %s && apt install %s`, kernel 6.2+), or "
			"load legacy peer memory (`modprobe nvidia-peermem`)",
		     gpu_driver_package(c->inv, false, old, sizeof(old)), gpu_driver_package(c->inv, true, pkg, sizeof(pkg)));
}

static int run(struct check_ctx *c)
{
	struct gdr_state s;
	gdr_state_get(c->inv, &s);
	if (s.method == GDR_NONE) {
		struct finding *f = check_add(c, STATUS_FAIL, "gpudirect", "GPUDirect RDMA method: none: %s", s.why);
		gdr_facts(f, &s);
		if (s.gpus == 0) {
			finding_hint(f, "see gpu.pci: GPUDirect RDMA needs NVIDIA GPUs and RDMA NICs");
		} else if (s.nics == 0 && s.nic_functions > 0) {
			finding_hint(f, "load the NICs' RDMA provider: `modprobe -a %s ib_uverbs` (package rdma-core "
					"loads them at boot; see rdma.devices)",
				     s.provider);
			finding_requires(f, "rdma_nic_hardware=present");
		} else if (s.nics == 0) {
			finding_hint(f, "single-server training does not need it; for multi-server training install "
					"ConnectX-4 or later NICs (see rdma.devices)");
			finding_requires(f, "rdma_nic_hardware=absent");
		} else if (s.gdr_nics == 0) {
			finding_hint(f, "replace the ConnectX-3 NICs with ConnectX-4 or later (mlx5: GPUDirect RDMA capable)");
		} else {
			hint_driver(c, f, &s);
		}
		return 0;
	}
	struct finding *f = check_add(c, STATUS_OK, "gpudirect", "GPUDirect RDMA method: %s (%s)",
				      gdr_method_name(s.method), s.why);
	gdr_facts(f, &s);
	return 0;
}

const struct check_def check_gpudirect_method = {
	.id = "gpudirect.method",
	.section = "GPUDirect RDMA Method",
	.summary = "which GPUDirect RDMA method the node can use (DMA-BUF, legacy peer memory, none) and why",
	.run = run,
	.needs = NEEDS_GPU,
};
