/* Live GPU facts through NVML (libnvidia-ml.so.1, loaded at run time): the
 * driver and CUDA versions, and per GPU its identity, memory health (ECC,
 * row remapping, retired pages), temperature, clock event reasons, PCIe
 * link and NVLink states, compute mode, power limits, application clocks,
 * NVLink fabric registration, and the P2P status between GPUs with
 * NVLinks up.
 *
 * The library is loaded through lib/nvml_api.h, which declares the few
 * types and values used without nvml.h. Required symbols are those every
 * driver of the last decade exports; the rest are optional and their
 * absence leaves a field GPU_UNKNOWN, so an older driver still gives what
 * it can. A failing call is recorded with NVML's own error text
 * and number, never printed, never fatal.
 *
 * The CUDA toolkit ships a stub libnvidia-ml.so for linking on machines
 * without a driver; installed as libnvidia-ml.so.1 (container images do
 * that), it loads, prints a "WARNING: You should always run with
 * libnvidia-ml.so that is installed with your NVIDIA Display Driver"
 * banner on stdout at every nvmlInit_v2, fails it with
 * NVML_ERROR_DRIVER_NOT_LOADED, and answers nvmlErrorString with the same
 * banner. So the whole probe runs under a stdout guard
 * (core/stdout_guard.h), and a failed nvmlInit_v2 is checked for the stub,
 * by the file it came from (a .../stubs/ directory) or by its banner,
 * before NVML's own text is believed. */
#define _GNU_SOURCE
#include "probe.h"
#include "core/dl.h"
#include "core/isolate.h"
#include "lib/nvml_api.h"
#include "core/stdout_guard.h"
#include "core/strbuf.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(((struct nvml_gpu *)0)->name) >= NVML_DEVICE_NAME_V2_BUFFER_SIZE, "name buffer");
_Static_assert(sizeof(((struct nvml_gpu *)0)->uuid) >= NVML_DEVICE_UUID_V2_BUFFER_SIZE, "uuid buffer");
_Static_assert(sizeof(((struct nvml_info *)0)->driver_version) >= NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE,
	       "driver version buffer");

/* NVML_NVLINK_MAX_LINKS is 6 (CUDA 10.1 nvml.h), 12 (R470), 18 (DCGM's
 * copy); newer headers raise it again. Links past the driver's own limit
 * answer NVML_ERROR_INVALID_ARGUMENT, so a generous bound is harmless. */
#define NVLINK_PROBE_LINKS 36u

/* "fn: <nvmlErrorString> (<code>)" */
static void nvml_format(const struct nvml_api *api, const char *fn, nvmlReturn_t r, char *out, size_t size)
{
	const char *text = api->error_string(r);
	snprintf(out, size, "%s: %s (%d)", fn, text ? text : "unknown NVML error", (int)r);
}

/* True if r is success. "Not supported" (by the GPU or by this NVML) is a
 * plain absence; any other failure is kept as the GPU's first error. */
static bool nvml_ok(const struct nvml_api *api, struct nvml_gpu *g, const char *fn, nvmlReturn_t r)
{
	if (r == NVML_SUCCESS)
		return true;
	if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND)
		return false;
	if (!g->error[0])
		nvml_format(api, fn, r, g->error, sizeof(g->error));
	return false;
}

/* Names the call to the watchdog (core/isolate.h) before making it, then
 * judges its result: call is evaluated after the step is named. */
#define NVML_TRY(t, api, g, fn, call) (isolate_step(t, "%s on GPU %u", fn, (g)->index), nvml_ok(api, g, fn, call))

static int clamp_int(unsigned long long v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

static long long clamp_ll(unsigned long long v)
{
	return v > LLONG_MAX ? LLONG_MAX : (long long)v;
}

static void nvml_gpu_init(struct nvml_gpu *g, unsigned index)
{
	*g = (struct nvml_gpu){
		.index = index,
		.persistence = GPU_UNKNOWN,
		.ecc_current = GPU_UNKNOWN, .ecc_pending = GPU_UNKNOWN,
		.ecc_uncorrected_volatile = GPU_UNKNOWN, .ecc_corrected_volatile = GPU_UNKNOWN,
		.remap_corr = GPU_UNKNOWN, .remap_unc = GPU_UNKNOWN,
		.remap_pending = GPU_UNKNOWN, .remap_failure = GPU_UNKNOWN,
		.retired_pending = GPU_UNKNOWN, .retired_sbe = GPU_UNKNOWN, .retired_dbe = GPU_UNKNOWN,
		.temperature = GPU_UNKNOWN,
		.pcie_gen_cur = GPU_UNKNOWN, .pcie_gen_max = GPU_UNKNOWN,
		.pcie_width_cur = GPU_UNKNOWN, .pcie_width_max = GPU_UNKNOWN, .nvlink_version = GPU_UNKNOWN,
		.mig_current = GPU_UNKNOWN, .mig_pending = GPU_UNKNOWN,
		.compute_mode = GPU_UNKNOWN,
		.power_enforced_mw = GPU_UNKNOWN, .power_limit_mw = GPU_UNKNOWN, .power_default_mw = GPU_UNKNOWN,
		.app_clock_gr = GPU_UNKNOWN, .app_default_gr = GPU_UNKNOWN, .max_clock_gr = GPU_UNKNOWN,
		.app_clock_mem = GPU_UNKNOWN, .app_default_mem = GPU_UNKNOWN, .max_clock_mem = GPU_UNKNOWN,
		.fabric_state = GPU_UNKNOWN, .fabric_status = GPU_UNKNOWN,
		.fabric_health_summary = GPU_UNKNOWN,
	};
}

/* Name, UUID, PCI bus ID (normalised), memory size. */
static void nvml_read_identity(const struct nvml_api *api, struct isolate_ctx *t, nvmlDevice_t dev,
				struct nvml_gpu *g)
{
	if (api->name && !NVML_TRY(t, api, g, "nvmlDeviceGetName", api->name(dev, g->name, sizeof(g->name))))
		g->name[0] = '\0';
	g->name[sizeof(g->name) - 1] = '\0';
	if (api->uuid && !NVML_TRY(t, api, g, "nvmlDeviceGetUUID", api->uuid(dev, g->uuid, sizeof(g->uuid))))
		g->uuid[0] = '\0';
	g->uuid[sizeof(g->uuid) - 1] = '\0';

	nvmlPciInfo_t pci;
	memset(&pci, 0, sizeof(pci));
	if (!api->pci_info_v3) {
		if (!g->error[0])
			snprintf(g->error, sizeof(g->error), "nvmlDeviceGetPciInfo_v3: not exported by this NVML");
	} else if (NVML_TRY(t, api, g, "nvmlDeviceGetPciInfo_v3", api->pci_info_v3(dev, &pci))) {
		pci.busId[sizeof(pci.busId) - 1] = '\0';
		if (!gpu_normalize_bdf(pci.busId, g->bdf, sizeof(g->bdf)))
			snprintf(g->bdf, sizeof(g->bdf), "%04x:%02x:%02x.0", pci.domain, pci.bus & 0xff,
				 pci.device & 0x1f);
	}

	nvmlMemory_t mem;
	memset(&mem, 0, sizeof(mem));
	if (api->memory_info && NVML_TRY(t, api, g, "nvmlDeviceGetMemoryInfo", api->memory_info(dev, &mem)))
		g->mem_total = mem.total;
}

/* Persistence, ECC mode and volatile counts, row remapping, retired pages. */
static void nvml_read_memory_health(const struct nvml_api *api, struct isolate_ctx *t, nvmlDevice_t dev,
				struct nvml_gpu *g)
{
	nvmlEnableState_t a = NVML_FEATURE_DISABLED, b = NVML_FEATURE_DISABLED;
	unsigned long long cnt = 0;
	unsigned u[4] = { 0 };

	if (api->persistence_mode && NVML_TRY(t, api, g, "nvmlDeviceGetPersistenceMode", api->persistence_mode(dev, &a)))
		g->persistence = a == NVML_FEATURE_ENABLED;
	if (api->ecc_mode && NVML_TRY(t, api, g, "nvmlDeviceGetEccMode", api->ecc_mode(dev, &a, &b))) {
		g->ecc_current = a == NVML_FEATURE_ENABLED;
		g->ecc_pending = b == NVML_FEATURE_ENABLED;
	}
	if (api->total_ecc_errors) {
		if (NVML_TRY(t, api, g, "nvmlDeviceGetTotalEccErrors",
			    api->total_ecc_errors(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &cnt)))
			g->ecc_uncorrected_volatile = clamp_ll(cnt);
		if (NVML_TRY(t, api, g, "nvmlDeviceGetTotalEccErrors",
			    api->total_ecc_errors(dev, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &cnt)))
			g->ecc_corrected_volatile = clamp_ll(cnt);
	}
	if (api->remapped_rows &&
	    NVML_TRY(t, api, g, "nvmlDeviceGetRemappedRows", api->remapped_rows(dev, &u[0], &u[1], &u[2], &u[3]))) {
		g->remap_corr = clamp_int(u[0]);
		g->remap_unc = clamp_int(u[1]);
		g->remap_pending = u[2] != 0;
		g->remap_failure = u[3] != 0;
	}
	if (api->retired_pending &&
	    NVML_TRY(t, api, g, "nvmlDeviceGetRetiredPagesPendingStatus", api->retired_pending(dev, &a)))
		g->retired_pending = a == NVML_FEATURE_ENABLED;
	if (api->retired_pages) {
		/* a count of 0 asks for the size: SUCCESS if none match,
		 * INSUFFICIENT_SIZE with the count otherwise (nvml.h) */
		const nvmlPageRetirementCause_t causes[2] = { NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
							     NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR };
		long long *dst[2] = { &g->retired_sbe, &g->retired_dbe };
		for (int k = 0; k < 2; k++) {
			unsigned n = 0;
			unsigned long long addr[1] = { 0 };
			isolate_step(t, "nvmlDeviceGetRetiredPages on GPU %u", g->index);
			nvmlReturn_t r = api->retired_pages(dev, causes[k], &n, addr);
			if (r == NVML_ERROR_INSUFFICIENT_SIZE || nvml_ok(api, g, "nvmlDeviceGetRetiredPages", r))
				*dst[k] = n;
		}
	}
}

/* Temperature, clock event (throttle) reasons, PCIe link, NVLink states. */
static void nvml_read_link_health(const struct nvml_api *api, struct isolate_ctx *t, nvmlDevice_t dev,
				struct nvml_gpu *g)
{
	unsigned u = 0;
	unsigned long long reasons = 0;

	if (api->temperature &&
	    NVML_TRY(t, api, g, "nvmlDeviceGetTemperature", api->temperature(dev, NVML_TEMPERATURE_GPU, &u)))
		g->temperature = clamp_int(u);
	if (api->clocks_event_reasons)
		g->throttle_known = NVML_TRY(t, api, g, "nvmlDeviceGetCurrentClocksEventReasons",
					    api->clocks_event_reasons(dev, &reasons));
	else if (api->clocks_throttle_reasons)
		g->throttle_known = NVML_TRY(t, api, g, "nvmlDeviceGetCurrentClocksThrottleReasons",
					    api->clocks_throttle_reasons(dev, &reasons));
	if (g->throttle_known)
		g->throttle_reasons = reasons;

	if (api->pcie_gen_cur && NVML_TRY(t, api, g, "nvmlDeviceGetCurrPcieLinkGeneration", api->pcie_gen_cur(dev, &u)))
		g->pcie_gen_cur = clamp_int(u);
	if (api->pcie_gen_max && NVML_TRY(t, api, g, "nvmlDeviceGetMaxPcieLinkGeneration", api->pcie_gen_max(dev, &u)))
		g->pcie_gen_max = clamp_int(u);
	if (api->pcie_width_cur && NVML_TRY(t, api, g, "nvmlDeviceGetCurrPcieLinkWidth", api->pcie_width_cur(dev, &u)))
		g->pcie_width_cur = clamp_int(u);
	if (api->pcie_width_max && NVML_TRY(t, api, g, "nvmlDeviceGetMaxPcieLinkWidth", api->pcie_width_max(dev, &u)))
		g->pcie_width_max = clamp_int(u);

	for (unsigned link = 0; api->nvlink_state && link < NVLINK_PROBE_LINKS; link++) {
		nvmlEnableState_t active = NVML_FEATURE_DISABLED;
		isolate_step(t, "nvmlDeviceGetNvLinkState(link %u) on GPU %u", link, g->index);
		nvmlReturn_t r = api->nvlink_state(dev, link, &active);
		if (r == NVML_ERROR_INVALID_ARGUMENT || r == NVML_ERROR_NOT_SUPPORTED)
			continue; /* no such link (NVML API reference, nvmlDeviceGetNvLinkState) */
		if (!nvml_ok(api, g, "nvmlDeviceGetNvLinkState", r))
			break;
		g->nvlink_links++;
		if (active != NVML_FEATURE_ENABLED)
			g->nvlink_down++;
		else if (g->nvlink_version == GPU_UNKNOWN && api->nvlink_version &&
			 NVML_TRY(t, api, g, "nvmlDeviceGetNvLinkVersion", api->nvlink_version(dev, link, &u)))
			g->nvlink_version = clamp_int(u);
	}
}

/* Compute mode, power limits (mW) and clocks (MHz); "not supported"
 * leaves a field GPU_UNKNOWN (F15, F16). */
static void nvml_read_settings(const struct nvml_api *api, struct isolate_ctx *t, nvmlDevice_t dev,
			       struct nvml_gpu *g)
{
	nvmlComputeMode_t mode = NVML_COMPUTEMODE_DEFAULT;
	unsigned u = 0;

	if (api->compute_mode && NVML_TRY(t, api, g, "nvmlDeviceGetComputeMode", api->compute_mode(dev, &mode)))
		g->compute_mode = (int)mode;
	if (api->power_enforced && NVML_TRY(t, api, g, "nvmlDeviceGetEnforcedPowerLimit", api->power_enforced(dev, &u)))
		g->power_enforced_mw = u;
	if (api->power_limit && NVML_TRY(t, api, g, "nvmlDeviceGetPowerManagementLimit", api->power_limit(dev, &u)))
		g->power_limit_mw = u;
	if (api->power_default &&
	    NVML_TRY(t, api, g, "nvmlDeviceGetPowerManagementDefaultLimit", api->power_default(dev, &u)))
		g->power_default_mw = u;
	const nvmlClockType_t types[2] = { NVML_CLOCK_GRAPHICS, NVML_CLOCK_MEM };
	int *app[2] = { &g->app_clock_gr, &g->app_clock_mem };
	int *def[2] = { &g->app_default_gr, &g->app_default_mem };
	int *max[2] = { &g->max_clock_gr, &g->max_clock_mem };
	for (int k = 0; k < 2; k++) {
		if (api->app_clock && NVML_TRY(t, api, g, "nvmlDeviceGetApplicationsClock", api->app_clock(dev, types[k], &u)))
			*app[k] = clamp_int(u);
		if (api->app_clock_default && NVML_TRY(t, api, g, "nvmlDeviceGetDefaultApplicationsClock",
						       api->app_clock_default(dev, types[k], &u)))
			*def[k] = clamp_int(u);
		if (api->max_clock && NVML_TRY(t, api, g, "nvmlDeviceGetMaxClockInfo", api->max_clock(dev, types[k], &u)))
			*max[k] = clamp_int(u);
	}
}

/* The GPU's NVLink fabric registration (F04): the versioned call with v3
 * (health summary), v2 when the driver answers that v3 is unknown to it
 * (R550), else the R525 call without a health mask. "Not supported" (a
 * GPU outside any NVLink fabric) leaves fabric_state GPU_UNKNOWN. */
static void nvml_read_fabric(const struct nvml_api *api, struct isolate_ctx *t, nvmlDevice_t dev, struct nvml_gpu *g)
{
	nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
	nvmlGpuFabricInfo_v3_t v = { .version = nvmlGpuFabricInfo_v3 };

	if (api->fabric_info_v) {
		isolate_step(t, "nvmlDeviceGetGpuFabricInfoV on GPU %u", g->index);
		r = api->fabric_info_v(dev, &v);
		g->fabric_version = 3;
		if (r == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
			v = (nvmlGpuFabricInfo_v3_t){ .version = nvmlGpuFabricInfo_v2 };
			r = api->fabric_info_v(dev, &v); /* reads up to healthMask only */
			g->fabric_version = 2;
		}
	}
	if ((r == NVML_ERROR_FUNCTION_NOT_FOUND || r == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) && api->fabric_info) {
		nvmlGpuFabricInfo_t v1;
		memset(&v1, 0, sizeof(v1));
		isolate_step(t, "nvmlDeviceGetGpuFabricInfo on GPU %u", g->index);
		r = api->fabric_info(dev, &v1);
		v = (nvmlGpuFabricInfo_v3_t){ .status = v1.status, .cliqueId = v1.cliqueId, .state = v1.state };
		g->fabric_version = 1;
	}
	if (!nvml_ok(api, g, g->fabric_version == 1 ? "nvmlDeviceGetGpuFabricInfo" : "nvmlDeviceGetGpuFabricInfoV", r)) {
		g->fabric_version = 0;
		return;
	}
	g->fabric_state = v.state;
	g->fabric_status = (int)v.status;
	g->fabric_clique = v.cliqueId;
	if (v.state == NVML_GPU_FABRIC_STATE_COMPLETED) {
		const char *text = api->error_string(v.status);
		snprintf(g->fabric_status_text, sizeof(g->fabric_status_text), "%s", text ? text : "");
	}
	if (g->fabric_version >= 2)
		g->fabric_health_mask = v.healthMask;
	if (g->fabric_version == 3)
		g->fabric_health_summary = v.healthSummary;
}

static void nvml_read_gpu(const struct nvml_api *api, struct isolate_ctx *t, unsigned index, struct nvml_gpu *g)
{
	nvmlDevice_t dev = NULL;

	nvml_gpu_init(g, index);
	if (!NVML_TRY(t, api, g, "nvmlDeviceGetHandleByIndex_v2", api->handle_by_index_v2(index, &dev))) {
		if (!g->error[0])
			snprintf(g->error, sizeof(g->error), "nvmlDeviceGetHandleByIndex_v2: not supported");
		return;
	}
	nvml_read_identity(api, t, dev, g);
	nvml_read_memory_health(api, t, dev, g);
	nvml_read_link_health(api, t, dev, g);
	unsigned cur = 0, pending = 0;
	/* not supported on GPUs without MIG: stays unknown */
	if (api->mig_mode && NVML_TRY(t, api, g, "nvmlDeviceGetMigMode", api->mig_mode(dev, &cur, &pending))) {
		g->mig_current = cur == 1;
		g->mig_pending = pending == 1;
	}
	nvml_read_settings(api, t, dev, g);
	nvml_read_fabric(api, t, dev, g);
}

/* NVML's P2P status, NVLink, read and write, from each GPU with NVLinks
 * up to every such GPU of higher index (F10: NCCL asks the same for
 * NVLink-connected pairs, src/graph/paths.cc). */
static void nvml_read_p2p(const struct nvml_api *api, struct isolate_ctx *t, struct nvml_info *out)
{
	const nvmlGpuP2PCapsIndex_t caps[3] = { NVML_P2P_CAPS_INDEX_NVLINK, NVML_P2P_CAPS_INDEX_READ,
						NVML_P2P_CAPS_INDEX_WRITE };

	out->p2p_queried = api->p2p_status != NULL;
	for (size_t a = 0; api->p2p_status && a < out->n; a++) {
		struct nvml_gpu *g = &out->v[a];
		nvmlDevice_t da = NULL, db = NULL;
		if (g->nvlink_links - g->nvlink_down <= 0 || api->handle_by_index_v2((unsigned)a, &da) != NVML_SUCCESS)
			continue;
		for (size_t b = a + 1; b < out->n; b++) {
			const struct nvml_gpu *h = &out->v[b];
			if (h->nvlink_links - h->nvlink_down <= 0 ||
			    api->handle_by_index_v2((unsigned)b, &db) != NVML_SUCCESS)
				continue;
			if (g->n_p2p == NVML_P2P_MAX_PEERS) {
				g->p2p_truncated = true;
				break;
			}
			struct nvml_p2p_peer *p = &g->p2p[g->n_p2p++];
			int *dst[3] = { &p->nvlink, &p->read, &p->write };
			p->peer = (int)b;
			for (int k = 0; k < 3; k++) {
				nvmlGpuP2PStatus_t st = NVML_P2P_STATUS_UNKNOWN;
				isolate_step(t, "nvmlDeviceGetP2PStatus on GPUs %zu and %zu", a, b);
				*dst[k] = nvml_ok(api, g, "nvmlDeviceGetP2PStatus", api->p2p_status(da, db, caps[k], &st))
						  ? (int)st
						  : GPU_UNKNOWN;
			}
		}
	}
}

/* Driver-wide facts and every GPU; NVML is initialised. */
static void nvml_read_all(const struct nvml_api *api, struct isolate_ctx *t, struct nvml_info *out)
{
	int cv = 0;
	unsigned count = 0;
	nvmlReturn_t r;

	if (api->driver_version) {
		isolate_step(t, "nvmlSystemGetDriverVersion");
		r = api->driver_version(out->driver_version, sizeof(out->driver_version));
		if (r != NVML_SUCCESS)
			out->driver_version[0] = '\0';
		out->driver_version[sizeof(out->driver_version) - 1] = '\0';
	}
	isolate_step(t, "nvmlSystemGetCudaDriverVersion");
	if (api->cuda_driver_version && api->cuda_driver_version(&cv) == NVML_SUCCESS && cv > 0)
		out->cuda_driver_version = cv;
	isolate_step(t, "nvmlDeviceGetCount_v2");
	r = api->count_v2(&count);
	if (r != NVML_SUCCESS) {
		nvml_format(api, "nvmlDeviceGetCount_v2", r, out->error, sizeof(out->error));
		return;
	}
	if (count > GPU_LIVE_MAX_GPUS) {
		snprintf(out->error, sizeof(out->error), "nvmlDeviceGetCount_v2: implausible count %u", count);
		return;
	}
	if (count == 0)
		return;
	out->v = xcalloc(count, sizeof(*out->v));
	out->n = count;
	for (unsigned i = 0; i < count; i++)
		nvml_read_gpu(api, t, i, &out->v[i]);
	nvml_read_p2p(api, t, out);
}

/* The names nvml.h gives the codes nvmlInit_v2 returns, for the stub,
 * whose nvmlErrorString answers with its banner. */
static const char *nvml_code_name(nvmlReturn_t r)
{
	switch (r) {
	case NVML_ERROR_DRIVER_NOT_LOADED: return "NVML_ERROR_DRIVER_NOT_LOADED";
	case NVML_ERROR_NO_PERMISSION: return "NVML_ERROR_NO_PERMISSION";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
	case NVML_ERROR_UNKNOWN: return "NVML_ERROR_UNKNOWN";
	default: return "NVML error";
	}
}

/* The file lib was loaded from (dladdr on its nvmlInit_v2: the path the
 * dynamic linker found) and the same with symbolic links resolved; ""
 * where unknown. */
static void nvml_lib_file(const struct dl_lib *lib, char *path, size_t size, char real[PATH_MAX])
{
	void *sym = lib->handle ? dlsym(lib->handle, "nvmlInit_v2") : NULL;
	Dl_info info;

	path[0] = real[0] = '\0';
	if (sym && dladdr(sym, &info) && info.dli_fname)
		snprintf(path, size, "%s", info.dli_fname);
	if (path[0] && !realpath(path, real))
		real[0] = '\0';
}

/* Loads, initialises and reads NVML (under the caller's stdout guard).
 * When nvmlInit_v2 fails, path and real get the library's file. */
static void nvml_probe_guarded(struct nvml_info *out, struct isolate_ctx *t, char *path, size_t size,
			       char real[PATH_MAX])
{
	struct nvml_api api;
	struct dl_lib lib;

	isolate_step(t, "loading libnvidia-ml.so.1");
	int r = nvml_api_load(&lib, &api);
	if (r < 0) {
		out->fail = r == -ENOSYS ? GPU_LIB_FAIL_SYMBOL : GPU_LIB_FAIL_MISSING;
		snprintf(out->error, sizeof(out->error),
			 "NVML (libnvidia-ml.so.1) could not be loaded: %s (is the NVIDIA driver installed?)",
			 lib.error ? lib.error : "unknown error");
		dl_close(&lib);
		return;
	}
	isolate_step(t, "nvmlInit_v2");
	nvmlReturn_t ir = api.init_v2();
	if (ir != NVML_SUCCESS) {
		out->code = (int)ir;
		out->fail = nvml_fail_class(ir);
		nvml_format(&api, "nvmlInit_v2", ir, out->error, sizeof(out->error));
		nvml_lib_file(&lib, path, size, real);
		dl_close(&lib);
		return;
	}
	out->loaded = true;
	nvml_read_all(&api, t, out);
	isolate_step(t, "nvmlShutdown");
	api.shutdown();
	dl_close(&lib);
}

/* Contract (gpu_live.h): never fails. loaded is true once nvmlInit_v2 has
 * succeeded; error then holds only a failure to enumerate the GPUs. The
 * caller owns out->v (nvml_info_free). Whatever NVML prints on stdout,
 * from loading to unloading, is kept off gpuready's (and looked at for the
 * stub's banner); without a guard (stdout_guard_begin failed) the probe
 * still runs. */
void nvml_probe(struct nvml_info *out, struct isolate_ctx *t)
{
	struct stdout_guard g;
	_cleanup_strbuf_ struct strbuf said = STRBUF_INIT;
	char path[PATH_MAX], real[PATH_MAX];

	*out = (struct nvml_info){ .cuda_driver_version = GPU_UNKNOWN };
	path[0] = real[0] = '\0';
	(void)stdout_guard_begin(&g);
	nvml_probe_guarded(out, t, path, sizeof(path), real);
	(void)stdout_guard_end(&g, &said);
	if (!out->loaded && out->code != 0 && gpu_lib_is_stub(path, real, said.buf)) {
		out->fail = GPU_LIB_FAIL_STUB;
		snprintf(out->error, sizeof(out->error),
			 "nvmlInit_v2: %s (%d): the CUDA toolkit's stub libnvidia-ml.so was loaded, not the driver's "
			 "libnvidia-ml.so.1 (%.300s)",
			 nvml_code_name((nvmlReturn_t)out->code), out->code, real[0] ? real : path[0] ? path : "?");
	}
}

