/* rdma.nccl_p2p: NCCL_P2P_DISABLE / NCCL_P2P_LEVEL do not switch off the
 * GPU peer-to-peer transport on a node whose GPUs share NVLink.
 *
 * NCCL_P2P_DISABLE=1 (only the value 1 acts) or NCCL_P2P_LEVEL=LOC (or the
 * legacy 0) leaves no GPU pair within NCCL's P2P level (NCCL
 * src/graph/paths.cc ncclGetLevel, ncclTopoCheckP2p). P2P is all or
 * nothing: NCCL cannot keep NVLink and drop PCIe. Without it NCCL moves
 * GPU-to-GPU traffic through host shared memory (the SHM transport, "via
 * SHM" in its log) or, with NCCL_SHM_DISABLE=1 too, through the network
 * (NCCL documentation, Environment Variables: NCCL_P2P_DISABLE,
 * NCCL_SHM_DISABLE). The setting is often copied from a fix for a PCIe box
 * where P2P hung because of ACS (NVIDIA/nccl#631).
 *
 * NVLink from files: NVSwitch functions on PCI (vendor 10de, class
 * 0x0680xx: HGX/DGX baseboards), or live NVML NVLinks up. There P2P off is
 * a fail. On other nodes with several GPUs it is a warn: PCIe P2P (and
 * NVLink bridges, which no file shows) are off too. One GPU: no effect. */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>

static void off(struct check_ctx *c, const struct nccl_var *by, const struct nccl_node *n)
{
	const struct nccl_var *shm = nccl_shm_off(c->inv);
	char place[256], via[160], fabric[160];
	struct finding *f;
	nccl_var_place(by, place, sizeof(place));
	if (shm)
		snprintf(via, sizeof(via), "through the network transport (NIC loopback or TCP sockets: %s=%s, %s, turns "
					   "off host shared memory too)",
			 shm->name, shm->value, shm->source);
	else
		snprintf(via, sizeof(via), "through host shared memory (SHM transport: `via SHM` in NCCL's log)");
	if (n->gpus + n->unidentified <= 1) {
		check_add(c, STATUS_OK, by->name, "=%s (%s) turns off NCCL's P2P transport, which joins GPUs: no effect "
						  "on this node with %zu GPU",
			  by->value, by->source, n->gpus);
		return;
	}
	if (n->nvlink) {
		if (n->nvswitches)
			snprintf(fabric, sizeof(fabric), "joined by NVLink through %zu NVSwitch%s (%s%s)", n->nvswitches,
				 n->nvswitches == 1 ? "" : "es", n->nvswitch_bdf, n->nvswitches > 1 ? ", ..." : "");
		else
			snprintf(fabric, sizeof(fabric), "with NVLinks up on %zu of them (NVML)", n->nvlink_gpus);
		f = check_add(c, STATUS_FAIL, by->name, "=%s (%s) turns off NCCL's P2P transport on a node whose %zu GPUs "
							"are %s: NCCL moves GPU-to-GPU traffic off NVLink, %s, at a "
							"fraction of NVLink's bandwidth",
			      by->value, by->source, n->gpus, fabric, via);
	} else {
		f = check_add(c, STATUS_WARN, by->name, "=%s (%s) turns off NCCL's P2P transport between this node's %zu "
							"GPUs (PCIe, and NVLink bridges if fitted, which PCI files do not "
							"show): NCCL moves GPU-to-GPU traffic %s",
			      by->value, by->source, n->gpus, via);
	}
	finding_hint(f, "remove %s from %s (NCCL then uses P2P; `nvidia-smi topo -m` shows how GPUs are joined); if it "
			"was set because P2P hung, fix ACS or the IOMMU on the PCIe path instead (see gpudirect.acs)",
		     by->name, place);
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_var *by = NULL;
	struct nccl_node n;
	nccl_node_get(inv, &n);
	switch (nccl_p2p_state(inv, &by)) {
	case NCCL_P2P_UNKNOWN:
		nccl_skip_computed(c, by);
		break;
	case NCCL_P2P_OFF:
		off(c, by, &n);
		break;
	case NCCL_P2P_LEVEL_SET:
		check_add(c, STATUS_OK, by->name, "=%s (%s): NVLink paths are within it, P2P stays on for them%s", by->value,
			  by->source, n.nvswitches ? " (NVSwitch node)" : "");
		break;
	case NCCL_P2P_DEFAULT: {
		const struct nccl_var *d = nccl_get(&inv->nccl, "NCCL_P2P_DISABLE");
		if (d)
			check_add(c, STATUS_OK, d->name, "=%s (%s): NCCL acts only on the value 1, so P2P stays on", d->value,
				  d->source);
		else
			check_add(c, STATUS_OK, "NCCL_P2P_DISABLE", "not set: NCCL uses P2P over NVLink and PCIe paths up to "
								     "its level (default PXB)");
		break;
	}
	}
	return 0;
}

const struct check_def check_rdma_nccl_p2p = {
	.id = "rdma.nccl_p2p",
	.section = "NCCL Configuration",
	.summary = "NCCL_P2P_DISABLE / NCCL_P2P_LEVEL do not switch off GPU peer-to-peer on NVLink/NVSwitch nodes",
	.run = run,
	.nccl_vars = true,
};
