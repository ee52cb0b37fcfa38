/* PCIe distance between two PCI functions, as `nvidia-smi topo -m` names
 * it (NVML API reference, nvmlGpuTopologyLevel_t):
 *   PIX  under the same PCIe switch (at most one bridge on each side of
 *        the lowest common bridge);
 *   PXB  several bridges, but no host bridge;
 *   PHB  through one PCIe host bridge (same root complex);
 *   NODE between host bridges of one NUMA node;
 *   SYS  across the inter-socket interconnect (different NUMA nodes).
 * Derived from the sysfs paths alone (the BDF chain of each function and
 * numa_node), so it works on recorded trees. NCCL has no NODE: its PHB
 * covers both (the legend of `nvidia-smi topo -m`). */
#ifndef GPUREADY_TOPO_H
#define GPUREADY_TOPO_H

#include "inventory.h"

enum path_class { PATH_SELF, PATH_PIX, PATH_PXB, PATH_PHB, PATH_NODE, PATH_SYS, PATH_UNKNOWN };

const char *path_class_name(enum path_class c);

/* The class of the path between a and b; when bridges is not NULL, the
 * BDFs of the bridges the path crosses (below any host bridge) are added. */
enum path_class pci_path_class(const struct pci_dev *a, const struct pci_dev *b, struct strv *bridges);

/* The RDMA device nearest to the GPU (ties: the first in name order);
 * NULL if there is none with a known PCI function. */
const struct rdma_dev *topo_nearest_nic(const struct inventory *inv, const struct pci_dev *gpu,
					enum path_class *cls);
/* The same among the RDMA devices keep(dev, arg) accepts (NULL: all):
 * the nearest NIC NCCL may use when NCCL_IB_HCA leaves some out. */
const struct rdma_dev *topo_nearest_nic_where(const struct inventory *inv, const struct pci_dev *gpu,
					      enum path_class *cls, bool (*keep)(const struct rdma_dev *, void *),
					      void *arg);

/* NVIDIA GPUs on PCI, in BDF order, into a malloc'd array. */
size_t topo_gpus(const struct inventory *inv, const struct pci_dev ***ret);
/* One function of topo_gpus(): an NVIDIA GPU by its PCI IDs and class, or,
 * when those cannot be read, by the driver's GPU list. */
bool topo_is_gpu(const struct inventory *inv, const struct pci_dev *p);

#endif
