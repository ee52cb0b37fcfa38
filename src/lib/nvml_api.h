/* The NVML subset gpuready calls (libnvidia-ml.so.1, loaded at run time):
 * the live GPU probe (src/probe/nvml_probe.c).
 *
 * libnvidia-ml.so.1 comes with the NVIDIA driver, not with the build
 * machine, so nvml.h is never included: the few types and values used are
 * declared here, each from the nvml.h line it mirrors (NVIDIA's NVML API
 * reference; the copy in NVIDIA/DCGM sdk/nvidia/nvml/dcgm_nvml.h), and the
 * library is dlopen'd through one symbol table (core/dl.h) filled into
 * struct nvml_api. tests/abi holds these declarations against the real
 * nvml.h and the symbol table against the real library. */
#ifndef GPUREADY_NVML_API_H
#define GPUREADY_NVML_API_H

#include "core/dl.h"

#include <stddef.h>

/* enum nvmlReturn_enum: the codes this file tests (UNKNOWN keeps the enum
 * the size of the library's). */
typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	/* newer than CUDA 11.8's nvml.h: a versioned struct this driver does
	 * not know (nvmlDeviceGetGpuFabricInfoV asked for v3 by a driver that
	 * knows only v2) */
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
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

/* enum nvmlComputeMode_enum (nvmlDeviceGetComputeMode): EXCLUSIVE_THREAD
 * is "Support Removed" since CUDA 4.0 but still a value. */
typedef enum nvmlComputeMode_enum {
	NVML_COMPUTEMODE_DEFAULT = 0,
	NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
	NVML_COMPUTEMODE_PROHIBITED = 2,
	NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
} nvmlComputeMode_t;

/* enum nvmlClockType_enum (application, default application and maximum
 * clocks). */
typedef enum nvmlClockType_enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
} nvmlClockType_t;

/* enum nvmlGpuP2PStatus_enum (nvmlDeviceGetP2PStatus); nvml.h spells the
 * second "CHIPSET_NOT_SUPPORED" (newer headers add the right spelling as
 * an alias). */
typedef enum nvmlGpuP2PStatus_enum {
	NVML_P2P_STATUS_OK = 0,
	NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED = 1,
	NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
	NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
	NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
	NVML_P2P_STATUS_NOT_SUPPORTED = 5,
	NVML_P2P_STATUS_UNKNOWN = 6,
} nvmlGpuP2PStatus_t;

/* enum nvmlGpuP2PCapsIndex_enum: which capability nvmlDeviceGetP2PStatus
 * reports. */
typedef enum nvmlGpuP2PCapsIndex_enum {
	NVML_P2P_CAPS_INDEX_READ = 0,
	NVML_P2P_CAPS_INDEX_WRITE = 1,
	NVML_P2P_CAPS_INDEX_NVLINK = 2,
} nvmlGpuP2PCapsIndex_t;

/* GPU fabric information (R525+, CUDA 12.0 nvml.h "Fabric definitions"):
 * the GPU's registration with the NVLink fabric (fabric manager on HGX
 * Hopper, NVLink switch trays on GB200). status is meaningful only once
 * state is COMPLETED. */
#define NVML_GPU_FABRIC_UUID_LEN 16
#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_STATE_NOT_STARTED 1
#define NVML_GPU_FABRIC_STATE_IN_PROGRESS 2
#define NVML_GPU_FABRIC_STATE_COMPLETED 3
typedef unsigned char nvmlGpuFabricState_t;

/* nvmlGpuFabricInfo_t, for nvmlDeviceGetGpuFabricInfo (deprecated by the
 * versioned call, still exported). */
typedef struct {
	unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
	nvmlReturn_t status;
	unsigned int cliqueId;
	nvmlGpuFabricState_t state;
} nvmlGpuFabricInfo_t;
_Static_assert(sizeof(nvmlGpuFabricInfo_t) == 28, "nvmlGpuFabricInfo_t layout");

/* nvmlGpuFabricInfo_v2_t (with the versioned call, driver 550; NVML API
 * change log) adds version and healthMask; v3, of a later driver, adds
 * healthSummary. nvmlDeviceGetGpuFabricInfoV takes either,
 * told which by version = NVML_STRUCT_VERSION(GpuFabricInfo, N):
 * sizeof | N << 24. */
typedef struct {
	unsigned int version;
	unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
	nvmlReturn_t status;
	unsigned int cliqueId;
	nvmlGpuFabricState_t state;
	unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;
_Static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36, "nvmlGpuFabricInfo_v2_t layout");

typedef struct {
	unsigned int version;
	unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
	nvmlReturn_t status;
	unsigned int cliqueId;
	nvmlGpuFabricState_t state;
	unsigned int healthMask;
	unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;
_Static_assert(sizeof(nvmlGpuFabricInfo_v3_t) == 40, "nvmlGpuFabricInfo_v3_t layout");
/* what nvmlDeviceGetGpuFabricInfoV is declared with (v2 in CUDA 12.4's
 * nvml.h, v3 since); the version field tells the driver which it got */
typedef nvmlGpuFabricInfo_v3_t nvmlGpuFabricInfoV_t;

#define nvmlGpuFabricInfo_v2 ((unsigned int)(sizeof(nvmlGpuFabricInfo_v2_t) | (2u << 24)))
#define nvmlGpuFabricInfo_v3 ((unsigned int)(sizeof(nvmlGpuFabricInfo_v3_t) | (3u << 24)))

/* healthMask: 2-bit fields (4 bits for the configuration) at these
 * shifts, each NOT_SUPPORTED 0, TRUE 1, FALSE 2 (NVML_GPU_FABRIC_HEALTH_*);
 * the configuration field is NOT_SUPPORTED 0, NONE 1 (correct), 2..8 one
 * incorrect-configuration cause each. */
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW 0
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY 2
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY 4
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY 6
#define NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION 8
#define NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION 0xf
#define NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE 1
#define NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE 1
/* healthSummary (v3) */
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY 1
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY 2
#define NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY 3

/* nvmlDeviceGetNvLinkVersion's answer is not the NVLink generation, and
 * what it is has been read two ways. nvml.h of CUDA 12.8 and later names
 * the values as an nvmlNvlinkVersion_t: 1 is 1.0, 2 2.0, 3 2.2, 4 3.0, 5
 * 3.1, 6 4.0, 7 5.0, 8 6.0 (e.g. NVIDIA/go-nvml gen/nvml/nvml.h); headers
 * before 12.8 (11.8's, which the ABI test builds against) declare no enum
 * and call it the "NvLink version". What drivers answer: an A100 (NVLink
 * 3) 5 (open-mpi/hwloc issue #658: "A100 returns 5 which is not NVLink
 * 5"), an H100 (NVLink 4) 7, which NVIDIA's TensorRT-LLM decodes as
 * generation 4 (tensorrt_llm/auto_parallel/cluster_info.py nvlink_version:
 * 1->1, 2..4->2, 5,6->3, 7->4) and a pynvml user reports as "returns
 * NVML_NVLINK_VERSION_5_0 for H100 GPUs unexpectedly". nvml_nvlink_gen()
 * therefore decodes only the values both readings and the reports agree
 * on, or that a driver was seen to answer: 1, 2, 5 (A100) and 7 (H100);
 * the others are unknown. Where the GPU's name gives the generation,
 * bench copy uses the name (bench/copy/node.c). */
#define NVML_NVLINK_VERSION_INVALID 0
#define NVML_NVLINK_VERSION_1_0 1
#define NVML_NVLINK_VERSION_2_0 2
#define NVML_NVLINK_VERSION_2_2 3
#define NVML_NVLINK_VERSION_3_0 4
#define NVML_NVLINK_VERSION_3_1 5
#define NVML_NVLINK_VERSION_4_0 6
#define NVML_NVLINK_VERSION_5_0 7
#define NVML_NVLINK_VERSION_6_0 8

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80

/* The entry points, filled by nvml_api_load(). Required symbols are those
 * every driver of the last decade exports; an optional one may be NULL and
 * must be tested before use. */
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
	/* an NVML_NVLINK_VERSION_* value (see above), not the generation */
	nvmlReturn_t (*nvlink_version)(nvmlDevice_t dev, unsigned link, unsigned *version);
	/* NVML_DEVICE_MIG_ENABLE (1) / DISABLE (0), current and after the next reset */
	nvmlReturn_t (*mig_mode)(nvmlDevice_t dev, unsigned *current, unsigned *pending);
	nvmlReturn_t (*compute_mode)(nvmlDevice_t dev, nvmlComputeMode_t *mode);
	/* milliwatts */
	nvmlReturn_t (*power_enforced)(nvmlDevice_t dev, unsigned *mw);
	nvmlReturn_t (*power_limit)(nvmlDevice_t dev, unsigned *mw);
	nvmlReturn_t (*power_default)(nvmlDevice_t dev, unsigned *mw);
	/* MHz */
	nvmlReturn_t (*app_clock)(nvmlDevice_t dev, nvmlClockType_t type, unsigned *mhz);
	nvmlReturn_t (*app_clock_default)(nvmlDevice_t dev, nvmlClockType_t type, unsigned *mhz);
	nvmlReturn_t (*max_clock)(nvmlDevice_t dev, nvmlClockType_t type, unsigned *mhz);
	/* R550+; fabric_info (R525+) is the fallback, without health */
	nvmlReturn_t (*fabric_info_v)(nvmlDevice_t dev, nvmlGpuFabricInfoV_t *info);
	nvmlReturn_t (*fabric_info)(nvmlDevice_t dev, nvmlGpuFabricInfo_t *info);
	nvmlReturn_t (*p2p_status)(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t index,
				   nvmlGpuP2PStatus_t *status);
};

/* Opens libnvidia-ml.so.1 into *api (zeroed first); 0 or the dl_open()
 * error, with lib->error saying why. The caller calls dl_close(lib) either
 * way. */
int nvml_api_load(struct dl_lib *lib, struct nvml_api *api);

/* The symbol table nvml_api_load() resolves, for the tests that hold it
 * against the real library: *n entries. */
const struct dl_sym *nvml_api_symbols(size_t *n);

/* The NVLink generation of a value nvmlDeviceGetNvLinkVersion answered
 * (see above): 1 -> 1, 2 -> 2, 5 -> 3, 7 -> 4; 0 for any other value,
 * whose meaning the sources do not agree on. */
int nvml_nvlink_gen(unsigned version);

#endif
