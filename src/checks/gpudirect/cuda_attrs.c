/* gpudirect.cuda_attrs: what the CUDA driver says each GPU can do (live):
 * CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED (116) and
 * CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (124) (CUDA Driver API reference, CUdevice_attribute). NCCL
 * logs "DMA-BUF is available on GPU device N" only when the second is
 * true (and CUDA >= 11.7). */
#include "checks/check.h"
#include "common.h"

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct cuda_info *cu = inv->cuda;
	struct gdr_state s;
	gdr_state_get(inv, &s);
	if (!inv->live || !cu) {
		check_add(c, STATUS_SKIP, "cuda", "CUDA device attributes need the live machine");
		return 0;
	}
	if (!cu->loaded) {
		check_add(c, STATUS_SKIP, "cuda", "CUDA unavailable: %s (see gpu.cuda)", cu->error);
		return 0;
	}
	for (size_t i = 0; i < cu->n; i++) {
		const struct cuda_gpu *g = &cu->v[i];
		const char *subj = g->bdf[0] ? g->bdf : "cuda";
		struct finding *f;
		if (g->gdr_supported == 0) {
			f = check_add(c, STATUS_FAIL, subj, "device %d: CUDA reports no GPUDirect RDMA support", g->ordinal);
			finding_hint(f, "GeForce and some workstation GPUs lack it; use a data-centre GPU");
			continue;
		}
		if (g->dmabuf_supported == 0 && s.method == GDR_DMABUF) {
			f = check_add(c, STATUS_FAIL, subj, "device %d: CUDA reports no DMA-BUF support although the driver "
							    "and kernel allow it",
				      g->ordinal);
			finding_hint(f, "needs the open kernel module and CUDA 11.7+ (cuDriverGetVersion); reboot after "
					"switching drivers");
			continue;
		}
		check_add(c, STATUS_OK, subj, "device %d: GPUDirect RDMA %s, DMA-BUF %s", g->ordinal,
			  g->gdr_supported == 1 ? "supported" : "unknown",
			  g->dmabuf_supported == 1 ? "supported" : g->dmabuf_supported == 0 ? "not supported" : "unknown");
	}
	return 0;
}

const struct check_def check_gpudirect_cuda_attrs = {
	.id = "gpudirect.cuda_attrs",
	.section = "GPUDirect RDMA Live Tests",
	.summary = "live: CUDA's GPU_DIRECT_RDMA_SUPPORTED and DMA_BUF_SUPPORTED per GPU",
	.run = run,
	.needs = NEEDS_LIVE | NEEDS_GPU,
};
