/* The RDMA kernels of `gpuready bench net`: perftest's write/read/send
 * bandwidth and latency tests over RC queue pairs (perftest src/perftest_parameters.c), with
 * libibverbs loaded at run time (lib/verbs_api.h) and buffers in host or
 * GPU memory (rdma-core's ibv_reg_mr(3) and ibv_reg_dmabuf_mr(3)). See rdma.h for the contract.
 *
 * An endpoint owns one device context, PD, CQ, memory region and p->qps
 * RC QPs. Its buffer holds, per QP, a transmit region (what this side
 * writes, sends, or lets the peer read) and a receive region (where the
 * peer's writes and sends land, and where reads put their data), each as
 * large as the largest message. Data is checked: the side that sends
 * fills its transmit regions with a pattern from the run's seed, the side
 * that receives first fills its receive regions with the pattern's
 * complement, and after the run counts the bytes that differ from the
 * pattern. GPU buffers are filled and checked through cuMemcpy.
 *
 * The runs follow perftest (src/perftest_resources.c): every QP keeps up
 * to NET_RDMA_TX_DEPTH requests in flight with a completion requested
 * every NET_RDMA_CQ_MOD; QPs move INIT -> RTR -> RTS with timeout 14,
 * retry and RNR retry 7, min RNR timer 12, hop limit 255; the latency
 * tests ping-pong on the first QP, write_lat by polling the last byte of
 * the receive region for the iteration number as run_iter_lat_write()
 * does. The end of a stream travels in band: the last send of each QP
 * carries immediate data STOP_IMM, the last write_lat write the byte
 * LAT_STOP, so no side waits on the control connection while polling.
 * Every loop checks the caller's deadline.
 *
 * This file holds the endpoint; rdma_int.h lists the others. */
#define _GNU_SOURCE
#include "rdma_int.h"

#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "inventory/gpu_live.h"
#include "inventory/inventory.h"
#include "inventory/topo.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define QP_TIMEOUT 14          /* perftest -u: 4.096 us x 2^14 = 67 ms per try */
#define QP_RETRY_CNT 7
#define QP_RNR_RETRY 7         /* 7: retry for ever */
#define QP_MIN_RNR_TIMER 12    /* perftest MIN_RNR_TIMER: 0.64 ms */
#define GRH_HOP_LIMIT 0xff
#define LAT_INLINE 220         /* perftest DEF_INLINE_WRITE, asked for in latency tests */

__attribute__((format(printf, 3, 4))) int nr_fail(char **err, int r, const char *fmt, ...)
{
	if (err && !*err) {
		struct strbuf sb = STRBUF_INIT;
		va_list ap;
		va_start(ap, fmt);
		strbuf_vaddf(&sb, fmt, ap);
		va_end(ap);
		*err = strbuf_detach(&sb);
	}
	return r;
}

const char *nr_errtext(int e)
{
	/* a peer's status arrives from the wire: INT_MIN has no negation */
	if (e == INT_MIN || e > 4095 || e < -4095)
		return "an unknown error";
	return strerror(e > 0 ? e : -e);
}

bool nr_test_is_lat(enum net_test t)
{
	return t == NET_WRITE_LAT || t == NET_READ_LAT || t == NET_SEND_LAT;
}

static bool test_is_rdma(enum net_test t)
{
	return t >= NET_WRITE_BW && t <= NET_SEND_LAT;
}

/* ---- opening an endpoint ---- */

#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define MAX_MESSAGE (1ull << 30) /* an sge length is 32 bits; perftest's -a stops at 8 MiB */

int nr_verb_errno(int r)
{
	int e = r > 0 ? r : errno;
	return e > 0 ? e : EIO;
}

static uint64_t max_message(const struct net_params *p)
{
	if (p->all)
		return NET_ALL_MAX;
	if (p->size)
		return p->size;
	return nr_test_is_lat(p->test) ? NET_LAT_SIZE : NET_BW_SIZE;
}

static size_t page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	return pg > 0 ? (size_t)pg : 4096;
}

static size_t round_page(uint64_t n)
{
	size_t pg = page_size();
	return (size_t)((n + pg - 1) / pg * pg);
}

size_t net_rdma_buf_bytes(const struct net_params *p)
{
	size_t qps = p->qps > 0 ? (size_t)p->qps : 1;
	uint64_t m = max_message(p);
	return 2 * qps * round_page(m < MAX_MESSAGE ? m : MAX_MESSAGE);
}

static uint32_t random24(void)
{
	uint32_t v = 0;
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = (uint32_t)(clock_now() * 1e9) ^ (uint32_t)getpid() * 2654435761u;
	return v & 0xffffff;
}

/* What sysfs says, read once while opening: the device's GIDs and rate,
 * and the PCI tree for the GPU nearest the NIC. */
struct sysview {
	struct root *root;
	struct inventory inv;
};

static void sysview_load(const char *sysroot, struct sysview *sv)
{
	memset(sv, 0, sizeof(*sv));
	if (root_open(sysroot ? sysroot : "/", &sv->root) < 0)
		return;
	if (rdma_load(sv->root, &sv->inv.rdma) < 0)
		rdma_free(&sv->inv.rdma);
	if (pci_load(sv->root, &sv->inv.pci) < 0)
		pci_free(&sv->inv.pci);
}

static void sysview_free(struct sysview *sv)
{
	rdma_free(&sv->inv.rdma);
	pci_free(&sv->inv.pci);
	root_free(sv->root);
}

static const struct rdma_port *sysview_port(const struct sysview *sv, const char *dev, int port)
{
	const struct rdma_dev *d = rdma_find(&sv->inv.rdma, dev);
	for (size_t i = 0; d && i < d->n_ports; i++)
		if ((int)d->ports[i].num == port)
			return &d->ports[i];
	return NULL;
}

static int no_device(const struct sysview *sv, char **err)
{
	_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
	for (size_t i = 0; i < sv->inv.rdma.n; i++)
		strbuf_addf(&names, "%s%s", i ? ", " : "", sv->inv.rdma.v[i].name);
	if (!names.len)
		return nr_fail(err, -ENODEV, "no RDMA device: /sys/class/infiniband is empty");
	return nr_fail(err, -ENODEV,
		    "no RDMA device: libibverbs lists none, but /sys/class/infiniband has %s: is ib_uverbs loaded and "
		    "the device's user-space provider installed (ibverbs-providers)?",
		    names.buf);
}

/* Opens one device and queries the port; *why says what failed. */
static int open_port(struct net_rdma *e, struct ibv_device *d, const char *name, char *why, size_t size)
{
	errno = 0;
	e->ctx = e->v.open_device(d);
	if (!e->ctx) {
		int x = nr_verb_errno(-1);
		snprintf(why, size, "ibv_open_device(%s): %s (are /dev/infiniband/uverbs* accessible?)", name, nr_errtext(x));
		return -x;
	}
	errno = 0;
	int r = verbs_query_port(&e->v, e->ctx, (uint8_t)e->port, &e->pattr);
	if (r != 0) {
		int x = nr_verb_errno(r);
		snprintf(why, size, "ibv_query_port(%s, port %d): %s", name, e->port, nr_errtext(x));
		e->v.close_device(e->ctx);
		e->ctx = NULL;
		return -x;
	}
	return 0;
}

/* The named device, or the first whose port is ACTIVE. */
static int pick_device(struct net_rdma *e, const char *want, const struct sysview *sv, char **err)
{
	_cleanup_strbuf_ struct strbuf seen = STRBUF_INIT;
	char why[256];
	int n = 0;
	errno = 0;
	e->list = e->v.get_device_list(&n);
	/* rdma-core answers ENOSYS without the kernel's uverbs ABI: with no
	 * device in sysfs either, that is the same as an empty list */
	if ((!e->list && sv->inv.rdma.n == 0) || (e->list && n == 0))
		return no_device(sv, err);
	if (!e->list)
		return nr_fail(err, -nr_verb_errno(-1), "ibv_get_device_list: %s (is the ib_uverbs module loaded?)",
			    nr_errtext(nr_verb_errno(-1)));
	for (int i = 0; i < n; i++) {
		const char *name = e->v.get_device_name(e->list[i]);
		if (!name || (want && strcmp(name, want))) {
			strbuf_addf(&seen, "%s%s", seen.len ? ", " : "", name ? name : "?");
			continue;
		}
		int r = open_port(e, e->list[i], name, why, sizeof(why));
		if (r == 0 && e->pattr.state == IBV_PORT_ACTIVE) {
			snprintf(e->desc.dev, sizeof(e->desc.dev), "%s", name);
			return 0;
		}
		if (want && r < 0)
			return nr_fail(err, r, "%s", why);
		if (want)
			return nr_fail(err, -ENETDOWN, "%s port %d is %s, not ACTIVE: check the cable and the switch port (ibstat %s)",
				    name, e->port, verbs_port_state_name(e->pattr.state), name);
		strbuf_addf(&seen, "%s%s: %s", seen.len ? ", " : "", name,
			    r < 0 ? why : verbs_port_state_name(e->pattr.state));
		if (e->ctx)
			e->v.close_device(e->ctx);
		e->ctx = NULL;
	}
	if (want)
		return nr_fail(err, -ENODEV, "no RDMA device named '%s' (libibverbs lists %s)", want, seen.buf);
	return nr_fail(err, -ENETDOWN, "no RDMA device has port %d ACTIVE (%s)", e->port, seen.buf);
}

/* Gb/s from the compat port attributes (IB width and speed codes). */
static double port_rate(const struct ibv_port_attr *a)
{
	static const struct { uint8_t code; double v; } widths[] = { { 1, 1 }, { 2, 4 }, { 4, 8 }, { 8, 12 }, { 16, 2 } },
						       speeds[] = { { 1, 2.5 }, { 2, 5 }, { 4, 10 }, { 8, 10 }, { 16, 14 },
								    { 32, 25 }, { 64, 50 }, { 128, 100 } };
	double w = 0, s = 0;
	for (size_t i = 0; i < ARRAY_SIZE(widths); i++)
		if (widths[i].code == a->active_width)
			w = widths[i].v;
	for (size_t i = 0; i < ARRAY_SIZE(speeds); i++)
		if (speeds[i].code == a->active_speed)
			s = speeds[i].v;
	return w * s;
}

static void describe_gid(struct net_rdma *e, const struct rdma_port *sp)
{
	bool eth = e->pattr.link_layer == IBV_LINK_LAYER_ETHERNET;
	const char *type = NULL;
	for (size_t i = 0; sp && i < sp->n_gids; i++)
		if ((int)sp->gids[i].index == e->gid_index)
			type = sp->gids[i].type;
	e->desc.gid_index = e->gid_index;
	nr_gid_format(e->gid, e->desc.gid, sizeof(e->desc.gid));
	if (!eth)
		snprintf(e->desc.gid_type, sizeof(e->desc.gid_type), "IB");
	else
		snprintf(e->desc.gid_type, sizeof(e->desc.gid_type), "%s",
			 nr_gid_type_rank(type) == 2 ? "RoCE v2" : nr_gid_type_rank(type) == 1 ? "RoCE v1" : "unknown");
	snprintf(e->desc.link_layer, sizeof(e->desc.link_layer), "%s",
		 eth ? "Ethernet" : e->pattr.link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "Unknown");
	e->desc.port = e->port;
	e->desc.rate_gbps = sp && sp->rate_gbps > 0 ? sp->rate_gbps : port_rate(&e->pattr);
}

/* -x, else perftest's choice from sysfs, else (InfiniBand) index 0. */
static int pick_gid(struct net_rdma *e, int want, const struct rdma_port *sp, char **err)
{
	static const uint8_t zero[16];
	bool eth = e->pattr.link_layer == IBV_LINK_LAYER_ETHERNET;
	int idx = want >= 0 ? want : sp ? net_rdma_choose_gid(sp) : eth ? -1 : 0;
	union ibv_gid g;

	if (idx < 0 && eth && !sp)
		return nr_fail(err, -ENOENT, "%s port %d is not in sysfs, so no GID can be chosen: give a GID index (-x)",
			    e->desc.dev, e->port);
	if (idx < 0 && eth)
		return nr_fail(err, -ENOENT, "%s port %d has no GID: RoCE needs one (does its netdev have an IP address?)",
			    e->desc.dev, e->port);
	if (idx < 0)
		idx = 0;
	errno = 0;
	memset(&g, 0, sizeof(g));
	int r = e->v.query_gid(e->ctx, (uint8_t)e->port, idx, &g);
	if (r != 0)
		return nr_fail(err, -nr_verb_errno(r), "ibv_query_gid(%s, port %d, index %d): %s", e->desc.dev, e->port, idx,
			    nr_errtext(nr_verb_errno(r)));
	if (!memcmp(g.raw, zero, 16) && (eth || want >= 0))
		return nr_fail(err, -ENOENT, "GID index %d of %s port %d is empty", idx, e->desc.dev, e->port);
	e->gid_index = idx;
	memcpy(e->gid, g.raw, 16);
	e->grh = eth || want >= 0;
	describe_gid(e, sp);
	return 0;
}

static int reg_host(struct net_rdma *e, char **err)
{
	void *p = NULL;
	int r = posix_memalign(&p, page_size(), e->bytes);
	if (r != 0)
		return nr_fail(err, -r, "allocating %zu bytes of host memory: %s", e->bytes, nr_errtext(r));
	memset(p, 0, e->bytes);
	e->host = p;
	e->base = (uintptr_t)p;
	snprintf(e->desc.mem, sizeof(e->desc.mem), "host");
	errno = 0;
	if (!(e->mr = e->v.reg_mr(e->pd, p, e->bytes, ACCESS))) {
		int x = nr_verb_errno(-1);
		return nr_fail(err, -x, "ibv_reg_mr(%s, %zu bytes of host memory): %s%s", e->desc.dev, e->bytes, nr_errtext(x),
			    x == ENOMEM || x == EPERM ? " (is the locked-memory limit, ulimit -l, too low?)" : "");
	}
	return 0;
}

/* The GPU on the shortest PCIe path to the NIC (ties: the first in PCI
 * order); false when sysfs cannot tell. */
static bool nearest_gpu(const struct sysview *sv, const char *ibdev, char *bdf, size_t size)
{
	const struct rdma_dev *d = rdma_find(&sv->inv.rdma, ibdev);
	const struct pci_dev *nic = d && d->pci_bdf ? pci_find(&sv->inv.pci, d->pci_bdf) : NULL;
	const struct pci_dev **gpus = NULL, *best = NULL;
	enum path_class bc = PATH_UNKNOWN;
	if (!nic)
		return false;
	size_t n = topo_gpus(&sv->inv, &gpus);
	for (size_t i = 0; i < n; i++) {
		enum path_class c = pci_path_class(gpus[i], nic, NULL);
		if (!best || c < bc) {
			best = gpus[i];
			bc = c;
		}
	}
	if (best)
		snprintf(bdf, size, "%s", best->bdf);
	free(gpus);
	return best != NULL;
}

int nr_cuda_fail(struct net_rdma *e, char **err, const char *fn, CUresult c)
{
	char buf[256];
	cuda_api_format(&e->cu, fn, c, buf, sizeof(buf));
	return nr_fail(err, -EIO, "%s", buf);
}

/* The CUDA ordinal of the GPU at bdf; -1 if none. */
static int cuda_ordinal(struct net_rdma *e, const char *bdf)
{
	char want[32], id[64], got[32];
	int n = 0;
	if (!gpu_normalize_bdf(bdf, want, sizeof(want)) || e->cu.device_get_count(&n) != CUDA_SUCCESS)
		return -1;
	for (int i = 0; i < n; i++) {
		CUdevice d = 0;
		if (e->cu.device_get(&d, i) != CUDA_SUCCESS ||
		    e->cu.device_get_pci_bus_id(id, (int)sizeof(id), d) != CUDA_SUCCESS)
			continue;
		id[sizeof(id) - 1] = '\0';
		if (gpu_normalize_bdf(id, got, sizeof(got)) && !strcmp(got, want))
			return i;
	}
	return -1;
}

/* Loads CUDA, picks the GPU, allocates the buffer on its primary context. */
static int cuda_alloc(struct net_rdma *e, const struct sysview *sv, int *ordinal, char **err)
{
	char bdf[32];
	CUresult c;
	if (cuda_api_load(&e->clib, &e->cu, CUDA_NEED_BASE | CUDA_NEED_COPY) < 0)
		return nr_fail(err, -ENOENT, "libcuda.so.1 could not be loaded: %s (GPU memory needs the NVIDIA driver)",
			    e->clib.error ? e->clib.error : "unknown error");
	e->cu_loaded = true;
	if ((c = e->cu.init(0)) != CUDA_SUCCESS)
		return nr_cuda_fail(e, err, "cuInit", c);
	int ord = e->gpu;
	if (ord < 0 && nearest_gpu(sv, e->desc.dev, bdf, sizeof(bdf)))
		ord = cuda_ordinal(e, bdf);
	if (ord < 0)
		ord = 0; /* the topology is unknown: the first GPU */
	if ((c = e->cu.device_get(&e->cudev, ord)) != CUDA_SUCCESS)
		return nr_cuda_fail(e, err, "cuDeviceGet", c);
	if ((c = e->cu.primary_ctx_retain(&e->cuctx, e->cudev)) != CUDA_SUCCESS)
		return nr_cuda_fail(e, err, "cuDevicePrimaryCtxRetain", c);
	e->retained = true;
	if ((c = e->cu.ctx_set_current(e->cuctx)) != CUDA_SUCCESS)
		return nr_cuda_fail(e, err, "cuCtxSetCurrent", c);
	if ((c = e->cu.mem_alloc_v2(&e->dptr, e->bytes)) != CUDA_SUCCESS) {
		e->dptr = 0;
		return nr_cuda_fail(e, err, "cuMemAlloc_v2", c);
	}
	e->base = e->dptr;
	e->scratch = xcalloc(1, e->region);
	*ordinal = ord;
	return 0;
}

static bool dmabuf_offered(const struct net_rdma *e)
{
	int v = 1;
	if (!e->cu.mem_get_handle || !e->v.reg_dmabuf_mr)
		return false;
	if (e->cu.device_get_attribute &&
	    e->cu.device_get_attribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, e->cudev) != CUDA_SUCCESS)
		v = 1; /* cannot tell: try */
	return v != 0;
}

/* perftest's recipe (src/cuda_memory.c): the page-aligned range as a dma-buf fd,
 * registered at the allocation's device address; the fd is closed after
 * deregistering (net_rdma_close). */
static int reg_dmabuf(struct net_rdma *e, char *why, size_t size)
{
	size_t pg = page_size();
	CUdeviceptr start = e->dptr & ~(CUdeviceptr)(pg - 1);
	uint64_t off = e->dptr - start;
	int fd = -1;
	CUresult c = e->cu.mem_get_handle(&fd, start, round_page(off + e->bytes), CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (c != CUDA_SUCCESS || fd < 0) {
		cuda_api_format(&e->cu, "cuMemGetHandleForAddressRange", c, why, size);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	errno = 0;
	e->mr = e->v.reg_dmabuf_mr(e->pd, off, e->bytes, (uint64_t)e->dptr, fd, ACCESS);
	if (!e->mr) {
		snprintf(why, size, "ibv_reg_dmabuf_mr: %s", nr_errtext(nr_verb_errno(-1)));
		close(fd);
		return -1;
	}
	e->dmabuf_fd = fd;
	return 0;
}

static int reg_cuda(struct net_rdma *e, const struct sysview *sv, char **err)
{
	char why[200] = "DMA-BUF is not offered (it needs a CUDA 11.7+ driver from the open kernel modules and "
			"rdma-core v34+)";
	char name[64] = "GPU", id[64], bdf[32] = "?";
	int ord = 0, r = cuda_alloc(e, sv, &ord, err);
	if (r < 0)
		return r;
	if (e->cu.device_get_name && e->cu.device_get_name(name, (int)sizeof(name), e->cudev) == CUDA_SUCCESS)
		name[sizeof(name) - 1] = '\0';
	if (e->cu.device_get_pci_bus_id(id, (int)sizeof(id), e->cudev) == CUDA_SUCCESS) {
		id[sizeof(id) - 1] = '\0';
		gpu_normalize_bdf(id, bdf, sizeof(bdf));
	}
	const char *how = "DMA-BUF";
	bool dmabuf = dmabuf_offered(e) && reg_dmabuf(e, why, sizeof(why)) == 0;
	if (!dmabuf && e->dmabuf_only)
		return nr_fail(err, -ENOTSUP, "GPU memory of cuda:%d could not be registered with %s through DMA-BUF "
			    "(--use_cuda_dmabuf): %s", ord, e->desc.dev, why);
	if (!dmabuf) {
		errno = 0;
		if (!(e->mr = e->v.reg_mr(e->pd, (void *)(uintptr_t)e->dptr, e->bytes, ACCESS))) {
			int x = nr_verb_errno(-1);
			return nr_fail(err, -x,
				    "GPU memory of cuda:%d could not be registered with %s: %s; ibv_reg_mr on the GPU "
				    "address: %s (that needs nvidia_peermem loaded)",
				    ord, e->desc.dev, why, nr_errtext(x));
		}
		how = "nvidia_peermem";
	}
	snprintf(e->desc.mem, sizeof(e->desc.mem), "cuda:%d (%.40s, %.16s) via %s", ord, name, bdf, how);
	return 0;
}

/* Creates QP q (inline data for the latency tests when the provider
 * allows it) and moves it to INIT. */
static int create_qp(struct net_rdma *e, int q, char **err)
{
	bool inl = nr_test_is_lat(e->p.test) && e->host;
	uint32_t wr = NET_RDMA_TX_DEPTH + 2, rwr = NET_RDMA_RX_DEPTH;
	if (e->dattr.max_qp_wr > 0 && wr > (uint32_t)e->dattr.max_qp_wr)
		wr = (uint32_t)e->dattr.max_qp_wr;
	if (e->dattr.max_qp_wr > 0 && rwr > (uint32_t)e->dattr.max_qp_wr)
		rwr = (uint32_t)e->dattr.max_qp_wr;
	struct ibv_qp_init_attr a = { .send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = wr, .max_recv_wr = rwr, .max_send_sge = 1, .max_recv_sge = 1,
					       .max_inline_data = inl ? LAT_INLINE : 0 } };
	errno = 0;
	struct ibv_qp *qp = e->v.create_qp(e->pd, &a);
	if (!qp && inl) {
		a.cap.max_inline_data = 0;
		inl = false;
		qp = e->v.create_qp(e->pd, &a);
	}
	if (!qp)
		return nr_fail(err, -nr_verb_errno(-1), "ibv_create_qp(%s, RC, %u send and %u receive requests): %s", e->desc.dev,
			    wr, rwr, nr_errtext(nr_verb_errno(-1)));
	struct ep_qp *p = &e->qps[q];
	p->qp = qp;
	p->psn = random24();
	p->tx = e->base + (uint64_t)q * 2 * e->region;
	p->rx = p->tx + e->region;
	if (q == 0)
		e->max_inline = inl ? a.cap.max_inline_data : 0;
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = (uint8_t)e->port,
				  .qp_access_flags = ACCESS };
	int r = e->v.modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (r != 0)
		return nr_fail(err, -nr_verb_errno(r), "ibv_modify_qp(%s QP 0x%x -> INIT): %s", e->desc.dev, qp->qp_num,
			    nr_errtext(nr_verb_errno(r)));
	return 0;
}

static int create_queues(struct net_rdma *e, char **err)
{
	int cqe = e->n_qps * (NET_RDMA_TX_DEPTH + 2 + NET_RDMA_RX_DEPTH);
	if (e->dattr.max_cqe > 0 && cqe > e->dattr.max_cqe)
		cqe = e->dattr.max_cqe;
	errno = 0;
	if (!(e->cq = e->v.create_cq(e->ctx, cqe, NULL, NULL, 0)))
		return nr_fail(err, -nr_verb_errno(-1), "ibv_create_cq(%s, %d entries): %s", e->desc.dev, cqe,
			    nr_errtext(nr_verb_errno(-1)));
	e->qps = xcalloc((size_t)e->n_qps, sizeof(*e->qps));
	for (int q = 0; q < e->n_qps; q++) {
		int r = create_qp(e, q, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Everything net_rdma_open() does after checking its arguments. */
static int open_all(struct net_rdma *e, const struct net_rdma_env *env, const struct net_rdma_opts *o,
		    struct sysview *sv, char **err)
{
	int r = verbs_api_load(&e->vlib, &e->v, env ? env->verbs_lib : NULL);
	if (r < 0)
		return nr_fail(err, r, "libibverbs.so.1 could not be loaded: %s (install rdma-core's libibverbs1)",
			    e->vlib.error ? e->vlib.error : "unknown error");
	sysview_load(env ? env->sysroot : NULL, sv);
	if ((r = pick_device(e, o->dev, sv, err)) < 0)
		return r;
	errno = 0;
	if ((r = e->v.query_device(e->ctx, &e->dattr)) != 0)
		return nr_fail(err, -nr_verb_errno(r), "ibv_query_device(%s): %s", e->desc.dev, nr_errtext(nr_verb_errno(r)));
	e->out_reads = (uint8_t)(e->dattr.max_qp_rd_atom > 255 ? 255 : e->dattr.max_qp_rd_atom > 0 ? e->dattr.max_qp_rd_atom : 1);
	if ((r = pick_gid(e, o->gid_index, sysview_port(sv, e->desc.dev, e->port), err)) < 0)
		return r;
	errno = 0;
	if (!(e->pd = e->v.alloc_pd(e->ctx)))
		return nr_fail(err, -nr_verb_errno(-1), "ibv_alloc_pd(%s): %s", e->desc.dev, nr_errtext(nr_verb_errno(-1)));
	r = e->mem == NET_MEM_CUDA ? reg_cuda(e, sv, err) : reg_host(e, err);
	if (r < 0 || (r = create_queues(e, err)) < 0)
		return r;
	int mtu = verbs_mtu_bytes((int)e->pattr.active_mtu);
	if (e->p.mtu > 0 && (mtu == 0 || e->p.mtu < mtu))
		mtu = verbs_mtu_bytes(verbs_mtu_from_bytes(e->p.mtu));
	e->desc.mtu = mtu;
	return 0;
}

int net_rdma_open_env(const struct net_rdma_env *env, const struct net_rdma_opts *o, const struct net_params *p,
		      size_t buf_bytes, struct net_rdma **ret, char **err)
{
	if (!o || !p || !ret)
		return nr_fail(err, -EINVAL, "net_rdma_open: missing options");
	if (!test_is_rdma(p->test))
		return nr_fail(err, -EINVAL, "test %d is not an RDMA test", (int)p->test);
	if (o->port > 255 || o->gid_index > 255)
		return nr_fail(err, -EINVAL, "port %d, GID index %d: both are 8-bit values", o->port, o->gid_index);
	if (p->qps > NET_RDMA_MAX_QPS)
		return nr_fail(err, -EINVAL, "%d QPs: at most %d", p->qps, NET_RDMA_MAX_QPS);
	if (max_message(p) > MAX_MESSAGE)
		return nr_fail(err, -EINVAL, "messages of %llu bytes: at most %llu", (unsigned long long)max_message(p),
			    (unsigned long long)MAX_MESSAGE);
	struct net_rdma *e = xcalloc(1, sizeof(*e));
	struct sysview sv;
	memset(&sv, 0, sizeof(sv));
	e->p = *p;
	e->n_qps = e->p.qps = p->qps > 0 ? p->qps : 1;
	e->mem = o->mem;
	e->dmabuf_only = o->dmabuf_only;
	e->port = o->port > 0 ? o->port : 1;
	e->gpu = o->gpu;
	e->lat_max = o->lat_max_samples ? o->lat_max_samples : NET_LAT_MAX_SAMPLES;
	e->dmabuf_fd = -1;
	e->region = round_page(max_message(p));
	e->bytes = net_rdma_buf_bytes(&e->p);
	if (round_page(buf_bytes) > e->bytes)
		e->bytes = round_page(buf_bytes);
	int r = open_all(e, env, o, &sv, err);
	sysview_free(&sv);
	if (r < 0) {
		net_rdma_close(e);
		return r;
	}
	*ret = e;
	return 0;
}

int net_rdma_open(const struct net_rdma_opts *o, const struct net_params *p, size_t buf_bytes, struct net_rdma **ret,
		  char **err)
{
	return net_rdma_open_env(NULL, o, p, buf_bytes, ret, err);
}

void net_rdma_describe(const struct net_rdma *e, struct net_rdma_desc *out)
{
	*out = e->desc;
}

void net_rdma_close(struct net_rdma *e)
{
	if (!e)
		return;
	for (int q = 0; e->qps && q < e->n_qps; q++)
		if (e->qps[q].qp)
			e->v.destroy_qp(e->qps[q].qp);
	free(e->qps);
	if (e->mr)
		e->v.dereg_mr(e->mr);
	if (e->dmabuf_fd >= 0)
		close(e->dmabuf_fd);
	if (e->cq)
		e->v.destroy_cq(e->cq);
	if (e->pd)
		e->v.dealloc_pd(e->pd);
	if (e->ctx)
		e->v.close_device(e->ctx);
	if (e->list)
		e->v.free_device_list(e->list);
	if (e->cu_loaded && e->dptr && e->cu.ctx_set_current(e->cuctx) == CUDA_SUCCESS)
		e->cu.mem_free_v2(e->dptr);
	if (e->cu_loaded && e->retained) {
		e->cu.ctx_set_current(NULL);
		cuda_api_release(&e->cu, e->cudev);
	}
	dl_close(&e->clib);
	free(e->host);
	free(e->scratch);
	dl_close(&e->vlib);
	free(e);
}

/* ---- connecting ---- */

int net_rdma_info(const struct net_rdma *e, void *blob, size_t len)
{
	_cleanup_free_ struct net_rdma_peer *me = xcalloc(1, sizeof(*me));
	me->qps = e->n_qps;
	me->link_layer = e->pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET
									 : IBV_LINK_LAYER_INFINIBAND;
	me->mtu = verbs_mtu_bytes((int)e->pattr.active_mtu) ? (int)e->pattr.active_mtu : IBV_MTU_1024;
	me->gid_index = e->gid_index;
	me->grh = e->grh;
	me->lid = e->pattr.lid;
	me->out_reads = e->out_reads;
	me->rkey = e->mr->rkey;
	me->region = e->region;
	memcpy(me->gid, e->gid, 16);
	for (int q = 0; q < e->n_qps; q++)
		me->qp[q] = (struct net_rdma_qp_info){ .qpn = e->qps[q].qp->qp_num, .psn = e->qps[q].psn,
						       .rx_addr = e->qps[q].rx, .tx_addr = e->qps[q].tx };
	return net_rdma_info_encode(me, blob, len);
}

static int qp_to_rtr(struct net_rdma *e, int q, const struct net_rdma_peer *peer, int mtu, char **err)
{
	struct ep_qp *p = &e->qps[q];
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = (enum ibv_mtu)mtu,
		.dest_qp_num = peer->qp[q].qpn,
		.rq_psn = peer->qp[q].psn,
		.max_dest_rd_atomic = e->out_reads,
		.min_rnr_timer = QP_MIN_RNR_TIMER,
		.ah_attr = { .dlid = peer->lid, .sl = (uint8_t)e->p.sl, .port_num = (uint8_t)e->port },
	};
	if (e->grh || peer->grh) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)e->gid_index;
		a.ah_attr.grh.hop_limit = GRH_HOP_LIMIT;
		a.ah_attr.grh.traffic_class = (uint8_t)(e->p.tclass > 0 ? e->p.tclass : 0);
	} else if (e->p.tclass > 0) {
		/* the traffic class travels in the GRH alone: never dropped silently */
		return nr_fail(err, -EINVAL, "traffic class %d (-T/--tclass) on %s: it travels in the GRH, which this "
			    "InfiniBand connection does not use; give -x GID_INDEX to address by GID", e->p.tclass,
			    e->desc.dev);
	}
	int r = e->v.modify_qp(p->qp, &a,
			       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (r != 0)
		return nr_fail(err, -nr_verb_errno(r), "ibv_modify_qp(%s QP 0x%x -> RTR, peer QP 0x%x%s): %s", e->desc.dev,
			    p->qp->qp_num, peer->qp[q].qpn, a.ah_attr.is_global ? " by GID" : " by LID",
			    nr_errtext(nr_verb_errno(r)));
	p->peer = peer->qp[q];
	return 0;
}

static int qp_to_rts(struct net_rdma *e, int q, const struct net_rdma_peer *peer, char **err)
{
	struct ep_qp *p = &e->qps[q];
	int init = e->dattr.max_qp_init_rd_atom > 0 ? e->dattr.max_qp_init_rd_atom : 1;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = QP_TIMEOUT,
		.retry_cnt = QP_RETRY_CNT,
		.rnr_retry = QP_RNR_RETRY,
		.sq_psn = p->psn,
		.max_rd_atomic = (uint8_t)(peer->out_reads < init ? peer->out_reads : (init > 255 ? 255 : init)),
	};
	int r = e->v.modify_qp(p->qp, &a,
			       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				       IBV_QP_MAX_QP_RD_ATOMIC);
	if (r != 0)
		return nr_fail(err, -nr_verb_errno(r), "ibv_modify_qp(%s QP 0x%x -> RTS): %s", e->desc.dev, p->qp->qp_num,
			    nr_errtext(nr_verb_errno(r)));
	return 0;
}

int net_rdma_connect(struct net_rdma *e, const void *peer_blob, size_t len, char **err)
{
	_cleanup_free_ struct net_rdma_peer *peer = xcalloc(1, sizeof(*peer));
	_cleanup_free_ char *why = NULL;
	int r = net_rdma_info_decode(peer_blob, len, peer, &why);
	if (r < 0)
		return nr_fail(err, r, "the peer's QP attributes: %s", why);
	if (e->connected)
		return nr_fail(err, -EISCONN, "%s: the endpoint is already connected", e->desc.dev);
	if (peer->qps != e->n_qps)
		return nr_fail(err, -EPROTO, "the peer has %d QPs, this side %d", peer->qps, e->n_qps);
	int ll = e->pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
	if (peer->link_layer != ll)
		return nr_fail(err, -EPROTO, "this side (%s) is on %s, the peer on %s: both must be on the same kind of fabric",
			    e->desc.dev, ll == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand",
			    peer->link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand");
	int mtu = verbs_mtu_bytes((int)e->pattr.active_mtu) ? (int)e->pattr.active_mtu : peer->mtu;
	if (peer->mtu < mtu)
		mtu = peer->mtu;
	if (e->p.mtu > 0 && verbs_mtu_from_bytes(e->p.mtu) > 0 && verbs_mtu_from_bytes(e->p.mtu) < mtu)
		mtu = verbs_mtu_from_bytes(e->p.mtu);
	for (int q = 0; q < e->n_qps; q++)
		if ((r = qp_to_rtr(e, q, peer, mtu, err)) < 0 || (r = qp_to_rts(e, q, peer, err)) < 0)
			return r;
	e->peer_rkey = peer->rkey;
	e->peer_region = peer->region;
	e->desc.mtu = verbs_mtu_bytes(mtu);
	e->connected = true;
	return 0;
}
