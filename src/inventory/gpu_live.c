/* Live GPU facts through NVML and the CUDA driver API, loaded at run time.
 *
 * libnvidia-ml.so.1 and libcuda.so.1 come with the NVIDIA driver, not with
 * the build machine, so nothing here includes nvml.h or cuda.h: each
 * library is dlopen'd through one symbol table (core/dl.h, STYLE 13) and
 * the few types and values used are declared below, each from the header
 * line it mirrors. Only the sonames ending in .1 are loaded: a CUDA
 * toolkit's stubs/ directory holds a libcuda.so for linking whose SONAME is
 * libcuda.so.1 but whose file name is not, so the loader never picks it
 * for that name. If a stub is in the process anyway (linked with -lcuda
 * from stubs/, or preloaded), it answers to the soname; its cuInit then
 * returns CUDA_ERROR_STUB_LIBRARY and the probe says so (both checked with
 * CUDA 13.0's stubs/libcuda.so, which also answers cuGetErrorName with an
 * error and NULL).
 *
 * Required symbols are those every driver of the last decade exports;
 * the rest are optional and their absence leaves a field GPU_UNKNOWN, so an
 * older driver still gives what it can. A failing call is recorded with
 * the library's own error text and number, never printed, never fatal.
 *
 * Sources: nvml.h = NVIDIA/DCGM sdk/nvidia/nvml/dcgm_nvml.h (2026 copy);
 * cuda.h = CUDA 13.0 toolkit include/cuda.h; REFERENCE §11. */
#define _GNU_SOURCE
#include "gpu_live.h"
#include "core/dl.h"
#include "core/strbuf.h"

#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- nvml.h subset ---- */

/* enum nvmlReturn_enum: the codes this file tests (UNKNOWN keeps the enum
 * the size of the library's). */
typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef enum nvmlEnableState_enum {
	NVML_FEATURE_DISABLED = 0,
	NVML_FEATURE_ENABLED = 1,
} nvmlEnableState_t;

typedef enum nvmlMemoryErrorType_enum {
	NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
	NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
	NVML_VOLATILE_ECC = 0,
	NVML_AGGREGATE_ECC = 1,
} nvmlEccCounterType_t;

typedef enum nvmlPageRetirementCause_enum {
	NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
	NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
} nvmlPageRetirementCause_t;

typedef enum nvmlTemperatureSensors_enum {
	NVML_TEMPERATURE_GPU = 0,
} nvmlTemperatureSensors_t;

/* struct nvmlPciInfo_st, filled by nvmlDeviceGetPciInfo_v3; busId is
 * NVML_DEVICE_PCI_BUS_ID_FMT "%08X:%02X:%02X.0". */
typedef struct nvmlPciInfo_st {
	char busIdLegacy[16]; /* NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE */
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[32]; /* NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE */
} nvmlPciInfo_t;
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout");

/* struct nvmlMemory_st (v1, for nvmlDeviceGetMemoryInfo). */
typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
_Static_assert(sizeof(((struct nvml_gpu *)0)->name) >= NVML_DEVICE_NAME_V2_BUFFER_SIZE, "name buffer");
_Static_assert(sizeof(((struct nvml_gpu *)0)->uuid) >= NVML_DEVICE_UUID_V2_BUFFER_SIZE, "uuid buffer");
_Static_assert(sizeof(((struct nvml_info *)0)->driver_version) >= NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE,
	       "driver version buffer");

/* NVML_NVLINK_MAX_LINKS is 6 (CUDA 10.1 nvml.h), 12 (R470), 18 (DCGM's
 * copy); newer headers raise it again. Links past the driver's own limit
 * answer NVML_ERROR_INVALID_ARGUMENT, so a generous bound is harmless. */
#define NVLINK_PROBE_LINKS 36u

/* A sanity bound on counts the libraries report. */
#define MAX_GPUS 1024u

/* ---- cuda.h subset ---- */

/* enum cudaError_enum: the codes this file names itself. */
typedef enum cudaError_enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_STUB_LIBRARY = 34,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef int CUdevice;                  /* CUdevice_v1 */
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 under __LP64__ */
typedef struct CUctx_st *CUcontext;
_Static_assert(sizeof(CUdeviceptr) == sizeof(void *), "gpuready builds for LP64 only, as cuda.h's CUdeviceptr");

/* enum CUdevice_attribute_enum: the attributes read here. */
typedef enum CUdevice_attribute_enum {
	CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
	CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
	CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
	CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
} CUdevice_attribute;

/* 64 MiB, seed 000's "basic tensor operations" round trip. */
#define ROUNDTRIP_BYTES ((size_t)64 << 20)

/* ---- pure helpers ---- */

/* Counts the hex digits at s (at most max + 1, so "too long" shows) and
 * their value. */
static size_t hex_run(const char *s, size_t max, uint64_t *val)
{
	size_t n = 0;
	uint64_t v = 0;
	while (n <= max && isxdigit((unsigned char)s[n])) {
		char c = (char)tolower((unsigned char)s[n]);
		v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
		n++;
	}
	*val = v;
	return n;
}

bool gpu_normalize_bdf(const char *s, char *out, size_t size)
{
	uint64_t dom, bus, dev, fn;
	size_t n;
	char buf[32];

	if (!s || !out)
		return false;
	/* domain: NVML 8 digits, CUDA and sysfs 4; bus 2; device 2 (< 32); function 1 (< 8) */
	n = hex_run(s, 8, &dom);
	if (n < 1 || n > 8 || s[n] != ':')
		return false;
	s += n + 1;
	if (hex_run(s, 2, &bus) != 2 || s[2] != ':')
		return false;
	s += 3;
	if (hex_run(s, 2, &dev) != 2 || s[2] != '.' || dev > 0x1f)
		return false;
	s += 3;
	if (hex_run(s, 1, &fn) != 1 || s[1] != '\0' || fn > 7)
		return false;
	int len = snprintf(buf, sizeof(buf), "%04llx:%02llx:%02llx.%llx", (unsigned long long)dom,
			   (unsigned long long)bus, (unsigned long long)dev, (unsigned long long)fn);
	if (len < 0 || (size_t)len >= size)
		return false;
	memcpy(out, buf, (size_t)len + 1);
	return true;
}

void cuda_version_string(int v, char *out, size_t size)
{
	if (!out || size == 0)
		return;
	if (v < 0)
		snprintf(out, size, "unknown");
	else
		snprintf(out, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Decimal digits at s: count (at most max + 1) and value. */
static size_t dec_run(const char *s, size_t max, int *val)
{
	size_t n = 0;
	int v = 0;
	while (n <= max && s[n] >= '0' && s[n] <= '9') {
		v = v * 10 + (s[n] - '0');
		n++;
	}
	*val = v;
	return n;
}

int cuda_version_parse(const char *s)
{
	int major, minor = 0;
	size_t n;

	if (!s)
		return -1;
	n = dec_run(s, 3, &major);
	if (n < 1 || n > 3)
		return -1;
	s += n;
	if (*s == '.') {
		s++;
		n = dec_run(s, 2, &minor);
		if (n < 1 || n > 2)
			return -1;
		s += n;
	}
	return *s ? -1 : major * 1000 + minor * 10;
}

/* ---- NVML ---- */

struct nvml_api {
	/* required */
	nvmlReturn_t (*init_v2)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t r);
	nvmlReturn_t (*count_v2)(unsigned *n);
	nvmlReturn_t (*handle_by_index_v2)(unsigned i, nvmlDevice_t *dev);
	/* optional */
	nvmlReturn_t (*driver_version)(char *buf, unsigned len);
	nvmlReturn_t (*cuda_driver_version)(int *v);
	nvmlReturn_t (*name)(nvmlDevice_t dev, char *buf, unsigned len);
	nvmlReturn_t (*uuid)(nvmlDevice_t dev, char *buf, unsigned len);
	nvmlReturn_t (*pci_info_v3)(nvmlDevice_t dev, nvmlPciInfo_t *pci);
	nvmlReturn_t (*memory_info)(nvmlDevice_t dev, nvmlMemory_t *mem);
	nvmlReturn_t (*persistence_mode)(nvmlDevice_t dev, nvmlEnableState_t *mode);
	nvmlReturn_t (*ecc_mode)(nvmlDevice_t dev, nvmlEnableState_t *current, nvmlEnableState_t *pending);
	nvmlReturn_t (*total_ecc_errors)(nvmlDevice_t dev, nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter,
					 unsigned long long *count);
	nvmlReturn_t (*remapped_rows)(nvmlDevice_t dev, unsigned *corr, unsigned *unc, unsigned *pending,
				      unsigned *failure);
	nvmlReturn_t (*retired_pages)(nvmlDevice_t dev, nvmlPageRetirementCause_t cause, unsigned *count,
				      unsigned long long *addresses);
	nvmlReturn_t (*retired_pending)(nvmlDevice_t dev, nvmlEnableState_t *pending);
	nvmlReturn_t (*temperature)(nvmlDevice_t dev, nvmlTemperatureSensors_t sensor, unsigned *temp);
	nvmlReturn_t (*clocks_event_reasons)(nvmlDevice_t dev, unsigned long long *reasons);
	nvmlReturn_t (*clocks_throttle_reasons)(nvmlDevice_t dev, unsigned long long *reasons);
	nvmlReturn_t (*pcie_gen_cur)(nvmlDevice_t dev, unsigned *v);
	nvmlReturn_t (*pcie_gen_max)(nvmlDevice_t dev, unsigned *v);
	nvmlReturn_t (*pcie_width_cur)(nvmlDevice_t dev, unsigned *v);
	nvmlReturn_t (*pcie_width_max)(nvmlDevice_t dev, unsigned *v);
	nvmlReturn_t (*nvlink_state)(nvmlDevice_t dev, unsigned link, nvmlEnableState_t *active);
};

#define NVML_REQ(sym, member) { .name = #sym, .offset = offsetof(struct nvml_api, member) }
#define NVML_OPT(sym, member) { .name = #sym, .optional = true, .offset = offsetof(struct nvml_api, member) }

/* Opens libnvidia-ml.so.1 into *api; 0 or the dl_open error. */
static int nvml_load(struct dl_lib *lib, struct nvml_api *api)
{
	static const char *const libs[] = { "libnvidia-ml.so.1", NULL };
	static const struct dl_sym syms[] = {
		NVML_REQ(nvmlInit_v2, init_v2),
		NVML_REQ(nvmlShutdown, shutdown),
		NVML_REQ(nvmlErrorString, error_string),
		NVML_REQ(nvmlDeviceGetCount_v2, count_v2),
		NVML_REQ(nvmlDeviceGetHandleByIndex_v2, handle_by_index_v2),
		NVML_OPT(nvmlSystemGetDriverVersion, driver_version),
		NVML_OPT(nvmlSystemGetCudaDriverVersion, cuda_driver_version),
		NVML_OPT(nvmlDeviceGetName, name),
		NVML_OPT(nvmlDeviceGetUUID, uuid),
		NVML_OPT(nvmlDeviceGetPciInfo_v3, pci_info_v3),
		NVML_OPT(nvmlDeviceGetMemoryInfo, memory_info),
		NVML_OPT(nvmlDeviceGetPersistenceMode, persistence_mode),
		NVML_OPT(nvmlDeviceGetEccMode, ecc_mode),
		NVML_OPT(nvmlDeviceGetTotalEccErrors, total_ecc_errors),
		NVML_OPT(nvmlDeviceGetRemappedRows, remapped_rows),
		NVML_OPT(nvmlDeviceGetRetiredPages, retired_pages),
		NVML_OPT(nvmlDeviceGetRetiredPagesPendingStatus, retired_pending),
		NVML_OPT(nvmlDeviceGetTemperature, temperature),
		/* R535+ name; older drivers export only the ThrottleReasons one */
		NVML_OPT(nvmlDeviceGetCurrentClocksEventReasons, clocks_event_reasons),
		NVML_OPT(nvmlDeviceGetCurrentClocksThrottleReasons, clocks_throttle_reasons),
		NVML_OPT(nvmlDeviceGetCurrPcieLinkGeneration, pcie_gen_cur),
		NVML_OPT(nvmlDeviceGetMaxPcieLinkGeneration, pcie_gen_max),
		NVML_OPT(nvmlDeviceGetCurrPcieLinkWidth, pcie_width_cur),
		NVML_OPT(nvmlDeviceGetMaxPcieLinkWidth, pcie_width_max),
		NVML_OPT(nvmlDeviceGetNvLinkState, nvlink_state),
	};
	memset(api, 0, sizeof(*api));
	return dl_open(lib, libs, syms, sizeof(syms) / sizeof(syms[0]), api);
}

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
		.pcie_width_cur = GPU_UNKNOWN, .pcie_width_max = GPU_UNKNOWN,
	};
}

/* Name, UUID, PCI bus ID (normalised), memory size. */
static void nvml_read_identity(const struct nvml_api *api, nvmlDevice_t dev, struct nvml_gpu *g)
{
	if (api->name && !nvml_ok(api, g, "nvmlDeviceGetName", api->name(dev, g->name, sizeof(g->name))))
		g->name[0] = '\0';
	g->name[sizeof(g->name) - 1] = '\0';
	if (api->uuid && !nvml_ok(api, g, "nvmlDeviceGetUUID", api->uuid(dev, g->uuid, sizeof(g->uuid))))
		g->uuid[0] = '\0';
	g->uuid[sizeof(g->uuid) - 1] = '\0';

	nvmlPciInfo_t pci;
	memset(&pci, 0, sizeof(pci));
	if (!api->pci_info_v3) {
		if (!g->error[0])
			snprintf(g->error, sizeof(g->error), "nvmlDeviceGetPciInfo_v3: not exported by this NVML");
	} else if (nvml_ok(api, g, "nvmlDeviceGetPciInfo_v3", api->pci_info_v3(dev, &pci))) {
		pci.busId[sizeof(pci.busId) - 1] = '\0';
		if (!gpu_normalize_bdf(pci.busId, g->bdf, sizeof(g->bdf)))
			snprintf(g->bdf, sizeof(g->bdf), "%04x:%02x:%02x.0", pci.domain, pci.bus & 0xff,
				 pci.device & 0x1f);
	}

	nvmlMemory_t mem;
	memset(&mem, 0, sizeof(mem));
	if (api->memory_info && nvml_ok(api, g, "nvmlDeviceGetMemoryInfo", api->memory_info(dev, &mem)))
		g->mem_total = mem.total;
}

/* Persistence, ECC mode and volatile counts, row remapping, retired pages. */
static void nvml_read_memory_health(const struct nvml_api *api, nvmlDevice_t dev, struct nvml_gpu *g)
{
	nvmlEnableState_t a = NVML_FEATURE_DISABLED, b = NVML_FEATURE_DISABLED;
	unsigned long long cnt = 0;
	unsigned u[4] = { 0 };

	if (api->persistence_mode && nvml_ok(api, g, "nvmlDeviceGetPersistenceMode", api->persistence_mode(dev, &a)))
		g->persistence = a == NVML_FEATURE_ENABLED;
	if (api->ecc_mode && nvml_ok(api, g, "nvmlDeviceGetEccMode", api->ecc_mode(dev, &a, &b))) {
		g->ecc_current = a == NVML_FEATURE_ENABLED;
		g->ecc_pending = b == NVML_FEATURE_ENABLED;
	}
	if (api->total_ecc_errors) {
		if (nvml_ok(api, g, "nvmlDeviceGetTotalEccErrors",
			    api->total_ecc_errors(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &cnt)))
			g->ecc_uncorrected_volatile = clamp_ll(cnt);
		if (nvml_ok(api, g, "nvmlDeviceGetTotalEccErrors",
			    api->total_ecc_errors(dev, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &cnt)))
			g->ecc_corrected_volatile = clamp_ll(cnt);
	}
	if (api->remapped_rows &&
	    nvml_ok(api, g, "nvmlDeviceGetRemappedRows", api->remapped_rows(dev, &u[0], &u[1], &u[2], &u[3]))) {
		g->remap_corr = clamp_int(u[0]);
		g->remap_unc = clamp_int(u[1]);
		g->remap_pending = u[2] != 0;
		g->remap_failure = u[3] != 0;
	}
	if (api->retired_pending &&
	    nvml_ok(api, g, "nvmlDeviceGetRetiredPagesPendingStatus", api->retired_pending(dev, &a)))
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
			nvmlReturn_t r = api->retired_pages(dev, causes[k], &n, addr);
			if (r == NVML_ERROR_INSUFFICIENT_SIZE || nvml_ok(api, g, "nvmlDeviceGetRetiredPages", r))
				*dst[k] = n;
		}
	}
}

/* Temperature, clock event (throttle) reasons, PCIe link, NVLink states. */
static void nvml_read_link_health(const struct nvml_api *api, nvmlDevice_t dev, struct nvml_gpu *g)
{
	unsigned u = 0;
	unsigned long long reasons = 0;

	if (api->temperature &&
	    nvml_ok(api, g, "nvmlDeviceGetTemperature", api->temperature(dev, NVML_TEMPERATURE_GPU, &u)))
		g->temperature = clamp_int(u);
	if (api->clocks_event_reasons)
		g->throttle_known = nvml_ok(api, g, "nvmlDeviceGetCurrentClocksEventReasons",
					    api->clocks_event_reasons(dev, &reasons));
	else if (api->clocks_throttle_reasons)
		g->throttle_known = nvml_ok(api, g, "nvmlDeviceGetCurrentClocksThrottleReasons",
					    api->clocks_throttle_reasons(dev, &reasons));
	if (g->throttle_known)
		g->throttle_reasons = reasons;

	if (api->pcie_gen_cur && nvml_ok(api, g, "nvmlDeviceGetCurrPcieLinkGeneration", api->pcie_gen_cur(dev, &u)))
		g->pcie_gen_cur = clamp_int(u);
	if (api->pcie_gen_max && nvml_ok(api, g, "nvmlDeviceGetMaxPcieLinkGeneration", api->pcie_gen_max(dev, &u)))
		g->pcie_gen_max = clamp_int(u);
	if (api->pcie_width_cur && nvml_ok(api, g, "nvmlDeviceGetCurrPcieLinkWidth", api->pcie_width_cur(dev, &u)))
		g->pcie_width_cur = clamp_int(u);
	if (api->pcie_width_max && nvml_ok(api, g, "nvmlDeviceGetMaxPcieLinkWidth", api->pcie_width_max(dev, &u)))
		g->pcie_width_max = clamp_int(u);

	for (unsigned link = 0; api->nvlink_state && link < NVLINK_PROBE_LINKS; link++) {
		nvmlEnableState_t active = NVML_FEATURE_DISABLED;
		nvmlReturn_t r = api->nvlink_state(dev, link, &active);
		if (r == NVML_ERROR_INVALID_ARGUMENT || r == NVML_ERROR_NOT_SUPPORTED)
			continue; /* no such link (REFERENCE §11) */
		if (!nvml_ok(api, g, "nvmlDeviceGetNvLinkState", r))
			break;
		g->nvlink_links++;
		if (active != NVML_FEATURE_ENABLED)
			g->nvlink_down++;
	}
}

static void nvml_read_gpu(const struct nvml_api *api, unsigned index, struct nvml_gpu *g)
{
	nvmlDevice_t dev = NULL;

	nvml_gpu_init(g, index);
	if (!nvml_ok(api, g, "nvmlDeviceGetHandleByIndex_v2", api->handle_by_index_v2(index, &dev))) {
		if (!g->error[0])
			snprintf(g->error, sizeof(g->error), "nvmlDeviceGetHandleByIndex_v2: not supported");
		return;
	}
	nvml_read_identity(api, dev, g);
	nvml_read_memory_health(api, dev, g);
	nvml_read_link_health(api, dev, g);
}

/* Driver-wide facts and every GPU; NVML is initialised. */
static void nvml_read_all(const struct nvml_api *api, struct nvml_info *out)
{
	int cv = 0;
	unsigned count = 0;
	nvmlReturn_t r;

	if (api->driver_version) {
		r = api->driver_version(out->driver_version, sizeof(out->driver_version));
		if (r != NVML_SUCCESS)
			out->driver_version[0] = '\0';
		out->driver_version[sizeof(out->driver_version) - 1] = '\0';
	}
	if (api->cuda_driver_version && api->cuda_driver_version(&cv) == NVML_SUCCESS && cv > 0)
		out->cuda_driver_version = cv;
	r = api->count_v2(&count);
	if (r != NVML_SUCCESS) {
		nvml_format(api, "nvmlDeviceGetCount_v2", r, out->error, sizeof(out->error));
		return;
	}
	if (count > MAX_GPUS) {
		snprintf(out->error, sizeof(out->error), "nvmlDeviceGetCount_v2: implausible count %u", count);
		return;
	}
	if (count == 0)
		return;
	out->v = xcalloc(count, sizeof(*out->v));
	out->n = count;
	for (unsigned i = 0; i < count; i++)
		nvml_read_gpu(api, i, &out->v[i]);
}

/* Contract (gpu_live.h): never fails. loaded is true once nvmlInit_v2 has
 * succeeded; error then holds only a failure to enumerate the GPUs. The
 * caller owns out->v (nvml_info_free). */
void nvml_probe(struct nvml_info *out)
{
	struct nvml_api api;
	struct dl_lib lib;

	*out = (struct nvml_info){ .cuda_driver_version = GPU_UNKNOWN };
	if (nvml_load(&lib, &api) < 0) {
		snprintf(out->error, sizeof(out->error),
			 "NVML (libnvidia-ml.so.1) could not be loaded: %s (is the NVIDIA driver installed?)",
			 lib.error ? lib.error : "unknown error");
		dl_close(&lib);
		return;
	}
	nvmlReturn_t r = api.init_v2();
	if (r != NVML_SUCCESS) {
		nvml_format(&api, "nvmlInit_v2", r, out->error, sizeof(out->error));
		dl_close(&lib);
		return;
	}
	out->loaded = true;
	nvml_read_all(&api, out);
	api.shutdown();
	dl_close(&lib);
}

void nvml_info_free(struct nvml_info *n)
{
	if (!n)
		return;
	free(n->v);
	n->v = NULL;
	n->n = 0;
}

/* ---- CUDA driver API ---- */

struct cuda_api {
	/* required */
	CUresult (*init)(unsigned flags);
	CUresult (*driver_get_version)(int *v);
	CUresult (*get_error_name)(CUresult r, const char **s);
	CUresult (*get_error_string)(CUresult r, const char **s);
	CUresult (*device_get_count)(int *n);
	CUresult (*device_get)(CUdevice *dev, int ordinal);
	CUresult (*device_get_name)(char *name, int len, CUdevice dev);
	CUresult (*device_total_mem_v2)(size_t *bytes, CUdevice dev);
	CUresult (*device_get_attribute)(int *v, CUdevice_attribute attr, CUdevice dev);
	CUresult (*device_get_pci_bus_id)(char *id, int len, CUdevice dev);
	CUresult (*primary_ctx_retain)(CUcontext *ctx, CUdevice dev);
	CUresult (*ctx_set_current)(CUcontext ctx);
	CUresult (*mem_alloc_v2)(CUdeviceptr *p, size_t bytes);
	CUresult (*mem_free_v2)(CUdeviceptr p);
	CUresult (*memcpy_htod_v2)(CUdeviceptr dst, const void *src, size_t bytes);
	CUresult (*memcpy_dtoh_v2)(void *dst, CUdeviceptr src, size_t bytes);
	/* optional: _v2 since CUDA 11.0 drivers, the plain one before */
	CUresult (*primary_ctx_release_v2)(CUdevice dev);
	CUresult (*primary_ctx_release)(CUdevice dev);
};

#define CU_REQ(sym, member) { .name = #sym, .offset = offsetof(struct cuda_api, member) }
#define CU_OPT(sym, member) { .name = #sym, .optional = true, .offset = offsetof(struct cuda_api, member) }

static int cuda_load(struct dl_lib *lib, struct cuda_api *api)
{
	/* the soname only: the toolkit's stubs/ has libcuda.so, never .so.1 */
	static const char *const libs[] = { "libcuda.so.1", NULL };
	static const struct dl_sym syms[] = {
		CU_REQ(cuInit, init),
		CU_REQ(cuDriverGetVersion, driver_get_version),
		CU_REQ(cuGetErrorName, get_error_name),
		CU_REQ(cuGetErrorString, get_error_string),
		CU_REQ(cuDeviceGetCount, device_get_count),
		CU_REQ(cuDeviceGet, device_get),
		CU_REQ(cuDeviceGetName, device_get_name),
		CU_REQ(cuDeviceTotalMem_v2, device_total_mem_v2),
		CU_REQ(cuDeviceGetAttribute, device_get_attribute),
		CU_REQ(cuDeviceGetPCIBusId, device_get_pci_bus_id),
		CU_REQ(cuDevicePrimaryCtxRetain, primary_ctx_retain),
		CU_REQ(cuCtxSetCurrent, ctx_set_current),
		CU_REQ(cuMemAlloc_v2, mem_alloc_v2),
		CU_REQ(cuMemFree_v2, mem_free_v2),
		CU_REQ(cuMemcpyHtoD_v2, memcpy_htod_v2),
		CU_REQ(cuMemcpyDtoH_v2, memcpy_dtoh_v2),
		CU_OPT(cuDevicePrimaryCtxRelease_v2, primary_ctx_release_v2),
		CU_OPT(cuDevicePrimaryCtxRelease, primary_ctx_release),
	};
	memset(api, 0, sizeof(*api));
	return dl_open(lib, libs, syms, sizeof(syms) / sizeof(syms[0]), api);
}

/* "fn: CUDA_ERROR_X (n): <cuGetErrorString>", plus what a stub means. The
 * stub answers its own name and text lookups with an error and NULL. */
static void cuda_format(const struct cuda_api *api, const char *fn, CUresult r, char *out, size_t size)
{
	const char *name = NULL, *text = NULL;

	if (api->get_error_name(r, &name) != CUDA_SUCCESS)
		name = NULL;
	if (api->get_error_string(r, &text) != CUDA_SUCCESS)
		text = NULL;
	if (!name)
		name = r == CUDA_ERROR_STUB_LIBRARY ? "CUDA_ERROR_STUB_LIBRARY" : "CUDA error";
	if (r == CUDA_ERROR_STUB_LIBRARY)
		text = "the CUDA toolkit's stub libcuda.so was loaded, not the driver's libcuda.so.1";
	snprintf(out, size, "%s: %s (%d): %s", fn, name, (int)r, text ? text : "no description from the driver");
}

/* libcuda starts threads in cuInit, and unloading the library under them
 * would crash the process later. Marking the loaded object RTLD_NODELETE
 * (promoted through RTLD_NOLOAD, dlopen(3)) keeps it mapped; dl_close then
 * only drops this file's reference. */
static void cuda_pin(const struct dl_lib *lib)
{
	void *h = dlopen(lib->path, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	if (h)
		dlclose(h);
}

static CUresult cuda_release(const struct cuda_api *api, CUdevice dev)
{
	if (api->primary_ctx_release_v2)
		return api->primary_ctx_release_v2(dev);
	return api->primary_ctx_release ? api->primary_ctx_release(dev) : CUDA_ERROR_UNKNOWN;
}

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
static void roundtrip_copy(const struct cuda_api *api, struct cuda_gpu *g)
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
	if ((r = api->mem_alloc_v2(&d, ROUNDTRIP_BYTES)) != CUDA_SUCCESS) {
		cuda_format(api, "cuMemAlloc_v2(64 MiB)", r, g->roundtrip_error, sizeof(g->roundtrip_error));
		d = 0;
		goto out;
	}
	if ((r = api->memcpy_htod_v2(d, src, ROUNDTRIP_BYTES)) != CUDA_SUCCESS) {
		cuda_format(api, "cuMemcpyHtoD_v2", r, g->roundtrip_error, sizeof(g->roundtrip_error));
		goto out;
	}
	if ((r = api->memcpy_dtoh_v2(dst, d, ROUNDTRIP_BYTES)) != CUDA_SUCCESS) {
		cuda_format(api, "cuMemcpyDtoH_v2", r, g->roundtrip_error, sizeof(g->roundtrip_error));
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
	if (d && (r = api->mem_free_v2(d)) != CUDA_SUCCESS && g->roundtrip_ok) {
		g->roundtrip_ok = false;
		cuda_format(api, "cuMemFree_v2", r, g->roundtrip_error, sizeof(g->roundtrip_error));
	}
	free(src);
	free(dst);
}

/* The round trip on dev's primary context, made current for the test and
 * released after it. roundtrip_done means it was attempted. */
static void cuda_roundtrip(const struct cuda_api *api, CUdevice dev, struct cuda_gpu *g)
{
	CUcontext ctx = NULL;
	CUresult r;

	g->roundtrip_done = true;
	if (!api->primary_ctx_release_v2 && !api->primary_ctx_release) {
		snprintf(g->roundtrip_error, sizeof(g->roundtrip_error),
			 "cuDevicePrimaryCtxRelease(_v2) is not exported by this libcuda");
		return;
	}
	if ((r = api->primary_ctx_retain(&ctx, dev)) != CUDA_SUCCESS) {
		cuda_format(api, "cuDevicePrimaryCtxRetain", r, g->roundtrip_error, sizeof(g->roundtrip_error));
		return;
	}
	if ((r = api->ctx_set_current(ctx)) != CUDA_SUCCESS)
		cuda_format(api, "cuCtxSetCurrent", r, g->roundtrip_error, sizeof(g->roundtrip_error));
	else
		roundtrip_copy(api, g);
	api->ctx_set_current(NULL);
	cuda_release(api, dev);
}

/* One device's facts; a failure to reach it goes to *err (first only). */
static void cuda_read_device(const struct cuda_api *api, int ordinal, bool roundtrip, struct cuda_gpu *g,
			     char *err, size_t errsize)
{
	CUdevice dev = 0;
	CUresult r;
	size_t bytes = 0;
	char id[64] = "";

	*g = (struct cuda_gpu){ .ordinal = ordinal, .cc_major = GPU_UNKNOWN, .cc_minor = GPU_UNKNOWN,
				.gdr_supported = GPU_UNKNOWN, .dmabuf_supported = GPU_UNKNOWN };
	if ((r = api->device_get(&dev, ordinal)) != CUDA_SUCCESS) {
		if (!err[0])
			cuda_format(api, "cuDeviceGet", r, err, errsize);
		return;
	}
	if (api->device_get_name(g->name, (int)sizeof(g->name), dev) != CUDA_SUCCESS)
		g->name[0] = '\0';
	g->name[sizeof(g->name) - 1] = '\0';
	if (api->device_total_mem_v2(&bytes, dev) == CUDA_SUCCESS)
		g->mem_total = bytes;
	g->cc_major = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	g->cc_minor = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	g->gdr_supported = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
	g->dmabuf_supported = cuda_attr(api, dev, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
	if (api->device_get_pci_bus_id(id, (int)sizeof(id), dev) == CUDA_SUCCESS) {
		id[sizeof(id) - 1] = '\0';
		(void)gpu_normalize_bdf(id, g->bdf, sizeof(g->bdf));
	}
	if (!g->bdf[0])
		cuda_bdf_from_attrs(api, dev, g);
	if (roundtrip)
		cuda_roundtrip(api, dev, g);
}

/* Contract (gpu_live.h): never fails. driver_version is read before cuInit
 * (it needs no initialisation), so a node whose driver refuses to
 * initialise still shows it. loaded is true once cuInit(0) succeeded;
 * error then holds only the first device that could not be reached. */
void cuda_probe(struct cuda_info *out, bool roundtrip)
{
	struct cuda_api api;
	struct dl_lib lib;
	int v = 0, count = 0;
	CUresult r;

	*out = (struct cuda_info){ .driver_version = GPU_UNKNOWN };
	if (cuda_load(&lib, &api) < 0) {
		snprintf(out->error, sizeof(out->error),
			 "CUDA driver library (libcuda.so.1) could not be loaded: %s (is the NVIDIA driver installed?)",
			 lib.error ? lib.error : "unknown error");
		dl_close(&lib);
		return;
	}
	cuda_pin(&lib);
	if (api.driver_get_version(&v) == CUDA_SUCCESS && v > 0)
		out->driver_version = v;
	if ((r = api.init(0)) != CUDA_SUCCESS) {
		cuda_format(&api, "cuInit", r, out->error, sizeof(out->error));
		dl_close(&lib);
		return;
	}
	out->loaded = true;
	if ((r = api.device_get_count(&count)) != CUDA_SUCCESS)
		cuda_format(&api, "cuDeviceGetCount", r, out->error, sizeof(out->error));
	else if (count < 0 || (unsigned)count > MAX_GPUS)
		snprintf(out->error, sizeof(out->error), "cuDeviceGetCount: implausible count %d", count);
	else if (count > 0) {
		out->v = xcalloc((size_t)count, sizeof(*out->v));
		out->n = (size_t)count;
		for (int i = 0; i < count; i++)
			cuda_read_device(&api, i, roundtrip, &out->v[i], out->error, sizeof(out->error));
	}
	dl_close(&lib);
}

void cuda_info_free(struct cuda_info *c)
{
	if (!c)
		return;
	free(c->v);
	c->v = NULL;
	c->n = 0;
}
