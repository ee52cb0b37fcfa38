/* The RDMA rails of a node for `gpuready cluster links` (docs/cluster.md,
 * "cluster links"): rail i is the RDMA NIC nearest GPU i, GPUs in PCI
 * address order, by the PCIe topology of the inventory (inventory/topo.h),
 * not by device-name index: mlx5_3 may sit next to GPU 0 on one node and
 * mlx5_0 on another, and NCCL pairs GPU i's NIC with GPU i's NIC on the
 * peer (NCCL's "rail-optimized" topologies, its NCCL_CROSS_NIC setting).
 * `--rail rdma|all` measures each rail over verbs (links_rdma.h), rail i
 * of one node with rail i of the other. */
#ifndef GPUREADY_CLUSTER_LINKS_RAILS_H
#define GPUREADY_CLUSTER_LINKS_RAILS_H

#include <stddef.h>

#include "core/root.h"
#include "inventory/inventory.h"

/* "mlx5_0,mlx5_3,..." (one per GPU; "-" for a GPU with no RDMA NIC) into
 * out, whole names only; returns the number of rails written. */
size_t links_rails(const struct inventory *inv, char *out, size_t len);
/* The netdevs of the same NICs (port 1's: a RoCE port's interface, for
 * the hint's `ethtool -S IF`), "-" where none is known, in the same order. */
size_t links_rails_netdevs(const struct inventory *inv, char *out, size_t len);
/* Both from the tree at dir ("/": this machine), reading only through
 * the root (ifs NULL: the rails only); 0 or -errno (out is "" then). */
int links_rails_read(const char *dir, char *out, size_t len, char *ifs, size_t if_len);

#endif
