/* The measuring side of `gpuready bench copy`: nvbandwidth's tests
 * (catalog.h) run through the CUDA driver API table (lib/cuda_api.h) the
 * way nvbandwidth v0.8 runs them (github.com/NVIDIA/nvbandwidth,
 * memcpy.cpp MemcpyOperation::doMemcpyCore):
 *
 *   per sample, every stream of the test first gets the spin kernel
 *   (kernels.h), which holds it on a flag in pinned host memory; then the
 *   4 untimed warm-up copies, the start event (the other streams wait on
 *   the first stream's start and record their own), loop_count copies and
 *   the end event are queued; the host sets the flag, synchronises every
 *   stream and reads the elapsed time. So the CPU's enqueue and launch
 *   costs stay out of the timed window (nvbandwidth README, "Measurement
 *   details"). A figure is bytes x copies / elapsed in GB/s (10^9 bytes/s),
 *   the median of the samples (the mean of the middle two for an even
 *   count), as nvbandwidth reports it.
 *
 * Copy-engine tests copy with cuMemcpyAsync, SM tests launch the copy
 * kernel (one block of 512 threads per SM, loop_count copies inside one
 * launch). Copies that only load the link beside the measured one
 * (bidirectional and all-GPU tests) run twice as many copies, so they
 * cover the whole timed window (nvbandwidth doubles their size instead;
 * the load on the link is the same). Peer tests run a pair only where
 * cuDeviceCanAccessPeer allows both directions (peer access is enabled
 * both ways, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED ignored); other pairs
 * are N/A, and a test with no such pair is waived, as in nvbandwidth. A
 * pair whose cuCtxEnablePeerAccess fails (CUDA_ERROR_TOO_MANY_PEERS past
 * the hardware's peer limit) is N/A too, with the driver's error, and the
 * other pairs still run. all_to_one / one_to_all give the GPU in the
 * middle a buffer per peer, as nvbandwidth's allToOneHelper and
 * oneToAllHelper do, so that no two copies share memory.
 *
 * The spin kernel gives up after nvbandwidth's 10 s; if the host had not
 * released it by then (queuing took longer, or the clock the driver
 * reports is below the one the kernel counts), it says so in a second
 * word of the flag, and the test's message counts those samples: their
 * figures may include launch overhead.
 *
 * Each copy's data is checked after its measurement unless -s
 * (engine_verify.c), as nvbandwidth does by default.
 *
 * The SM host<->device bidirectional tests launch the split-warp kernel
 * (kernels.h) once per sample between the host and the device buffer and
 * report half its figure, as nvbandwidth (MemcpyInitiatorSMSplitWarp).
 *
 * Differences from nvbandwidth, stated in the output where they matter:
 * all_to_one_read_sm and one_to_all_read_sm issue their copies in the
 * reading GPU's context as the _ce tests do (nvbandwidth v0.8 passes
 * PREFER_SRC_CONTEXT there, testcases_sm.cpp, unlike its _ce tests).
 *
 * The latency tests (host_device_latency_sm, device_to_device_latency_sm)
 * are a pointer chase through a 2 MiB buffer instead, timed launch by
 * launch without the spin kernel, as nvbandwidth times them; figures in
 * ns per access (engine_latency.c says how, and where it differs).
 *
 * Pinned host buffers are placed on a NUMA node: the thread's memory
 * policy is set to MPOL_PREFERRED for the GPU's own node, MPOL_BIND for
 * one --numa names (set_mempolicy(2)), around cuMemHostAlloc, and set
 * back to the policy it had (get_mempolicy(2)) after. The NVIDIA kernel
 * module allocates the pages of pinned system memory when it is allocated,
 * in the calling thread (nv_alloc_system_pages in kernel-open/nvidia/
 * nv-vm.c of NVIDIA/open-gpu-kernel-modules), and Linux applies the
 * current task's policy to such an allocation (mm/mempolicy.c), so the
 * policy steers them. The node is the GPU's own (sysfs
 * /sys/bus/pci/devices/BDF/numa_node, read by the inventory) unless
 * --numa names one; unknown (-1) leaves the kernel's default, and so does
 * a GPU's own node that cannot be preferred (no memory there: EINVAL),
 * with a note in the output; a node named by --numa that cannot be bound
 * is an error.
 *
 * Everything runs in a child process under a deadline per step
 * (core/isolate.h; waiting for a sample's copies gets the time its bytes
 * take at COPY_DEADLINE_FLOOR_GBPS on top), so a GPU that stops answering
 * costs one deadline and is named with the call, never a hang; gpuready's own process never loads
 * libcuda. */
#ifndef GPUREADY_BENCH_COPY_ENGINE_H
#define GPUREADY_BENCH_COPY_ENGINE_H

#include "bench/copy/catalog.h"
#include "bench/copy/output.h"

#include <stdbool.h>
#include <stdint.h>

#define COPY_MAX_GPUS 16
#define COPY_MAX_TESTS 35
#define COPY_WARMUP 4           /* nvbandwidth memcpy.cpp WARMUP_COUNT */
#define COPY_SPIN_TIMEOUT_MS 10000 /* nvbandwidth DEFAULT_SPIN_KERNEL_TIMEOUT_MS */
#define COPY_SM_THREADS 512     /* nvbandwidth numThreadPerBlock */
#define COPY_STEP_TIMEOUT_S 120.0
/* Waiting for a sample's copies may take, beyond the step deadline, the
 * time the busiest GPU's bytes take at this rate (GB/s): below the slowest GPU link worth measuring (PCIe Gen1 x4, 1
 * GB/s before protocol overhead), so a large -b or --loop-count never
 * reads as a hung GPU, while a hung one is still abandoned. */
#define COPY_DEADLINE_FLOOR_GBPS 0.5

/* What to run. */
struct copy_plan {
	int n_tests;
	const struct copy_test *tests[COPY_MAX_TESTS];
	int n_devices;                 /* 0: every GPU */
	int devices[COPY_MAX_GPUS];    /* CUDA ordinals, when n_devices > 0 */
	uint64_t size_mib;
	int loop_count, samples;
	int numa;                      /* -1: each GPU's own node (auto) */
	/* the GPUs' NUMA nodes by PCI address, from the inventory (auto) */
	int n_nodes;
	char node_bdf[COPY_MAX_GPUS * 4][16];
	int node_of[COPY_MAX_GPUS * 4];
	double step_timeout_s;         /* <= 0: COPY_STEP_TIMEOUT_S, or GPUREADY_PROBE_TIMEOUT */
	bool verify;                   /* check each copy's data (nvbandwidth's default; -s: off) */
};

/* One GPU as the child found it. */
struct copy_engine_gpu {
	int ordinal;
	char name[96];
	char bdf[16];                  /* "0000:18:00.0", lower case */
	int numa_node;                 /* where its host buffers were placed; -1 default */
	char numa_note[128];            /* why not on its own node, when the node could not be bound */
};

/* One test's outcome, fixed size so that it crosses the pipe as is. */
struct copy_engine_test {
	int index;                     /* in copy_tests() */
	enum copy_status status;
	char message[320];
	int rows, cols;
	double value[COPY_MAX_MATRICES][COPY_MAX_GPUS * COPY_MAX_GPUS];
	char row_note[COPY_MAX_GPUS][200]; /* a one-row test: why a GPU's cell is empty (the data check) */
};

/* What a run found. error: the run could not measure at all (no libcuda,
 * no GPU, allocation failed, a step overran), with the reason. */
struct copy_engine_out {
	char error[512];
	int driver_version;            /* cuDriverGetVersion; 0 unknown */
	bool host_buffers;             /* a planned test copies to or from the host */
	int n_gpus;
	struct copy_engine_gpu gpus[COPY_MAX_GPUS];
	int n_tests;
	struct copy_engine_test tests[COPY_MAX_TESTS];
};

/* Runs plan in a child under the deadline; fills *out (zeroed first).
 * Returns 0 when at least the setup worked (tests may still carry
 * errors), -1 with out->error set when nothing could be measured. out is
 * large: allocate it. */
int copy_engine_run(const struct copy_plan *plan, struct copy_engine_out *out);

/* The median of n samples (sorted here), as nvbandwidth reports it. */
double copy_median(double *v, int n);

#endif
