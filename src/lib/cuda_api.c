/* Loads the CUDA driver API (libcuda.so.1) into struct cuda_api and names
 * its errors; see cuda_api.h. One symbol table serves every caller: each
 * entry says which group of callers requires it, and a symbol outside the
 * groups asked for is looked up as optional, so a caller fails to load only
 * for what it calls (and reports the first missing symbol in table order).
 * A group a caller can do without (the NCCL backend's CUDA_NEED_GRAPH, for
 * -G only) is left out of the load and checked with cuda_api_missing()
 * when first needed. */
#define _GNU_SOURCE
#include "cuda_api.h"

#include "core/strbuf.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* need 0: optional for every caller */
#define CU_SYM(sym, member, group) { .name = #sym, .offset = offsetof(struct cuda_api, member), .need = (group) }

struct cuda_sym {
	const char *name;
	size_t offset;
	unsigned need;
};

static const struct cuda_sym cuda_syms[] = {
	CU_SYM(cuInit, init, CUDA_NEED_BASE),
	CU_SYM(cuDriverGetVersion, driver_get_version, CUDA_NEED_FACTS),
	CU_SYM(cuGetErrorName, get_error_name, CUDA_NEED_BASE),
	CU_SYM(cuGetErrorString, get_error_string, CUDA_NEED_BASE),
	CU_SYM(cuDeviceGetCount, device_get_count, CUDA_NEED_BASE),
	CU_SYM(cuDeviceGet, device_get, CUDA_NEED_BASE),
	CU_SYM(cuDeviceGetName, device_get_name, CUDA_NEED_FACTS),
	CU_SYM(cuDeviceTotalMem_v2, device_total_mem_v2, CUDA_NEED_FACTS),
	CU_SYM(cuDeviceGetAttribute, device_get_attribute, CUDA_NEED_FACTS),
	CU_SYM(cuDeviceGetPCIBusId, device_get_pci_bus_id, CUDA_NEED_BASE),
	CU_SYM(cuDevicePrimaryCtxRetain, primary_ctx_retain, CUDA_NEED_BASE),
	CU_SYM(cuCtxSetCurrent, ctx_set_current, CUDA_NEED_BASE),
	CU_SYM(cuMemAlloc_v2, mem_alloc_v2, CUDA_NEED_BASE),
	CU_SYM(cuMemFree_v2, mem_free_v2, CUDA_NEED_BASE),
	CU_SYM(cuMemcpyHtoD_v2, memcpy_htod_v2, CUDA_NEED_COPY),
	CU_SYM(cuMemcpyDtoH_v2, memcpy_dtoh_v2, CUDA_NEED_COPY),
	CU_SYM(cuStreamCreate, stream_create, CUDA_NEED_STREAM),
	CU_SYM(cuStreamDestroy_v2, stream_destroy_v2, CUDA_NEED_STREAM),
	CU_SYM(cuStreamQuery, stream_query, CUDA_NEED_STREAM),
	CU_SYM(cuStreamSynchronize, stream_synchronize, CUDA_NEED_STREAM),
	CU_SYM(cuCtxSynchronize, ctx_synchronize, CUDA_NEED_STREAM),
	CU_SYM(cuEventCreate, event_create, CUDA_NEED_EVENT),
	CU_SYM(cuEventRecord, event_record, CUDA_NEED_EVENT),
	CU_SYM(cuEventQuery, event_query, CUDA_NEED_EVENT),
	CU_SYM(cuEventSynchronize, event_synchronize, CUDA_NEED_EVENT),
	CU_SYM(cuEventDestroy_v2, event_destroy_v2, CUDA_NEED_EVENT),
	/* one of the two is required for CUDA_NEED_EVENT (cuda_api_load) */
	CU_SYM(cuEventElapsedTime, event_elapsed_time, 0),
	CU_SYM(cuEventElapsedTime_v2, event_elapsed_time_v2, 0),
	CU_SYM(cuStreamBeginCapture_v2, stream_begin_capture_v2, CUDA_NEED_GRAPH),
	CU_SYM(cuStreamEndCapture, stream_end_capture, CUDA_NEED_GRAPH),
	/* one of the two is required for CUDA_NEED_GRAPH (cuda_api_load) */
	CU_SYM(cuGraphInstantiateWithFlags, graph_instantiate_with_flags, 0),
	CU_SYM(cuGraphInstantiate_v2, graph_instantiate_v2, 0),
	CU_SYM(cuGraphLaunch, graph_launch, CUDA_NEED_GRAPH),
	CU_SYM(cuGraphExecDestroy, graph_exec_destroy, CUDA_NEED_GRAPH),
	CU_SYM(cuGraphDestroy, graph_destroy, CUDA_NEED_GRAPH),
	CU_SYM(cuMemcpyAsync, memcpy_async, CUDA_NEED_COPYBENCH),
	CU_SYM(cuMemsetD32Async, memset_d32_async, CUDA_NEED_COPYBENCH),
	CU_SYM(cuMemHostAlloc, mem_host_alloc, CUDA_NEED_COPYBENCH),
	CU_SYM(cuMemFreeHost, mem_free_host, CUDA_NEED_COPYBENCH),
	CU_SYM(cuMemHostGetDevicePointer_v2, mem_host_get_device_pointer_v2, CUDA_NEED_COPYBENCH),
	CU_SYM(cuDeviceCanAccessPeer, device_can_access_peer, CUDA_NEED_COPYBENCH),
	CU_SYM(cuCtxEnablePeerAccess, ctx_enable_peer_access, CUDA_NEED_COPYBENCH),
	CU_SYM(cuCtxDisablePeerAccess, ctx_disable_peer_access, CUDA_NEED_COPYBENCH),
	CU_SYM(cuStreamWaitEvent, stream_wait_event, CUDA_NEED_COPYBENCH),
	CU_SYM(cuModuleLoadData, module_load_data, CUDA_NEED_COPYBENCH),
	CU_SYM(cuModuleGetFunction, module_get_function, CUDA_NEED_COPYBENCH),
	CU_SYM(cuModuleUnload, module_unload, CUDA_NEED_COPYBENCH),
	CU_SYM(cuLaunchKernel, launch_kernel, CUDA_NEED_COPYBENCH),
	CU_SYM(cuDevicePrimaryCtxRelease_v2, primary_ctx_release_v2, 0),
	CU_SYM(cuDevicePrimaryCtxRelease, primary_ctx_release, 0),
	CU_SYM(cuMemGetHandleForAddressRange, mem_get_handle, 0),
	CU_SYM(cuMemGetInfo_v2, mem_get_info_v2, 0),
};

#define N_CUDA_SYMS (sizeof(cuda_syms) / sizeof(cuda_syms[0]))

/* Marks the loaded object RTLD_NODELETE (promoted through RTLD_NOLOAD,
 * dlopen(3)) so that it stays mapped after dl_close. */
static void cuda_api_pin(const struct dl_lib *lib)
{
	void *h = dlopen(lib->path, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	if (h)
		dlclose(h);
}

/* The groups whose requirement is one of two names, as cuda_api_missing
 * words them; NULL when need's pairs are there. */
static const char *cuda_api_pair_missing(const struct cuda_api *api, unsigned need)
{
	if ((need & CUDA_NEED_EVENT) && !api->event_elapsed_time && !api->event_elapsed_time_v2)
		return "cuEventElapsedTime (or cuEventElapsedTime_v2)";
	if ((need & CUDA_NEED_GRAPH) && !api->graph_instantiate_with_flags && !api->graph_instantiate_v2)
		return "cuGraphInstantiateWithFlags (or cuGraphInstantiate_v2)";
	return NULL;
}

const char *cuda_api_missing(const struct cuda_api *api, unsigned need)
{
	for (size_t i = 0; i < N_CUDA_SYMS; i++) {
		void *p;
		if (!(cuda_syms[i].need & need))
			continue;
		memcpy(&p, (const char *)api + cuda_syms[i].offset, sizeof(p));
		if (!p)
			return cuda_syms[i].name;
	}
	return cuda_api_pair_missing(api, need);
}

int cuda_api_load(struct dl_lib *lib, struct cuda_api *api, unsigned need)
{
	/* the soname only: the toolkit's stubs/ has libcuda.so, never .so.1 */
	static const char *const libs[] = { "libcuda.so.1", NULL };
	struct dl_sym syms[N_CUDA_SYMS];

	for (size_t i = 0; i < N_CUDA_SYMS; i++)
		syms[i] = (struct dl_sym){ .name = cuda_syms[i].name, .optional = !(cuda_syms[i].need & need),
					   .offset = cuda_syms[i].offset };
	memset(api, 0, sizeof(*api));
	int r = dl_open(lib, libs, syms, N_CUDA_SYMS, api);
	if (r < 0)
		return r;
	const char *pair = cuda_api_pair_missing(api, need);
	if (pair) {
		char *why = xasprintf("%s: required symbol %s missing", lib->path, pair);
		dl_close(lib);
		memset(api, 0, sizeof(*api));
		lib->error = why;
		return -ENOSYS;
	}
	cuda_api_pin(lib);
	return 0;
}

/* The stub answers its own name and text lookups with an error and NULL. */
void cuda_api_format(const struct cuda_api *api, const char *fn, CUresult r, char *out, size_t size)
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

CUresult cuda_api_elapsed(const struct cuda_api *api, float *ms, CUevent start, CUevent end)
{
	if (api->event_elapsed_time)
		return api->event_elapsed_time(ms, start, end);
	return api->event_elapsed_time_v2 ? api->event_elapsed_time_v2(ms, start, end) : CUDA_ERROR_UNKNOWN;
}

CUresult cuda_api_instantiate(const struct cuda_api *api, CUgraphExec *e, CUgraph g)
{
	CUgraphNode error_node = NULL;
	char log[256] = "";

	if (api->graph_instantiate_with_flags)
		return api->graph_instantiate_with_flags(e, g, 0);
	return api->graph_instantiate_v2 ? api->graph_instantiate_v2(e, g, &error_node, log, sizeof(log))
					 : CUDA_ERROR_UNKNOWN;
}

CUresult cuda_api_release(const struct cuda_api *api, CUdevice dev)
{
	if (api->primary_ctx_release_v2)
		return api->primary_ctx_release_v2(dev);
	return api->primary_ctx_release ? api->primary_ctx_release(dev) : CUDA_ERROR_UNKNOWN;
}

const char *cuda_api_symbol(size_t i, unsigned *need)
{
	if (i >= N_CUDA_SYMS)
		return NULL;
	*need = cuda_syms[i].need;
	return cuda_syms[i].name;
}
