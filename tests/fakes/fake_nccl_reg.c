/* The fake libnccl.so.2's buffer registration (nccl-tests -R) and NCCL's
 * allocator: ncclMemAlloc/ncclMemFree (NCCL 2.19+) take memory from the
 * fake libcuda's cuMemAlloc_v2 (so cuMemGetInfo_v2 sees it) and remember
 * it; ncclCommRegister/ncclCommDeregister (2.19+) and
 * ncclCommWindowRegister/ncclCommWindowDeregister (2.27+) hand out handles
 * checked on the way back (the communicator must match). A symmetric
 * window must lie inside one ncclMemAlloc allocation, as NCCL requires
 * memory from its allocator (or the CUDA VMM API) for windows; a
 * communicator destroyed with registrations left WARNs. The calls are
 * checked, never queued: they complete at once, in or out of a group. */
#define _GNU_SOURCE
#include "fake_nccl.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

/* NCCL's ABI, declared by nccl.h, which this build does not have */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define FAKE_API __attribute__((visibility("default")))
#define REG_MAGIC 0x4e6c0001u
#define WIN_MAGIC 0x4e6c0002u

struct reg {
	unsigned magic;
	ncclComm_t comm;
	const char *p;
	size_t size;
	struct reg *next;
};

struct alloc {
	char *p;
	size_t size;
	struct alloc *next;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reg *regs;
static struct alloc *allocs;

typedef CUresult (*alloc_fn)(CUdeviceptr *p, size_t bytes);
typedef CUresult (*free_fn)(CUdeviceptr p);

FAKE_API ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
	alloc_fn fn = (alloc_fn)fake_cuda_sym("cuMemAlloc_v2");
	CUdeviceptr p = 0;
	if (!ptr || !size)
		return ncclInvalidArgument;
	if (!fn || fn(&p, size) != CUDA_SUCCESS)
		return ncclUnhandledCudaError;
	struct alloc *a = calloc(1, sizeof(*a));
	if (!a)
		return ncclSystemError;
	*a = (struct alloc){ .p = (char *)(uintptr_t)p, .size = size };
	pthread_mutex_lock(&reg_lock);
	a->next = allocs;
	allocs = a;
	pthread_mutex_unlock(&reg_lock);
	*ptr = a->p;
	return ncclSuccess;
}

FAKE_API ncclResult_t ncclMemFree(void *ptr)
{
	free_fn fn = (free_fn)fake_cuda_sym("cuMemFree_v2");
	struct alloc *found = NULL;
	pthread_mutex_lock(&reg_lock);
	for (struct alloc **a = &allocs; *a; a = &(*a)->next)
		if ((*a)->p == ptr) {
			found = *a;
			*a = found->next;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	if (!found)
		return ncclInvalidArgument;
	free(found);
	return fn && fn((CUdeviceptr)(uintptr_t)ptr) == CUDA_SUCCESS ? ncclSuccess : ncclUnhandledCudaError;
}

static int in_alloc(const char *p, size_t size)
{
	for (struct alloc *a = allocs; a; a = a->next)
		if (p >= a->p && p + size <= a->p + a->size)
			return 1;
	return 0;
}

static ncclResult_t add(ncclComm_t comm, void *buff, size_t size, unsigned magic, void **ret)
{
	if (fake_comm_invalid(comm) || !buff || !size || !ret)
		return ncclInvalidArgument;
	pthread_mutex_lock(&reg_lock);
	if (magic == WIN_MAGIC && !in_alloc(buff, size)) {
		pthread_mutex_unlock(&reg_lock);
		WARN(-1, "ncclCommWindowRegister: buffer %p (%zu bytes) is not from ncclMemAlloc", buff, size);
		return ncclInvalidArgument;
	}
	struct reg *r = calloc(1, sizeof(*r));
	if (r) {
		*r = (struct reg){ .magic = magic, .comm = comm, .p = buff, .size = size, .next = regs };
		regs = r;
	}
	pthread_mutex_unlock(&reg_lock);
	*ret = r;
	return r ? ncclSuccess : ncclSystemError;
}

static ncclResult_t drop_reg(ncclComm_t comm, void *handle, unsigned magic)
{
	ncclResult_t res = ncclInvalidArgument;
	pthread_mutex_lock(&reg_lock);
	for (struct reg **r = &regs; *r; r = &(*r)->next)
		if (*r == handle && (*r)->magic == magic && (*r)->comm == comm) {
			struct reg *x = *r;
			*r = x->next;
			free(x);
			res = ncclSuccess;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	return res;
}

FAKE_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
	return add(comm, buff, size, REG_MAGIC, handle);
}

FAKE_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
	return drop_reg(comm, handle, REG_MAGIC);
}

FAKE_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int flags)
{
	if (flags != NCCL_WIN_COLL_SYMMETRIC)
		return ncclInvalidArgument;
	return add(comm, buff, size, WIN_MAGIC, (void **)win);
}

FAKE_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
	return drop_reg(comm, win, WIN_MAGIC);
}

int fake_regs_left(ncclComm_t comm)
{
	int n = 0;
	pthread_mutex_lock(&reg_lock);
	for (struct reg *r = regs; r; r = r->next)
		n += r->comm == comm;
	pthread_mutex_unlock(&reg_lock);
	return n;
}
