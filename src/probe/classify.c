/* What a failed nvmlInit_v2 or cuInit means (probe.h): the class of the
 * failure, by the libraries' own codes (lib/nvml_api.h, lib/cuda_api.h),
 * and whether the library loaded is a CUDA toolkit stub. */
#include "probe.h"
#include "lib/cuda_api.h"
#include "lib/nvml_api.h"

#include <stdbool.h>
#include <string.h>

/* nvmlReturn_t values as NVIDIA's NVML API reference documents them for
 * nvmlInit_v2. NVML_ERROR_OPERATING_SYSTEM is "the GPU control device has
 * been blocked by the operating system/cgroups" (nvml.h): a permission
 * matter, as a container without the device nodes allowed. */
enum gpu_lib_fail nvml_fail_class(int code)
{
	switch (code) {
	case NVML_SUCCESS:
		return GPU_LIB_FAIL_NONE;
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return GPU_LIB_FAIL_NO_DRIVER;
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		return GPU_LIB_FAIL_MISMATCH;
	case NVML_ERROR_NO_PERMISSION:
	case NVML_ERROR_OPERATING_SYSTEM:
		return GPU_LIB_FAIL_PERMISSION;
	default:
		return GPU_LIB_FAIL_OTHER;
	}
}

/* CUresult values from the CUDA driver API reference (cuda.h). The
 * runtime's cudaErrorInsufficientDriver (35) has no driver API
 * counterpart: a libcuda newer than the kernel module answers
 * CUDA_ERROR_SYSTEM_DRIVER_MISMATCH. */
enum gpu_lib_fail cuda_fail_class(int code)
{
	switch (code) {
	case CUDA_SUCCESS:
		return GPU_LIB_FAIL_NONE;
	case CUDA_ERROR_STUB_LIBRARY:
		return GPU_LIB_FAIL_STUB;
	case CUDA_ERROR_NO_DEVICE:
		return GPU_LIB_FAIL_NO_DRIVER;
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
		return GPU_LIB_FAIL_MISMATCH;
	case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
		return GPU_LIB_FAIL_COMPAT;
	default:
		return GPU_LIB_FAIL_OTHER;
	}
}

/* The toolkit installs its stubs in <toolkit>/lib64/stubs (NVIDIA's
 * installer) or /usr/lib/x86_64-linux-gnu/stubs (Debian's nvidia-cuda-dev);
 * the NVML stub's banner says it "is a stub library". */
bool gpu_lib_is_stub(const char *path, const char *resolved, const char *said)
{
	return (path && strstr(path, "/stubs/")) || (resolved && strstr(resolved, "/stubs/")) ||
	       (said && strstr(said, "stub library"));
}
