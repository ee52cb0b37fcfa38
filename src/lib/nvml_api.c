/* Loads NVML (libnvidia-ml.so.1) into struct nvml_api; see nvml_api.h. */
#include "nvml_api.h"

#include <stdbool.h>
#include <string.h>

#define NVML_REQ(sym, member) { .name = #sym, .offset = offsetof(struct nvml_api, member) }
#define NVML_OPT(sym, member) { .name = #sym, .optional = true, .offset = offsetof(struct nvml_api, member) }

static const struct dl_sym nvml_syms[] = {
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
	NVML_OPT(nvmlDeviceGetNvLinkVersion, nvlink_version),
	NVML_OPT(nvmlDeviceGetMigMode, mig_mode),
	NVML_OPT(nvmlDeviceGetComputeMode, compute_mode),
	NVML_OPT(nvmlDeviceGetEnforcedPowerLimit, power_enforced),
	NVML_OPT(nvmlDeviceGetPowerManagementLimit, power_limit),
	NVML_OPT(nvmlDeviceGetPowerManagementDefaultLimit, power_default),
	NVML_OPT(nvmlDeviceGetApplicationsClock, app_clock),
	NVML_OPT(nvmlDeviceGetDefaultApplicationsClock, app_clock_default),
	NVML_OPT(nvmlDeviceGetMaxClockInfo, max_clock),
	/* R550+ (versioned, with the health mask); the R525 call is the fallback */
	NVML_OPT(nvmlDeviceGetGpuFabricInfoV, fabric_info_v),
	NVML_OPT(nvmlDeviceGetGpuFabricInfo, fabric_info),
	NVML_OPT(nvmlDeviceGetP2PStatus, p2p_status),
};

#define N_NVML_SYMS (sizeof(nvml_syms) / sizeof(nvml_syms[0]))

int nvml_api_load(struct dl_lib *lib, struct nvml_api *api)
{
	static const char *const libs[] = { "libnvidia-ml.so.1", NULL };

	memset(api, 0, sizeof(*api));
	return dl_open(lib, libs, nvml_syms, N_NVML_SYMS, api);
}

const struct dl_sym *nvml_api_symbols(size_t *n)
{
	*n = N_NVML_SYMS;
	return nvml_syms;
}


int nvml_nvlink_gen(unsigned version)
{
	switch (version) {
	case 1: return 1;
	case 2: return 2;
	case 5: return 3; /* A100 */
	case 7: return 4; /* H100 */
	default: return 0;
	}
}
