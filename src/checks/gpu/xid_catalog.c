/* NVIDIA's Xid catalog: what each code means and the immediate action
 * NVIDIA recommends for it, for Ampere and later GPUs.
 *
 * Source: NVIDIA, XID Errors, "Analyzing Xid Errors with the Xid Catalog"
 * (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), the
 * "Immediate" resolution bucket of each code; checked against the
 * machine-readable copy of that catalog in leptonai/gpud
 * components/accelerator/nvidia/xid/catalog_generated.go (generated from
 * the page on 2025-10-29). docs/failure-modes.md, "Xid catalog", lists the
 * same rows. Meanings are paraphrased. */
#include "common.h"

#include <stddef.h>

static const struct xid_entry catalog[] = {
	{ 1, 7, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 8, 8, XID_ACT_RESTART_APP, "GPU stopped processing (channel idle timeout)" },
	{ 9, 10, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 11, 11, XID_ACT_RESTART_APP, "invalid or corrupted push buffer stream" },
	{ 12, 12, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 13, 13, XID_ACT_RESTART_APP, "graphics engine exception (usually an application fault)" },
	{ 14, 14, XID_ACT_IGNORE, "injected test error" },
	{ 15, 24, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 25, 25, XID_ACT_RESTART_APP, "invalid or illegal push buffer stream" },
	{ 26, 30, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 31, 31, XID_ACT_RESTART_APP, "GPU memory page fault (usually an application's illegal access)" },
	{ 32, 32, XID_ACT_RESTART_APP, "invalid or corrupted push buffer stream (PBDMA)" },
	{ 33, 36, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 37, 38, XID_ACT_IGNORE, "driver firmware error" },
	{ 39, 41, XID_ACT_RESTART_APP, "copy engine exception" },
	{ 42, 42, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 43, 43, XID_ACT_IGNORE, "GPU stopped processing (the application faulted)" },
	{ 44, 44, XID_ACT_IGNORE, "graphics engine fault during context switch" },
	{ 45, 45, XID_ACT_FOLLOW, "preemptive cleanup after earlier errors" },
	{ 46, 46, XID_ACT_RESET_GPU, "GPU stopped processing (GPU timeout)" },
	{ 47, 47, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 48, 48, XID_ACT_ECC_DBE, "double-bit ECC error" },
	{ 49, 53, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 54, 54, XID_ACT_MECHANICAL, "auxiliary power is not connected to the GPU board" },
	{ 55, 59, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 60, 60, XID_ACT_RESTART_APP, "video processor (SEC2) exception" },
	{ 61, 61, XID_ACT_SUPPORT, "internal micro-controller breakpoint (unused on Ampere and later)" },
	{ 62, 62, XID_ACT_RESET_GPU, "internal micro-controller halt" },
	{ 63, 63, XID_ACT_IGNORE, "memory remapping event (row remap or page retirement recorded)" },
	{ 64, 64, XID_ACT_RESET_GPU, "memory remapping failure" },
	{ 65, 65, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 66, 67, XID_ACT_IGNORE, "illegal access by the driver" },
	{ 68, 68, XID_ACT_RESTART_APP, "NVDEC0 exception" },
	{ 69, 69, XID_ACT_RESTART_APP, "graphics engine class error" },
	{ 70, 72, XID_ACT_RESTART_APP, "copy engine error" },
	{ 73, 73, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 74, 74, XID_ACT_NVLINK, "NVLink error" },
	{ 75, 77, XID_ACT_RESTART_APP, "copy engine error" },
	{ 78, 78, XID_ACT_UPDATE, "vGPU start error" },
	{ 79, 79, XID_ACT_REBOOT, "GPU has fallen off the bus" },
	{ 80, 80, XID_ACT_RESTART_APP, "corrupted data sent to the GPU" },
	{ 81, 81, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 82, 84, XID_ACT_RESTART_APP, "video or JPEG engine error" },
	{ 85, 85, XID_ACT_RESTART_APP, "copy engine error" },
	{ 86, 86, XID_ACT_RESTART_APP, "optical flow engine exception" },
	{ 87, 87, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 88, 89, XID_ACT_RESTART_APP, "video decoder error" },
	{ 90, 91, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 92, 92, XID_ACT_ECC_WATCH, "high single-bit ECC error rate" },
	{ 93, 93, XID_ACT_IGNORE, "InfoROM wear limit exceeded (not fatal)" },
	{ 94, 94, XID_ACT_ECC_WATCH, "contained memory error (the affected applications were stopped)" },
	{ 95, 95, XID_ACT_RESET_GPU, "uncontained memory error" },
	{ 96, 105, XID_ACT_RESTART_APP, "video or JPEG engine error" },
	{ 106, 107, XID_ACT_IGNORE, "SMBPBI test message" },
	{ 108, 108, XID_ACT_IGNORE, "NVLink remote translation error" },
	{ 109, 109, XID_ACT_RESET_GPU, "context switch timeout" },
	{ 110, 110, XID_ACT_RESET_GPU, "security fault" },
	{ 111, 118, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 119, 119, XID_ACT_RESET_GPU, "GSP RPC timeout" },
	{ 120, 120, XID_ACT_RESET_GPU, "GSP error" },
	{ 121, 121, XID_ACT_IGNORE, "chip-to-chip (C2C) error" },
	{ 122, 125, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 126, 135, XID_ACT_RESTART_APP, "copy engine error" },
	{ 136, 136, XID_ACT_RESET_GPU, "NVLink training failed" },
	{ 137, 137, XID_ACT_IGNORE, "NVLink privilege error" },
	{ 138, 138, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 139, 139, XID_ACT_RESTART_APP, "optical flow engine error" },
	{ 140, 140, XID_ACT_RESET_GPU, "unrecovered ECC error escaped containment" },
	{ 141, 141, XID_ACT_IGNORE, "CUDA fast-path error" },
	{ 142, 142, XID_ACT_SUPPORT, "NVENC3 error" },
	{ 143, 143, XID_ACT_RESET_GPU, "GPU initialisation error" },
	{ 144, 150, XID_ACT_NVLINK5, "NVLink 5 error" },
	{ 151, 151, XID_ACT_RESTART_VM, "key rotation error (confidential computing)" },
	{ 152, 153, XID_ACT_IGNORE, "DLA error" },
	{ 154, 154, XID_ACT_RECOVERY, "GPU recovery action changed" },
	{ 155, 155, XID_ACT_RESET_GPU, "NVLink software-defined error" },
	{ 156, 156, XID_ACT_RESET_GPU, "resource retirement event" },
	{ 157, 157, XID_ACT_IGNORE, "resource retirement failure" },
	{ 158, 158, XID_ACT_RESET_GPU, "GPU fatal timeout" },
	{ 159, 159, XID_ACT_UVM, "CHI non-data error" },
	{ 160, 161, XID_ACT_IGNORE, "channel retirement event or failure" },
	{ 162, 165, XID_ACT_NONE_LISTED, "power smoothing circuit state change" },
	{ 166, 166, XID_ACT_NONE_LISTED, "NVLink encryption: traffic before the link was set up" },
	{ 167, 167, XID_ACT_NONE_LISTED, "PCIe fatal timeout" },
	{ 168, 168, XID_ACT_NONE_LISTED, "reduced GPU memory capacity (errors in the write-protected region)" },
	{ 169, 169, XID_ACT_NONE_LISTED, "SEC2 micro-controller halt" },
	{ 170, 170, XID_ACT_NONE_LISTED, "NVLink encryption: interrupt in confidential-computing mode" },
	{ 171, 172, XID_ACT_NONE_LISTED, "detail of Xid 48: uncorrectable DRAM or SRAM error" },
};

const struct xid_entry *xid_lookup(int code)
{
	for (size_t i = 0; i < sizeof(catalog) / sizeof(catalog[0]); i++)
		if (code >= catalog[i].first && code <= catalog[i].last)
			return &catalog[i];
	return NULL;
}

/* Status, the catalog's bucket, and what the operator does, by action. */
static const struct xid_advice advice[] = {
	[XID_ACT_IGNORE] = { STATUS_OK, "IGNORE", "no action: the node stays in service", NULL },
	[XID_ACT_RESTART_APP] = { STATUS_OK, "RESTART_APP", "restart the application; the node stays in service",
				  NULL },
	[XID_ACT_FOLLOW] = { STATUS_OK, "WORKFLOW_XID_45",
			     "follow the Xids logged with it (alone: restart the fabric manager)", NULL },
	[XID_ACT_RESET_GPU] = { STATUS_FAIL, "RESET_GPU", "reset the GPU",
				"drain the GPU's jobs, then reset it: `nvidia-smi -r -i %1$s` (or reboot the node); "
				"open a case with NVIDIA (drain and RMA) if it repeats" },
	[XID_ACT_REBOOT] = { STATUS_FAIL, "RESTART_BM", "reboot the node",
			     "the GPU fell off the bus (%1$s): drain and reboot the node, check power, seating and "
			     "PCIe errors (BMC log); RMA if it repeats" },
	[XID_ACT_ECC_DBE] = { STATUS_FAIL, "WORKFLOW_XID_48",
			      "check retired pages and row remapping, then reset the GPU",
			      "check `nvidia-smi -q -d ECC,ROW_REMAPPER -i %1$s`; drain and reset the GPU "
			      "(`nvidia-smi -r -i %1$s`) to apply pending row remaps; RMA if remapping failed or it "
			      "repeats" },
	[XID_ACT_ECC_WATCH] = { STATUS_WARN, "IGNORE or RESTART_APP",
				"the node stays in service; watch the GPU's ECC counters and row remapping",
				"check `nvidia-smi -q -d ECC,ROW_REMAPPER -i %1$s`: a pending remap needs a GPU reset "
				"(`nvidia-smi -r -i %1$s`), a failed one an RMA" },
	[XID_ACT_NVLINK] = { STATUS_FAIL, "WORKFLOW_NVLINK_ERR", "check the NVLinks, then reset the GPU",
			     "check NVLink (`nvidia-smi nvlink -s -i %1$s`) and the NVSwitch and fabric manager "
			     "logs; drain and reset the GPU (`nvidia-smi -r -i %1$s`)" },
	[XID_ACT_NVLINK5] = { STATUS_WARN, "WORKFLOW_NVLINK5_ERR",
			      "decode the message's interrupt info with the catalog's Xid 144-150 table "
			      "(IGNORE or RESET_GPU)",
			      "check the links (`nvidia-smi nvlink -s -i %1$s`); when the catalog's decode says "
			      "fatal, drain and reset the GPU (`nvidia-smi -r -i %1$s`)" },
	[XID_ACT_SUPPORT] = { STATUS_WARN, "CONTACT_SUPPORT", "open a case with NVIDIA",
			      "collect `nvidia-bug-report.sh` and open a case with NVIDIA; drain and RMA the GPU "
			      "(%1$s) if it repeats" },
	[XID_ACT_MECHANICAL] = { STATUS_WARN, "CHECK_MECHANICALS", "check the GPU's power cables and seating",
				 "check the auxiliary power cables and seating of %1$s; "
				 "`nvidia-smi -q -d POWER -i %1$s` shows its power state" },
	[XID_ACT_UPDATE] = { STATUS_WARN, "UPDATE_SWFW", "update the driver or the GPU firmware",
			     "compare `cat /proc/driver/nvidia/version` with the supported release and update the "
			     "driver or the firmware of %1$s" },
	[XID_ACT_RESTART_VM] = { STATUS_WARN, "RESTART_VM", "restart the confidential-computing VM",
				 "restart the VM that uses %1$s; `nvidia-smi -q -i %1$s` shows its state" },
	[XID_ACT_UVM] = { STATUS_WARN, "CHECK_UVM", "check the UVM driver and the application's managed memory",
			  "`dmesg | grep -i uvm` for nvidia_uvm errors near the Xid on %1$s; restart the "
			  "application" },
	[XID_ACT_RECOVERY] = { STATUS_WARN, "XID_154", "perform the recovery action the message names",
			       "`nvidia-smi -q -i %1$s` shows the GPU's pending recovery action" },
	[XID_ACT_NONE_LISTED] = { STATUS_WARN, "none listed", "the catalog lists no action yet",
				  "`nvidia-smi -q -i %1$s` shows the GPU's state; read the code in NVIDIA's XID "
				  "errors documentation" },
};

const struct xid_advice *xid_advise(enum xid_action a)
{
	return &advice[a];
}

/* Xid 154: NVML's nvmlGpuRecoveryAction_t (NVML API reference; the values
 * the driver prints in the message: 0 None, 1 GPU Reset Required, 2 Node
 * Reboot Required, 3 Drain P2P, 4 Drain and Reset). */
static const struct xid_advice recovery[] = {
	{ STATUS_OK, "XID_154", "recovery action None: nothing to do", NULL },
	{ STATUS_FAIL, "XID_154", "recovery action GPU Reset Required",
	  "drain the GPU's jobs, then reset it: `nvidia-smi -r -i %1$s` (or reboot the node)" },
	{ STATUS_FAIL, "XID_154", "recovery action Node Reboot Required", "drain the node and reboot it" },
	{ STATUS_WARN, "XID_154", "recovery action Drain P2P: stop peer-to-peer traffic to the GPU",
	  "drain the jobs that use %1$s; `nvidia-smi -q -i %1$s` shows when the action clears" },
	{ STATUS_FAIL, "XID_154", "recovery action Drain and Reset",
	  "drain the GPU's jobs, then reset it: `nvidia-smi -r -i %1$s`" },
};

const struct xid_advice *xid_advise_recovery(int action)
{
	if (action < 0 || (size_t)action >= sizeof(recovery) / sizeof(recovery[0]))
		return &advice[XID_ACT_RECOVERY];
	return &recovery[action];
}
