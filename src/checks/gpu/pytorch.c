/* gpu.pytorch: the PyTorch check bring-up guides ask operators to run by hand: torch
 * imports, torch.cuda.is_available() is True, it sees every GPU, and the
 * NCCL backend is there (live only; inventory/torch.c runs the probe with
 * a deadline). No Python with torch is a skip, not a failure: not every
 * node trains with PyTorch. */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct torch_info *t = inv->torch;
	struct finding *f;
	if (!inv->live || !t) {
		check_add(c, STATUS_SKIP, "pytorch", "PyTorch runs only on the live machine (not a recorded tree)");
		return 0;
	}
	if (!t->probed || (!t->ok && t->why && strstr(t->why, "import torch"))) {
		check_add(c, STATUS_SKIP, "pytorch", "no PyTorch: %s", t->why ? t->why : "no Python found");
		return 0;
	}
	if (!t->ok) {
		f = check_add(c, STATUS_FAIL, "pytorch", "the PyTorch probe failed: %s", t->why ? t->why : "unknown");
		finding_hint(f, "%s -c 'import torch; print(torch.cuda.is_available())' shows the error", t->python);
		return 0;
	}
	const struct pci_dev **gpus = NULL;
	size_t ng = topo_gpus(inv, &gpus);
	free(gpus);
	if (t->cuda_available != 1) {
		f = check_add(c, STATUS_FAIL, "pytorch", "torch %s (CUDA %s): torch.cuda.is_available() is False",
			      t->torch_version, t->cuda_version ? t->cuda_version : "none: a CPU-only build");
		finding_hint(f, "install a CUDA build of torch matching the driver (pip install torch --index-url "
				"https://download.pytorch.org/whl/cu128); CUDA_VISIBLE_DEVICES must not hide the GPUs");
		return 0;
	}
	if (t->device_count >= 0 && (size_t)t->device_count != ng) {
		f = check_add(c, STATUS_FAIL, "pytorch", "torch sees %d GPUs, %zu are on PCI", t->device_count, ng);
		finding_hint(f, "check CUDA_VISIBLE_DEVICES and gpu.cuda / gpu.nvml for the missing GPUs");
		return 0;
	}
	f = check_add(c, STATUS_OK, "pytorch", "torch %s, CUDA %s, %d GPUs visible, NCCL %s (%s)", t->torch_version,
		      t->cuda_version ? t->cuda_version : "?", t->device_count,
		      t->nccl_available == 1 ? (t->nccl_version ? t->nccl_version : "available") : "not available",
		      t->python);
	if (t->nccl_available != 1) {
		f = check_add(c, STATUS_WARN, "pytorch nccl", "torch.distributed has no NCCL backend: multi-GPU "
							      "training cannot use NCCL");
		finding_hint(f, "install a torch build with NCCL (the official CUDA wheels have it)");
	}
	return 0;
}

const struct check_def check_gpu_pytorch = {
	.id = "gpu.pytorch",
	.section = "PyTorch (live)",
	.summary = "live: torch imports, torch.cuda.is_available(), sees every GPU, and has the NCCL backend",
	.run = run,
	.needs = NEEDS_LIVE,
};
