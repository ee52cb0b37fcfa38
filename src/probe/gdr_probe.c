/* GPUDirect RDMA registration probe: can this NIC DMA into this GPU?
 *
 * For each (GPU, RDMA device) pair the probe allocates 2 MiB on the GPU and
 * registers it with the NIC in the two ways NCCL can (perftest src/cuda_memory.c, NCCL net_ib; the
 * recipe of perftest src/cuda_memory.c and nccl net_ib/reg.cc):
 *   DMA-BUF  cuMemGetHandleForAddressRange gives a dma-buf fd for the
 *            page-aligned range, ibv_reg_dmabuf_mr registers it (Linux
 *            5.12+, rdma-core v34+, a CUDA 11.7+ driver, open kernel modules);
 *   peermem  ibv_reg_mr on the GPU virtual address, which only a kernel
 *            peer-memory client (nvidia_peermem, nv_peer_mem) can resolve.
 * A registration that succeeds is the proof; one that fails keeps its errno
 * and a likely cause. Every object is released on every path: memory
 * regions, dma-buf fd, GPU memory, primary context, PD, device context.
 *
 * Results (struct gdr_probe in gpu_live.h): *_tried is true when the pair's
 * setup worked (both libraries, the RDMA device opened with a PD, the GPU
 * found, 2 MiB allocated) and that method was asked for; *_ok, *_errno and
 * *_error then describe the attempt. A setup failure leaves *_tried false
 * and puts the failed step in the error of each method asked for. A method
 * the driver stack lacks (no cuMemGetHandleForAddressRange, no
 * ibv_reg_dmabuf_mr@IBVERBS_1.12) is tried-and-failed with errno 0.
 *
 * libcuda.so.1 is loaded through cuda_api.h (the same table as
 * cuda_probe.c's, requiring only the allocation subset, CUDA_NEED_BASE);
 * libibverbs.so.1 through verbs_api.h (base verbs at IBVERBS_1.1, the
 * default version of libibverbs.so.1, as NCCL's src/misc/ibvsymbols.cc
 * looks them up; ibv_reg_dmabuf_mr at IBVERBS_1.12). Only the MR's
 * presence is used here, no field of a verbs struct.
 *
 * Every CUDA and verbs call that may block (a GPU fallen off the bus
 * blocks the driver, and with it a registration through nvidia_peermem)
 * is named to a watchdog before it is made (isolate_step): `check` runs
 * the probe in a child process under a deadline per call
 * (gdr_probe_deadline, deadline.c), which sends each pair's result as
 * soon as it is final. */
#define _GNU_SOURCE
#include "probe.h"
#include "lib/cuda_api.h"
#include "core/dl.h"
#include "lib/verbs_api.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The access ibv_reg_dmabuf_mr accepts (with REMOTE_ATOMIC and
 * RELAXED_ORDERING; ibv_reg_mr(3)) and NCCL uses. */
#define GDR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* The GPU buffer registered: 2 MiB, a multiple of every host page size. */
#define GDR_BYTES ((size_t)2 << 20)

/* Linux's kernel-internal ENOTSUPP (include/linux/errno.h), which a few
 * drivers let out to user space. */
#define KERNEL_ENOTSUPP 524

/* Everything shared by the pairs of one run. */
struct gdr_env {
	struct cuda_api cu;
	struct verbs_api vb;
	struct dl_lib culib, vblib;
	struct ibv_device **list;
	int n_list;
	size_t page;
	bool try_dmabuf, try_peermem;
	struct isolate_ctx *t;     /* the watchdog each call is named to; NULL for none */
};

/* What one pair holds; pair_close() releases it in reverse order. */
struct gdr_pair {
	const char *bdf, *ibdev;  /* for the names of the calls */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	CUdevice dev;
	bool retained;
	CUdeviceptr dptr;
};

/* "what: <strerror> (errno N)" */
static void errno_format(const char *what, int e, char *out, size_t size)
{
	char buf[128];
	snprintf(out, size, "%s: %s (errno %d)", what, e ? strerror_r(e, buf, sizeof(buf)) : "failed, errno not set",
		 e);
}

/* Appends sep and text to the string in buf, truncating at size. */
static void text_append(char *buf, size_t size, const char *sep, const char *text)
{
	size_t len = strnlen(buf, size);
	if (len + 1 < size)
		snprintf(buf + len, size - len, "%s%s", sep, text);
}

/* The causes any memory registration shares, for the errnos the method's
 * own hint does not name. */
static const char *reg_hint(int e)
{
	switch (e) {
	case ENOMEM:
		return "out of memory or over the locked-memory limit (ulimit -l)";
	case EPERM:
	case EACCES:
		return "not permitted (locked-memory limit or device permissions)";
	default:
		return "the kernel log (dmesg) may say why";
	}
}

/* A likely cause of a failed ibv_reg_dmabuf_mr (Linux drivers/infiniband/hw/mlx5/mr.c: mlx5 answers
 * EOPNOTSUPP without CONFIG_INFINIBAND_USER_MEM and _ON_DEMAND_PAGING;
 * NCCL reads EOPNOTSUPP/EPROTONOSUPPORT as "kernel lacks dma-buf MRs"). */
static const char *dmabuf_hint(int e)
{
	switch (e) {
	case EOPNOTSUPP:
	case EPROTONOSUPPORT:
	case KERNEL_ENOTSUPP:
		return "kernel or NIC driver lacks dma-buf MRs (Linux 5.12+; mlx5 needs "
		       "CONFIG_INFINIBAND_ON_DEMAND_PAGING)";
	case EINVAL:
		return "offset, size or access refused (misaligned), or the GPU driver refused the NIC (PCIe topology)";
	case EBADF:
		return "the dma-buf fd was refused";
	case EFAULT:
		return "the NIC could not map the GPU pages (IOMMU or PCIe peer-to-peer path)";
	default:
		return reg_hint(e);
	}
}

/* A likely cause of a failed ibv_reg_mr on GPU memory: without a peer
 * client the kernel cannot pin the GPU range (linux ib_umem_get). */
static const char *peermem_hint(int e)
{
	switch (e) {
	case EFAULT:
	case EINVAL:
		return "no peer-memory client for GPU memory: load nvidia_peermem (or the legacy nv_peer_mem)";
	default:
		return reg_hint(e);
	}
}

/* Loads both libraries, initialises CUDA, lists the RDMA devices. On
 * failure why says which step; gdr_close() undoes whatever was done. */
static int gdr_open(struct gdr_env *env, char *why, size_t size)
{
	CUresult r;

	/* cuda_api_load also keeps libcuda mapped after dl_close: cuInit
	 * starts threads */
	isolate_step(env->t, "loading libcuda.so.1");
	if (cuda_api_load(&env->culib, &env->cu, CUDA_NEED_BASE) < 0) {
		snprintf(why, size, "libcuda.so.1 could not be loaded: %s",
			 env->culib.error ? env->culib.error : "unknown error");
		return -1;
	}
	isolate_step(env->t, "cuInit");
	if ((r = env->cu.init(0)) != CUDA_SUCCESS) {
		cuda_api_format(&env->cu, "cuInit", r, why, size);
		return -1;
	}
	isolate_step(env->t, "loading libibverbs.so.1");
	if (verbs_api_load(&env->vblib, &env->vb, NULL) < 0) {
		snprintf(why, size, "libibverbs.so.1 could not be loaded: %s (install rdma-core / libibverbs1)",
			 env->vblib.error ? env->vblib.error : "unknown error");
		return -1;
	}
	isolate_step(env->t, "ibv_get_device_list");
	errno = 0;
	env->list = env->vb.get_device_list(&env->n_list);
	if (!env->list) {
		errno_format("ibv_get_device_list", errno, why, size);
		text_append(why, size, " ", "(is the ib_uverbs module loaded?)");
		return -1;
	}
	long page = sysconf(_SC_PAGESIZE);
	env->page = page > 0 ? (size_t)page : 4096;
	return 0;
}

static void gdr_close(struct gdr_env *env)
{
	isolate_step(env->t, "ibv_free_device_list");
	if (env->list)
		env->vb.free_device_list(env->list);
	env->list = NULL;
	dl_close(&env->vblib);
	dl_close(&env->culib);
}

/* The CUDA device whose normalised PCI bus ID is bdf's. */
static int find_cuda_dev(const struct gdr_env *env, const char *bdf, CUdevice *ret, char *why, size_t size)
{
	char want[32], id[64], got[32];
	int n = 0;
	CUresult r;

	if (!gpu_normalize_bdf(bdf, want, sizeof(want))) {
		snprintf(why, size, "'%s' is not a PCI bus ID", bdf);
		return -1;
	}
	isolate_step(env->t, "cuDeviceGetCount");
	if ((r = env->cu.device_get_count(&n)) != CUDA_SUCCESS) {
		cuda_api_format(&env->cu, "cuDeviceGetCount", r, why, size);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		CUdevice dev = 0;
		isolate_step(env->t, "cuDeviceGet on device %d", i);
		if (env->cu.device_get(&dev, i) != CUDA_SUCCESS)
			continue;
		isolate_step(env->t, "cuDeviceGetPCIBusId on device %d", i);
		if (env->cu.device_get_pci_bus_id(id, (int)sizeof(id), dev) != CUDA_SUCCESS)
			continue;
		id[sizeof(id) - 1] = '\0';
		if (gpu_normalize_bdf(id, got, sizeof(got)) && !strcmp(got, want)) {
			*ret = dev;
			return 0;
		}
	}
	snprintf(why, size, "no CUDA device has PCI bus ID %s (%d visible; is CUDA_VISIBLE_DEVICES set?)", want, n);
	return -1;
}

/* Opens the RDMA device and a PD, makes the GPU's primary context current
 * and allocates GDR_BYTES on it. */
static int pair_open(const struct gdr_env *env, const char *bdf, const char *ibdev, struct gdr_pair *pair,
		     char *why, size_t size)
{
	struct ibv_device *d = NULL;
	char what[128];
	CUcontext ctx = NULL;
	CUresult r;

	for (int i = 0; i < env->n_list && !d; i++) {
		const char *name = env->vb.get_device_name(env->list[i]);
		if (name && !strcmp(name, ibdev))
			d = env->list[i];
	}
	if (!d) {
		snprintf(why, size, "no RDMA device named '%s' (ibv_get_device_list found %d)", ibdev, env->n_list);
		return -1;
	}
	isolate_step(env->t, "ibv_open_device(%s)", ibdev);
	errno = 0;
	if (!(pair->ctx = env->vb.open_device(d))) {
		snprintf(what, sizeof(what), "ibv_open_device(%s)", ibdev);
		errno_format(what, errno, why, size);
		return -1;
	}
	isolate_step(env->t, "ibv_alloc_pd(%s)", ibdev);
	errno = 0;
	if (!(pair->pd = env->vb.alloc_pd(pair->ctx))) {
		snprintf(what, sizeof(what), "ibv_alloc_pd(%s)", ibdev);
		errno_format(what, errno, why, size);
		return -1;
	}
	if (find_cuda_dev(env, bdf, &pair->dev, why, size) < 0)
		return -1;
	isolate_step(env->t, "cuDevicePrimaryCtxRetain on GPU %s", bdf);
	if ((r = env->cu.primary_ctx_retain(&ctx, pair->dev)) != CUDA_SUCCESS) {
		cuda_api_format(&env->cu, "cuDevicePrimaryCtxRetain", r, why, size);
		return -1;
	}
	pair->retained = true;
	isolate_step(env->t, "cuCtxSetCurrent on GPU %s", bdf);
	if ((r = env->cu.ctx_set_current(ctx)) != CUDA_SUCCESS) {
		cuda_api_format(&env->cu, "cuCtxSetCurrent", r, why, size);
		return -1;
	}
	isolate_step(env->t, "cuMemAlloc_v2 on GPU %s", bdf);
	if ((r = env->cu.mem_alloc_v2(&pair->dptr, GDR_BYTES)) != CUDA_SUCCESS) {
		pair->dptr = 0;
		cuda_api_format(&env->cu, "cuMemAlloc_v2(2 MiB)", r, why, size);
		return -1;
	}
	return 0;
}

static void pair_close(const struct gdr_env *env, struct gdr_pair *pair)
{
	if (pair->dptr) {
		isolate_step(env->t, "cuMemFree_v2 on GPU %s", pair->bdf);
		env->cu.mem_free_v2(pair->dptr);
	}
	if (pair->retained) {
		isolate_step(env->t, "cuDevicePrimaryCtxRelease on GPU %s", pair->bdf);
		env->cu.ctx_set_current(NULL);
		cuda_api_release(&env->cu, pair->dev);
	}
	if (pair->pd) {
		isolate_step(env->t, "ibv_dealloc_pd(%s)", pair->ibdev);
		env->vb.dealloc_pd(pair->pd);
	}
	if (pair->ctx) {
		isolate_step(env->t, "ibv_close_device(%s)", pair->ibdev);
		env->vb.close_device(pair->ctx);
	}
	*pair = (struct gdr_pair){ .dev = 0 };
}

/* Deregisters a probe MR; a failure is noted in error (ok stays true: the
 * registration itself worked). */
static void gdr_dereg(const struct gdr_env *env, const struct gdr_pair *pair, struct ibv_mr *mr, char *error,
		      size_t size)
{
	isolate_step(env->t, "ibv_dereg_mr(%s)", pair->ibdev);
	int e = env->vb.dereg_mr(mr);
	if (e != 0)
		errno_format("registered, but ibv_dereg_mr failed", e, error, size);
}

/* DMA-BUF: export the page-aligned range as a dma-buf fd and register it. */
static void gdr_try_dmabuf(const struct gdr_env *env, const struct gdr_pair *pair, struct gdr_probe *p)
{
	CUdeviceptr base = pair->dptr & ~(CUdeviceptr)(env->page - 1);
	uint64_t offset = pair->dptr - base;
	size_t range = (size_t)((offset + GDR_BYTES + env->page - 1) & ~(uint64_t)(env->page - 1));
	int fd = -1;
	CUresult r;

	p->dmabuf_tried = true;
	if (!env->cu.mem_get_handle) {
		snprintf(p->dmabuf_error, sizeof(p->dmabuf_error),
			 "cuMemGetHandleForAddressRange is not exported: DMA-BUF not supported by this CUDA driver "
			 "(needs 11.7+)");
		return;
	}
	if (!env->vb.reg_dmabuf_mr) {
		snprintf(p->dmabuf_error, sizeof(p->dmabuf_error),
			 "ibv_reg_dmabuf_mr@IBVERBS_1.12 is not exported: rdma-core older than v34");
		return;
	}
	isolate_step(env->t, "cuMemGetHandleForAddressRange on GPU %s", pair->bdf);
	r = env->cu.mem_get_handle(&fd, base, range, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r != CUDA_SUCCESS || fd < 0) {
		cuda_api_format(&env->cu, "cuMemGetHandleForAddressRange", r, p->dmabuf_error, sizeof(p->dmabuf_error));
		if (r == CUDA_ERROR_NOT_SUPPORTED)
			text_append(p->dmabuf_error, sizeof(p->dmabuf_error), "; ",
				    "the GPU driver cannot export dma-buf (needs the open kernel modules)");
		if (fd >= 0)
			close(fd);
		return;
	}
	isolate_step(env->t, "ibv_reg_dmabuf_mr(%s) on GPU %s's memory", pair->ibdev, pair->bdf);
	errno = 0;
	struct ibv_mr *mr = env->vb.reg_dmabuf_mr(pair->pd, offset, GDR_BYTES, (uint64_t)pair->dptr, fd, GDR_ACCESS);
	if (!mr) {
		p->dmabuf_errno = errno;
		errno_format("ibv_reg_dmabuf_mr", p->dmabuf_errno, p->dmabuf_error, sizeof(p->dmabuf_error));
		text_append(p->dmabuf_error, sizeof(p->dmabuf_error), ": ", dmabuf_hint(p->dmabuf_errno));
	} else {
		p->dmabuf_ok = true;
		gdr_dereg(env, pair, mr, p->dmabuf_error, sizeof(p->dmabuf_error));
	}
	close(fd); /* after deregistering (perftest src/cuda_memory.c) */
}

/* Peer memory: register the GPU virtual address as if it were host memory. */
static void gdr_try_peermem(const struct gdr_env *env, const struct gdr_pair *pair, struct gdr_probe *p)
{
	p->peermem_tried = true;
	isolate_step(env->t, "ibv_reg_mr(%s) on GPU %s's memory", pair->ibdev, pair->bdf);
	errno = 0;
	struct ibv_mr *mr = env->vb.reg_mr(pair->pd, (void *)(uintptr_t)pair->dptr, GDR_BYTES, GDR_ACCESS);
	if (!mr) {
		p->peermem_errno = errno;
		errno_format("ibv_reg_mr(GPU memory)", p->peermem_errno, p->peermem_error, sizeof(p->peermem_error));
		text_append(p->peermem_error, sizeof(p->peermem_error), ": ", peermem_hint(p->peermem_errno));
		return;
	}
	p->peermem_ok = true;
	gdr_dereg(env, pair, mr, p->peermem_error, sizeof(p->peermem_error));
}

/* A setup failure, in the error of each method asked for. */
static void gdr_setup_error(const struct gdr_env *env, struct gdr_probe *p, const char *why)
{
	if (env->try_dmabuf)
		snprintf(p->dmabuf_error, sizeof(p->dmabuf_error), "%s", why);
	if (env->try_peermem)
		snprintf(p->peermem_error, sizeof(p->peermem_error), "%s", why);
}

static void gdr_probe_pair(const struct gdr_env *env, const char *bdf, const char *ibdev, struct gdr_probe *p)
{
	struct gdr_pair pair = { .bdf = bdf, .ibdev = ibdev };
	char why[200] = "";

	if (!bdf || !ibdev) {
		gdr_setup_error(env, p, "no GPU bus ID or RDMA device name given");
		return;
	}
	if (pair_open(env, bdf, ibdev, &pair, why, sizeof(why)) < 0) {
		gdr_setup_error(env, p, why);
	} else {
		if (env->try_dmabuf)
			gdr_try_dmabuf(env, &pair, p);
		if (env->try_peermem)
			gdr_try_peermem(env, &pair, p);
	}
	pair_close(env, &pair);
}

/* Contract (probe.h): never fails; out[0..n) is always filled. */
void gdr_probe_run(const char *const *gpu_bdfs, const char *const *ibdevs, size_t n, bool try_dmabuf,
		   bool try_peermem, struct gdr_probe *out, struct isolate_ctx *t)
{
	struct gdr_env env = { .try_dmabuf = try_dmabuf, .try_peermem = try_peermem, .t = t };
	char why[200] = "";

	if (!out)
		return;
	for (size_t i = 0; i < n; i++) {
		out[i] = (struct gdr_probe){ .dmabuf_errno = 0 };
		snprintf(out[i].gpu_bdf, sizeof(out[i].gpu_bdf), "%s", gpu_bdfs && gpu_bdfs[i] ? gpu_bdfs[i] : "");
		snprintf(out[i].ibdev, sizeof(out[i].ibdev), "%s", ibdevs && ibdevs[i] ? ibdevs[i] : "");
	}
	if (n == 0 || (!try_dmabuf && !try_peermem))
		return;
	bool opened = gdr_open(&env, why, sizeof(why)) == 0;
	for (size_t i = 0; i < n; i++) {
		if (opened)
			gdr_probe_pair(&env, gpu_bdfs ? gpu_bdfs[i] : NULL, ibdevs ? ibdevs[i] : NULL, &out[i]);
		else
			gdr_setup_error(&env, &out[i], why);
		/* final: the watchdog's parent keeps it whatever a later call does */
		(void)isolate_send(t, &out[i], sizeof(out[i]));
	}
	gdr_close(&env);
}
