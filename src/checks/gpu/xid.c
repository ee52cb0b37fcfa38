/* gpu.xid: Xid errors in the kernel log, per GPU and code.
 *
 * Classified with NVIDIA's XID errors documentation: 48, 62, 64, 74, 79,
 * 92, 94, 95, 119, 120 mean hardware trouble or a state only a reset or
 * reboot clears (fail); 13, 31, 43, 45 are application faults (ok, with a
 * note); others are reported as warnings. The log covers the time since
 * boot (or what the ring buffer still holds). */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

static const char *action(int code)
{
	switch (code) {
	case 48: case 64: case 92: case 94: case 95:
		return "check `nvidia-smi -q -d ECC,ROW_REMAPPER -i %1$s`; reset the GPU (`nvidia-smi -r -i %1$s`) "
		       "to apply pending row remaps; RMA if it repeats";
	case 74:
		return "check NVLink (`nvidia-smi nvlink -s -i %s`) and the NVSwitch/fabric manager logs; reset the GPU";
	case 79:
		return "the GPU fell off the bus (%s): reboot the node and check power, seating and PCIe errors "
		       "(BMC log); RMA if it repeats";
	default:
		return "reset the GPU (nvidia-smi -r -i %s) or reboot; RMA if it repeats";
	}
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct xid_info *x = &inv->xid;
	if (!x->known) {
		check_add(c, STATUS_SKIP, "kernel log", "%s", x->why_unknown ? x->why_unknown : "not read");
		return 0;
	}
	if (x->n == 0) {
		check_add(c, STATUS_OK, "kernel log", "no Xid errors in %s", x->source);
		return 0;
	}
	const struct pci_dev **gpus = NULL;
	size_t ng = topo_gpus(inv, &gpus);
	for (size_t i = 0; i < x->n; i++) {
		const struct xid_event *e = &x->v[i];
		const char *bdf = e->pci;
		for (size_t k = 0; k < ng; k++)
			if (xid_names(e->pci, gpus[k]))
				bdf = gpus[k]->bdf;
		const char *m = xid_meaning(e->code);
		enum xid_class cl = xid_classify(e->code);
		enum status st = cl == XID_FATAL ? STATUS_FAIL : cl == XID_APP ? STATUS_OK : STATUS_WARN;
		struct finding *f = check_add(c, st, bdf, "Xid %d x%u: %s", e->code, e->count, m ? m : "see NVIDIA's Xid catalog");
		finding_detail(f, "last: %s", e->last);
		if (st != STATUS_OK)
			finding_hint(f, action(e->code), bdf);
	}
	free(gpus);
	return 0;
}

const struct check_def check_gpu_xid = {
	.id = "gpu.xid",
	.section = "Xid Errors",
	.summary = "Xid errors in the kernel log, grouped by GPU and code and classified (NVIDIA XID errors documentation)",
	.run = run,
};
