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
	/* NVML_DEVICE_MIG_ENABLE (1) / DISABLE (0), current and after the next reset */
	nvmlReturn_t (*mig_mode)(nvmlDevice_t dev, unsigned *current, unsigned *pending);
};

/* Opens libnvidia-ml.so.1 into *api (zeroed first); 0 or the dl_open()
 * error, with lib->error saying why. The caller calls dl_close(lib) either
 * way. */
int nvml_api_load(struct dl_lib *lib, struct nvml_api *api);

/* The symbol table nvml_api_load() resolves, for the tests that hold it
 * against the real library: *n entries. */
const struct dl_sym *nvml_api_symbols(size_t *n);

#endif
