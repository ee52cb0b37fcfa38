/* The NCCL backend's GPU memory readings for -M (as nccl-tests common.cu
 * getGPUMemoryInfo: cudaMemGetInfo's free memory before and after each
 * phase; here the driver API's cuMemGetInfo_v2). See backend_nccl.c for
 * the whole backend. */
#include "backend_nccl_int.h"

#include <errno.h>

int nccl_mem_supported(struct nccl_backend *n)
{
	if (n->cu.mem_get_info_v2)
		return 0;
	backend_set_error(&n->base, "GPU memory usage (-M) needs cuMemGetInfo_v2, which the CUDA driver library %s "
				    "lacks; run without -M", n->culib.path);
	return -ENOTSUP;
}

int nccl_mem_free(struct backend *b, int l, int64_t *bytes)
{
	struct nccl_backend *n = nb(b);
	size_t avail = 0, total = 0;

	if (nccl_mem_supported(n) < 0)
		return -ENOTSUP;
	if (l < 0 || l >= n->n || nccl_set_ctx(n, l) < 0)
		return -EIO;
	CUresult r = n->cu.mem_get_info_v2(&avail, &total);
	if (r != CUDA_SUCCESS)
		return nccl_cu_fail(n, "cuMemGetInfo_v2 (-M)", r);
	*bytes = (int64_t)avail;
	return 0;
}

/* Before communicator setup (after == false) each local GPU's free memory;
 * after it, base.mem_init = the most any of them lost. */
int nccl_mem_init_note(struct nccl_backend *n, bool after)
{
	for (int l = 0; l < n->n; l++) {
		int64_t now = 0;
		int r = nccl_mem_free(&n->base, l, &now);
		if (r < 0)
			return r;
		if (!after)
			n->r[l].free_before_init = now;
		else if (l == 0 || n->r[l].free_before_init - now > n->base.mem_init)
			n->base.mem_init = n->r[l].free_before_init - now;
	}
	return 0;
}
