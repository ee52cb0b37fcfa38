/* Policy helpers shared by the GPU and GPUDirect checks: model names, Xid
 * classification, kernel version, lookups of live results by bus ID. Pure
 * functions; unit-tested. */
#ifndef GPUREADY_GPU_COMMON_H
#define GPUREADY_GPU_COMMON_H

#include "core/report.h"
#include "inventory/inventory.h"
#include "core/cleanup.h"
#include "inventory/topo.h"

/* Model name for an NVIDIA PCI device: the driver's "Model:" line, else
 * NVML's name, else a known PCI ID (pci.ids), else "NVIDIA 10de:XXXX".
 * Into buf. */
const char *gpu_model(const struct inventory *inv, const struct pci_dev *p, char *buf, size_t size);

/* NVIDIA's Xid catalog (common.c): the immediate action NVIDIA
 * recommends for each code, as the operator's choice. */
enum xid_action {
	XID_ACT_IGNORE,      /* IGNORE */
	XID_ACT_RESTART_APP, /* RESTART_APP */
	XID_ACT_FOLLOW,      /* WORKFLOW_XID_45: follow the other Xids */
	XID_ACT_RESET_GPU,   /* RESET_GPU */
	XID_ACT_REBOOT,      /* RESTART_BM */
	XID_ACT_ECC_DBE,     /* WORKFLOW_XID_48 */
	XID_ACT_ECC_WATCH,   /* 92 IGNORE, 94 RESTART_APP: memory errors worth a look at ECC state */
	XID_ACT_NVLINK,      /* WORKFLOW_NVLINK_ERR */
	XID_ACT_NVLINK5,     /* WORKFLOW_NVLINK5_ERR (144-150) */
	XID_ACT_SUPPORT,     /* CONTACT_SUPPORT (and the codes unused on Ampere and later) */
	XID_ACT_MECHANICAL,  /* CHECK_MECHANICALS */
	XID_ACT_UPDATE,      /* UPDATE_SWFW */
	XID_ACT_RESTART_VM,  /* RESTART_VM */
	XID_ACT_UVM,         /* CHECK_UVM */
	XID_ACT_RECOVERY,    /* XID_154: the action the message names */
	XID_ACT_NONE_LISTED, /* no action in the catalog yet (162-172) */
};

struct xid_entry {
	int first, last;     /* the codes of this row */
	enum xid_action action;
	const char *meaning;
};

struct xid_advice {
	enum status status;  /* what gpu.xid reports */
	const char *bucket;  /* the catalog's name for the action */
	const char *action;  /* what the operator does, in words */
	const char *hint;    /* the commands, with %1$s for the GPU's BDF; NULL for ok */
};

/* The catalog row of an Xid code, or NULL for a code it does not list. */
const struct xid_entry *xid_lookup(int code);
const struct xid_advice *xid_advise(enum xid_action a);
/* Xid 154 by the recovery action its message changed to (xid_event.recovery). */
const struct xid_advice *xid_advise_recovery(int action);

/* "6.8.0-52-generic" -> 6, 8. false if it does not start "N.N". */
bool kernel_version(const char *release, int *major, int *minor);

/* Live results for a GPU by its sysfs BDF, or NULL. */
const struct nvml_gpu *nvml_for(const struct inventory *inv, const char *bdf);
const struct cuda_gpu *cuda_for(const struct inventory *inv, const char *bdf);
const struct nvidia_gpu_info *nvproc_for(const struct inventory *inv, const char *bdf);

/* The live NVML answers the NVML setting checks judge (gpu.compute_mode,
 * gpu.power_clocks, gpu.fabric, gpu.nvml_p2p), or NULL after a skip
 * that points at gpu.nvml, which reports why NVML cannot be used. */
struct check_ctx;
const struct nvml_info *nvml_usable(struct check_ctx *c);
/* An NVML GPU's subject: its PCI address, else "GPU <index>". */
const char *nvml_subject(const struct nvml_gpu *g, char *buf, size_t size);
/* What `nvidia-smi -i` names it by: its PCI address, else its index. */
const char *nvml_smi_id(const struct nvml_gpu *g, char *buf, size_t size);

/* The Xid log names GPUs by "dddd:bb:dd" (no function): does it name p? */
bool xid_names(const char *xid_pci, const struct pci_dev *p);

/* NCCL's GPUDirect RDMA level from NCCL_NET_GDR_LEVEL (NCCL documentation, Environment Variables;
 * docs/nccl-variables.md §4) as the largest nvidia-smi class it allows:
 * LOC/NVL/NVB/C2C/PIX -> PIX, PXB/P2C/PXN -> PXB, PHB -> NODE (NCCL's PHB
 * covers nvidia-smi's PHB and NODE), SYS -> SYS; legacy numbers 0 LOC,
 * 1 PIX, 2 PXB, 3 PHB, 4+ SYS. Unset or unparsable: the default PXB.
 * *shown gets the text for messages ("PXB (default)"). */
enum path_class gdr_level(const struct inventory *inv, char *shown, size_t size);
/* Does this GPU reach its CPU over NVLink-C2C (Grace Hopper, Grace Blackwell,
 * GB10 superchips, by PCI device ID)? NCCL then calls the path from the GPU
 * through its CPU to a NIC on that CPU P2C, and uses GPUDirect RDMA over it
 * by default (NCCL 2.26 on, NCCL_NET_GDR_C2C=1; src/graph/paths.cc). */
bool gpu_c2c(const struct pci_dev *gpu);
/* The GPUDirect RDMA level NCCL applies to a GPU: gdr_level, except that on a
 * C2C GPU the default and NCCL_NET_GDR_LEVEL=P2C reach a NIC on the GPU's own
 * CPU (NODE) unless NCCL_NET_GDR_C2C=0; then shown says so. */
enum path_class gdr_level_for(const struct inventory *inv, const struct pci_dev *gpu, char *shown, size_t size);

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
/* Is the node in a multi-node NVLink domain (GB200/GB300 NVL racks)? It is
 * taken to be when the IMEX service is installed or configured: the path
 * of the nvidia-imex.service unit, else IMEX_NODES_CONFIG when that is not
 * empty (NVIDIA IMEX Service for NVLink Networks User's Guide), else NULL.
 * gpu.imex and rdma.nccl_mnnvl decide the same way. */
#define IMEX_NODES_CONFIG "/etc/nvidia-imex/nodes_config.cfg"
const char *imex_domain(const struct inventory *inv);
/* NVSwitch functions on PCI: NVIDIA, class 0x0680 (bridge, other). */
size_t nvswitch_count(const struct inventory *inv);
/* NVSwitch management ports of an NVLink 5 baseboard (HGX/DGX B200): PCI
 * functions whose VPD says SW_MNG (pci_dev.nvswitch_mgmt). Their NVSwitches
 * are not on PCI; the host reaches them over these InfiniBand ports. */
size_t nvswitch_mgmt_count(const struct inventory *inv);
/* A Mellanox physical function whose VPD could not be read (not root:
 * the attribute is 0600), so that whether it is a management port is
 * unknown; NULL when every one was read or has none. */
const struct pci_dev *nvswitch_mgmt_unknown(const struct inventory *inv);

/* Whether g's down NVLinks are by design (T11): bridged PCIe cards (H100
 * NVL) connect only part of their 18 links, so some are inactive while the
 * pair is NV12 (NVIDIA/nccl#1608). True when the node has no NVSwitch (on
 * NVSwitch baseboards every link trains), and at least two GPUs of g's
 * NVML name have NVLinks and all have the same number up (above zero); a
 * GPU with fewer links up than its peers is a fault. */
bool nvlink_partial_by_design(const struct inventory *inv, const struct nvml_gpu *g);

/* NVIDIA supports Blackwell and later GPUs only with the open kernel
 * modules (NVIDIA Linux driver README, "Open Linux Kernel Modules").
 * Blackwell's PCI device IDs start at 0x2901 (GB100 [B200]); every Ada
 * (AD10x) and Hopper (GH100) GPU is below 0x2900 (pci.ids). */
#define NV_FIRST_BLACKWELL_DEVICE 0x2900u
/* The first NVIDIA GPU on PCI of Blackwell or later, or NULL. */
const struct pci_dev *gpu_first_blackwell(const struct inventory *inv);
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

/* systemd units the GPU checks need (the fabric manager, IMEX): for an
 * installed unit that is not enabled or not running, "not enabled, so it
 * does not start at boot, and not running (no /run/systemd/units/
 * invocation:<unit>)" (either part alone when only that holds) into buf. */
const char *unit_not_running(const struct service_info *s, const char *unit, char *buf, size_t size);
struct check_ctx;
/* The skip for an installed, enabled unit whose running state the tree
 * did not record. */
void unit_state_unrecorded(struct check_ctx *c, const char *unit, const struct service_info *s);

#endif
