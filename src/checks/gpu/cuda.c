/* gpu.cuda: the CUDA driver API initialises, sees every GPU, and moves
 * data (live only). cuInit, then on each device: allocate, copy a pattern
 * in and out, compare — a basic tensor operation without needing PyTorch
 * (probe/cuda_probe.c does the work). A CUDA that cannot be used at
 * all, with GPUs on PCI, fails with the cause and fix of its class of
 * failure (gpu_lib_advise); without GPUs on PCI it is a skip that keeps
 * cuInit's error. A call that did not return within the probe's deadline
 * (probe/deadline.c) fails, naming the call, whatever PCI lists. */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct cuda_info *cu = inv->cuda;
	const struct pci_dev **gpus = NULL;
	size_t ng = topo_gpus(inv, &gpus);
	struct finding *f;
	char ver[16];
	if (!inv->live || !cu) {
		check_add(c, STATUS_SKIP, "cuda", "CUDA needs the live machine (not a recorded tree)");
		goto out;
	}
	if (!cu->loaded) {
		gpu_lib_unusable(c, GPU_LIB_CUDA, cu->fail, cu->error, ng);
		goto out;
	}
	cuda_version_string(cu->driver_version, ver, sizeof(ver));
	check_add(c, STATUS_OK, "cuda", "cuInit ok, CUDA driver API %s, %zu device%s", ver, cu->n, cu->n == 1 ? "" : "s");
	for (size_t i = 0; i < cu->n; i++) {
		const struct cuda_gpu *g = &cu->v[i];
		if (g->roundtrip_done && !g->roundtrip_ok) {
			f = check_add(c, STATUS_FAIL, g->bdf[0] ? g->bdf : "cuda", "device %d (%s): memory round trip "
										    "failed: %s",
				      g->ordinal, g->name, g->roundtrip_error);
			finding_hint(f, "check gpu.xid and gpu.nvml for this GPU; reset it (`nvidia-smi -r -i %s`)", g->bdf);
		} else {
			check_add(c, STATUS_OK, g->bdf[0] ? g->bdf : "cuda", "device %d: %s, compute capability %d.%d, %llu MiB%s",
				  g->ordinal, g->name, g->cc_major, g->cc_minor, (unsigned long long)(g->mem_total >> 20),
				  g->roundtrip_done ? ", 64 MiB copied in and out intact" : "");
		}
	}
out:
	free(gpus);
	return 0;
}

const struct check_def check_gpu_cuda = {
	.id = "gpu.cuda",
	.section = "CUDA (live)",
	.summary = "live: cuInit works and every device passes an allocate/copy/compare round trip",
	.run = run,
	.needs = NEEDS_LIVE,
};
