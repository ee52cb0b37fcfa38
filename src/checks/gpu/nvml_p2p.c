/* gpu.nvml_p2p: NVML reports peer-to-peer read and write OK between GPUs
 * joined by NVLink (live only; F10).
 *
 * NCCL asks NVML the same for every pair its topology joins by NVLink
 * (src/graph/paths.cc, nvmlDeviceGetP2PStatus with the read and write
 * capabilities): a status other than OK makes it stop at init, warning
 * that P2P is disabled between NVLink-connected GPUs "probably due to a
 * hardware issue", unless NCCL_IGNORE_DISABLED_P2P=1, which hides the
 * fault and runs that pair without P2P (NVIDIA/nccl#2329). The cause is a
 * degraded link, a GPU in a bad state or a fabric problem.
 *
 * Pairs asked (probe/nvml_probe.c): every two GPUs that both have NVLinks
 * up. A pair is joined by NVLink when NVML's NVLink P2P capability is OK,
 * or on a node with NVSwitches on PCI (HGX/DGX: every GPU reaches every
 * other through them). Pairs of bridged PCIe cards without a bridge
 * between them are not joined and not judged. NCCL_P2P_DISABLE and
 * NCCL_P2P_LEVEL are rdma.nccl_p2p's: this check judges the hardware's
 * answer only. */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>

static const char *p2p_name(int s)
{
	static const char *const names[] = { "OK", "chipset not supported", "GPU not supported",
					     "IOH topology not supported", "disabled by registry key",
					     "not supported", "unknown" };
	if (s == GPU_UNKNOWN)
		return "not reported";
	return s >= 0 && s < (int)(sizeof(names) / sizeof(names[0])) ? names[s] : "unknown";
}

/* One pair: true if judged (joined by NVLink). */
static bool pair(struct check_ctx *c, const struct nvml_info *n, const struct nvml_gpu *g,
		 const struct nvml_p2p_peer *p, bool nvswitch)
{
	const struct nvml_gpu *h = &n->v[p->peer];
	char ba[32], bb[32], subject[80];
	if (p->nvlink != 0 && !nvswitch)
		return false;
	const char *sa = nvml_subject(g, ba, sizeof(ba)), *sb = nvml_subject(h, bb, sizeof(bb));
	snprintf(subject, sizeof(subject), "%s<->%s", sa, sb);
	if (p->nvlink == 0 && p->read == 0 && p->write == 0)
		return true;
	bool bad = p->nvlink > 0 || p->read > 0 || p->write > 0;
	if (!bad) {
		/* a call failed (gpu.nvml names it): cannot tell, never OK */
		struct finding *w = check_add(c, STATUS_WARN, subject, "NVML could not report P2P between GPU %u and GPU "
									"%u (NVLink %s, read %s, write %s)",
					      g->index, h->index, p2p_name(p->nvlink), p2p_name(p->read), p2p_name(p->write));
		finding_hint(w, "`nvidia-smi topo -p2p r` and `nvidia-smi topo -p2p w` show the status per pair");
		return true;
	}
	const struct nccl_var *ign = nccl_get(&c->inv->nccl, "NCCL_IGNORE_DISABLED_P2P");
	char masked[256] = "";
	if (ign)
		snprintf(masked, sizeof(masked), "; %s=%s is set (%s): NCCL does not stop, it runs this pair without "
						 "P2P and hides the fault",
			 ign->name, ign->value, ign->source);
	struct finding *f = check_add(c, STATUS_FAIL, subject,
				      "NVML reports P2P between GPU %u and GPU %u (both with NVLinks up%s) as NVLink %s, "
				      "read %s, write %s: NCCL stops at init (P2P disabled between NVLink-connected "
				      "GPUs)%s",
				      g->index, h->index, nvswitch ? ", NVSwitch node" : "", p2p_name(p->nvlink),
				      p2p_name(p->read), p2p_name(p->write), masked);
	finding_hint(f, "reset both GPUs (`nvidia-smi -r -i %u`, `nvidia-smi -r -i %u`) or reboot, then `nvidia-smi topo "
			"-p2p r` and `nvidia-smi topo -p2p w` must show OK for the pair%s; drain the node if it persists",
		     g->index, h->index, ign ? "; then remove NCCL_IGNORE_DISABLED_P2P" : "");
	return true;
}

static int run(struct check_ctx *c)
{
	const struct nvml_info *n = nvml_usable(c);
	size_t up = 0, judged = 0, asked = 0, before = c->report->n;
	bool truncated = false;
	for (size_t i = 0; n && i < n->n; i++)
		up += n->v[i].nvlink_links - n->v[i].nvlink_down > 0;
	if (!n)
		return 0;
	if (up < 2) {
		check_add(c, STATUS_SKIP, "nvml", "not applicable: %zu GPU%s with NVLinks up (NVML)", up, up == 1 ? "" : "s");
		return 0;
	}
	if (!n->p2p_queried) {
		check_add(c, STATUS_SKIP, "nvml", "this NVML does not export nvmlDeviceGetP2PStatus");
		return 0;
	}
	bool nvswitch = nvswitch_count(c->inv) > 0;
	for (size_t i = 0; i < n->n; i++) {
		truncated |= n->v[i].p2p_truncated;
		for (int k = 0; k < n->v[i].n_p2p; k++, asked++)
			judged += pair(c, n, &n->v[i], &n->v[i].p2p[k], nvswitch);
	}
	if (c->report->n > before)
		return 0;
	if (judged == 0)
		check_add(c, STATUS_SKIP, "nvml", "none of the %zu pairs of GPUs with NVLinks up is joined by NVLink "
						  "(NVML's NVLink P2P capability)",
			  asked);
	else
		check_add(c, STATUS_OK, "nvml", "P2P read and write OK over NVLink for %zu pair%s of GPUs%s%s", judged,
			  judged == 1 ? "" : "s", asked > judged ? " (the other pairs are not joined by NVLink)" : "",
			  truncated ? "; pairs past the first 32 peers of a GPU were not asked" : "");
	return 0;
}

const struct check_def check_gpu_nvml_p2p = {
	.id = "gpu.nvml_p2p",
	.section = "NVML (live)",
	.summary = "live: NVML reports P2P read and write OK between GPUs joined by NVLink (NCCL stops otherwise)",
	.run = run,
	.needs = NEEDS_LIVE,
};
