/* src/lib/nvml_api.h against NVIDIA's nvml.h (see abi.h): the return
 * codes and enum values gpuready names, nvmlPciInfo_t and nvmlMemory_t
 * field by field, the buffer sizes, every entry point's prototype, and
 * which versioned symbol each API name means (nvmlInit is nvmlInit_v2).
 * Built against CUDA 11.8's nvml.h from Debian (scripts/nvidia-libs.sh);
 * without the header it skips and says why. */
#ifdef ABI_REAL
#ifdef ABI_HEADER
#if __has_include(ABI_HEADER)
#include ABI_HEADER
#define HAVE_HEADER 1
#endif
#endif
#else
#include "lib/nvml_api.h"

#include <stdio.h>
#endif

#include "abi.h"

/* nvmlDeviceGetCurrentClocksEventReasons: the R535 name (CUDA 12.2's nvml.h)
 * of nvmlDeviceGetCurrentClocksThrottleReasons, which 12.2 and newer still
 * declare (deprecated) and drivers still export. Neither name is a macro
 * of the other, so both are checked where the header declares them, and
 * the symbols test requires the library to export one. */
#define G_R535 1u

#define ABI_TYPES \
	ABI_S(nvmlReturn_t, 0) ABI_S(nvmlDevice_t, 0) ABI_S(nvmlEnableState_t, 0) ABI_S(nvmlMemoryErrorType_t, 0) \
	ABI_S(nvmlEccCounterType_t, 0) ABI_S(nvmlPageRetirementCause_t, 0) ABI_S(nvmlTemperatureSensors_t, 0) \
	ABI_S(nvmlPciInfo_t, 0) ABI_F(nvmlPciInfo_t, busIdLegacy, 0) ABI_F(nvmlPciInfo_t, domain, 0) \
	ABI_F(nvmlPciInfo_t, bus, 0) ABI_F(nvmlPciInfo_t, device, 0) ABI_F(nvmlPciInfo_t, pciDeviceId, 0) \
	ABI_F(nvmlPciInfo_t, pciSubSystemId, 0) ABI_F(nvmlPciInfo_t, busId, 0) \
	ABI_S(nvmlMemory_t, 0) ABI_F(nvmlMemory_t, total, 0) ABI_F(nvmlMemory_t, free, 0) ABI_F(nvmlMemory_t, used, 0)

#define ABI_ENUMS \
	ABI_E(NVML_SUCCESS, 0) ABI_E(NVML_ERROR_UNINITIALIZED, 0) ABI_E(NVML_ERROR_INVALID_ARGUMENT, 0) \
	ABI_E(NVML_ERROR_NOT_SUPPORTED, 0) ABI_E(NVML_ERROR_NO_PERMISSION, 0) ABI_E(NVML_ERROR_INSUFFICIENT_SIZE, 0) \
	ABI_E(NVML_ERROR_DRIVER_NOT_LOADED, 0) ABI_E(NVML_ERROR_LIBRARY_NOT_FOUND, 0) \
	ABI_E(NVML_ERROR_FUNCTION_NOT_FOUND, 0) ABI_E(NVML_ERROR_GPU_IS_LOST, 0) \
	ABI_E(NVML_ERROR_OPERATING_SYSTEM, 0) ABI_E(NVML_ERROR_LIB_RM_VERSION_MISMATCH, 0) \
	ABI_E(NVML_ERROR_UNKNOWN, 0) ABI_E(NVML_FEATURE_DISABLED, 0) ABI_E(NVML_FEATURE_ENABLED, 0) \
	ABI_E(NVML_MEMORY_ERROR_TYPE_CORRECTED, 0) ABI_E(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, 0) \
	ABI_E(NVML_VOLATILE_ECC, 0) ABI_E(NVML_AGGREGATE_ECC, 0) \
	ABI_E(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, 0) \
	ABI_E(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, 0) ABI_E(NVML_TEMPERATURE_GPU, 0) \
	ABI_E(NVML_DEVICE_NAME_V2_BUFFER_SIZE, 0) ABI_E(NVML_DEVICE_UUID_V2_BUFFER_SIZE, 0) \
	ABI_E(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, 0)

typedef unsigned long long ull;
#define ABI_PROTOS \
	P(nvmlInit_v2, init_v2, nvmlReturn_t (*)(void), 0) \
	P(nvmlShutdown, shutdown, nvmlReturn_t (*)(void), 0) \
	P(nvmlErrorString, error_string, const char *(*)(nvmlReturn_t), 0) \
	P(nvmlDeviceGetCount_v2, count_v2, nvmlReturn_t (*)(unsigned *), 0) \
	P(nvmlDeviceGetHandleByIndex_v2, handle_by_index_v2, nvmlReturn_t (*)(unsigned, nvmlDevice_t *), 0) \
	P(nvmlSystemGetDriverVersion, driver_version, nvmlReturn_t (*)(char *, unsigned), 0) \
	P(nvmlSystemGetCudaDriverVersion, cuda_driver_version, nvmlReturn_t (*)(int *), 0) \
	P(nvmlDeviceGetName, name, nvmlReturn_t (*)(nvmlDevice_t, char *, unsigned), 0) \
	P(nvmlDeviceGetUUID, uuid, nvmlReturn_t (*)(nvmlDevice_t, char *, unsigned), 0) \
	P(nvmlDeviceGetPciInfo_v3, pci_info_v3, nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t *), 0) \
	P(nvmlDeviceGetMemoryInfo, memory_info, nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t *), 0) \
	P(nvmlDeviceGetPersistenceMode, persistence_mode, nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t *), 0) \
	P(nvmlDeviceGetEccMode, ecc_mode, \
	  nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t *, nvmlEnableState_t *), 0) \
	P(nvmlDeviceGetTotalEccErrors, total_ecc_errors, \
	  nvmlReturn_t (*)(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t, ull *), 0) \
	P(nvmlDeviceGetRemappedRows, remapped_rows, \
	  nvmlReturn_t (*)(nvmlDevice_t, unsigned *, unsigned *, unsigned *, unsigned *), 0) \
	P(nvmlDeviceGetRetiredPages, retired_pages, \
	  nvmlReturn_t (*)(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned *, ull *), 0) \
	P(nvmlDeviceGetRetiredPagesPendingStatus, retired_pending, \
	  nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t *), 0) \
	P(nvmlDeviceGetTemperature, temperature, \
	  nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned *), 0) \
	P(nvmlDeviceGetCurrentClocksEventReasons, clocks_event_reasons, nvmlReturn_t (*)(nvmlDevice_t, ull *), \
	  G_R535) \
	P(nvmlDeviceGetCurrentClocksThrottleReasons, clocks_throttle_reasons, nvmlReturn_t (*)(nvmlDevice_t, ull *), \
	  0) \
	P(nvmlDeviceGetCurrPcieLinkGeneration, pcie_gen_cur, nvmlReturn_t (*)(nvmlDevice_t, unsigned *), 0) \
	P(nvmlDeviceGetMaxPcieLinkGeneration, pcie_gen_max, nvmlReturn_t (*)(nvmlDevice_t, unsigned *), 0) \
	P(nvmlDeviceGetCurrPcieLinkWidth, pcie_width_cur, nvmlReturn_t (*)(nvmlDevice_t, unsigned *), 0) \
	P(nvmlDeviceGetMaxPcieLinkWidth, pcie_width_max, nvmlReturn_t (*)(nvmlDevice_t, unsigned *), 0) \
	P(nvmlDeviceGetNvLinkState, nvlink_state, nvmlReturn_t (*)(nvmlDevice_t, unsigned, nvmlEnableState_t *), 0) \
	P(nvmlDeviceGetMigMode, mig_mode, nvmlReturn_t (*)(nvmlDevice_t, unsigned *, unsigned *), 0)

#define ABI_NAMES \
	ABI_NAME(nvmlInit) ABI_NAME(nvmlShutdown) ABI_NAME(nvmlErrorString) ABI_NAME(nvmlDeviceGetCount) \
	ABI_NAME(nvmlDeviceGetHandleByIndex) ABI_NAME(nvmlSystemGetDriverVersion) \
	ABI_NAME(nvmlSystemGetCudaDriverVersion) ABI_NAME(nvmlDeviceGetName) ABI_NAME(nvmlDeviceGetUUID) \
	ABI_NAME(nvmlDeviceGetPciInfo) ABI_NAME(nvmlDeviceGetMemoryInfo) ABI_NAME(nvmlDeviceGetPersistenceMode) \
	ABI_NAME(nvmlDeviceGetEccMode) ABI_NAME(nvmlDeviceGetTotalEccErrors) ABI_NAME(nvmlDeviceGetRemappedRows) \
	ABI_NAME(nvmlDeviceGetRetiredPages) ABI_NAME(nvmlDeviceGetRetiredPagesPendingStatus) \
	ABI_NAME(nvmlDeviceGetTemperature) ABI_NAME(nvmlDeviceGetCurrentClocksThrottleReasons) \
	ABI_NAME(nvmlDeviceGetCurrPcieLinkGeneration) ABI_NAME(nvmlDeviceGetMaxPcieLinkGeneration) \
	ABI_NAME(nvmlDeviceGetCurrPcieLinkWidth) ABI_NAME(nvmlDeviceGetMaxPcieLinkWidth) \
	ABI_NAME(nvmlDeviceGetNvLinkState) ABI_NAME(nvmlDeviceGetMigMode)

#ifdef ABI_REAL
extern const struct abi_real abi_nvml_real;
#ifdef HAVE_HEADER
#define P_NOW(name, sym, type, g) ABI_P_REAL(name, sym, type, g)
#define P_LATER(name, sym, type, g)
#define P(sym, member, type, g) P_##g(#sym, sym, type, g)
#define P_0 P_NOW
#ifdef nvmlClocksEventReasonGpuIdle
#define P_G_R535 P_NOW
#define HAVE_R535 G_R535
#else
#define P_G_R535 P_LATER
#define HAVE_R535 0u
#endif
static const struct abi_entry real[] = { ABI_TYPES ABI_ENUMS ABI_PROTOS };
static const struct abi_name names[] = { ABI_NAMES };
const struct abi_real abi_nvml_real = {
	.have_header = 1,
	.header_version = "nvml.h of NVML_API_VERSION " ABI_XSTR(NVML_API_VERSION) " (" ABI_HEADER ")",
	.from_nvidia_dir = ABI_FROM_NVIDIA_DIR,
	.groups = HAVE_R535,
	.v = real, .n = ABI_N(real), .names = names, .n_names = ABI_N(names),
};
#else
const struct abi_real abi_nvml_real = {
	.header_version = "nvml.h not found: " ABI_HEADER_WHERE,
	.from_nvidia_dir = ABI_FROM_NVIDIA_DIR,
};
#endif
#else
#define P(sym, member, type, g) ABI_P_OURS(struct nvml_api, sym, member, type, g)
extern const struct abi_real abi_nvml_real;
static const struct abi_entry ours[] = { ABI_TYPES ABI_ENUMS ABI_PROTOS };
#undef P
#define P(sym, member, type, g) #member,
static const char *const members[] = { ABI_PROTOS };

int main(void)
{
	static const char *const groups[] = { "nvml.h of driver 535 (CUDA 12.2) and newer" };
	const char *syms[64] = { 0 };
	size_t n = 0;
	const struct dl_sym *table = nvml_api_symbols(&n);
	int skip = abi_skip_without_header("NVML", &abi_nvml_real);

	if (skip)
		return skip;
	for (size_t i = 0; i < n && i < ABI_N(syms); i++)
		syms[i] = table[i].name;
	n = n < ABI_N(syms) ? n : ABI_N(syms);
	int bad = abi_compare("NVML", ours, ABI_N(ours), NULL, &abi_nvml_real, groups);
	bad += abi_names_resolved("NVML", &abi_nvml_real, syms, n);
	bad += abi_protos_cover("NVML", ours, ABI_N(ours), syms, n);
	bad += abi_cover("NVML", "src/lib/nvml_api.h", ours, ABI_N(ours), NULL, members, ABI_N(members), NULL);
	return bad ? 1 : 0;
}
#endif
