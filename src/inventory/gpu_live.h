/* Live GPU facts through the NVIDIA libraries, loaded at run time: the
 * structs the probes (src/probe/) fill and the checks read, and pure
 * helpers.
 *
 * NVML (libnvidia-ml.so.1) and the CUDA driver API (libcuda.so.1) are
 * dlopen'd through symbol tables (core/dl.h); nothing here needs their
 * headers: the few types and enum values used are declared in
 * lib/nvml_api.h and lib/cuda_api.h from nvml.h / cuda.h. Every probe
 * fills its struct and never fails the program: a missing library, a driver
 * that refuses to initialise, or a call that is not supported is recorded
 * with its reason (the library's error string and code, and for the
 * library as a whole the class of failure, enum gpu_lib_fail) for the
 * checks to report. Whatever the libraries print to stdout while they load
 * and initialise is kept off gpuready's own (core/stdout_guard.h).
 *
 * Only for the live root; the callers make sure of that. */
#ifndef GPUREADY_GPU_LIVE_H
#define GPUREADY_GPU_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A value NVML could not give: the field keeps this, and *_err the reason. */
#define GPU_UNKNOWN (-1)

/* The peers whose P2P status one GPU keeps (struct nvml_gpu.p2p): more
 * than any single node has GPUs joined by NVLink (HGX: 8). */
#define NVML_P2P_MAX_PEERS 32

/* nvmlDeviceGetP2PStatus from this GPU to a GPU of higher index, both
 * with NVLinks up: nvmlGpuP2PStatus_t per capability (0 OK), or
 * GPU_UNKNOWN where the call failed (nvml_gpu.error says why). */
struct nvml_p2p_peer {
	int peer;          /* index into nvml_info.v */
	int nvlink, read, write;
};

/* A sanity bound on the device count NVML or CUDA reports: more than this
 * is treated as a library error, not allocated. */
#define GPU_LIVE_MAX_GPUS 1024u

struct nvml_gpu {
	unsigned index;
	char bdf[32];          /* normalised to sysfs form "0000:17:00.0" */
	char name[96];
	char uuid[96];
	uint64_t mem_total;    /* bytes; 0 unknown */
	int persistence;       /* 1 on, 0 off, GPU_UNKNOWN */
	int ecc_current;       /* 1 enabled, 0 disabled, GPU_UNKNOWN (not supported) */
	int ecc_pending;
	long long ecc_uncorrected_volatile; /* GPU_UNKNOWN if not supported */
	long long ecc_corrected_volatile;
	int remap_corr, remap_unc, remap_pending, remap_failure; /* GPU_UNKNOWN if not supported */
	int retired_pending;   /* 1 pages pending retirement, 0 no, GPU_UNKNOWN */
	long long retired_sbe, retired_dbe; /* retired page counts, GPU_UNKNOWN */
	int temperature;       /* degrees C, GPU_UNKNOWN */
	unsigned long long throttle_reasons; /* nvmlClocksEventReasons bit mask */
	bool throttle_known;
	int pcie_gen_cur, pcie_gen_max, pcie_width_cur, pcie_width_max; /* GPU_UNKNOWN */
	int nvlink_links;      /* links that exist (state query supported) */
	int nvlink_down;       /* of those, disabled */
	/* nvmlDeviceGetNvLinkVersion of the first active link: an
	 * NVML_NVLINK_VERSION_* value (lib/nvml_api.h: not the generation,
	 * nvml_nvlink_gen() decodes it); GPU_UNKNOWN none active, or not read */
	int nvlink_version;
	int mig_current, mig_pending; /* nvmlDeviceGetMigMode: 1 enabled, 0 disabled; GPU_UNKNOWN */
	int compute_mode;      /* nvmlComputeMode_t (0 Default, 1 Exclusive_Thread, 2 Prohibited,
				* 3 Exclusive_Process); GPU_UNKNOWN */
	/* milliwatts; GPU_UNKNOWN where not supported */
	long long power_enforced_mw, power_limit_mw, power_default_mw;
	/* MHz; GPU_UNKNOWN where not supported (application clocks are not
	 * settable on every GPU) */
	int app_clock_gr, app_default_gr, max_clock_gr;
	int app_clock_mem, app_default_mem, max_clock_mem;
	/* NVLink fabric registration (nvmlDeviceGetGpuFabricInfoV, else
	 * nvmlDeviceGetGpuFabricInfo). fabric_state: NVML_GPU_FABRIC_STATE_*
	 * (0 not supported, 1 not started, 2 in progress, 3 completed), or
	 * GPU_UNKNOWN when the call is missing or answers not supported (a
	 * GPU outside any NVLink fabric: PCIe cards, pre-Hopper) */
	int fabric_state;
	int fabric_status;     /* nvmlReturn_t of the registration; meaningful when completed */
	char fabric_status_text[64]; /* nvmlErrorString of it */
	unsigned fabric_clique;
	int fabric_version;    /* 3, 2 (health mask, no summary), 1 (no health mask); 0 not read */
	unsigned fabric_health_mask;
	int fabric_health_summary; /* NVML_GPU_FABRIC_HEALTH_SUMMARY_*; GPU_UNKNOWN before v3 */
	struct nvml_p2p_peer p2p[NVML_P2P_MAX_PEERS];
	int n_p2p;
	bool p2p_truncated;    /* more peers than NVML_P2P_MAX_PEERS: the rest were not asked */
	char error[160];       /* first per-GPU failure, "" if none */
};


/* Why NVML or the CUDA driver API could not be used at all, one class per
 * cause with its own fix (checks/gpu/common.h gpu_lib_advise). The codes
 * are the libraries' own, from NVIDIA's NVML API reference (nvmlReturn_t)
 * and CUDA driver API reference (CUresult). */
enum gpu_lib_fail {
	GPU_LIB_FAIL_NONE = 0,   /* loaded and initialised */
	GPU_LIB_FAIL_MISSING,    /* dlopen failed: not installed, or not loadable */
	GPU_LIB_FAIL_SYMBOL,     /* loaded, but a required entry point is missing */
	GPU_LIB_FAIL_STUB,       /* the CUDA toolkit's stub library, not the driver's */
	GPU_LIB_FAIL_NO_DRIVER,  /* NVML_ERROR_DRIVER_NOT_LOADED (9), CUDA_ERROR_NO_DEVICE (100) */
	GPU_LIB_FAIL_MISMATCH,   /* NVML_ERROR_LIB_RM_VERSION_MISMATCH (18),
				  * CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803) */
	GPU_LIB_FAIL_COMPAT,     /* CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804) */
	GPU_LIB_FAIL_PERMISSION, /* NVML_ERROR_NO_PERMISSION (4), NVML_ERROR_OPERATING_SYSTEM (17) */
	GPU_LIB_FAIL_OTHER,      /* any other code: the library's own text is all there is */
	GPU_LIB_FAIL_TIMEOUT,    /* a call did not return within the probes' deadline
				  * (probe.h PROBE_CALL_TIMEOUT_S): error names it */
};

struct nvml_info {
	bool loaded;           /* library and nvmlInit_v2 succeeded */
	enum gpu_lib_fail fail; /* why not loaded; NONE when loaded */
	int code;              /* nvmlInit_v2's nvmlReturn_t when it failed, else 0 */
	char error[512];       /* why not (dlerror text, nvmlErrorString, or the call that overran) */
	char driver_version[80];
	int cuda_driver_version; /* e.g. 12080; GPU_UNKNOWN */
	struct nvml_gpu *v;
	size_t n;
	/* nvmlDeviceGetP2PStatus exported: the pairs in nvml_gpu.p2p were asked */
	bool p2p_queried;
};

/* NVML's NVLinks per GPU as `gpuready snapshot` recorded them in
 * .gpuready/nvlink, for a recorded tree (inventory/nvlink_rec.h): one
 * GPU's line, and the file. */
struct nvlink_rec {
	char bdf[32];          /* sysfs form, "0000:18:00.0" */
	int links, down;       /* as nvml_gpu.nvlink_links, nvlink_down */
	int version;           /* as nvml_gpu.nvlink_version: NVML_NVLINK_VERSION_*, GPU_UNKNOWN */
};

struct nvlink_rec_info {
	bool known;            /* a recorded tree's file was read */
	char *why;             /* not known: why (live root, no file) */
	unsigned bad;          /* lines that were not "BDF LINKS DOWN VERSION" */
	size_t n;
	struct nvlink_rec *v;
};


struct cuda_gpu {
	int ordinal;
	char bdf[32];          /* from cuDeviceGetPCIBusId, normalised */
	char name[256];
	uint64_t mem_total;
	int cc_major, cc_minor;
	int gdr_supported;     /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED (116): 1/0/GPU_UNKNOWN */
	int dmabuf_supported;  /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (124): 1/0/GPU_UNKNOWN */
	bool roundtrip_done;   /* the allocate/copy/compare test ran */
	bool roundtrip_ok;
	char roundtrip_error[160];
};

struct cuda_info {
	bool loaded;           /* library loaded and cuInit(0) succeeded */
	enum gpu_lib_fail fail; /* why not loaded; NONE when loaded */
	int code;              /* cuInit's CUresult when it failed, else 0 */
	char error[512];       /* why not: dlerror, "cuInit: CUDA_ERROR_NO_DEVICE (100): ...", or the call
				* that overran */
	int driver_version;    /* cuDriverGetVersion, e.g. 12080; GPU_UNKNOWN */
	struct cuda_gpu *v;
	size_t n;
};

/* One GPU<->NIC GPUDirect RDMA registration attempt (the real proof that
 * the NIC can DMA into GPU memory). */
struct gdr_probe {
	char gpu_bdf[32];
	char ibdev[64];
	/* DMA-BUF: cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr */
	bool dmabuf_tried;
	bool dmabuf_ok;
	int dmabuf_errno;      /* errno from ibv_reg_dmabuf_mr, 0 ok */
	char dmabuf_error[200]; /* step that failed and why */
	/* peer memory: ibv_reg_mr on the GPU pointer (needs nvidia_peermem) */
	bool peermem_tried;
	bool peermem_ok;
	int peermem_errno;
	char peermem_error[200];
	/* NONE, or why the probe's process gave no result for this pair
	 * (probe.h gdr_probe_deadline): TIMEOUT when a call did not return
	 * within the deadline, OTHER when the process died; the error of each
	 * method asked for then names the call */
	enum gpu_lib_fail fail;
};

/* Free what a probe filled (src/probe/); NULL and twice are fine. */
void nvml_info_free(struct nvml_info *n);
void cuda_info_free(struct cuda_info *c);

/* Pure helpers, unit-tested: */
/* NVML's "00000000:17:00.0" or CUDA's "0000:17:00.0" (any case) -> sysfs
 * "0000:17:00.0". Returns false if s is not a PCI bus ID. */
bool gpu_normalize_bdf(const char *s, char *out, size_t size);

/* 12080 -> "12.8"; 13000 -> "13.0" (CUDA: 1000*major + 10*minor). */
void cuda_version_string(int v, char *out, size_t size);
/* "12.8" or "12" -> 12080 / 12000; -1 if malformed. */
int cuda_version_parse(const char *s);

#endif
