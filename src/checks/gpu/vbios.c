/* gpu.vbios: the GPUs of one model on a node run the same VBIOS.
 *
 * A GPU or baseboard replaced in the field, or a partial firmware update,
 * leaves GPUs of one baseboard on different VBIOS versions, with uneven
 * behaviour between them; the fix is the baseboard's firmware bundle for
 * all GPUs (Azure/azurehpc-health-checks customTests/azure_gpu_vbios.nhc
 * fails a node with more than one VBIOS). The version is the "Video BIOS"
 * line of /proc/driver/nvidia/gpus/<bdf>/information (open-gpu-kernel-modules
 * kernel-open/nvidia/nv-procfs.c). GPUs of different models are not
 * compared. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <string.h>

/* The VBIOS most GPUs of g's model have (the first such on a tie). */
static const char *usual_vbios(const struct inventory *inv, const struct nvidia_gpu_info *g, size_t *same_model)
{
	const struct nvidia_info *nv = &inv->nvidia;
	const char *best = NULL;
	size_t best_n = 0;
	*same_model = 0;
	for (size_t i = 0; i < nv->n_gpus; i++) {
		const struct nvidia_gpu_info *a = &nv->gpus[i];
		if (!a->vbios || !a->model || strcmp(a->model, g->model))
			continue;
		(*same_model)++;
		size_t k = 0;
		for (size_t j = 0; j < nv->n_gpus; j++) {
			const struct nvidia_gpu_info *b = &nv->gpus[j];
			k += b->vbios && b->model && !strcmp(b->model, g->model) && !strcmp(b->vbios, a->vbios);
		}
		if (k > best_n)
			best = a->vbios, best_n = k;
	}
	return best;
}

static int run(struct check_ctx *c)
{
	const struct nvidia_info *nv = &c->inv->nvidia;
	if (!nv->gpus_listed || nv->n_gpus == 0) {
		check_add(c, STATUS_SKIP, "vbios", "no GPU in /proc/driver/nvidia/gpus (%s)", read_strerror(nv->gpus_err));
		return 0;
	}
	for (size_t i = 0; i < nv->n_gpus; i++) {
		const struct nvidia_gpu_info *g = &nv->gpus[i];
		if (g->info_err < 0 || !g->vbios || !g->model) {
			check_add(c, STATUS_SKIP, g->bdf, "VBIOS unknown: /proc/driver/nvidia/gpus/%s/information: %s",
				  g->bdf, g->info_err < 0 ? read_strerror(g->info_err) : "no \"Video BIOS\" or \"Model\" line");
			continue;
		}
		size_t same = 0;
		const char *usual = usual_vbios(c->inv, g, &same);
		if (usual && strcmp(usual, g->vbios)) {
			struct finding *f = check_add(c, STATUS_WARN, g->bdf, "VBIOS %s differs from %s on the other %s "
									   "GPUs of this node",
						      g->vbios, usual, g->model);
			finding_compare(f, g->vbios, usual);
			finding_hint(f, "`nvidia-smi --query-gpu=pci.bus_id,vbios_version --format=csv` lists them; apply "
					"the baseboard's firmware bundle to every GPU with the vendor's update tool");
			continue;
		}
		check_add(c, STATUS_OK, g->bdf, "VBIOS %s%s", g->vbios,
			  same > 1 ? ", as on the other GPUs of its model" : "");
	}
	return 0;
}

const struct check_def check_gpu_vbios = {
	.id = "gpu.vbios",
	.section = "NVIDIA Driver",
	.summary = "the GPUs of one model run the same VBIOS (\"Video BIOS\" in /proc/driver/nvidia/gpus/*/information)",
	.run = run,
	.needs = NEEDS_GPU,
};
