/* What the site expects of its nodes: the only settings a check reads
 * (from the command line or /etc/gpuready.conf; docs/configuration.md).
 * The option table fills it (settings_expect); checks see nothing else of
 * the options. Each default is stated here once, with its source. */
#ifndef GPUREADY_CHECKS_EXPECT_H
#define GPUREADY_CHECKS_EXPECT_H

#include <stdint.h>

/* ToS 104 = DSCP 26 (AF31) << 2: the lossless RoCE traffic class of
 * NVIDIA's RoCE configuration guides ("TC 104 / DSCP 26"). */
#define DEFAULT_TOS 104
/* net.core.rmem_max / wmem_max of NVIDIA's and cloud providers' RoCE
 * tuning guides (256 MiB). */
#define DEFAULT_MIN_SOCKBUF 268435456ull
/* The oldest CUDA the driver must support: 12.8, the first release for
 * Blackwell GPUs (NVIDIA's CUDA 12.8 release notes). */
#define DEFAULT_MIN_CUDA "12.8"
/* Below 1 GiB a BAR1 window is too small to map GPU buffers for GPUDirect
 * RDMA (NVIDIA's GPUDirect RDMA documentation: BAR1 limits how much GPU
 * memory peers can map). */
#define DEFAULT_MIN_BAR1_GIB 1.0

struct site_expect {
	int tos;              /* RoCE traffic class byte for RDMA-CM and NCCL_IB_TC */
	int mtu;              /* MTU of RDMA netdevs; 0 = any */
	double link_rate;     /* minimum port rate in Gb/s; 0 = none */
	uint64_t min_sockbuf; /* smallest net.core.rmem_max / wmem_max */
	int expect_gpus;      /* 0 = the PCI count is the expectation */
	const char *min_cuda; /* "12.8" */
	double min_bar1_gib;  /* smallest GPU BAR1 */
};

#endif
