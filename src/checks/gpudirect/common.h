/* What the GPUDirect RDMA checks share: which method the node can use
 * (NCCL src/transport/net_ib/gdr.cc; NVIDIA open-gpu-kernel-modules), decided once from the inventory. */
#ifndef GPUREADY_GPUDIRECT_COMMON_H
#define GPUREADY_GPUDIRECT_COMMON_H

#include "checks/gpu/common.h"
#include "core/report.h"

enum gdr_method { GDR_NONE, GDR_DMABUF, GDR_PEERMEM };

struct gdr_state {
	size_t gpus, nics;          /* NVIDIA GPUs; RDMA devices */
	size_t gdr_nics;            /* RDMA devices that can do GPUDirect (not mlx4) */
	bool driver_loaded;
	enum nv_flavour flavour;    /* open / proprietary (version line, else taint) */
	int kmaj, kmin;             /* kernel version, -1 unknown */
	bool kernel_dmabuf;         /* >= 5.12 (RDMA dma-buf MRs) */
	const char *p2pdma;         /* CONFIG_PCI_P2PDMA value, NULL unknown */
	bool dmabuf_usable;         /* open driver and kernel >= 5.12 */
	bool peermem_present;       /* NCCL's detection files exist */
	const char *peermem_how;    /* which file told us */
	size_t nic_functions;       /* ConnectX/BlueField host functions on PCI */
	const char *provider;       /* their RDMA provider module: "mlx5_ib" or "mlx4_ib" */
	const struct pci_dev *pre_turing; /* a GPU the open modules cannot drive, or NULL */
	bool gdr_possible;          /* the hardware allows it: GPUs and a GPUDirect-capable RDMA NIC */
	bool dmabuf_possible;       /* ... and every GPU can run the open modules (Turing+) */
	enum gdr_method method;
	char why[256];              /* one line: why this method / why none */
};

void gdr_state_get(const struct inventory *inv, struct gdr_state *s);
const char *gdr_method_name(enum gdr_method m);
/* Can this RDMA device do GPUDirect RDMA? ConnectX-3 (mlx4) cannot
 * (the upstream mlx4 driver registers no dma-buf memory, Linux
 * drivers/infiniband/hw/mlx4); mlx5 devices can. Unknown devices are assumed able. */
bool nic_gdr_capable(const struct inventory *inv, const struct rdma_dev *d);
/* The node-level facts of s on f (gdr_possible, dmabuf_possible). */
void gdr_facts(struct finding *f, const struct gdr_state *s);
/* Fact key "gdr_possible.<nic>" into buf. */
const char *gdr_nic_key(const char *nic, char *buf, size_t size);

#endif
