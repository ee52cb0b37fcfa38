/* A stand-in for libnvidia-ml.so.1 (soname libnvidia-ml.so.1) that writes
 * to stdout the way the CUDA toolkit's stub libnvidia-ml.so does, for the
 * tests of gpuready's stdout guard (src/core/stdout_guard.h) on machines
 * without NVIDIA's files.
 *
 * It prints on every path a library has to stdout: buffered stdio from its
 * constructor, an unbuffered write(2) and a buffered printf from
 * nvmlInit_v2, and stdio again from nvmlShutdown and its destructor. Each
 * banner line begins "FAKE-NVML-BANNER", so a test can look for it in
 * gpuready's output.
 *
 * Environment:
 *   FAKE_NVML_INIT    what nvmlInit_v2 returns (default 9,
 *                     NVML_ERROR_DRIVER_NOT_LOADED, what the stub and a
 *                     driver without its kernel module return); 0: it
 *                     succeeds and reports FAKE_NVML_GPUS GPUs
 *   FAKE_NVML_BANNER  "stub": nvmlInit_v2 prints the stub's own banner
 *                     instead ("WARNING: You should always run with
 *                     libnvidia-ml.so that is installed with your NVIDIA
 *                     Display Driver ... stub library ..."), and
 *                     nvmlErrorString answers with it, as the stub does:
 *                     gpuready must recognise the stub by what it printed,
 *                     since this file is not in a .../stubs/ directory
 *   FAKE_NVML_GPUS    how many GPUs an initialised NVML reports (default
 *                     0); each answers nvmlDeviceGetHandleByIndex_v2 and
 *                     nvmlDeviceGetTemperature (40 C)
 *   FAKE_NVML_HANG    the name of one of the functions above
 *                     (nvmlInit_v2, nvmlDeviceGetCount_v2,
 *                     nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetTemperature):
 *                     it never returns, as NVML's calls can on a GPU that
 *                     has fallen off the bus (tests of the probes'
 *                     deadline, src/probe/deadline.c)
 *
 * What each GPU answers to the queries of the NVML setting checks
 * (gpu.compute_mode, gpu.power_clocks, gpu.fabric, gpu.nvml_p2p). Each
 * variable holds one entry per GPU, separated by ';' (the last entry
 * stands for the GPUs past it), each a ','-separated list of numbers;
 * unset, the query answers NVML_ERROR_NOT_SUPPORTED (3), as on a GPU
 * without the feature:
 *   FAKE_NVML_COMPUTE_MODE  nvmlComputeMode_t (0 Default, 2 Prohibited,
 *                     3 Exclusive_Process)
 *   FAKE_NVML_POWER   "ENFORCED,LIMIT,DEFAULT" in watts
 *                     (nvmlDeviceGetEnforcedPowerLimit,
 *                     nvmlDeviceGetPowerManagementLimit,
 *                     nvmlDeviceGetPowerManagementDefaultLimit answer
 *                     milliwatts)
 *   FAKE_NVML_CLOCKS  "APP,DEFAULT,MAX" graphics clocks in MHz
 *                     (nvmlDeviceGetApplicationsClock,
 *                     nvmlDeviceGetDefaultApplicationsClock,
 *                     nvmlDeviceGetMaxClockInfo; memory: not supported)
 *   FAKE_NVML_FABRIC  "STATE,STATUS,HEALTHMASK[,SUMMARY]": the GPU fabric
 *                     info (state NVML_GPU_FABRIC_STATE_*, status an
 *                     nvmlReturn_t)
 *   FAKE_NVML_FABRIC_V  which fabric call answers: 3 (default)
 *                     nvmlDeviceGetGpuFabricInfoV with a v3 struct; 2 the
 *                     same with v2, NVML_ERROR_ARGUMENT_VERSION_MISMATCH
 *                     for v3 (driver 550); 1 the versioned call answers
 *                     NVML_ERROR_FUNCTION_NOT_FOUND and only
 *                     nvmlDeviceGetGpuFabricInfo answers (driver 535)
 *   FAKE_NVML_NVLINKS "UP,TOTAL": nvmlDeviceGetNvLinkState answers for
 *                     links 0..TOTAL-1, the first UP of them active, and
 *                     NVML_ERROR_INVALID_ARGUMENT past them
 *   FAKE_NVML_BDF     "0000:18:00.0;0000:29:00.0": the PCI address
 *                     nvmlDeviceGetPciInfo_v3 gives each GPU (busId, domain,
 *                     bus, device); unset: NVML_ERROR_NOT_SUPPORTED
 *   FAKE_NVML_NVLINK_VERSION  what nvmlDeviceGetNvLinkVersion answers for
 *                     those links, as a driver answers it (7 for an
 *                     H100, 5 for an A100: lib/nvml_api.h); unset:
 *                     NOT_SUPPORTED
 *   FAKE_NVML_P2P     "NVLINK,READ,WRITE": the nvmlGpuP2PStatus_t that
 *                     nvmlDeviceGetP2PStatus answers for each capability
 *                     (unset: 0, OK, for all); with FAKE_NVML_P2P_PAIR="A,B"
 *                     only for GPUs A and B, every other pair OK
 *   FAKE_NVML_PERSISTENCE  0 off, 1 on (nvmlDeviceGetPersistenceMode)
 *   FAKE_NVML_ECC     "UNCORRECTED,CORRECTED": volatile ECC error counts
 *                     (nvmlDeviceGetTotalEccErrors)
 *   FAKE_NVML_REMAP   "CORR,UNC,PENDING,FAILURE" (nvmlDeviceGetRemappedRows) */
#define _GNU_SOURCE
#include "lib/nvml_api.h"
#include "fake_hang.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The exported functions are NVML's ABI, declared by nvml.h, which this
 * build does not have: no prototypes to precede them. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define FAKE_API __attribute__((visibility("default")))

/* The stub's banner (CUDA 11.8 toolkit, stubs/libnvidia-ml.so), shortened
 * to the lines gpuready may rely on. */
static const char stub_banner[] =
	"\n"
	"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
	"WARNING:\n"
	"\n"
	"You should always run with libnvidia-ml.so that is installed with your\n"
	"NVIDIA Display Driver. By default it's installed in /usr/lib and /usr/lib64.\n"
	"libnvidia-ml.so in GDK package is a stub library that is attached only for\n"
	"build purposes (e.g. machine that you build your application doesn't have\n"
	"to have Display Driver installed).\n"
	"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n";

static int stub_mode(void)
{
	const char *s = getenv("FAKE_NVML_BANNER");
	return s && !strcmp(s, "stub");
}

static unsigned env_gpus(void)
{
	const char *s = getenv("FAKE_NVML_GPUS");
	int n = s && *s ? atoi(s) : 0;
	return n > 0 && n <= 64 ? (unsigned)n : 0;
}

__attribute__((constructor)) static void fake_nvml_loaded(void)
{
	printf("FAKE-NVML-BANNER: loaded (constructor, buffered stdio)\n");
}

__attribute__((destructor)) static void fake_nvml_unloaded(void)
{
	printf("FAKE-NVML-BANNER: unloaded (destructor, buffered stdio)\n");
}

FAKE_API nvmlReturn_t nvmlInit_v2(void)
{
	static const char direct[] = "FAKE-NVML-BANNER: nvmlInit_v2 (write to fd 1)\n";
	const char *s = getenv("FAKE_NVML_INIT");

	fake_hang_if("FAKE_NVML_HANG", "nvmlInit_v2");
	if (stub_mode()) {
		printf("%s", stub_banner);
	} else {
		ssize_t n = write(STDOUT_FILENO, direct, sizeof(direct) - 1);
		(void)n;
		printf("FAKE-NVML-BANNER: nvmlInit_v2 (buffered stdio)\n");
	}
	return s && *s ? (nvmlReturn_t)atoi(s) : NVML_ERROR_DRIVER_NOT_LOADED;
}

FAKE_API nvmlReturn_t nvmlShutdown(void)
{
	printf("FAKE-NVML-BANNER: nvmlShutdown\n");
	return NVML_SUCCESS;
}

/* NVML's texts (nvmlErrorString of driver 535) for the codes tests use. */
FAKE_API const char *nvmlErrorString(nvmlReturn_t r)
{
	if (stub_mode())
		return stub_banner;
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
	default: return "Unknown Error";
	}
}

FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n)
{
	fake_hang_if("FAKE_NVML_HANG", "nvmlDeviceGetCount_v2");
	*n = env_gpus();
	return NVML_SUCCESS;
}

/* A device handle is its index plus one (NULL is no device). */
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *dev)
{
	fake_hang_if("FAKE_NVML_HANG", "nvmlDeviceGetHandleByIndex_v2");
	if (i >= env_gpus()) {
		*dev = NULL;
		return NVML_ERROR_INVALID_ARGUMENT;
	}
	*dev = (nvmlDevice_t)(uintptr_t)(i + 1);
	return NVML_SUCCESS;
}

/* Field k of GPU i's entry in variable name (see the header): false when
 * unset or too short. */
static bool env_field(const char *name, unsigned i, int k, long *out)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return false;
	for (unsigned n = 0; n < i; n++) {
		const char *semi = strchr(s, ';');
		if (!semi)
			break; /* the last entry stands for the rest */
		s = semi + 1;
	}
	for (int n = 0; n < k; n++) {
		const char *comma = strchr(s, ',');
		const char *semi = strchr(s, ';');
		if (!comma || (semi && semi < comma))
			return false;
		s = comma + 1;
	}
	char *end = NULL;
	*out = strtol(s, &end, 0);
	return end != s;
}

static unsigned dev_index(nvmlDevice_t dev)
{
	return (unsigned)((uintptr_t)dev - 1);
}

FAKE_API nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t dev, nvmlComputeMode_t *mode)
{
	long v;
	if (!dev)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!env_field("FAKE_NVML_COMPUTE_MODE", dev_index(dev), 0, &v))
		return NVML_ERROR_NOT_SUPPORTED;
	*mode = (nvmlComputeMode_t)v;
	return NVML_SUCCESS;
}

static nvmlReturn_t power(nvmlDevice_t dev, int k, unsigned *mw)
{
	long v;
	if (!dev)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!env_field("FAKE_NVML_POWER", dev_index(dev), k, &v))
		return NVML_ERROR_NOT_SUPPORTED;
	*mw = (unsigned)v * 1000u;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned *mw)
{
	return power(dev, 0, mw);
}

FAKE_API nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t dev, unsigned *mw)
{
	return power(dev, 1, mw);
}

FAKE_API nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t dev, unsigned *mw)
{
	return power(dev, 2, mw);
}

static nvmlReturn_t clock(nvmlDevice_t dev, nvmlClockType_t type, int k, unsigned *mhz)
{
	long v;
	if (!dev)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (type != NVML_CLOCK_GRAPHICS || !env_field("FAKE_NVML_CLOCKS", dev_index(dev), k, &v))
		return NVML_ERROR_NOT_SUPPORTED;
	*mhz = (unsigned)v;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t dev, nvmlClockType_t type, unsigned *mhz)
{
	return clock(dev, type, 0, mhz);
}

FAKE_API nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t dev, nvmlClockType_t type, unsigned *mhz)
{
	return clock(dev, type, 1, mhz);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, nvmlClockType_t type, unsigned *mhz)
{
	return clock(dev, type, 2, mhz);
}

static int fabric_v(void)
{
	const char *s = getenv("FAKE_NVML_FABRIC_V");
	return s && *s ? atoi(s) : 3;
}

/* The fields every version has; false: not supported. */
static bool fabric(nvmlDevice_t dev, nvmlReturn_t *status, nvmlGpuFabricState_t *state, unsigned *mask,
		   unsigned char *summary)
{
	long st, ret, m = 0, sum = 0;
	unsigned i = dev_index(dev);
	if (!env_field("FAKE_NVML_FABRIC", i, 0, &st) || !env_field("FAKE_NVML_FABRIC", i, 1, &ret))
		return false;
	(void)env_field("FAKE_NVML_FABRIC", i, 2, &m);
	(void)env_field("FAKE_NVML_FABRIC", i, 3, &sum);
	*state = (nvmlGpuFabricState_t)st;
	*status = (nvmlReturn_t)ret;
	*mask = (unsigned)m;
	*summary = (unsigned char)sum;
	return true;
}

FAKE_API nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t dev, nvmlGpuFabricInfoV_t *info)
{
	nvmlReturn_t status;
	nvmlGpuFabricState_t state;
	unsigned mask;
	unsigned char summary;
	int v = fabric_v();
	if (!dev || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (v < 2)
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	if (info->version != nvmlGpuFabricInfo_v2 && !(v == 3 && info->version == nvmlGpuFabricInfo_v3))
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (!fabric(dev, &status, &state, &mask, &summary))
		return NVML_ERROR_NOT_SUPPORTED;
	info->status = status;
	info->state = state;
	info->cliqueId = 7;
	info->healthMask = mask;
	if (info->version == nvmlGpuFabricInfo_v3)
		info->healthSummary = summary;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t dev, nvmlGpuFabricInfo_t *info)
{
	nvmlReturn_t status;
	nvmlGpuFabricState_t state;
	unsigned mask;
	unsigned char summary;
	if (!dev || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!fabric(dev, &status, &state, &mask, &summary))
		return NVML_ERROR_NOT_SUPPORTED;
	memset(info, 0, sizeof(*info));
	info->status = status;
	info->state = state;
	info->cliqueId = 7;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned link, nvmlEnableState_t *active)
{
	long up, total;
	unsigned i = dev_index(dev);
	if (!dev)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!env_field("FAKE_NVML_NVLINKS", i, 0, &up) || !env_field("FAKE_NVML_NVLINKS", i, 1, &total))
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= (unsigned long)total)
		return NVML_ERROR_INVALID_ARGUMENT;
	*active = link < (unsigned long)up ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
	const char *s = getenv("FAKE_NVML_BDF");
	unsigned dom, bus, d, fn;
	if (!dev || !pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned n = 0; s && n < dev_index(dev); n++) {
		const char *semi = strchr(s, ';');
		s = semi ? semi + 1 : s; /* the last entry stands for the rest */
	}
	if (!s || sscanf(s, "%x:%x:%x.%x", &dom, &bus, &d, &fn) != 4)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(pci, 0, sizeof(*pci));
	pci->domain = dom;
	pci->bus = bus;
	pci->device = d;
	snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.%X", dom, bus, d, fn);
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t dev, unsigned link, unsigned *version)
{
	long total, v;
	unsigned i = dev_index(dev);
	if (!dev || !version)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!env_field("FAKE_NVML_NVLINKS", i, 1, &total) || !env_field("FAKE_NVML_NVLINK_VERSION", i, 0, &v))
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= (unsigned long)total)
		return NVML_ERROR_INVALID_ARGUMENT;
	*version = (unsigned)v;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t index,
					     nvmlGpuP2PStatus_t *status)
{
	long v = 0, pa, pb;
	if (!a || !b || !status)
		return NVML_ERROR_INVALID_ARGUMENT;
	int k = index == NVML_P2P_CAPS_INDEX_NVLINK ? 0 : index == NVML_P2P_CAPS_INDEX_READ ? 1 : 2;
	bool pair = !getenv("FAKE_NVML_P2P_PAIR") ||
		    (env_field("FAKE_NVML_P2P_PAIR", 0, 0, &pa) && env_field("FAKE_NVML_P2P_PAIR", 0, 1, &pb) &&
		     ((pa == dev_index(a) && pb == dev_index(b)) || (pa == dev_index(b) && pb == dev_index(a))));
	if (!pair || !env_field("FAKE_NVML_P2P", 0, k, &v))
		v = 0;
	*status = (nvmlGpuP2PStatus_t)v;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, nvmlTemperatureSensors_t sensor, unsigned *t)
{
	fake_hang_if("FAKE_NVML_HANG", "nvmlDeviceGetTemperature");
	if (!dev || sensor != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	*t = 40;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, nvmlEnableState_t *mode)
{
	long v;
	if (!dev)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!env_field("FAKE_NVML_PERSISTENCE", dev_index(dev), 0, &v))
		return NVML_ERROR_NOT_SUPPORTED;
	*mode = v ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, nvmlMemoryErrorType_t type,
						 nvmlEccCounterType_t counter, unsigned long long *count)
{
	long v;
	if (!dev || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (counter != NVML_VOLATILE_ECC ||
	    !env_field("FAKE_NVML_ECC", dev_index(dev), type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED ? 0 : 1, &v))
		return NVML_ERROR_NOT_SUPPORTED;
	*count = (unsigned long long)v;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned *corr, unsigned *unc, unsigned *pending,
					       unsigned *failure)
{
	long v[4];
	if (!dev)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int k = 0; k < 4; k++)
		if (!env_field("FAKE_NVML_REMAP", dev_index(dev), k, &v[k]))
			return NVML_ERROR_NOT_SUPPORTED;
	*corr = (unsigned)v[0];
	*unc = (unsigned)v[1];
	*pending = (unsigned)v[2];
	*failure = (unsigned)v[3];
	return NVML_SUCCESS;
}
