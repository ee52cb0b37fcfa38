/* gpu.compute_mode: every GPU is in the Default compute mode (live only;
 * NVML nvmlDeviceGetComputeMode, `nvidia-smi -q` "Compute Mode").
 *
 * Prohibited allows no CUDA context at all: nothing runs (fail).
 * Exclusive_Process allows one process per GPU: a training job with one
 * rank per GPU may start, but any second process that touches the GPU
 * (a framework helper, a monitoring or profiling tool, the next job's
 * rank before the last one exits) gets "all CUDA-capable devices are busy
 * or unavailable" (CUDA error 46): NVIDIA/nccl-tests#369 (GH200),
 * huggingface/pytorch-image-models#1033 (DDP). A scheduler may set it on
 * purpose for isolation, so it is a warn, not a fail. Exclusive_Thread
 * (value 1) is "Support Removed" since CUDA 4.0 (nvml.h) and is treated
 * as exclusive. A GPU that does not report its mode is a skip. Fix:
 * `nvidia-smi -i IDX -c DEFAULT` (nvidia-smi(1)), and remove whatever set
 * it (a job prolog). */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>

static const char *mode_name(int m)
{
	switch (m) {
	case 0: return "Default";
	case 1: return "Exclusive_Thread";
	case 2: return "Prohibited";
	case 3: return "Exclusive_Process";
	default: return "unknown";
	}
}

static void one(struct check_ctx *c, const struct nvml_gpu *g)
{
	char buf[32];
	const char *s = nvml_subject(g, buf, sizeof(buf));
	struct finding *f;
	switch (g->compute_mode) {
	case GPU_UNKNOWN:
		check_add(c, STATUS_SKIP, s, "NVML does not report the compute mode of this GPU");
		return;
	case 0:
		check_add(c, STATUS_OK, s, "compute mode Default (any number of processes)");
		return;
	case 2:
		f = check_add(c, STATUS_FAIL, s, "compute mode Prohibited: no process can create a CUDA context on "
						 "this GPU, so no job runs on it");
		break;
	case 1:
	case 3:
		f = check_add(c, STATUS_WARN, s, "compute mode %s: only one process at a time can use this GPU; a second "
						 "one (a framework helper, a monitoring tool, the next job's rank) fails "
						 "with CUDA error 46 (all CUDA-capable devices are busy or unavailable)",
			      mode_name(g->compute_mode));
		break;
	default:
		f = check_add(c, STATUS_WARN, s, "compute mode %d, which NVML does not define", g->compute_mode);
		break;
	}
	finding_hint(f, "`nvidia-smi -i %u -c DEFAULT`, and remove the setting from whatever set it (a scheduler "
			"prolog)",
		     g->index);
}

static int run(struct check_ctx *c)
{
	const struct nvml_info *n = nvml_usable(c);
	for (size_t i = 0; n && i < n->n; i++)
		one(c, &n->v[i]);
	return 0;
}

const struct check_def check_gpu_compute_mode = {
	.id = "gpu.compute_mode",
	.section = "NVML (live)",
	.summary = "live: every GPU is in the Default compute mode (not Prohibited or Exclusive_Process)",
	.run = run,
	.needs = NEEDS_LIVE,
};
