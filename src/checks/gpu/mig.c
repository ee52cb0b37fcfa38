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
 * (nvmlDeviceGetMigMode): live, gpu.mig reads them too; a recorded tree
 * cannot tell them. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <stdlib.h>

/* NVML's MIG mode (live): enabled now or after the next reset. */
static bool judge_live(struct check_ctx *c, const char *bdf)
{
	const struct nvml_gpu *m = nvml_for(c->inv, bdf);
	if (!m || (m->mig_current != 1 && m->mig_pending != 1))
		return false;
	struct finding *f = check_add(c, STATUS_FAIL, bdf, "MIG mode is %s (NVML nvmlDeviceGetMigMode): whole-GPU "
							   "training and NCCL's NVLink paths cannot use it",
				      m->mig_current == 1 && m->mig_pending == 1 ? "on"
				      : m->mig_current == 1			 ? "on (off after the next GPU reset)"
										 : "pending: on after the next GPU reset");
	finding_hint(f, "`nvidia-smi mig -dci -i %1$s && nvidia-smi mig -dgi -i %1$s && nvidia-smi -i %1$s -mig 0`, "
			"then reset the GPU (`nvidia-smi -r -i %1$s`)",
		     bdf);
	return true;
}

static void judge(struct check_ctx *c, const char *bdf)
{
	const struct nvidia_gpu_info *g = nvproc_for(c->inv, bdf);
	if (judge_live(c, bdf))
		return;
	if (!g || g->minor < 0) {
		check_add(c, STATUS_SKIP, bdf, "MIG instances unknown: no device minor (%s)",
			  g ? "no \"Device Minor\" in its information file" : "not in /proc/driver/nvidia/gpus");
		return;
	}
	if (g->mig_err < 0) {
		check_add(c, STATUS_SKIP, bdf, "/proc/driver/nvidia/capabilities/gpu%d/mig: %s (MIG instances unknown)",
			  g->minor, read_strerror(g->mig_err));
		return;
	}
	if (g->mig_gis.n) {
		_cleanup_strbuf_ struct strbuf list = STRBUF_INIT;
		for (size_t k = 0; k < g->mig_gis.n; k++)
			strbuf_addf(&list, "%s%s", k ? ", " : "", g->mig_gis.v[k]);
		struct finding *f = check_add(c, STATUS_FAIL, bdf, "MIG mode is on: %zu GPU instance%s (%s); whole-GPU "
								   "training and NCCL's NVLink paths cannot use it",
					      g->mig_gis.n, g->mig_gis.n == 1 ? "" : "s", list.buf);
		finding_hint(f, "`nvidia-smi mig -dci -i %1$s && nvidia-smi mig -dgi -i %1$s && nvidia-smi -i %1$s "
				"-mig 0`, then reset the GPU (`nvidia-smi -r -i %1$s`)",
			     bdf);
		return;
	}
	const struct nvml_gpu *m = nvml_for(c->inv, bdf);
	if (m && m->mig_current == 0)
		check_add(c, STATUS_OK, bdf, "MIG mode off, none pending (NVML), no GPU instances");
	else
		check_add(c, STATUS_OK, bdf, "no MIG GPU instances (MIG mode without instances, or a pending change, "
					     "shows only to NVML: `nvidia-smi -q -d MIG`)");
}

static int run(struct check_ctx *c)
{
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(c->inv, &gpus);
	for (size_t i = 0; i < n; i++)
		judge(c, gpus[i]->bdf);
	free(gpus);
	return 0;
}

const struct check_def check_gpu_mig = {
	.id = "gpu.mig",
	.section = "NVIDIA Driver",
	.summary = "no GPU in MIG mode: GPU instances in /proc/driver/nvidia/capabilities/gpuN/mig/gi*, or live NVML's "
		   "current or pending MIG mode",
	.run = run,
	.needs = NEEDS_GPU,
};
