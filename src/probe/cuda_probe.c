/* Live CUDA facts through the driver API (libcuda.so.1, loaded at run time
 * through cuda_api.h): the driver version, every device's name, memory,
 * compute capability, PCI bus ID and GPUDirect RDMA / DMA-BUF attributes,
 * and on request a 64 MiB allocate/copy/compare round trip per device.
 *
 * Required symbols are those every driver of the last decade exports; the
 * rest are optional and their absence leaves a field GPU_UNKNOWN, so an
 * older driver still gives what it can. A failing call is recorded with the
 * library's own error name, number and text (cuda_api_format), never
 * printed, never fatal. The probe runs under a stdout guard
 * (core/stdout_guard.h): the driver's libcuda prints nothing, but a
 * library that does must not corrupt gpuready's --json output. */
#include "probe.h"
#include "lib/cuda_api.h"
#include "core/dl.h"
#include "core/isolate.h"
#include "core/stdout_guard.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 64 MiB: the round trip of a basic tensor operation, without PyTorch. */
#define ROUNDTRIP_BYTES ((size_t)64 << 20)

/* An attribute, or GPU_UNKNOWN when the driver does not know it (older
 * drivers answer CUDA_ERROR_INVALID_VALUE for newer attribute numbers). */
static int cuda_attr(const struct cuda_api *api, CUdevice dev, CUdevice_attribute attr)
{
	int v = 0;
	return api->device_get_attribute(&v, attr, dev) == CUDA_SUCCESS ? v : GPU_UNKNOWN;
}

/* The bus ID from the PCI attributes, when cuDeviceGetPCIBusId gave none. */
static void cuda_bdf_from_attrs(const struct cuda_api *api, CUdevice dev, struct cuda_gpu *g)
{
	int dom = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
	int bus = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
	int slot = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);

	if (dom >= 0 && bus >= 0 && slot >= 0)
		snprintf(g->bdf, sizeof(g->bdf), "%04x:%02x:%02x.0", (unsigned)dom, (unsigned)bus & 0xff,
			 (unsigned)slot & 0x1f);
}

/* Fills a 32-bit word pattern that differs per device and per word. */
static void roundtrip_pattern(uint32_t *p, size_t words, int ordinal)
{
	uint32_t x = 0x9e3779b9u ^ (uint32_t)ordinal;
	for (size_t i = 0; i < words; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = x;
	}
}

/* Allocates ROUNDTRIP_BYTES on the current context, copies the pattern in
 * and out, compares. Records the first failure in g->roundtrip_error. */
static void roundtrip_copy(const struct cuda_api *api, struct isolate_ctx *t, struct cuda_gpu *g)
{
	uint32_t *src = malloc(ROUNDTRIP_BYTES), *dst = malloc(ROUNDTRIP_BYTES);
	CUdeviceptr d = 0;
	CUresult r = CUDA_SUCCESS;

	if (!src || !dst) {
		snprintf(g->roundtrip_error, sizeof(g->roundtrip_error), "no host memory for the 64 MiB buffers");
		goto out;
	}
	roundtrip_pattern(src, ROUNDTRIP_BYTES / sizeof(*src), g->ordinal);
	memset(dst, 0, ROUNDTRIP_BYTES);
	isolate_step(t, "cuMemAlloc_v2 on device %d", g->ordinal);
	if ((r = api->mem_alloc_v2(&d, ROUNDTRIP_BYTES)) != CUDA_SUCCESS) {
		cuda_api_format(api, "cuMemAlloc_v2(64 MiB)", r, g->roundtrip_error, sizeof(g->roundtrip_error));
		d = 0;
		goto out;
	}
	isolate_step(t, "cuMemcpyHtoD_v2 on device %d", g->ordinal);
	if ((r = api->memcpy_htod_v2(d, src, ROUNDTRIP_BYTES)) != CUDA_SUCCESS) {
		cuda_api_format(api, "cuMemcpyHtoD_v2", r, g->roundtrip_error, sizeof(g->roundtrip_error));
		goto out;
	}
	isolate_step(t, "cuMemcpyDtoH_v2 on device %d", g->ordinal);
	if ((r = api->memcpy_dtoh_v2(dst, d, ROUNDTRIP_BYTES)) != CUDA_SUCCESS) {
		cuda_api_format(api, "cuMemcpyDtoH_v2", r, g->roundtrip_error, sizeof(g->roundtrip_error));
		goto out;
	}
	if (memcmp(src, dst, ROUNDTRIP_BYTES) != 0) {
		size_t i = 0;
		while (src[i] == dst[i])
			i++;
		snprintf(g->roundtrip_error, sizeof(g->roundtrip_error),
			 "data read back differs from data written, first at byte %zu of 64 MiB", i * sizeof(*src));
		goto out;
	}
	g->roundtrip_ok = true;
out:
	if (d)
		isolate_step(t, "cuMemFree_v2 on device %d", g->ordinal);
	if (d && (r = api->mem_free_v2(d)) != CUDA_SUCCESS && g->roundtrip_ok) {
		g->roundtrip_ok = false;
		cuda_api_format(api, "cuMemFree_v2", r, g->roundtrip_error, sizeof(g->roundtrip_error));
	}
	free(src);
	free(dst);
}

/* The round trip on dev's primary context, made current for the test and
 * released after it. roundtrip_done means it was attempted. */
static void cuda_roundtrip(const struct cuda_api *api, struct isolate_ctx *t, CUdevice dev, struct cuda_gpu *g)
{
	CUcontext ctx = NULL;
	CUresult r;

	g->roundtrip_done = true;
	if (!api->primary_ctx_release_v2 && !api->primary_ctx_release) {
		snprintf(g->roundtrip_error, sizeof(g->roundtrip_error),
			 "cuDevicePrimaryCtxRelease(_v2) is not exported by this libcuda");
		return;
	}
	isolate_step(t, "cuDevicePrimaryCtxRetain on device %d", g->ordinal);
	if ((r = api->primary_ctx_retain(&ctx, dev)) != CUDA_SUCCESS) {
		cuda_api_format(api, "cuDevicePrimaryCtxRetain", r, g->roundtrip_error, sizeof(g->roundtrip_error));
		return;
	}
	isolate_step(t, "cuCtxSetCurrent on device %d", g->ordinal);
	if ((r = api->ctx_set_current(ctx)) != CUDA_SUCCESS)
		cuda_api_format(api, "cuCtxSetCurrent", r, g->roundtrip_error, sizeof(g->roundtrip_error));
	else
		roundtrip_copy(api, t, g);
	api->ctx_set_current(NULL);
	isolate_step(t, "cuDevicePrimaryCtxRelease on device %d", g->ordinal);
	cuda_api_release(api, dev);
}

/* One device's facts; a failure to reach it goes to *err (first only). */
static void cuda_read_device(const struct cuda_api *api, struct isolate_ctx *t, int ordinal, bool roundtrip,
			     struct cuda_gpu *g, char *err, size_t errsize)
{
	CUdevice dev = 0;
	CUresult r;
	size_t bytes = 0;
	char id[64] = "";

	*g = (struct cuda_gpu){ .ordinal = ordinal, .cc_major = GPU_UNKNOWN, .cc_minor = GPU_UNKNOWN,
				.gdr_supported = GPU_UNKNOWN, .dmabuf_supported = GPU_UNKNOWN };
	isolate_step(t, "cuDeviceGet on device %d", ordinal);
	if ((r = api->device_get(&dev, ordinal)) != CUDA_SUCCESS) {
		if (!err[0])
			cuda_api_format(api, "cuDeviceGet", r, err, errsize);
		return;
	}
	isolate_step(t, "cuDeviceGetName on device %d", ordinal);
	if (api->device_get_name(g->name, (int)sizeof(g->name), dev) != CUDA_SUCCESS)
		g->name[0] = '\0';
	g->name[sizeof(g->name) - 1] = '\0';
	isolate_step(t, "cuDeviceTotalMem_v2 on device %d", ordinal);
	if (api->device_total_mem_v2(&bytes, dev) == CUDA_SUCCESS)
		g->mem_total = bytes;
	isolate_step(t, "cuDeviceGetAttribute on device %d", ordinal);
	g->cc_major = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	g->cc_minor = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	g->gdr_supported = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
	g->dmabuf_supported = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
	isolate_step(t, "cuDeviceGetPCIBusId on device %d", ordinal);
	if (api->device_get_pci_bus_id(id, (int)sizeof(id), dev) == CUDA_SUCCESS) {
		id[sizeof(id) - 1] = '\0';
		(void)gpu_normalize_bdf(id, g->bdf, sizeof(g->bdf));
	}
	if (!g->bdf[0]) {
		isolate_step(t, "cuDeviceGetAttribute on device %d", ordinal);
		cuda_bdf_from_attrs(api, dev, g);
	}
	if (roundtrip)
		cuda_roundtrip(api, t, dev, g);
}

/* Loads, initialises and reads the CUDA driver API (under the caller's
 * stdout guard). */
static void cuda_probe_guarded(struct cuda_info *out, struct isolate_ctx *t, bool roundtrip)
{
	struct cuda_api api;
	struct dl_lib lib;
	int v = 0, count = 0;
	CUresult r;

	isolate_step(t, "loading libcuda.so.1");
	int lr = cuda_api_load(&lib, &api, CUDA_NEED_BASE | CUDA_NEED_FACTS | CUDA_NEED_COPY);
	if (lr < 0) {
		out->fail = lr == -ENOSYS ? GPU_LIB_FAIL_SYMBOL : GPU_LIB_FAIL_MISSING;
		snprintf(out->error, sizeof(out->error),
			 "CUDA driver library (libcuda.so.1) could not be loaded: %s (is the NVIDIA driver installed?)",
			 lib.error ? lib.error : "unknown error");
		dl_close(&lib);
		return;
	}
	isolate_step(t, "cuDriverGetVersion");
	if (api.driver_get_version(&v) == CUDA_SUCCESS && v > 0)
		out->driver_version = v;
	isolate_step(t, "cuInit");
	if ((r = api.init(0)) != CUDA_SUCCESS) {
		out->code = (int)r;
		out->fail = cuda_fail_class(r);
		cuda_api_format(&api, "cuInit", r, out->error, sizeof(out->error));
		dl_close(&lib);
		return;
	}
	out->loaded = true;
	isolate_step(t, "cuDeviceGetCount");
	if ((r = api.device_get_count(&count)) != CUDA_SUCCESS)
		cuda_api_format(&api, "cuDeviceGetCount", r, out->error, sizeof(out->error));
	else if (count < 0 || (unsigned)count > GPU_LIVE_MAX_GPUS)
		snprintf(out->error, sizeof(out->error), "cuDeviceGetCount: implausible count %d", count);
	else if (count > 0) {
		out->v = xcalloc((size_t)count, sizeof(*out->v));
		out->n = (size_t)count;
		for (int i = 0; i < count; i++)
			cuda_read_device(&api, t, i, roundtrip, &out->v[i], out->error, sizeof(out->error));
	}
	dl_close(&lib);
}

/* Contract (gpu_live.h): never fails. driver_version is read before cuInit
 * (it needs no initialisation), so a node whose driver refuses to
 * initialise still shows it. loaded is true once cuInit(0) succeeded;
 * error then holds only the first device that could not be reached; fail
 * and code say why it is false. Without a guard (stdout_guard_begin
 * failed) the probe still runs. */
void cuda_probe(struct cuda_info *out, bool roundtrip, struct isolate_ctx *t)
{
	struct stdout_guard g;

	*out = (struct cuda_info){ .driver_version = GPU_UNKNOWN };
	(void)stdout_guard_begin(&g);
	cuda_probe_guarded(out, t, roundtrip);
	(void)stdout_guard_end(&g, NULL);
}

