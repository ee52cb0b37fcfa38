/* Xid errors in the kernel log (NVIDIA XID errors documentation), read by
 * src/inventory/xid.c from /dev/kmsg or a tree's .gpuready/kmsg. Part of
 * struct inventory (inventory.h). */
#ifndef GPUREADY_XID_H
#define GPUREADY_XID_H

#include <stdbool.h>
#include <stddef.h>

struct xid_event {
	char *pci;          /* as logged, no function: "0000:18:00" */
	int code;
	unsigned count;
	char *last;         /* the last such line, trimmed */
	/* Xid 154 only: the recovery action the last line changed to ("GPU
	 * recovery action changed from 0x0 (None) to 0x1 (GPU Reset
	 * Required)"), NVML's nvmlGpuRecoveryAction_t: 0 none, 1 GPU reset,
	 * 2 node reboot, 3 drain P2P, 4 drain and reset; -1 not read */
	int recovery;
};

struct xid_info {
	bool known;         /* a kernel log was read */
	char *source;       /* "/dev/kmsg", "/.gpuready/kmsg" */
	char *why_unknown;  /* when !known */
	struct xid_event *v;
	size_t n;
};

#endif
