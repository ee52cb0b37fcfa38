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
/* The GPU fabric information (nvml.h "Fabric definitions"), newer than
 * CUDA 11.8's nvml.h, so checked only against a header that has each:
 * the R525 call and its struct (CUDA 12.0), the versioned call with the
 * v2 struct and its health mask (R550, CUDA 12.4), the v3 struct with
 * the health summary, and the health mask's later fields (route health,
 * configuration). */
#define G_FABRIC 2u
#define G_FABRIC_V2 4u
#define G_FABRIC_V3 8u
#define G_HEALTH 16u
/* nvmlNvlinkVersion_t, the values nvmlDeviceGetNvLinkVersion answers:
 * declared from CUDA 12.8's nvml.h (NVIDIA/go-nvml's copy, "Bump to NVML
 * version 12.8"; hwloc commit 8d00b43 says 12.7); checked where nvml.h has
 * nvmlUUID_v1 (12.9), a macro as new or newer, since an enum cannot be
 * tested by the preprocessor. NVML_NVLINK_VERSION_6_0: CUDA 13.3's, where
 * NVML_DEVICE_ARCH_RUBIN came with it. */
#define G_NVLINK_VER 32u
#define G_NVLINK_V6 64u
/* IF_<group>(entry): the entry where the header has the group (the real
 * side) and always on ours; defined below for each side. */

#define ABI_TYPES \
	ABI_S(nvmlReturn_t, 0) ABI_S(nvmlDevice_t, 0) ABI_S(nvmlEnableState_t, 0) ABI_S(nvmlMemoryErrorType_t, 0) \
	ABI_S(nvmlEccCounterType_t, 0) ABI_S(nvmlPageRetirementCause_t, 0) ABI_S(nvmlTemperatureSensors_t, 0) \
	ABI_S(nvmlPciInfo_t, 0) ABI_F(nvmlPciInfo_t, busIdLegacy, 0) ABI_F(nvmlPciInfo_t, domain, 0) \
	ABI_F(nvmlPciInfo_t, bus, 0) ABI_F(nvmlPciInfo_t, device, 0) ABI_F(nvmlPciInfo_t, pciDeviceId, 0) \
	ABI_F(nvmlPciInfo_t, pciSubSystemId, 0) ABI_F(nvmlPciInfo_t, busId, 0) \
	ABI_S(nvmlMemory_t, 0) ABI_F(nvmlMemory_t, total, 0) ABI_F(nvmlMemory_t, free, 0) ABI_F(nvmlMemory_t, used, 0) \
	ABI_S(nvmlComputeMode_t, 0) ABI_S(nvmlClockType_t, 0) ABI_S(nvmlGpuP2PStatus_t, 0) \
	ABI_S(nvmlGpuP2PCapsIndex_t, 0) \
	IF_G_FABRIC(ABI_S(nvmlGpuFabricState_t, G_FABRIC)) IF_G_FABRIC(ABI_S(nvmlGpuFabricInfo_t, G_FABRIC)) \
	IF_G_FABRIC(ABI_F(nvmlGpuFabricInfo_t, clusterUuid, G_FABRIC)) IF_G_FABRIC(ABI_F(nvmlGpuFabricInfo_t, status, G_FABRIC)) \
	IF_G_FABRIC(ABI_F(nvmlGpuFabricInfo_t, cliqueId, G_FABRIC)) IF_G_FABRIC(ABI_F(nvmlGpuFabricInfo_t, state, G_FABRIC)) \
	IF_G_FABRIC_V2(ABI_S(nvmlGpuFabricInfo_v2_t, G_FABRIC_V2)) IF_G_FABRIC_V2(ABI_F(nvmlGpuFabricInfo_v2_t, version, G_FABRIC_V2)) \
	IF_G_FABRIC_V2(ABI_F(nvmlGpuFabricInfo_v2_t, clusterUuid, G_FABRIC_V2)) IF_G_FABRIC_V2(ABI_F(nvmlGpuFabricInfo_v2_t, status, G_FABRIC_V2)) \
	IF_G_FABRIC_V2(ABI_F(nvmlGpuFabricInfo_v2_t, cliqueId, G_FABRIC_V2)) IF_G_FABRIC_V2(ABI_F(nvmlGpuFabricInfo_v2_t, state, G_FABRIC_V2)) \
	IF_G_FABRIC_V2(ABI_F(nvmlGpuFabricInfo_v2_t, healthMask, G_FABRIC_V2)) \
	IF_G_FABRIC_V3(ABI_S(nvmlGpuFabricInfo_v3_t, G_FABRIC_V3)) IF_G_FABRIC_V3(ABI_F(nvmlGpuFabricInfo_v3_t, version, G_FABRIC_V3)) \
	IF_G_FABRIC_V3(ABI_F(nvmlGpuFabricInfo_v3_t, clusterUuid, G_FABRIC_V3)) IF_G_FABRIC_V3(ABI_F(nvmlGpuFabricInfo_v3_t, status, G_FABRIC_V3)) \
	IF_G_FABRIC_V3(ABI_F(nvmlGpuFabricInfo_v3_t, cliqueId, G_FABRIC_V3)) IF_G_FABRIC_V3(ABI_F(nvmlGpuFabricInfo_v3_t, state, G_FABRIC_V3)) \
	IF_G_FABRIC_V3(ABI_F(nvmlGpuFabricInfo_v3_t, healthMask, G_FABRIC_V3)) IF_G_FABRIC_V3(ABI_F(nvmlGpuFabricInfo_v3_t, healthSummary, G_FABRIC_V3)) \
	IF_G_FABRIC_V3(ABI_S(nvmlGpuFabricInfoV_t, G_FABRIC_V3))

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
	ABI_E(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, 0) \
	ABI_E(NVML_COMPUTEMODE_DEFAULT, 0) ABI_E(NVML_COMPUTEMODE_EXCLUSIVE_THREAD, 0) \
	ABI_E(NVML_COMPUTEMODE_PROHIBITED, 0) ABI_E(NVML_COMPUTEMODE_EXCLUSIVE_PROCESS, 0) \
	ABI_E(NVML_CLOCK_GRAPHICS, 0) ABI_E(NVML_CLOCK_SM, 0) ABI_E(NVML_CLOCK_MEM, 0) \
	ABI_E(NVML_P2P_STATUS_OK, 0) ABI_E(NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED, 0) \
	ABI_E(NVML_P2P_STATUS_GPU_NOT_SUPPORTED, 0) ABI_E(NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED, 0) \
	ABI_E(NVML_P2P_STATUS_DISABLED_BY_REGKEY, 0) ABI_E(NVML_P2P_STATUS_NOT_SUPPORTED, 0) \
	ABI_E(NVML_P2P_STATUS_UNKNOWN, 0) ABI_E(NVML_P2P_CAPS_INDEX_READ, 0) ABI_E(NVML_P2P_CAPS_INDEX_WRITE, 0) \
	ABI_E(NVML_P2P_CAPS_INDEX_NVLINK, 0) \
	IF_G_FABRIC(ABI_E(NVML_GPU_FABRIC_UUID_LEN, G_FABRIC)) IF_G_FABRIC(ABI_E(NVML_GPU_FABRIC_STATE_NOT_SUPPORTED, G_FABRIC)) \
	IF_G_FABRIC(ABI_E(NVML_GPU_FABRIC_STATE_NOT_STARTED, G_FABRIC)) IF_G_FABRIC(ABI_E(NVML_GPU_FABRIC_STATE_IN_PROGRESS, G_FABRIC)) \
	IF_G_FABRIC(ABI_E(NVML_GPU_FABRIC_STATE_COMPLETED, G_FABRIC)) \
	IF_G_FABRIC_V2(ABI_E(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, G_FABRIC_V2)) IF_G_FABRIC_V2(ABI_E(nvmlGpuFabricInfo_v2, G_FABRIC_V2)) \
	IF_G_FABRIC_V2(ABI_E(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW, G_FABRIC_V2)) \
	IF_G_FABRIC_V2(ABI_E(NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE, G_FABRIC_V2)) \
	IF_G_FABRIC_V3(ABI_E(nvmlGpuFabricInfo_v3, G_FABRIC_V3)) IF_G_FABRIC_V3(ABI_E(NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED, G_FABRIC_V3)) \
	IF_G_FABRIC_V3(ABI_E(NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY, G_FABRIC_V3)) \
	IF_G_FABRIC_V3(ABI_E(NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY, G_FABRIC_V3)) \
	IF_G_FABRIC_V3(ABI_E(NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY, G_FABRIC_V3)) \
	IF_G_HEALTH(ABI_E(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY, G_HEALTH)) \
	IF_G_HEALTH(ABI_E(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY, G_HEALTH)) \
	IF_G_HEALTH(ABI_E(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY, G_HEALTH)) \
	IF_G_HEALTH(ABI_E(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION, G_HEALTH)) \
	IF_G_HEALTH(ABI_E(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION, G_HEALTH)) \
	IF_G_HEALTH(ABI_E(NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE, G_HEALTH)) \
	IF_G_NVLINK_VER(ABI_E(NVML_NVLINK_VERSION_INVALID, G_NVLINK_VER)) \
	IF_G_NVLINK_VER(ABI_E(NVML_NVLINK_VERSION_1_0, G_NVLINK_VER)) \
	IF_G_NVLINK_VER(ABI_E(NVML_NVLINK_VERSION_2_0, G_NVLINK_VER)) \
	IF_G_NVLINK_VER(ABI_E(NVML_NVLINK_VERSION_2_2, G_NVLINK_VER)) \
	IF_G_NVLINK_VER(ABI_E(NVML_NVLINK_VERSION_3_0, G_NVLINK_VER)) \
	IF_G_NVLINK_VER(ABI_E(NVML_NVLINK_VERSION_3_1, G_NVLINK_VER)) \
	IF_G_NVLINK_VER(ABI_E(NVML_NVLINK_VERSION_4_0, G_NVLINK_VER)) \
	IF_G_NVLINK_VER(ABI_E(NVML_NVLINK_VERSION_5_0, G_NVLINK_VER)) \
	IF_G_NVLINK_V6(ABI_E(NVML_NVLINK_VERSION_6_0, G_NVLINK_V6))

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
	P(nvmlDeviceGetNvLinkVersion, nvlink_version, nvmlReturn_t (*)(nvmlDevice_t, unsigned, unsigned *), 0) \
	P(nvmlDeviceGetMigMode, mig_mode, nvmlReturn_t (*)(nvmlDevice_t, unsigned *, unsigned *), 0) \
	P(nvmlDeviceGetComputeMode, compute_mode, nvmlReturn_t (*)(nvmlDevice_t, nvmlComputeMode_t *), 0) \
	P(nvmlDeviceGetEnforcedPowerLimit, power_enforced, nvmlReturn_t (*)(nvmlDevice_t, unsigned *), 0) \
	P(nvmlDeviceGetPowerManagementLimit, power_limit, nvmlReturn_t (*)(nvmlDevice_t, unsigned *), 0) \
	P(nvmlDeviceGetPowerManagementDefaultLimit, power_default, nvmlReturn_t (*)(nvmlDevice_t, unsigned *), 0) \
	P(nvmlDeviceGetApplicationsClock, app_clock, nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned *), 0) \
	P(nvmlDeviceGetDefaultApplicationsClock, app_clock_default, \
	  nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned *), 0) \
	P(nvmlDeviceGetMaxClockInfo, max_clock, nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned *), 0) \
	P(nvmlDeviceGetGpuFabricInfoV, fabric_info_v, nvmlReturn_t (*)(nvmlDevice_t, nvmlGpuFabricInfoV_t *), \
	  G_FABRIC_V2) \
	P(nvmlDeviceGetGpuFabricInfo, fabric_info, nvmlReturn_t (*)(nvmlDevice_t, nvmlGpuFabricInfo_t *), G_FABRIC) \
	P(nvmlDeviceGetP2PStatus, p2p_status, \
	  nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t *), 0)

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
	ABI_NAME(nvmlDeviceGetNvLinkState) ABI_NAME(nvmlDeviceGetNvLinkVersion) ABI_NAME(nvmlDeviceGetMigMode) ABI_NAME(nvmlDeviceGetComputeMode) \
	ABI_NAME(nvmlDeviceGetEnforcedPowerLimit) ABI_NAME(nvmlDeviceGetPowerManagementLimit) \
	ABI_NAME(nvmlDeviceGetPowerManagementDefaultLimit) ABI_NAME(nvmlDeviceGetApplicationsClock) \
	ABI_NAME(nvmlDeviceGetDefaultApplicationsClock) ABI_NAME(nvmlDeviceGetMaxClockInfo) \
	ABI_NAME(nvmlDeviceGetP2PStatus)

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
#ifdef NVML_GPU_FABRIC_STATE_COMPLETED
#define P_G_FABRIC P_NOW
#define HAVE_FABRIC G_FABRIC
#else
#define P_G_FABRIC P_LATER
#define HAVE_FABRIC 0u
#endif
#ifdef nvmlGpuFabricInfo_v2
#define P_G_FABRIC_V2 P_NOW
#define HAVE_FABRIC_V2 G_FABRIC_V2
#else
#define P_G_FABRIC_V2 P_LATER
#define HAVE_FABRIC_V2 0u
#endif
#ifdef nvmlGpuFabricInfo_v3
#define HAVE_FABRIC_V3 G_FABRIC_V3
#else
#define HAVE_FABRIC_V3 0u
#endif
#ifdef NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION
#define HAVE_HEALTH G_HEALTH
#else
#define HAVE_HEALTH 0u
#endif
#ifdef nvmlUUID_v1
#define HAVE_NVLINK_VER G_NVLINK_VER
#define IF_G_NVLINK_VER(x) x
#else
#define HAVE_NVLINK_VER 0u
#define IF_G_NVLINK_VER(x)
#endif
#ifdef NVML_DEVICE_ARCH_RUBIN
#define HAVE_NVLINK_V6 G_NVLINK_V6
#define IF_G_NVLINK_V6(x) x
#else
#define HAVE_NVLINK_V6 0u
#define IF_G_NVLINK_V6(x)
#endif
#ifdef NVML_GPU_FABRIC_STATE_COMPLETED
#define IF_G_FABRIC(x) x
#else
#define IF_G_FABRIC(x)
#endif
#ifdef nvmlGpuFabricInfo_v2
#define IF_G_FABRIC_V2(x) x
#else
#define IF_G_FABRIC_V2(x)
#endif
#ifdef nvmlGpuFabricInfo_v3
#define IF_G_FABRIC_V3(x) x
#else
#define IF_G_FABRIC_V3(x)
#endif
#ifdef NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION
#define IF_G_HEALTH(x) x
#else
#define IF_G_HEALTH(x)
#endif
static const struct abi_entry real[] = { ABI_TYPES ABI_ENUMS ABI_PROTOS };
static const struct abi_name names[] = { ABI_NAMES };
const struct abi_real abi_nvml_real = {
	.have_header = 1,
	.header_version = "nvml.h of NVML_API_VERSION " ABI_XSTR(NVML_API_VERSION) " (" ABI_HEADER ")",
	.from_nvidia_dir = ABI_FROM_NVIDIA_DIR,
	.groups = HAVE_R535 | HAVE_FABRIC | HAVE_FABRIC_V2 | HAVE_FABRIC_V3 | HAVE_HEALTH | HAVE_NVLINK_VER | HAVE_NVLINK_V6,
	.v = real, .n = ABI_N(real), .names = names, .n_names = ABI_N(names),
};
#else
const struct abi_real abi_nvml_real = {
	.header_version = "nvml.h not found: " ABI_HEADER_WHERE,
	.from_nvidia_dir = ABI_FROM_NVIDIA_DIR,
};
#endif
#else
#define IF_G_FABRIC(x) x
#define IF_G_FABRIC_V2(x) x
#define IF_G_FABRIC_V3(x) x
#define IF_G_HEALTH(x) x
#define IF_G_NVLINK_VER(x) x
#define IF_G_NVLINK_V6(x) x
#define P(sym, member, type, g) ABI_P_OURS(struct nvml_api, sym, member, type, g)
extern const struct abi_real abi_nvml_real;
static const struct abi_entry ours[] = { ABI_TYPES ABI_ENUMS ABI_PROTOS };
#undef P
#define P(sym, member, type, g) #member,
static const char *const members[] = { ABI_PROTOS };

int main(void)
{
	static const char *const groups[] = { "nvml.h of driver 535 (CUDA 12.2) and newer",
					      "nvml.h of CUDA 12.0 and newer (GPU fabric information)",
					      "nvml.h of CUDA 12.4 and newer (versioned fabric information, health mask)",
					      "nvml.h with nvmlGpuFabricInfo_v3 (health summary)",
					      "nvml.h with the fabric health mask's configuration field",
					      "nvml.h of CUDA 12.9 and newer (nvmlNvlinkVersion_t, checked from there)",
					      "nvml.h of CUDA 13.3 and newer (NVML_NVLINK_VERSION_6_0)"};
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
