/* gpu.mig: no GPU is split into MIG instances.
 *
 * Whole-GPU training cannot use a GPU in MIG mode: CUDA sees small MIG
 * devices (or none), and NCCL has no P2P, NVLink or NVLS between MIG
 * instances (NVIDIA Multi-Instance GPU User Guide; NVIDIA/nccl#1716). The
 * driver creates /proc/driver/nvidia/capabilities/gpu<minor>/mig/gi<id>
 * for each GPU instance; the `mig` directory itself, and the system-wide
 * capabilities/mig/config and monitor, exist on every MIG-capable GPU and
 * mean nothing (open-gpu-kernel-modules os.c osRmCapRegisterGpu,
 * osRmCapRegisterSmcPartition). MIG mode switched on without instances,
 * and a change pending until the next GPU reset, are visible only to NVML
 * (nvmlDeviceGetMigMode): files cannot tell them. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <stdlib.h>

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus);
	for (size_t i = 0; i < n; i++) {
		const char *bdf = gpus[i]->bdf;
		const struct nvidia_gpu_info *g = nvproc_for(inv, bdf);
		if (!g || g->minor < 0) {
			check_add(c, STATUS_SKIP, bdf, "MIG instances unknown: no device minor (%s)",
				  g ? "no \"Device Minor\" in its information file" : "not in /proc/driver/nvidia/gpus");
			continue;
		}
		if (g->mig_err < 0) {
			check_add(c, STATUS_SKIP, bdf, "/proc/driver/nvidia/capabilities/gpu%d/mig: %s (MIG instances "
						       "unknown)",
				  g->minor, read_strerror(g->mig_err));
			continue;
		}
		if (g->mig_gis.n) {
			_cleanup_strbuf_ struct strbuf list = STRBUF_INIT;
			for (size_t k = 0; k < g->mig_gis.n; k++)
				strbuf_addf(&list, "%s%s", k ? ", " : "", g->mig_gis.v[k]);
			struct finding *f = check_add(c, STATUS_FAIL, bdf, "MIG mode is on: %zu GPU instance%s (%s); "
									   "whole-GPU training and NCCL's NVLink "
									   "paths cannot use it",
						      g->mig_gis.n, g->mig_gis.n == 1 ? "" : "s", list.buf);
			finding_hint(f, "`nvidia-smi mig -dci -i %1$s && nvidia-smi mig -dgi -i %1$s && nvidia-smi -i %1$s "
					"-mig 0`, then reset the GPU (`nvidia-smi -r -i %1$s`)",
				     bdf);
			continue;
		}
		check_add(c, STATUS_OK, bdf, "no MIG GPU instances (MIG mode without instances, or a pending change, "
					     "shows only to NVML: `nvidia-smi -q -d MIG`)");
	}
	free(gpus);
	return 0;
}

const struct check_def check_gpu_mig = {
	.id = "gpu.mig",
	.section = "NVIDIA Driver",
	.summary = "no GPU split into MIG instances (/proc/driver/nvidia/capabilities/gpuN/mig/gi*)",
	.run = run,
	.needs = NEEDS_GPU,
};
