/* bench copy and this node: the GPUs' NUMA nodes and PCIe limits from the
 * inventory, and the short measurement `check --bench` runs for the
 * gpu.copy_bandwidth check. */
#ifndef GPUREADY_BENCH_COPY_NODE_H
#define GPUREADY_BENCH_COPY_NODE_H

#include "bench/copy/engine.h"
#include "bench/copy/expect.h"
#include "inventory/inventory.h"
#include "inventory/copy_bw.h"

/* Fills plan's NUMA table with the NVIDIA display/3D controllers' nodes
 * (sysfs numa_node). inv may be NULL. */
void copy_plan_nodes(const struct inventory *inv, struct copy_plan *plan);

/* The PCIe limit of the GPU at bdf: its link's maximum, the lower of the
 * GPU's and the port above it (an idle NVIDIA GPU lowers its link speed,
 * so sysfs current_link_speed then reads Gen1; a slot trained below its
 * maximum shows as a low share of this limit), the label naming the
 * current speed when it differs. Unknown naming why. */
void copy_gpu_limit(const struct inventory *inv, const char *bdf, double pcie_eff, struct copy_limit *out);

/* The limit of a copy between the GPUs at bdf a and b, one direction:
 * their NVLinks where NVML (live) counts them and an NVSwitch gives every
 * pair all of a GPU's links (HGX baseboards: NVIDIA NVSwitch functions on
 * PCI, or the switch-management functions of NVLink 5 systems), the
 * generation from NVML's NVLink version where it gave one for both GPUs,
 * else from the GPU's name (V100 2, A100/A800 3, H100/H200/H800/H20 4,
 * B100/B200/B300/GB200/GB300 5), the label saying which ("NVLink 4 x18
 * (generation from NVML)"); the lower of their PCIe links where
 * NVML counts no active NVLink; else unknown, saying why. b NULL: all of
 * a's links (an all_to_one or one_to_all total). */
void copy_peer_limit(const struct inventory *inv, const char *a, const char *b, double pcie_eff, double nvlink_eff,
		     struct copy_limit *out);

/* `check --bench`: host_to_device_memcpy_ce and device_to_host_memcpy_ce
 * on every GPU (COPY_CHECK_MIB MiB, 16 copies, 3 samples, host buffers on
 * each GPU's node), into a new *out for the inventory. */
/* 64 MiB: nvbandwidth's smallBufferThreshold and its default buffer up to
 * v0.6 (common.h), large enough for a copy to reach the link's steady
 * rate, small enough that both tests take about 0.15 s per GPU at
 * 50 GB/s (64 MiB x 20 copies x 3 samples each). */
#define COPY_CHECK_MIB 64
void copy_bw_measure(const struct inventory *inv, struct copy_bw_info **out);

#endif
