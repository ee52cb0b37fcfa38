/* The fake libcuda.so.1's side for gpuready bench copy (fake_cuda.c has
 * the rest; fake_cuda_queue.c the queued work): its settings, failures on
 * demand, pinned host memory, the address registry, peer access and
 * modules. Every setting is read again by each cuInit, which also forgets
 * enabled peer access, sticky errors and counters, so a test sets the
 * environment and calls cuInit.
 *
 * FAKE_CUDA_COPY_GBPS="h2d=50,d2h=45,p2p=400,local=1000,sm_h2d=35,h2d@1=14"
 *   the modelled rates in GB/s (1e9 bytes/s): h2d and d2h between pinned
 *   host memory and a GPU, p2p between two GPUs with peer access, local
 *   within one GPU; sm_* the same through the copy kernel (default: the
 *   copy engine's); "@N" for GPU N alone (for p2p the source GPU, for a
 *   copy staged through the host its two legs). Defaults: h2d 50, d2h 50,
 *   p2p 400, local 1000. Pageable host memory is copied at the pinned
 *   rate.
 * FAKE_CUDA_PEER="0-1,1-0"  the ordered pairs (a can access b) that
 *   cuDeviceCanAccessPeer reports and cuCtxEnablePeerAccess accepts;
 *   "none": no pair; unset: every pair (an NVSwitch system).
 * FAKE_CUDA_LOST_AFTER=N  GPU FAKE_CUDA_LOST_DEVICE (default 0) falls off
 *   the bus after N calls that concern it (allocation, streams, events,
 *   copies, launches, peer access, modules; the checks after that count
 *   too): that call and every later one for that GPU returns
 *   FAKE_CUDA_LOST_CODE (default 999, CUDA_ERROR_UNKNOWN: what programs
 *   report once a GPU has fallen off the bus, Xid 79, e.g.
 *   wilicc/gpu-burn issue #1 and proteneer/timemachine PR #1203; 719,
 *   CUDA_ERROR_LAUNCH_FAILED, is the other code seen), and its queued work
 *   is dropped. Memory freed after the loss is released and the free
 *   returns the error. The other GPUs keep working.
 * FAKE_CUDA_OOM=bytes  cuMemAlloc_v2 fails with CUDA_ERROR_OUT_OF_MEMORY
 *   when a GPU would hold more than bytes, cuMemHostAlloc when pinned
 *   host memory would in all.
 * FAKE_CUDA_PEER_ENABLE_FAIL="0-1"  cuCtxEnablePeerAccess from a to b
 *   fails with CUDA_ERROR_TOO_MANY_PEERS though cuDeviceCanAccessPeer
 *   allows it (a driver's peer limit, cuda.h).
 * FAKE_CUDA_SHARED_HOST="0-1,2-3"  GPUs whose host copies share one link
 *   (behind one PCIe switch or root port): their copies in one direction
 *   take turns on it, as the copies of one GPU do; unset, each GPU has
 *   its own.
 * FAKE_CUDA_CORRUPT=N[,M...]  queued copies (cuMemcpyAsync, the copy
 *   kernels) to or from GPU N (or M ...) arrive with one byte changed (a third of the way in), as
 *   over a link that corrupts data; the synchronous cuMemcpyHtoD and
 *   cuMemcpyDtoH are left alone.
 * FAKE_CUDA_CLOCK_KHZ=N  the clock rate cuDeviceGetAttribute reports
 *   (default FAKE_CLOCK_KHZ, the clock the spin kernel counts at): a lower
 *   figure makes a spin kernel's timeout, in clocks, end early.
 *
 * Modules: cuModuleLoadData takes any NUL-terminated text with a
 * ".version X.Y" line (no cubin or fatbin), refuses an ISA newer than 8.4
 * (the fake driver is CUDA 12.4) with CUDA_ERROR_UNSUPPORTED_PTX_VERSION
 * as a real driver does, and makes a function of each ".entry NAME";
 * nothing is compiled. gpuready_copy, gpuready_spin, gpuready_splitwarp
 * (src/bench/copy/kernels.h) behave as their PTX does
 * (fake_cuda_queue.c), gpuready_chase too (fake_cuda_chase.c, with its
 * setting FAKE_CUDA_LATENCY_NS); any other kernel is counted and does
 * nothing. */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define MODULE_MAGIC 0x30d1eu
#define PTX_MAX_ISA 84 /* CUDA 12.4, cuDriverGetVersion's 12040 */

static double rates[2][FK__N][FAKE_CUDA_MAX];
static int peer_can[FAKE_CUDA_MAX][FAKE_CUDA_MAX];
static int peer_fail[FAKE_CUDA_MAX][FAKE_CUDA_MAX];
static int host_link[FAKE_CUDA_MAX]; /* the GPU whose host link a GPU uses */
static int reported_khz = FAKE_CLOCK_KHZ;
static unsigned corrupt_devs; /* bit d: GPU d */
static int peer_on[FAKE_CUDA_MAX][FAKE_CUDA_MAX];
static atomic_int sticky[FAKE_CUDA_MAX];
static long long lost_after = -1, lost_calls;
static int lost_dev;
static CUresult lost_code = CUDA_ERROR_UNKNOWN;
static long long oom_bytes = -1;
static atomic_llong pinned_bytes;
static atomic_int live_host, live_modules;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* registry, launch counts, lost_calls */

struct reg {
	char *base;
	size_t size;
	int dev;
};
static struct reg *regs;
static size_t n_regs, cap_regs;

#define N_COUNTS 16
static struct {
	char name[64];
	int n;
} counts[N_COUNTS];

static const char *const kind_names[FK__N] = { "h2d", "d2h", "p2p", "local" };

/* One "key[@dev]=gbps" of FAKE_CUDA_COPY_GBPS, on pass 0 if it names no
 * GPU, on pass 1 if it does (so a GPU's own rate wins whatever the
 * order); -1 when malformed. */
static int parse_rate(const char *item, int pass)
{
	char key[32];
	double v;
	int dev = -1, sm = !strncmp(item, "sm_", 3);
	if (sscanf(item + 3 * sm, "%31[a-z2]@%d=%lf", key, &dev, &v) != 3) {
		dev = -1;
		if (sscanf(item + 3 * sm, "%31[a-z2]=%lf", key, &v) != 2)
			return -1;
	}
	if (v <= 0 || dev >= FAKE_CUDA_MAX)
		return -1;
	for (int k = 0; k < FK__N; k++) {
		if (strcmp(key, kind_names[k]))
			continue;
		for (int d = 0; d < FAKE_CUDA_MAX && pass == (dev >= 0); d++)
			if (dev < 0 || d == dev)
				rates[sm][k][d] = v;
		return 0;
	}
	return -1;
}

static void read_rates(void)
{
	static const double def[FK__N] = { 50, 50, 400, 1000 };
	const char *s = getenv("FAKE_CUDA_COPY_GBPS");

	memset(rates, 0, sizeof(rates));
	for (int pass = 0; pass < 2; pass++) {
		char *copy = strdup(s ? s : "");
		for (char *save = NULL, *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save))
			if (parse_rate(it, pass) < 0 && pass == 0)
				fprintf(stderr, "fake libcuda: FAKE_CUDA_COPY_GBPS: ignoring \"%s\"\n", it);
		free(copy);
	}
	for (int k = 0; k < FK__N; k++)
		for (int d = 0; d < FAKE_CUDA_MAX; d++) {
			if (rates[0][k][d] <= 0)
				rates[0][k][d] = def[k];
			if (rates[1][k][d] <= 0)
				rates[1][k][d] = rates[0][k][d];
		}
}

/* "a-b,c-d" into m[a][b], m[c][d]; "none" or unset: nothing. */
static void read_pairs(const char *name, int m[FAKE_CUDA_MAX][FAKE_CUDA_MAX])
{
	const char *s = getenv(name);
	if (!s || !*s || !strcmp(s, "none"))
		return;
	char *copy = strdup(s);
	for (char *save = NULL, *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		int a, b;
		if (sscanf(it, "%d-%d", &a, &b) == 2 && a >= 0 && b >= 0 && a < FAKE_CUDA_MAX && b < FAKE_CUDA_MAX && a != b)
			m[a][b] = 1;
		else
			fprintf(stderr, "fake libcuda: %s: ignoring \"%s\"\n", name, it);
	}
	free(copy);
}

static void read_peers(void)
{
	const char *s = getenv("FAKE_CUDA_PEER");
	int all = !s || !*s, shared[FAKE_CUDA_MAX][FAKE_CUDA_MAX] = { { 0 } };

	memset(peer_on, 0, sizeof(peer_on));
	memset(peer_fail, 0, sizeof(peer_fail));
	for (int a = 0; a < FAKE_CUDA_MAX; a++)
		for (int b = 0; b < FAKE_CUDA_MAX; b++)
			peer_can[a][b] = all && a != b;
	read_pairs("FAKE_CUDA_PEER", peer_can);
	read_pairs("FAKE_CUDA_PEER_ENABLE_FAIL", peer_fail);
	read_pairs("FAKE_CUDA_SHARED_HOST", shared);
	/* each GPU uses the link of the lowest GPU it shares one with */
	for (int d = 0; d < FAKE_CUDA_MAX; d++) {
		host_link[d] = d;
		for (int o = 0; o < d; o++)
			if (shared[d][o] || shared[o][d]) {
				host_link[d] = host_link[o];
				break;
			}
	}
}

int fake_host_link(int dev)
{
	return dev >= 0 && dev < FAKE_CUDA_MAX ? host_link[dev] : dev;
}

int fake_corrupts(int dev)
{
	return dev >= 0 && dev < FAKE_CUDA_MAX && (corrupt_devs >> dev & 1u);
}

int fake_reported_khz(void)
{
	return reported_khz;
}

static long long env_ll(const char *name, long long def)
{
	const char *s = getenv(name);
	return s && *s ? strtoll(s, NULL, 0) : def;
}

void fake_copy_init(void)
{
	read_rates();
	read_peers();
	for (int d = 0; d < FAKE_CUDA_MAX; d++)
		atomic_store(&sticky[d], CUDA_SUCCESS);
	pthread_mutex_lock(&lock);
	lost_after = env_ll("FAKE_CUDA_LOST_AFTER", -1);
	lost_dev = (int)env_ll("FAKE_CUDA_LOST_DEVICE", 0);
	lost_code = (CUresult)env_ll("FAKE_CUDA_LOST_CODE", CUDA_ERROR_UNKNOWN);
	lost_calls = 0;
	oom_bytes = env_ll("FAKE_CUDA_OOM", -1);
	reported_khz = (int)env_ll("FAKE_CUDA_CLOCK_KHZ", FAKE_CLOCK_KHZ);
	corrupt_devs = 0;
	for (const char *c = getenv("FAKE_CUDA_CORRUPT"); c && *c;) {
		char *end;
		long d = strtol(c, &end, 10);
		if (end == c)
			break;
		if (d >= 0 && d < FAKE_CUDA_MAX)
			corrupt_devs |= 1u << d;
		c = *end == ',' ? end + 1 : end;
	}
	memset(counts, 0, sizeof(counts));
	pthread_mutex_unlock(&lock);
	fake_queue_init();
	fake_chase_init();
}

CUresult fake_sticky(int dev)
{
	return dev >= 0 && dev < FAKE_CUDA_MAX ? (CUresult)atomic_load(&sticky[dev]) : CUDA_SUCCESS;
}

void fake_fault(int dev, CUresult r)
{
	int ok = CUDA_SUCCESS;
	if (dev >= 0 && dev < FAKE_CUDA_MAX)
		atomic_compare_exchange_strong(&sticky[dev], &ok, (int)r);
}

CUresult fake_gate(int dev)
{
	CUresult r = fake_sticky(dev);
	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&lock);
	int lost = lost_after >= 0 && dev == lost_dev && lost_calls++ >= lost_after;
	pthread_mutex_unlock(&lock);
	if (!lost)
		return CUDA_SUCCESS;
	fake_fault(dev, lost_code);
	return fake_sticky(dev);
}

int fake_oom(long long have, size_t want)
{
	return oom_bytes < 0 || have + (long long)want <= oom_bytes;
}

double fake_rate(enum fake_kind k, int dev, int sm)
{
	return rates[sm ? 1 : 0][k][dev >= 0 && dev < FAKE_CUDA_MAX ? dev : 0];
}

int fake_peer_on(int from, int to)
{
	return from >= 0 && to >= 0 && from < FAKE_CUDA_MAX && to < FAKE_CUDA_MAX && peer_on[from][to];
}

/* ---- the address registry ---- */

void fake_reg_add(void *p, size_t bytes, int dev)
{
	pthread_mutex_lock(&lock);
	if (n_regs == cap_regs) {
		size_t cap = cap_regs ? cap_regs * 2 : 64;
		struct reg *r = realloc(regs, cap * sizeof(*r));
		if (!r)
			abort(); /* a test double out of memory */
		regs = r;
		cap_regs = cap;
	}
	regs[n_regs++] = (struct reg){ .base = p, .size = bytes, .dev = dev };
	pthread_mutex_unlock(&lock);
}

void fake_reg_del(void *p)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_regs; i++)
		if (regs[i].base == p) {
			regs[i] = regs[--n_regs];
			break;
		}
	if (!n_regs) {
		free(regs);
		regs = NULL;
		cap_regs = 0;
	}
	pthread_mutex_unlock(&lock);
}

int fake_reg_find(const void *p, size_t bytes)
{
	const char *c = p;
	int where = FAKE_PAGEABLE;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_regs; i++)
		if (c >= regs[i].base && c < regs[i].base + regs[i].size) {
			where = (size_t)(regs[i].base + regs[i].size - c) < bytes ? -3 : regs[i].dev;
			break;
		}
	pthread_mutex_unlock(&lock);
	return where;
}

/* The base of the pinned host allocation holding p, or NULL. */
static char *host_base(const void *p)
{
	char *base = NULL;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_regs; i++)
		if (regs[i].dev == FAKE_HOST && (const char *)p >= regs[i].base &&
		    (const char *)p < regs[i].base + regs[i].size)
			base = regs[i].base;
	pthread_mutex_unlock(&lock);
	return base;
}

static size_t host_size(const void *base)
{
	size_t n = 0;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_regs; i++)
		if (regs[i].base == base)
			n = regs[i].size;
	pthread_mutex_unlock(&lock);
	return n;
}

/* ---- pinned host memory ---- */

FAKE_API CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned flags)
{
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!pp || !bytes || flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
						 CU_MEMHOSTALLOC_WRITECOMBINED))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_gate(fake_current->dev);
	if (r != CUDA_SUCCESS)
		return r;
	if (!fake_oom(atomic_load(&pinned_bytes), bytes))
		return CUDA_ERROR_OUT_OF_MEMORY;
	void *p = NULL;
	if (posix_memalign(&p, 4096, bytes))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(p, 0, bytes);
	fake_reg_add(p, bytes, FAKE_HOST);
	atomic_fetch_add(&pinned_bytes, (long long)bytes);
	atomic_fetch_add(&live_host, 1);
	*pp = p;
	return CUDA_SUCCESS;
}

/* Waits for all queued work first, as the driver does. */
FAKE_API CUresult cuMemFreeHost(void *p)
{
	char *base = host_base(p);
	if (!base || base != p)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_ctx_sync(-1);
	atomic_fetch_sub(&pinned_bytes, (long long)host_size(base));
	fake_reg_del(base);
	free(base);
	atomic_fetch_sub(&live_host, 1);
	return r == CUDA_ERROR_LAUNCH_TIMEOUT ? r : CUDA_SUCCESS; /* host memory outlives a lost GPU */
}

/* Under unified addressing the device pointer is the host pointer. */
FAKE_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *dp, void *p, unsigned flags)
{
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!dp || flags || !host_base(p))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_gate(fake_current->dev);
	if (r == CUDA_SUCCESS)
		*dp = (CUdeviceptr)(uintptr_t)p;
	return r;
}

/* ---- peer access ---- */

FAKE_API CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
	if (!fake_initialised)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= fake_ndev || peer < 0 || peer >= fake_ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!can)
		return CUDA_ERROR_INVALID_VALUE;
	*can = peer_can[dev][peer];
	return CUDA_SUCCESS;
}

static int bad_ctx(CUcontext c)
{
	return !c || c < fake_ctxs || c >= fake_ctxs + fake_ndev;
}

FAKE_API CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags)
{
	if (!fake_current || bad_ctx(peer) || peer == fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	int a = fake_current->dev, b = peer->dev;
	CUresult r = fake_gate(a);
	if (r != CUDA_SUCCESS)
		return r;
	if (!peer_can[a][b])
		return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
	if (peer_fail[a][b])
		return CUDA_ERROR_TOO_MANY_PEERS;
	if (peer_on[a][b])
		return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
	peer_on[a][b] = 1;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
	if (!fake_current || bad_ctx(peer))
		return CUDA_ERROR_INVALID_CONTEXT;
	int a = fake_current->dev, b = peer->dev;
	CUresult r = fake_gate(a);
	if (r != CUDA_SUCCESS)
		return r;
	if (!peer_on[a][b])
		return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
	peer_on[a][b] = 0;
	return CUDA_SUCCESS;
}

/* ---- modules ---- */

struct CUmod_st {
	unsigned magic;
	int dev;
	int n;
	struct CUfunc_st *fn;
};

/* The ".entry NAME" functions of text into m->fn. */
static CUresult module_entries(struct CUmod_st *m, const char *text)
{
	for (const char *e = strstr(text, ".entry "); e; e = strstr(e + 1, ".entry ")) {
		char name[64];
		if (sscanf(e, ".entry %63[A-Za-z0-9_$]", name) != 1)
			return CUDA_ERROR_INVALID_PTX;
		struct CUfunc_st *fn = realloc(m->fn, sizeof(*fn) * (size_t)(m->n + 1));
		if (!fn)
			return CUDA_ERROR_OUT_OF_MEMORY;
		m->fn = fn;
		fn[m->n] = (struct CUfunc_st){ .magic = FUNC_MAGIC, .dev = m->dev,
					       .kind = !strcmp(name, "gpuready_copy")	? FF_COPY
						       : !strcmp(name, "gpuready_spin") ? FF_SPIN
						       : !strcmp(name, "gpuready_chase") ? FF_CHASE
						       : !strcmp(name, "gpuready_splitwarp") ? FF_SPLIT
											: FF_OTHER };
		snprintf(fn[m->n].name, sizeof(fn[m->n].name), "%s", name);
		m->n++;
	}
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleLoadData(CUmodule *out, const void *image)
{
	int major, minor;
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!out || !image)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_gate(fake_current->dev);
	if (r != CUDA_SUCCESS)
		return r;
	const char *v = strstr(image, ".version ");
	if (!v || sscanf(v, ".version %d.%d", &major, &minor) != 2)
		return CUDA_ERROR_INVALID_IMAGE;
	if (major * 10 + minor > PTX_MAX_ISA)
		return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
	struct CUmod_st *m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = MODULE_MAGIC;
	m->dev = fake_current->dev;
	if ((r = module_entries(m, image)) != CUDA_SUCCESS) {
		free(m->fn);
		free(m);
		return r;
	}
	atomic_fetch_add(&live_modules, 1);
	*out = m;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	if (!m || m->magic != MODULE_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!f || !name)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_gate(m->dev);
	if (r != CUDA_SUCCESS)
		return r;
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->fn[i].name, name)) {
			*f = &m->fn[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

/* Queued launches hold no reference: the work is planned at launch. */
FAKE_API CUresult cuModuleUnload(CUmodule m)
{
	if (!m || m->magic != MODULE_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	for (int i = 0; i < m->n; i++)
		m->fn[i].magic = 0;
	m->magic = 0;
	free(m->fn);
	free(m);
	atomic_fetch_sub(&live_modules, 1);
	return CUDA_SUCCESS;
}

void fake_count_launch(const char *name)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < N_COUNTS; i++)
		if (!counts[i].name[0] || !strcmp(counts[i].name, name)) {
			snprintf(counts[i].name, sizeof(counts[i].name), "%s", name);
			counts[i].n++;
			break;
		}
	pthread_mutex_unlock(&lock);
}

/* ---- test hooks, not in the real driver ---- */

/* Launches of the kernel called name since cuInit. */
FAKE_API int fake_cuda_launch_count(const char *name)
{
	int n = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < N_COUNTS; i++)
		if (!strcmp(counts[i].name, name))
			n = counts[i].n;
	pthread_mutex_unlock(&lock);
	return n;
}

FAKE_API int fake_cuda_live_host_allocs(void)
{
	return atomic_load(&live_host);
}

FAKE_API int fake_cuda_live_modules(void)
{
	return atomic_load(&live_modules);
}

/* 1 when a context on a has peer access to b enabled. */
FAKE_API int fake_cuda_peer_enabled(int a, int b)
{
	return fake_peer_on(a, b);
}
