/* The NCCL backend's device memory: the buffers (alloc and free), the GPU
 * memory readings for -M (as nccl-tests common.cu getGPUMemoryInfo:
 * cudaMemGetInfo's free memory before and after each phase; here the
 * driver API's cuMemGetInfo_v2) and -R's buffer registration. See
 * backend_nccl.c for the whole backend. */
#include "backend_nccl_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

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

/* ---- -R: buffer registration (nccl-tests common.cu: ncclMemAlloc'd
 * buffers, registered with ncclCommRegister for -R 1 and
 * ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC) for -R 2) ---- */

static bool at_least(const struct nccl_api *a, int major, int minor)
{
	return a->major > major || (a->major == major && a->minor >= minor);
}

int nccl_reg_supported(struct nccl_backend *n, int reg)
{
	const struct nccl_api *a = &n->nccl;
	bool alloc = a->mem_alloc && a->mem_free;

	if (reg == 1 && !(at_least(a, 2, 19) && alloc && a->comm_register && a->comm_deregister)) {
		backend_set_error(&n->base, "-R 1 (local buffer registration) needs ncclMemAlloc and ncclCommRegister, "
					    "NCCL 2.19 or newer; this is %s (%s); run without -R",
				  a->version, a->file);
		return -ENOTSUP;
	}
	if (reg == 2 && !(at_least(a, 2, 27) && alloc && a->comm_window_register && a->comm_window_deregister)) {
		backend_set_error(&n->base, "-R 2 (symmetric buffer registration) needs ncclMemAlloc and "
					    "ncclCommWindowRegister, NCCL 2.27 or newer; this is %s (%s); give -R 1 "
					    "(nccl-tests falls back to it there)",
				  a->version, a->file);
		return -ENOTSUP;
	}
	return 0;
}

static int nccl_reg_alloc(struct nccl_backend *n, int l, size_t bytes, void **ret)
{
	void *p = NULL;

	if (nccl_set_ctx(n, l) < 0)
		return -EIO;
	ncclResult_t r = n->nccl.mem_alloc(&p, bytes ? bytes : 1);
	if (r != ncclSuccess) {
		char what[96];
		snprintf(what, sizeof(what), "ncclMemAlloc(%zu bytes on GPU %d)", bytes, n->base.env.first_gpu + l);
		return nccl_fail(n, NULL, what, r);
	}
	*ret = p;
	return 0;
}

/* Deregisters what registered p, then frees it. */
static void nccl_reg_free(struct nccl_backend *n, int l, void *p)
{
	struct nccl_rank *k = &n->r[l];

	if (nccl_set_ctx(n, l) < 0)
		return;
	for (int i = 0; i < k->nregs; i++) {
		if (k->regs[i].p != p)
			continue;
		if (n->base.env.reg == 2)
			n->nccl.comm_window_deregister(k->comm, k->regs[i].win);
		else
			n->nccl.comm_deregister(k->comm, k->regs[i].handle);
		k->regs[i--] = k->regs[--k->nregs];
	}
	n->nccl.mem_free(p);
}

/* Device memory for rank l's buffers: ncclMemAlloc's with -R, else
 * cuMemAlloc_v2's. */
int nccl_alloc(struct backend *b, int l, size_t bytes, void **ret)
{
	struct nccl_backend *n = nb(b);
	CUdeviceptr p = 0;

	if (nccl_capture_busy(n, "alloc") < 0)
		return -EBUSY;
	if (b->env.reg)
		return nccl_reg_alloc(n, l, bytes, ret);
	if (nccl_set_ctx(n, l) < 0)
		return -EIO;
	CUresult r = n->cu.mem_alloc_v2(&p, bytes ? bytes : 1);
	if (r != CUDA_SUCCESS) {
		char what[96];
		snprintf(what, sizeof(what), "cuMemAlloc_v2(%zu bytes on GPU %d)", bytes, b->env.first_gpu + l);
		nccl_cu_fail(n, what, r);
		return r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EIO;
	}
	*ret = (void *)(uintptr_t)p;
	return 0;
}

void nccl_free(struct backend *b, int l, void *p)
{
	struct nccl_backend *n = nb(b);

	if (p && b->env.reg)
		nccl_reg_free(n, l, p);
	else if (p && nccl_set_ctx(n, l) == 0)
		n->cu.mem_free_v2((CUdeviceptr)(uintptr_t)p);
}

int nccl_reg(struct backend *b, int l, void *p, size_t bytes)
{
	struct nccl_backend *n = nb(b);
	struct nccl_rank *k = &n->r[l];
	struct nccl_reg g = { .p = p };
	ncclResult_t r;

	if (k->nregs >= NCCL_MAX_REGS) {
		backend_set_error(b, "nccl: more than %d registered buffers on rank %d", NCCL_MAX_REGS, k->rank);
		return -ENOSPC;
	}
	if (nccl_set_ctx(n, l) < 0)
		return -EIO;
	if (b->env.reg == 2)
		r = n->nccl.comm_window_register(k->comm, p, bytes, &g.win, NCCL_WIN_COLL_SYMMETRIC);
	else
		r = n->nccl.comm_register(k->comm, p, bytes, &g.handle);
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(n, k->comm, b->env.reg == 2 ? "ncclCommWindowRegister (-R 2)" : "ncclCommRegister (-R 1)",
				 r);
	k->regs[k->nregs++] = g;
	return 0;
}
