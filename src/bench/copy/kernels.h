/* The kernels of gpuready bench copy, shipped as PTX text and loaded with
 * cuModuleLoadData on every GPU before any test runs (nvbandwidth loads
 * its kernels up front too: loading one in the middle of a test needs a
 * device synchronisation, which deadlocks behind a held stream), so that
 * the build needs no CUDA. The driver's JIT compiles the PTX for the GPU
 * at hand.
 *
 * PTX ISA 7.0 (CUDA 11.0) for .target sm_70 (Volta): a driver loads PTX up
 * to its own CUDA version's ISA (driver 535 is CUDA 12.2, ISA 8.2;
 * "PTX ISA release history" in NVIDIA's PTX ISA document), and PTX for a
 * base target (no "a" suffix) is compiled for any later GPU. Newer PTX
 * fails to load with CUDA_ERROR_UNSUPPORTED_PTX_VERSION, as nvbandwidth
 * built with a toolkit newer than the driver does (NVIDIA/nvbandwidth
 * issue #61). tests/abi/test_ptx.c assembles the text with ptxas for sm_80
 * and sm_90 where a CUDA toolkit is installed. */
#ifndef GPUREADY_BENCH_COPY_KERNELS_H
#define GPUREADY_BENCH_COPY_KERNELS_H

/* The module text (NUL-terminated, as cuModuleLoadData wants PTX). */
extern const char copy_kernels_ptx[];

/* The copy kernel: copy_kernel(dst, src, n, loops), parameters
 * (CUdeviceptr dst, CUdeviceptr src, unsigned long long n, unsigned
 * loops): copies n 16-byte elements from src to dst, loops times over,
 * each thread element i = its global index + k * (all threads of the
 * grid) (grid-stride, so a warp's accesses are contiguous), four 16-byte
 * loads in flight before their stores. Both addresses must be 16-byte
 * aligned (cuMemAlloc and cuMemHostAlloc memory is); either may be
 * host memory mapped under unified addressing (the pointer
 * cuMemHostAlloc returned) or a peer GPU's with peer access enabled.
 * nvbandwidth's large-buffer kernel has the same shape: one block of 512
 * threads per SM, 16-byte elements, the loop count inside one launch
 * (its kernels.cu). */
#define COPY_KERNEL_NAME "gpuready_copy"

/* The spin kernel: spin_kernel(flag, timeout), parameters (CUdeviceptr
 * flag, unsigned long long timeout): one thread reads the flag's first
 * 4-byte word (volatile, so each read goes to memory) until it is
 * non-zero or timeout clocks of %clock64 have passed; in that case it
 * writes 1 to the second word (the flag is 8 bytes). Launched first on a stream, it
 * holds the work queued behind it until the host sets the flag, so that
 * the launch and enqueue costs stay out of the timed window (nvbandwidth's
 * spin kernel: its timeout is CU_DEVICE_ATTRIBUTE_CLOCK_RATE, in kHz, x
 * 10000 ms). The flag lives in pinned host memory (cuMemHostAlloc). */
#define SPIN_KERNEL_NAME "gpuready_spin"

/* The pointer-chase kernel: chase_kernel(data, size, hops, block),
 * parameters (CUdeviceptr data, unsigned long long size, unsigned hops,
 * unsigned block): launched with one thread per block, block `block`
 * alone follows the chain that starts at data (each 8-byte node holds the
 * address of the next) for hops loads, one after the other, each waiting
 * for the one before; the other blocks return at once. size is the
 * buffer's bytes, which the kernel does not read (nvbandwidth's
 * ptrChasingKernel takes it too; the test double checks the chain stays
 * inside it). Elapsed time / hops is the latency of one access to the
 * memory the chain lies in (nvbandwidth kernels.cu ptrChasingKernel and
 * latencyPtrChaseKernel: a grid of one block per SM, each block in turn
 * the one that chases). */
#define CHASE_KERNEL_NAME "gpuready_chase"

/* The split-warp kernel: splitwarp_kernel(dst, src, loops), parameters
 * (CUdeviceptr dst, CUdeviceptr src, unsigned loops), launched with
 * blocks of up to 1024 threads, one thread per 16-byte element of the
 * buffers: the threads of odd-numbered warps (32 threads, 512 bytes) copy
 * their element from src to dst, those of even-numbered warps from dst to
 * src, loops times, with cache-global loads and stores (ld/st.global.cg).
 * One kernel thus moves half the bytes each way at once: nvbandwidth's
 * host<->device bidirectional SM tests (kernels.cu splitWarpCopyKernel,
 * MemcpyInitiatorSMSplitWarp, whose figure is halved to give one
 * direction's). */
#define SPLIT_KERNEL_NAME "gpuready_splitwarp"

/* The PTX ISA version and target the text declares (tests compare them
 * with the text and with what driver 535 accepts). */
#define COPY_KERNELS_PTX_VERSION "7.0"
#define COPY_KERNELS_PTX_TARGET "sm_70"

#endif
