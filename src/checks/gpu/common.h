/* Policy helpers shared by the GPU and GPUDirect checks: model names, Xid
 * classification, kernel version, lookups of live results by bus ID. Pure
 * functions; unit-tested. */
#ifndef GPUREADY_GPU_COMMON_H
#define GPUREADY_GPU_COMMON_H

#include "inventory/inventory.h"
#include "core/cleanup.h"
#include "inventory/topo.h"

/* Model name for an NVIDIA PCI device: the driver's "Model:" line, else
 * NVML's name, else a known PCI ID (pci.ids), else "NVIDIA 10de:XXXX".
 * Into buf. */
const char *gpu_model(const struct inventory *inv, const struct pci_dev *p, char *buf, size_t size);

enum xid_class { XID_FATAL, XID_APP, XID_OTHER };
/* NVIDIA XID errors documentation: 48, 62, 64, 74, 79, 92, 94, 95, 119, 120 need action
 * (reset, reboot, RMA); 13, 31, 43, 45 are application faults. */
enum xid_class xid_classify(int code);
/* One-line meaning of an Xid (NVIDIA XID errors documentation), or NULL. */
const char *xid_meaning(int code);

/* "6.8.0-52-generic" -> 6, 8. false if it does not start "N.N". */
bool kernel_version(const char *release, int *major, int *minor);

/* Live results for a GPU by its sysfs BDF, or NULL. */
const struct nvml_gpu *nvml_for(const struct inventory *inv, const char *bdf);
const struct cuda_gpu *cuda_for(const struct inventory *inv, const char *bdf);
const struct nvidia_gpu_info *nvproc_for(const struct inventory *inv, const char *bdf);

/* The Xid log names GPUs by "dddd:bb:dd" (no function): does it name p? */
bool xid_names(const char *xid_pci, const struct pci_dev *p);

/* NCCL's GPUDirect RDMA level from NCCL_NET_GDR_LEVEL (NCCL documentation, Environment Variables;
 * docs/nccl-variables.md §4) as the largest nvidia-smi class it allows:
 * LOC/NVL/NVB/C2C/PIX -> PIX, PXB/P2C/PXN -> PXB, PHB -> NODE (NCCL's PHB
 * covers nvidia-smi's PHB and NODE), SYS -> SYS; legacy numbers 0 LOC,
 * 1 PIX, 2 PXB, 3 PHB, 4+ SYS. Unset or unparsable: the default PXB.
 * *shown gets the text for messages ("PXB (default)"). */
enum path_class gdr_level(const struct inventory *inv, char *shown, size_t size);

/* Which of NVIDIA's libraries could not be used, for gpu_lib_advise. */
enum gpu_lib { GPU_LIB_NVML, GPU_LIB_CUDA };

/* Why, in words, and the commands that fix it (static text). */
struct gpu_lib_advice {
	const char *cause;
	const char *fix;
};

/* Cause and fix for NVML or CUDA failing on a node that has NVIDIA GPUs
 * on PCI, by the class of the failure (inventory/gpu_live.h).
 * module_loaded is gpu.driver's verdict (gpu_nvidia_loaded): with the
 * module loaded, "driver not loaded" from the library means its device
 * nodes are missing, and the advice says so rather than contradict
 * gpu.driver. The fixes are commands for a Debian or Ubuntu node. Pure. */
struct gpu_lib_advice gpu_lib_advise(enum gpu_lib lib, enum gpu_lib_fail fail, bool module_loaded);

/* The finding for NVML or CUDA that could not be used (its struct's fail
 * and error), on a node with ng NVIDIA GPUs on PCI: a FAIL with the cause
 * and fix of gpu_lib_advise, subject "nvml" or "cuda"; without GPUs on PCI
 * a SKIP that keeps the error, except for a call that never returned
 * (GPU_LIB_FAIL_TIMEOUT), which fails whatever PCI lists. */
struct check_ctx;
void gpu_lib_unusable(struct check_ctx *c, enum gpu_lib lib, enum gpu_lib_fail fail, const char *error, size_t ng);

/* The finding for a live probe's call that did not return within its
 * deadline (GPU_LIB_FAIL_TIMEOUT): a FAIL on subject whose text is error
 * (which names the call) and the cause, with the fix as hint, both of
 * gpu_lib_advise's row for a call that never returned. */
void gpu_call_hung(struct check_ctx *c, const char *subject, const char *error);

/* NVIDIA's open kernel modules drive Turing and newer GPUs only (NVIDIA
 * open-gpu-kernel-modules README). Turing's first GPU is PCI device 0x1e02
 * (TU102); every older GPU (Volta GV100 up to 0x1df6, Pascal, Maxwell,
 * Kepler) is below 0x1e00 (pci.ids). */
#define NV_FIRST_TURING_DEVICE 0x1e00u
/* The first NVIDIA GPU on PCI older than Turing (the open modules cannot
 * drive it, so DMA-BUF is impossible and legacy peer memory is the
 * GPUDirect RDMA method), or NULL when there is none. A GPU whose PCI
 * IDs could not be read counts as none: its age is unknown. */
const struct pci_dev *gpu_first_pre_turing(const struct inventory *inv);
/* The Debian/Ubuntu driver package for this node's driver branch (the
 * loaded version's major number, else 570 open / 535 proprietary):
 * "nvidia-driver-535-open" with open, "nvidia-driver-535" without. Into buf. */
const char *gpu_driver_package(const struct inventory *inv, bool open, char *buf, size_t size);

/* Whether the nvidia kernel module is loaded, as gpu.driver decides it
 * (the module list, or /proc/driver/nvidia). */
bool gpu_nvidia_loaded(const struct inventory *inv);

/* A PCI function that could be an NVIDIA GPU but cannot be identified,
 * because the attribute this returns ("vendor", "device" or "class") could
 * not be read and the driver does not list it; NULL when it is identified
 * (topo_is_gpu() or not a GPU). Such a function is not counted
 * as a GPU, and no count may be called right while one exists. */
const char *pci_maybe_gpu(const struct inventory *inv, const struct pci_dev *p);
/* How many such functions; with files, appends "<file>: <reason>" for each. */
size_t gpu_unidentified(const struct inventory *inv, struct strbuf *files);

/* GPU<->NIC pairs: for every NVIDIA GPU on PCI, its nearest RDMA device. */
struct gpu_pair {
	const struct pci_dev *gpu;
	const struct rdma_dev *nic;   /* NULL if the node has none */
	const struct pci_dev *nic_pci;
	enum path_class cls;
};
size_t gpu_pairs(const struct inventory *inv, struct gpu_pair **ret);

#endif
