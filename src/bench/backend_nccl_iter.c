/* The NCCL backend's per-iteration timing (-I, as nccl-tests common.cu
 * BenchTime with per_iter_timing): a CUDA event per timing point on every
 * local rank's stream, the elapsed time between two points the longest
 * over the ranks. See backend_nccl.c for the whole backend. */
#include "backend_nccl_int.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>

static void free_marks(struct nccl_backend *n)
{
	for (int l = 0; l < n->n; l++) {
		struct nccl_rank *k = &n->r[l];
		if (k->nmarks && nccl_set_ctx(n, l) == 0)
			for (int i = 0; i < k->nmarks; i++)
				n->cu.event_destroy_v2(k->marks[i]);
		free(k->marks);
		k->marks = NULL;
		k->nmarks = 0;
	}
}

int nccl_marks(struct backend *b, int count)
{
	struct nccl_backend *n = nb(b);
	const char *missing = count ? cuda_api_missing(&n->cu, CUDA_NEED_EVENT) : NULL;

	free_marks(n);
	if (missing) {
		backend_set_error(b, "per-iteration timing (-I) needs CUDA events: the CUDA driver library %s lacks %s; "
				     "run without -I", n->culib.path, missing);
		return -ENOTSUP;
	}
	for (int l = 0; l < n->n && count > 0; l++) {
		struct nccl_rank *k = &n->r[l];
		if (nccl_set_ctx(n, l) < 0)
			return -EIO;
		k->marks = xcalloc((size_t)count, sizeof(*k->marks));
		for (; k->nmarks < count; k->nmarks++) {
			CUresult r = n->cu.event_create(&k->marks[k->nmarks], CU_EVENT_DEFAULT);
			if (r != CUDA_SUCCESS)
				return nccl_cu_fail(n, "cuEventCreate (-I)", r);
		}
	}
	return 0;
}

int nccl_mark(struct backend *b, int i)
{
	struct nccl_backend *n = nb(b);

	for (int l = 0; l < n->n; l++) {
		struct nccl_rank *k = &n->r[l];
		if (i < 0 || i >= k->nmarks) {
			backend_set_error(b, "nccl: timing point %d of %d", i, k->nmarks);
			return -EINVAL;
		}
		if (nccl_set_ctx(n, l) < 0)
			return -EIO;
		CUresult r = n->cu.event_record(k->marks[i], k->stream);
		if (r != CUDA_SUCCESS)
			return nccl_cu_fail(n, "cuEventRecord (-I)", r);
	}
	return 0;
}

int nccl_mark_elapsed(struct backend *b, int from, int to, double *sec)
{
	struct nccl_backend *n = nb(b);

	*sec = 0;
	for (int l = 0; l < n->n; l++) {
		struct nccl_rank *k = &n->r[l];
		float ms = 0;
		if (from < 0 || to < 0 || from >= k->nmarks || to >= k->nmarks) {
			backend_set_error(b, "nccl: timing points %d..%d of %d", from, to, k->nmarks);
			return -EINVAL;
		}
		if (nccl_set_ctx(n, l) < 0)
			return -EIO;
		CUresult r = cuda_api_elapsed(&n->cu, &ms, k->marks[from], k->marks[to]);
		if (r != CUDA_SUCCESS)
			return nccl_cu_fail(n, "cuEventElapsedTime (-I)", r);
		if (ms * 1e-3 > *sec)
			*sec = ms * 1e-3;
	}
	return 0;
}
