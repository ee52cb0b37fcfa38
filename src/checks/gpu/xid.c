/* gpu.xid: Xid errors in the kernel log, per GPU and code, judged with
 * NVIDIA's Xid catalog (common.c): each finding names the catalog's
 * immediate action (restart the application, reset the GPU, reboot the
 * node, open a case and RMA). Codes whose action is IGNORE or RESTART_APP
 * leave the node in service (ok, with the action in the message); memory
 * errors 92 and 94 warn so that the ECC and row-remap state gets a look;
 * RESET_GPU, RESTART_BM and the double-bit ECC and NVLink workflows fail.
 * Xid 154 is judged by the recovery action its message names. The log
 * covers the time since boot (or what the ring buffer still holds). */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

static void judge(struct check_ctx *c, const struct xid_event *e, const char *bdf)
{
	const struct xid_entry *x = xid_lookup(e->code);
	const struct xid_advice *a = !x			      ? xid_advise(XID_ACT_SUPPORT)
				     : x->action == XID_ACT_RECOVERY ? xid_advise_recovery(e->recovery)
								     : xid_advise(x->action);
	struct finding *f;
	if (!x)
		f = check_add(c, STATUS_WARN, bdf, "Xid %d x%u: not in NVIDIA's Xid catalog (as of October 2025); "
						   "read the driver's message; if it repeats, open a case with NVIDIA",
			      e->code, e->count);
	else
		f = check_add(c, a->status, bdf, "Xid %d x%u: %s; NVIDIA's action: %s (%s)", e->code, e->count,
			      x->meaning, a->action, a->bucket);
	finding_detail(f, "last: %s", e->last);
	if (a->hint)
		finding_hint(f, a->hint, bdf);
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
		judge(c, e, bdf);
	}
	free(gpus);
	return 0;
}

const struct check_def check_gpu_xid = {
	.id = "gpu.xid",
	.section = "Xid Errors",
	.summary = "Xid errors in the kernel log, per GPU and code, with the action NVIDIA's Xid catalog recommends "
		   "(restart the application, reset the GPU, reboot, open a case)",
	.run = run,
};
