/* gpu.driver_gpus: every GPU on PCI is known to the driver and not
 * excluded. /proc/driver/nvidia/gpus/<bdf>/information lists what the
 * driver attached; "GPU Excluded: Yes" means the driver refused the GPU
 * (NVIDIA open-gpu-kernel-modules, kernel-open/nvidia/nv-procfs.c;
 * NVIDIA excludes GPUs it finds faulty, e.g. after
 * row-remapping failures). */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <stdlib.h>
#include <string.h>

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus);
	struct finding *f;
	if (n == 0 || !inv->nvidia.gpus_listed) {
		bool loaded = modules_state(&inv->modules, "nvidia") == MODULE_LOADED;
		check_add(c, STATUS_SKIP, "gpu",
			  n == 0  ? "no NVIDIA GPU on PCI"
			  : loaded ? "the driver's GPU list is unknown: /proc/driver/nvidia/gpus: %s"
				   : "the NVIDIA driver is not loaded (no /proc/driver/nvidia)",
			  read_strerror(inv->nvidia.gpus_err));
		free(gpus);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pci_dev *p = gpus[i];
		const struct nvidia_gpu_info *g = nvproc_for(inv, p->bdf);
		if (!p->driver || strcmp(p->driver, "nvidia")) {
			check_add(c, STATUS_SKIP, p->bdf, "not bound to nvidia (see gpu.pci)");
			continue;
		}
		if (!g) {
			f = check_add(c, STATUS_FAIL, p->bdf, "bound to nvidia but missing from /proc/driver/nvidia/gpus: "
							      "the driver did not initialise it");
			finding_hint(f, "`dmesg | grep -i nvrm` for the reason; a GPU reset (`nvidia-smi -r -i %s`) or a "
					"reboot",
				     p->bdf);
			continue;
		}
		if (g->info_err < 0) {
			f = check_add(c, STATUS_WARN, p->bdf,
				      "cannot tell whether the driver excluded it: /proc/driver/nvidia/gpus/%s/information: %s",
				      p->bdf, read_strerror(g->info_err));
			finding_hint(f, "`cat /proc/driver/nvidia/gpus/%s/information` must list \"GPU Excluded\"; "
					"`nvidia-smi -q -i %s` shows the GPU's state",
				     p->bdf, p->bdf);
			continue;
		}
		if (g->excluded == 1) {
			f = check_add(c, STATUS_FAIL, p->bdf, "%s (%s) is excluded by the driver (GPU Excluded: Yes)",
				      g->model ? g->model : "GPU", g->uuid ? g->uuid : "no UUID");
			finding_hint(f, "the driver found it faulty: check `nvidia-smi -q -i %s` (remapped rows, "
					"retired pages) and dmesg; reset or RMA the GPU",
				     p->bdf);
			continue;
		}
		f = check_add(c, STATUS_OK, p->bdf, "%s, %s, VBIOS %s, GSP firmware %s", g->model ? g->model : "model unknown",
			      g->uuid ? g->uuid : "no UUID", g->vbios ? g->vbios : "?", g->firmware ? g->firmware : "?");
	}
	free(gpus);
	return 0;
}

const struct check_def check_gpu_driver_gpus = {
	.id = "gpu.driver_gpus",
	.section = "NVIDIA Driver",
	.summary = "every GPU bound to nvidia appears in /proc/driver/nvidia/gpus and is not excluded",
	.run = run,
	.needs = NEEDS_GPU,
};
