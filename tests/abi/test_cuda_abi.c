/* src/lib/cuda_api.h against NVIDIA's cuda.h (see abi.h): the CUresult
 * codes and other enum values gpuready names, the handle types' sizes,
 * every entry point's prototype, and which versioned symbol each API name
 * means (cuMemAlloc is cuMemAlloc_v2). Built against CUDA 11.8's cuda.h
 * from Debian (scripts/nvidia-libs.sh) and, where installed, the CUDA
 * toolkit's; without the header it skips and says why.
 *
 * The pairs whose mapping moved between releases: cuda.h 11.8 maps
 * cuGraphInstantiate to cuGraphInstantiate_v2, 12.0 and newer to
 * cuGraphInstantiateWithFlags; 12.8 and newer map cuEventElapsedTime to
 * cuEventElapsedTime_v2; cuDevicePrimaryCtxRelease is
 * cuDevicePrimaryCtxRelease_v2 since 11.0. The header at hand decides which
 * name its API name must resolve to (our table holds both of each pair,
 * and cuda_api_load() requires one of a pair). A plain name the header
 * only declares under its versioned name (13.0: cuEventElapsedTime) has
 * its prototype checked against that declaration, and the test says so. */
#ifdef ABI_REAL
#ifdef ABI_HEADER
#if __has_include(ABI_HEADER)
#include ABI_HEADER
#define HAVE_HEADER 1
#endif
#endif
#else
#include "lib/cuda_api.h"

#include <stdio.h>
#endif

#include "abi.h"

/* Version groups: entry points a header of that age does not declare. */
#define G_CUDA128 1u /* cuEventElapsedTime_v2: CUDA 12.8 and newer */
#define G_PRE12 2u   /* cuGraphInstantiate_v2: declared by headers before 12.0 (13.0 only for the driver's build) */

#define ABI_TYPES \
	ABI_S(CUresult, 0) ABI_S(CUdevice, 0) ABI_S(CUdeviceptr, 0) ABI_S(CUcontext, 0) ABI_S(CUstream, 0) \
	ABI_S(CUevent, 0) ABI_S(CUgraph, 0) ABI_S(CUgraphExec, 0) ABI_S(CUgraphNode, 0) \
	ABI_S(CUdevice_attribute, 0) ABI_S(CUstreamCaptureMode, 0) ABI_S(CUmemRangeHandleType, 0) \
	ABI_S(CUmodule, 0) ABI_S(CUfunction, 0)

#define ABI_ENUMS \
	ABI_E(CUDA_SUCCESS, 0) ABI_E(CUDA_ERROR_INVALID_VALUE, 0) ABI_E(CUDA_ERROR_OUT_OF_MEMORY, 0) \
	ABI_E(CUDA_ERROR_NOT_INITIALIZED, 0) ABI_E(CUDA_ERROR_DEINITIALIZED, 0) ABI_E(CUDA_ERROR_STUB_LIBRARY, 0) \
	ABI_E(CUDA_ERROR_NO_DEVICE, 0) ABI_E(CUDA_ERROR_INVALID_CONTEXT, 0) ABI_E(CUDA_ERROR_OPERATING_SYSTEM, 0) \
	ABI_E(CUDA_ERROR_NOT_READY, 0) ABI_E(CUDA_ERROR_NOT_SUPPORTED, 0) \
	ABI_E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 0) ABI_E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 0) \
	ABI_E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 0) ABI_E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 0) \
	ABI_E(CUDA_ERROR_UNKNOWN, 0) \
	ABI_E(CUDA_ERROR_DEVICE_UNAVAILABLE, 0) ABI_E(CUDA_ERROR_INVALID_DEVICE, 0) ABI_E(CUDA_ERROR_INVALID_IMAGE, 0) \
	ABI_E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 0) ABI_E(CUDA_ERROR_INVALID_PTX, 0) \
	ABI_E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 0) ABI_E(CUDA_ERROR_INVALID_HANDLE, 0) ABI_E(CUDA_ERROR_NOT_FOUND, 0) \
	ABI_E(CUDA_ERROR_ILLEGAL_ADDRESS, 0) ABI_E(CUDA_ERROR_LAUNCH_TIMEOUT, 0) \
	ABI_E(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 0) ABI_E(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 0) \
	ABI_E(CUDA_ERROR_TOO_MANY_PEERS, 0) \
	ABI_E(CUDA_ERROR_MISALIGNED_ADDRESS, 0) ABI_E(CUDA_ERROR_LAUNCH_FAILED, 0) \
	ABI_E(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0) ABI_E(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 0) \
	ABI_E(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0) ABI_E(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 0) \
	ABI_E(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0) \
	ABI_E(CU_MEMHOSTALLOC_PORTABLE, 0) ABI_E(CU_MEMHOSTALLOC_DEVICEMAP, 0) ABI_E(CU_MEMHOSTALLOC_WRITECOMBINED, 0) \
	ABI_E(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0) ABI_E(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0) \
	ABI_E(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0) ABI_E(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) \
	ABI_E(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0) \
	ABI_E(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, 0) ABI_E(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0) \
	ABI_E(CU_STREAM_DEFAULT, 0) ABI_E(CU_STREAM_NON_BLOCKING, 0) ABI_E(CU_EVENT_DEFAULT, 0) \
	ABI_E(CU_EVENT_BLOCKING_SYNC, 0) ABI_E(CU_EVENT_DISABLE_TIMING, 0) \
	ABI_E(CU_STREAM_CAPTURE_MODE_GLOBAL, 0) ABI_E(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, 0) \
	ABI_E(CU_STREAM_CAPTURE_MODE_RELAXED, 0) ABI_E(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) \
	ABI_E(CU_MEM_RANGE_HANDLE_TYPE_MAX, 0)

/* (symbol gpuready resolves, struct cuda_api member, prototype, group) */
#define ABI_PROTOS \
	P(cuInit, init, CUresult (*)(unsigned), 0) \
	P(cuGetErrorName, get_error_name, CUresult (*)(CUresult, const char **), 0) \
	P(cuGetErrorString, get_error_string, CUresult (*)(CUresult, const char **), 0) \
	P(cuDeviceGetCount, device_get_count, CUresult (*)(int *), 0) \
	P(cuDeviceGet, device_get, CUresult (*)(CUdevice *, int), 0) \
	P(cuDeviceGetPCIBusId, device_get_pci_bus_id, CUresult (*)(char *, int, CUdevice), 0) \
	P(cuDevicePrimaryCtxRetain, primary_ctx_retain, CUresult (*)(CUcontext *, CUdevice), 0) \
	P(cuCtxSetCurrent, ctx_set_current, CUresult (*)(CUcontext), 0) \
	P(cuMemAlloc_v2, mem_alloc_v2, CUresult (*)(CUdeviceptr *, size_t), 0) \
	P(cuMemFree_v2, mem_free_v2, CUresult (*)(CUdeviceptr), 0) \
	P(cuDriverGetVersion, driver_get_version, CUresult (*)(int *), 0) \
	P(cuDeviceGetName, device_get_name, CUresult (*)(char *, int, CUdevice), 0) \
	P(cuDeviceTotalMem_v2, device_total_mem_v2, CUresult (*)(size_t *, CUdevice), 0) \
	P(cuDeviceGetAttribute, device_get_attribute, CUresult (*)(int *, CUdevice_attribute, CUdevice), 0) \
	P(cuMemcpyHtoD_v2, memcpy_htod_v2, CUresult (*)(CUdeviceptr, const void *, size_t), 0) \
	P(cuMemcpyDtoH_v2, memcpy_dtoh_v2, CUresult (*)(void *, CUdeviceptr, size_t), 0) \
	P(cuStreamCreate, stream_create, CUresult (*)(CUstream *, unsigned), 0) \
	P(cuStreamDestroy_v2, stream_destroy_v2, CUresult (*)(CUstream), 0) \
	P(cuStreamQuery, stream_query, CUresult (*)(CUstream), 0) \
	P(cuStreamSynchronize, stream_synchronize, CUresult (*)(CUstream), 0) \
	P(cuCtxSynchronize, ctx_synchronize, CUresult (*)(void), 0) \
	P(cuEventCreate, event_create, CUresult (*)(CUevent *, unsigned), 0) \
	P(cuEventRecord, event_record, CUresult (*)(CUevent, CUstream), 0) \
	P(cuEventQuery, event_query, CUresult (*)(CUevent), 0) \
	P(cuEventSynchronize, event_synchronize, CUresult (*)(CUevent), 0) \
	P(cuEventDestroy_v2, event_destroy_v2, CUresult (*)(CUevent), 0) \
	P(cuEventElapsedTime, event_elapsed_time, CUresult (*)(float *, CUevent, CUevent), 0) \
	P(cuEventElapsedTime_v2, event_elapsed_time_v2, CUresult (*)(float *, CUevent, CUevent), G_CUDA128) \
	P(cuStreamBeginCapture_v2, stream_begin_capture_v2, CUresult (*)(CUstream, CUstreamCaptureMode), 0) \
	P(cuStreamEndCapture, stream_end_capture, CUresult (*)(CUstream, CUgraph *), 0) \
	P(cuGraphInstantiateWithFlags, graph_instantiate_with_flags, \
	  CUresult (*)(CUgraphExec *, CUgraph, unsigned long long), 0) \
	P(cuGraphInstantiate_v2, graph_instantiate_v2, \
	  CUresult (*)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t), G_PRE12) \
	P(cuGraphLaunch, graph_launch, CUresult (*)(CUgraphExec, CUstream), 0) \
	P(cuGraphExecDestroy, graph_exec_destroy, CUresult (*)(CUgraphExec), 0) \
	P(cuGraphDestroy, graph_destroy, CUresult (*)(CUgraph), 0) \
	P(cuDevicePrimaryCtxRelease_v2, primary_ctx_release_v2, CUresult (*)(CUdevice), 0) \
	P(cuDevicePrimaryCtxRelease, primary_ctx_release, CUresult (*)(CUdevice), 0) \
	P(cuMemGetHandleForAddressRange, mem_get_handle, \
	  CUresult (*)(void *, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long), 0) \
	P(cuMemGetInfo_v2, mem_get_info_v2, CUresult (*)(size_t *, size_t *), 0) \
	P(cuMemcpyAsync, memcpy_async, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream), 0) \
	P(cuMemsetD32Async, memset_d32_async, CUresult (*)(CUdeviceptr, unsigned, size_t, CUstream), 0) \
	P(cuMemHostAlloc, mem_host_alloc, CUresult (*)(void **, size_t, unsigned), 0) \
	P(cuMemFreeHost, mem_free_host, CUresult (*)(void *), 0) \
	P(cuMemHostGetDevicePointer_v2, mem_host_get_device_pointer_v2, CUresult (*)(CUdeviceptr *, void *, unsigned), 0) \
	P(cuDeviceCanAccessPeer, device_can_access_peer, CUresult (*)(int *, CUdevice, CUdevice), 0) \
	P(cuCtxEnablePeerAccess, ctx_enable_peer_access, CUresult (*)(CUcontext, unsigned), 0) \
	P(cuCtxDisablePeerAccess, ctx_disable_peer_access, CUresult (*)(CUcontext), 0) \
	P(cuStreamWaitEvent, stream_wait_event, CUresult (*)(CUstream, CUevent, unsigned), 0) \
	P(cuModuleLoadData, module_load_data, CUresult (*)(CUmodule *, const void *), 0) \
	P(cuModuleGetFunction, module_get_function, CUresult (*)(CUfunction *, CUmodule, const char *), 0) \
	P(cuModuleUnload, module_unload, CUresult (*)(CUmodule), 0) \
	P(cuLaunchKernel, launch_kernel, \
	  CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, \
		       void **, void **), 0)

/* The API names gpuready calls, as a program built with cuda.h writes them. */
#define ABI_NAMES \
	ABI_NAME(cuInit) ABI_NAME(cuDriverGetVersion) ABI_NAME(cuGetErrorName) ABI_NAME(cuGetErrorString) \
	ABI_NAME(cuDeviceGetCount) ABI_NAME(cuDeviceGet) ABI_NAME(cuDeviceGetName) ABI_NAME(cuDeviceTotalMem) \
	ABI_NAME(cuDeviceGetAttribute) ABI_NAME(cuDeviceGetPCIBusId) ABI_NAME(cuDevicePrimaryCtxRetain) \
	ABI_NAME(cuDevicePrimaryCtxRelease) ABI_NAME(cuCtxSetCurrent) ABI_NAME(cuCtxSynchronize) \
	ABI_NAME(cuMemAlloc) ABI_NAME(cuMemFree) ABI_NAME(cuMemcpyHtoD) ABI_NAME(cuMemcpyDtoH) \
	ABI_NAME(cuMemGetHandleForAddressRange) ABI_NAME(cuMemGetInfo) ABI_NAME(cuStreamCreate) ABI_NAME(cuStreamDestroy) \
	ABI_NAME(cuStreamQuery) ABI_NAME(cuStreamSynchronize) ABI_NAME(cuEventCreate) ABI_NAME(cuEventRecord) \
	ABI_NAME(cuEventQuery) ABI_NAME(cuEventSynchronize) ABI_NAME(cuEventDestroy) ABI_NAME(cuEventElapsedTime) \
	ABI_NAME(cuStreamBeginCapture) ABI_NAME(cuStreamEndCapture) ABI_NAME(cuGraphInstantiate) \
	ABI_NAME(cuGraphLaunch) ABI_NAME(cuGraphExecDestroy) ABI_NAME(cuGraphDestroy) \
	ABI_NAME(cuMemcpyAsync) ABI_NAME(cuMemsetD32Async) ABI_NAME(cuMemHostAlloc) ABI_NAME(cuMemFreeHost) \
	ABI_NAME(cuMemHostGetDevicePointer) ABI_NAME(cuDeviceCanAccessPeer) ABI_NAME(cuCtxEnablePeerAccess) \
	ABI_NAME(cuCtxDisablePeerAccess) ABI_NAME(cuStreamWaitEvent) ABI_NAME(cuModuleLoadData) \
	ABI_NAME(cuModuleGetFunction) ABI_NAME(cuModuleUnload) ABI_NAME(cuLaunchKernel)

#ifdef ABI_REAL
extern const struct abi_real abi_cuda_real;
#ifdef HAVE_HEADER
#define P_NOW(name, sym, type, g) ABI_P_REAL(name, sym, type, g)
#define P_LATER(name, sym, type, g)
#define P(sym, member, type, g) P_##g(#sym, sym, type, g)
#define P_0 P_NOW
#if CUDA_VERSION >= 12080
#define P_G_CUDA128 P_NOW
#else
#define P_G_CUDA128 P_LATER
#endif
#if CUDA_VERSION < 12000
#define P_G_PRE12 P_NOW
#else
#define P_G_PRE12 P_LATER
#endif
static const struct abi_entry real[] = { ABI_TYPES ABI_ENUMS ABI_PROTOS };
static const struct abi_name names[] = { ABI_NAMES };
const struct abi_real abi_cuda_real = {
	.have_header = 1,
	.header_version = "cuda.h of CUDA_VERSION " ABI_XSTR(CUDA_VERSION) " (" ABI_HEADER ")",
	.from_nvidia_dir = ABI_FROM_NVIDIA_DIR,
	.groups = (CUDA_VERSION >= 12080 ? G_CUDA128 : 0) | (CUDA_VERSION < 12000 ? G_PRE12 : 0),
	.v = real, .n = ABI_N(real), .names = names, .n_names = ABI_N(names),
};
#else
const struct abi_real abi_cuda_real = {
	.header_version = "cuda.h not found: " ABI_HEADER_WHERE,
	.from_nvidia_dir = ABI_FROM_NVIDIA_DIR,
};
#endif
#else
#define P(sym, member, type, g) ABI_P_OURS(struct cuda_api, sym, member, type, g)
extern const struct abi_real abi_cuda_real;
static const struct abi_entry ours[] = { ABI_TYPES ABI_ENUMS ABI_PROTOS };
#undef P
#define P(sym, member, type, g) #member,
static const char *const members[] = { ABI_PROTOS };

int main(void)
{
	static const char *const groups[] = { "CUDA 12.8 and newer", "headers before CUDA 12.0" };
	/* gpuready's own: the symbol groups a caller asks cuda_api_load() for */
	static const char *const except[] = { "CUDA_NEED_*", NULL };
	const char *syms[96] = { 0 };
	unsigned need;
	size_t n = 0;
	int skip = abi_skip_without_header("CUDA", &abi_cuda_real);

	if (skip)
		return skip;
	while (n < ABI_N(syms) && (syms[n] = cuda_api_symbol(n, &need)))
		n++;
	int bad = abi_compare("CUDA", ours, ABI_N(ours), NULL, &abi_cuda_real, groups);
	bad += abi_names_resolved("CUDA", &abi_cuda_real, syms, n);
	bad += abi_protos_cover("CUDA", ours, ABI_N(ours), syms, n);
	bad += abi_cover("CUDA", "src/lib/cuda_api.h", ours, ABI_N(ours), NULL, members, ABI_N(members), except);
	return bad ? 1 : 0;
}
#endif
