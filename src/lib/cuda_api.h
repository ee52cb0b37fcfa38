/* The CUDA driver API subset gpuready calls, loaded at run time: the live
 * GPU probes (src/inventory/cuda_probe.c, gdr_probe.c), the NCCL
 * benchmark backend (src/bench/backend_nccl.c) and bench copy
 * (CUDA_NEED_COPYBENCH; its kernels in src/bench/copy/kernels.h), each
 * asking for the symbol groups it calls.
 *
 * libcuda.so.1 comes with the NVIDIA driver, not with the build machine, so
 * cuda.h is never included: the few types and values used are declared
 * here, each from the cuda.h line it mirrors (CUDA 13.0 toolkit
 * include/cuda.h; CUDA Driver API reference), and the library is dlopen'd through one
 * symbol table (core/dl.h, STYLE 13) filled into struct cuda_api.
 *
 * Only the soname libcuda.so.1 is loaded: a CUDA toolkit's stubs/ directory
 * holds a libcuda.so for linking whose SONAME is libcuda.so.1 but whose file
 * name is not, so the loader never picks it for that name. If a stub is in
 * the process anyway (linked with -lcuda from stubs/, or preloaded), it
 * answers to the soname; its cuInit then returns CUDA_ERROR_STUB_LIBRARY and
 * cuda_api_format() says so (both checked with CUDA 13.0's stubs/libcuda.so,
 * which also answers cuGetErrorName with an error and NULL). */
#ifndef GPUREADY_CUDA_API_H
#define GPUREADY_CUDA_API_H

#include "core/dl.h"

#include <stddef.h>

/* enum cudaError_enum: the codes gpuready names itself (UNKNOWN keeps the
 * enum the size of the library's). cuda.h has no "insufficient driver"
 * code: 35 is the runtime API's cudaErrorInsufficientDriver
 * (driver_types.h); the driver API reports a libcuda newer than the kernel
 * module as CUDA_ERROR_SYSTEM_DRIVER_MISMATCH. */
typedef enum cudaError_enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_DEINITIALIZED = 4,
	CUDA_ERROR_STUB_LIBRARY = 34,
	CUDA_ERROR_DEVICE_UNAVAILABLE = 46,  /* "unavailable at the current time" (compute mode) */
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,      /* cuModuleLoadData: not a module image */
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217, /* cuCtxEnablePeerAccess where cuDeviceCanAccessPeer says 0 */
	CUDA_ERROR_INVALID_PTX = 218,        /* the PTX JIT compilation failed */
	CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222, /* PTX .version newer than the driver */
	CUDA_ERROR_OPERATING_SYSTEM = 304,   /* an OS call failed */
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,          /* cuModuleGetFunction: no such entry */
	CUDA_ERROR_NOT_READY = 600,          /* cuStreamQuery/cuEventQuery: work still pending */
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,    /* sticky: the context is unusable from then on */
	CUDA_ERROR_LAUNCH_TIMEOUT = 702,
	CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
	CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
	CUDA_ERROR_TOO_MANY_PEERS = 711,     /* cuCtxEnablePeerAccess past the hardware's peer limit */
	CUDA_ERROR_MISALIGNED_ADDRESS = 716, /* sticky */
	CUDA_ERROR_LAUNCH_FAILED = 719,      /* sticky: "an exception occurred on the device" */
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,         /* display driver and CUDA driver versions differ */
	CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804, /* forward compatibility on hardware without it */
	CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900, /* an unsafe call while a stream captures */
	CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901, /* cuStreamEndCapture after such a call */
	CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef int CUdevice;                   /* CUdevice_v1 */
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 under __LP64__ */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;   /* NCCL's cudaStream_t is the same pointer */
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;         /* a captured graph */
typedef struct CUgraphExec_st *CUgraphExec; /* an instantiated (executable) graph */
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUmod_st *CUmodule;          /* a loaded module (cuModuleLoadData) */
typedef struct CUfunc_st *CUfunction;       /* a kernel of a module */
_Static_assert(sizeof(CUdeviceptr) == sizeof(void *), "gpuready builds for LP64 only, as cuda.h's CUdeviceptr");

/* enum CUdevice_attribute_enum: the attributes read. */
typedef enum CUdevice_attribute_enum {
	CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
	CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,            /* "typical clock frequency in kilohertz" */
	CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
	CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
	CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
	CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,    /* host and device share one address space */
	CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
	CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
} CUdevice_attribute;

/* enum CUstream_flags_enum */
enum {
	CU_STREAM_DEFAULT = 0x0,
	CU_STREAM_NON_BLOCKING = 0x1,    /* does not synchronise with the legacy NULL stream */
};

/* enum CUevent_flags_enum */
enum {
	CU_EVENT_DEFAULT = 0x0,
	CU_EVENT_BLOCKING_SYNC = 0x1,
	CU_EVENT_DISABLE_TIMING = 0x2,
};

/* #defines: flags of cuMemHostAlloc. PORTABLE: pinned for every context,
 * not only the one current at allocation; DEVICEMAP: mapped into the
 * device address space (implied under unified addressing);
 * WRITECOMBINED: write-combined, slow for the CPU to read. */
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED 0x04

/* enum CUstreamCaptureMode_enum: which other calls a capture forbids
 * (cuda.h, cuThreadExchangeStreamCaptureMode): GLOBAL, unsafe calls
 * (cuMemAlloc, cuCtxSynchronize...) from any thread while it runs;
 * THREAD_LOCAL, from the capturing thread only; RELAXED, none. */
typedef enum CUstreamCaptureMode_enum {
	CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
	CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
	CU_STREAM_CAPTURE_MODE_RELAXED = 2,
} CUstreamCaptureMode;

/* enum CUmemRangeHandleType_enum */
typedef enum CUmemRangeHandleType_enum {
	CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 0x1,
	CU_MEM_RANGE_HANDLE_TYPE_MAX = 0x7FFFFFFF,
} CUmemRangeHandleType;

/* The entry points, filled by cuda_api_load(). Which are required depends
 * on what the caller asks for (enum cuda_api_need); a symbol no group asked
 * for requires may be NULL and must be tested before use. */
struct cuda_api {
	/* CUDA_NEED_BASE: initialise, name errors, find a device, allocate on
	 * its primary context */
	CUresult (*init)(unsigned flags);
	CUresult (*get_error_name)(CUresult r, const char **s);
	CUresult (*get_error_string)(CUresult r, const char **s);
	CUresult (*device_get_count)(int *n);
	CUresult (*device_get)(CUdevice *dev, int ordinal);
	CUresult (*device_get_pci_bus_id)(char *id, int len, CUdevice dev);
	CUresult (*primary_ctx_retain)(CUcontext *ctx, CUdevice dev);
	CUresult (*ctx_set_current)(CUcontext ctx);
	CUresult (*mem_alloc_v2)(CUdeviceptr *p, size_t bytes);
	CUresult (*mem_free_v2)(CUdeviceptr p);
	/* CUDA_NEED_FACTS: driver version and device attributes */
	CUresult (*driver_get_version)(int *v);
	CUresult (*device_get_name)(char *name, int len, CUdevice dev);
	CUresult (*device_total_mem_v2)(size_t *bytes, CUdevice dev);
	CUresult (*device_get_attribute)(int *v, CUdevice_attribute attr, CUdevice dev);
	/* CUDA_NEED_COPY: host <-> device copies */
	CUresult (*memcpy_htod_v2)(CUdeviceptr dst, const void *src, size_t bytes);
	CUresult (*memcpy_dtoh_v2)(void *dst, CUdeviceptr src, size_t bytes);
	/* CUDA_NEED_STREAM: streams to enqueue work on and poll (cuda.h
	 * #defines cuStreamDestroy as cuStreamDestroy_v2) */
	CUresult (*stream_create)(CUstream *s, unsigned flags);
	CUresult (*stream_destroy_v2)(CUstream s);
	CUresult (*stream_query)(CUstream s);        /* CUDA_SUCCESS or CUDA_ERROR_NOT_READY */
	CUresult (*stream_synchronize)(CUstream s);
	CUresult (*ctx_synchronize)(void);
	/* CUDA_NEED_EVENT: GPU-side timing. CUDA 13.0's cuda.h #defines
	 * cuEventElapsedTime as cuEventElapsedTime_v2 (same signature) and still
	 * declares the plain prototype in its legacy block; its stub libcuda
	 * exports both names, drivers older than the _v2 (CUDA 12.8) only the
	 * plain one. Each is optional in the table and the group requires one:
	 * call it through cuda_api_elapsed(). */
	CUresult (*event_create)(CUevent *e, unsigned flags);
	CUresult (*event_record)(CUevent e, CUstream s);
	CUresult (*event_query)(CUevent e);
	CUresult (*event_synchronize)(CUevent e);
	CUresult (*event_destroy_v2)(CUevent e);
	CUresult (*event_elapsed_time)(float *ms, CUevent start, CUevent end);
	CUresult (*event_elapsed_time_v2)(float *ms, CUevent start, CUevent end);
	/* CUDA_NEED_GRAPH: capture work on streams into graphs and launch them
	 * (nccl-tests -G). Prototypes from CUDA 13.0's cuda.h, where
	 * cuStreamBeginCapture is #defined as cuStreamBeginCapture_v2 (the
	 * plain name is the pre-10.1 one without a mode) and cuGraphInstantiate
	 * as cuGraphInstantiateWithFlags (CUDA 11.4+). Older drivers have only
	 * cuGraphInstantiate_v2, the name the 11.x headers map cuGraphInstantiate
	 * to (its 5-argument prototype is in 13.0's legacy block, and 13.0's stub
	 * still exports it): each is optional in the table and the group
	 * requires one; call it through cuda_api_instantiate(). No graph symbol
	 * is versioned (13.0's stub has no version definitions). */
	CUresult (*stream_begin_capture_v2)(CUstream s, CUstreamCaptureMode mode);
	CUresult (*stream_end_capture)(CUstream s, CUgraph *g);
	CUresult (*graph_instantiate_with_flags)(CUgraphExec *e, CUgraph g, unsigned long long flags);
	CUresult (*graph_instantiate_v2)(CUgraphExec *e, CUgraph g, CUgraphNode *error_node, char *log,
					 size_t log_size);
	CUresult (*graph_launch)(CUgraphExec e, CUstream s);
	CUresult (*graph_exec_destroy)(CUgraphExec e);
	CUresult (*graph_destroy)(CUgraph g);
	/* CUDA_NEED_COPYBENCH: what gpuready bench copy adds, nvbandwidth's
	 * calls (copies on streams between any two addresses, pinned host
	 * memory, peer access, its kernels loaded from PTX text). Each name is
	 * the symbol cuda.h makes of the API name: cuMemHostGetDevicePointer is
	 * #defined as cuMemHostGetDevicePointer_v2 (cuda.h "#define
	 * cuMemHostGetDevicePointer cuMemHostGetDevicePointer_v2"); cuMemcpyAsync,
	 * cuMemsetD32Async, cuLaunchKernel and cuStreamWaitEvent keep their
	 * names unless per-thread default streams are asked for
	 * (__CUDA_API_PTSZ: _ptsz only with CUDA_API_PER_THREAD_DEFAULT_STREAM);
	 * the others are never renamed. */
	/* cuda.h: CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) */
	CUresult (*memcpy_async)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
	/* cuda.h: CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) */
	CUresult (*memset_d32_async)(CUdeviceptr dst, unsigned value, size_t n_words, CUstream s);
	/* cuda.h: CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) */
	CUresult (*mem_host_alloc)(void **p, size_t bytes, unsigned flags);
	/* cuda.h: CUresult CUDAAPI cuMemFreeHost(void *p) */
	CUresult (*mem_free_host)(void *p);
	/* cuda.h: CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags) */
	CUresult (*mem_host_get_device_pointer_v2)(CUdeviceptr *dp, void *p, unsigned flags);
	/* cuda.h: CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev) */
	CUresult (*device_can_access_peer)(int *can, CUdevice dev, CUdevice peer);
	/* cuda.h: CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) */
	CUresult (*ctx_enable_peer_access)(CUcontext peer, unsigned flags);
	/* cuda.h: CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext) */
	CUresult (*ctx_disable_peer_access)(CUcontext peer);
	/* cuda.h: CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) */
	CUresult (*stream_wait_event)(CUstream s, CUevent e, unsigned flags);
	/* cuda.h: CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) */
	CUresult (*module_load_data)(CUmodule *m, const void *image);
	/* cuda.h: CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) */
	CUresult (*module_get_function)(CUfunction *f, CUmodule m, const char *name);
	/* cuda.h: CUresult CUDAAPI cuModuleUnload(CUmodule hmod) */
	CUresult (*module_unload)(CUmodule m);
	/* cuda.h: CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int
	 * gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned
	 * int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
	 * void **extra) */
	CUresult (*launch_kernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
				  unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream s, void **params,
				  void **extra);
	/* always optional: release _v2 since CUDA 11.0 drivers, the plain one
	 * before; cuMemGetHandleForAddressRange since 11.7 */
	CUresult (*primary_ctx_release_v2)(CUdevice dev);
	CUresult (*primary_ctx_release)(CUdevice dev);
	CUresult (*mem_get_handle)(void *handle, CUdeviceptr p, size_t size, CUmemRangeHandleType type,
				   unsigned long long flags);
	/* always optional: the current context's device's free and total
	 * memory (cuda.h #defines cuMemGetInfo as cuMemGetInfo_v2, CUDA 3.2+),
	 * for bench -M */
	CUresult (*mem_get_info_v2)(size_t *free_bytes, size_t *total_bytes);
};

/* Groups of required symbols; a caller asks for the ones it calls. */
enum cuda_api_need {
	CUDA_NEED_BASE = 1u << 0,
	CUDA_NEED_FACTS = 1u << 1,
	CUDA_NEED_COPY = 1u << 2,
	CUDA_NEED_STREAM = 1u << 3,
	CUDA_NEED_EVENT = 1u << 4,
	CUDA_NEED_GRAPH = 1u << 5,
	CUDA_NEED_COPYBENCH = 1u << 6,
};

/* Opens libcuda.so.1 into *api (zeroed first), requiring the symbols of the
 * groups in need. Returns 0 or the dl_open() error, or -ENOSYS when
 * CUDA_NEED_EVENT finds neither elapsed-time name or CUDA_NEED_GRAPH
 * neither instantiate name (lib->error says why;
 * the caller still calls dl_close(lib) either way). On success the library
 * is also marked RTLD_NODELETE: libcuda starts threads in cuInit, and
 * unloading it under them would crash the process later, so dl_close()
 * then only drops the caller's reference. */
int cuda_api_load(struct dl_lib *lib, struct cuda_api *api, unsigned need);

/* A group the caller loaded as optional, checked before first use: the
 * name of the first of need's symbols (table order) that *api lacks
 * ("cuGraphInstantiateWithFlags or cuGraphInstantiate_v2" for a missing
 * pair), or NULL when all are there. Static text. */
const char *cuda_api_missing(const struct cuda_api *api, unsigned need);

/* Writes "fn: CUDA_ERROR_X (n): <cuGetErrorString>" into out (size bytes,
 * truncated, always terminated), naming the stub library for
 * CUDA_ERROR_STUB_LIBRARY. */
void cuda_api_format(const struct cuda_api *api, const char *fn, CUresult r, char *out, size_t size);

/* cuEventElapsedTime through whichever name the driver exports (the plain
 * one first); CUDA_ERROR_UNKNOWN if neither. */
CUresult cuda_api_elapsed(const struct cuda_api *api, float *ms, CUevent start, CUevent end);

/* cuGraphInstantiateWithFlags(e, g, 0), or where the driver lacks it
 * cuGraphInstantiate_v2 (with an error-node and a log buffer of its own:
 * the driver may write diagnostics there); CUDA_ERROR_UNKNOWN if neither. */
CUresult cuda_api_instantiate(const struct cuda_api *api, CUgraphExec *e, CUgraph g);

/* Releases dev's primary context through whichever release the driver
 * exports; CUDA_ERROR_UNKNOWN if neither. */
CUresult cuda_api_release(const struct cuda_api *api, CUdevice dev);

/* The i-th name of the symbol table cuda_api_load() resolves, and in *need
 * the groups that require it (0: optional for every caller, one of a pair
 * or a capability); NULL past the end. For the tests that hold the table
 * against the real library. */
const char *cuda_api_symbol(size_t i, unsigned *need);

#endif
