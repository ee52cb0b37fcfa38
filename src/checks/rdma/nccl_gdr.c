/* rdma.nccl_gdr: no NCCL variable switches off or weakens the GPUDirect
 * RDMA that the node can do (gpudirect.method).
 *
 * What NCCL does (NVIDIA/nccl src/graph/paths.cc ncclTopoCheckGdr,
 * src/init.cc dmaBufSupported, src/graph/topo.cc; NCCL documentation,
 * Environment Variables):
 *   - NCCL_NET_GDR_LEVEL=LOC (or the legacy 0) allows no GPU-NIC path, so
 *     GPUDirect RDMA is off for every GPU: fail, once for the node.
 *     Other levels are judged per GPU against its NIC path by
 *     gpudirect.path, and their spelling by rdma.nccl_levels.
 *   - NCCL_NET_GDR_READ=0: sends do not read GPU memory directly; each send
 *     is staged through host memory. NCCL's default (-2) reads directly on
 *     GPUs of compute capability 8.0 and later (Ampere: PCI device 0x2000
 *     and up, or CUDA's answer when live): warn there. On older GPUs 0 is
 *     about NCCL's own default (ok).
 *   - NCCL_DMABUF_ENABLE=0 (any value strtoll reads as 0): NCCL does not
 *     register GPU memory with the NIC through DMA-BUF; a NIC then does
 *     GPUDirect RDMA only through legacy peer memory (nvidia_peermem),
 *     else NCCL logs "GPU Direct RDMA Disabled for HCA" and stages all
 *     traffic through host memory. Fail where DMA-BUF is the node's method
 *     and no peer-memory module is loaded; ok where peer memory carries it. */
#include "checks/check.h"
#include "checks/gpudirect/common.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

/* PCI device IDs of Ampere (compute capability 8.0) and later start at
 * 0x2000 (GA100: 0x20b0 A100 SXM4; Turing ends below, pci.ids). */
#define NV_FIRST_AMPERE_DEVICE 0x2000u

static bool gdr_read_default_on(const struct inventory *inv)
{
	bool on = false;
	if (inv->cuda)
		for (size_t i = 0; i < inv->cuda->n; i++)
			on |= inv->cuda->v[i].cc_major >= 8;
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		on |= topo_is_gpu(inv, p) && !p->ids_err && p->device >= NV_FIRST_AMPERE_DEVICE;
	}
	return on;
}

static void gdr_level_var(struct check_ctx *c, const struct gdr_state *s)
{
	const struct nccl_var *v = nccl_get(&c->inv->nccl, "NCCL_NET_GDR_LEVEL");
	char place[256];
	if (!v || nccl_skip_computed(c, v))
		return;
	bool loc = !strcmp(v->value, "LOC") || (v->value[0] >= '0' && v->value[0] <= '9' && strtol(v->value, NULL, 0) == 0);
	if (!loc) {
		check_add(c, STATUS_OK, v->name, "=%s (%s): each GPU's NIC path is compared with it by gpudirect.path",
			  v->value, v->source);
		return;
	}
	if (!s->gdr_possible) {
		check_add(c, STATUS_OK, v->name, "=%s (%s) forbids GPUDirect RDMA, which this node cannot do anyway (%s)",
			  v->value, v->source, s->why);
		return;
	}
	struct finding *f = check_add(c, STATUS_FAIL, v->name, "=%s (%s) switches GPUDirect RDMA off for all %zu GPUs: "
							       "NCCL stages every inter-node transfer through host memory",
				      v->value, v->source, s->gpus);
	finding_hint(f, "remove %s from %s (NCCL's default allows GPU-NIC paths up to PXB; gpudirect.path compares each "
			"GPU's NIC path)",
		     v->name, nccl_var_place(v, place, sizeof(place)));
	finding_requires(f, "gdr_possible");
}

static void gdr_read(struct check_ctx *c, const struct gdr_state *s)
{
	const struct nccl_var *v = nccl_get(&c->inv->nccl, "NCCL_NET_GDR_READ");
	long long n;
	char place[256];
	if (!v || nccl_skip_computed(c, v))
		return;
	if (nccl_param_int(v->value, &n, NULL) < 0 || n != 0) {
		check_add(c, STATUS_OK, v->name, "=%s (%s): NCCL may read GPU memory directly when sending", v->value,
			  v->source);
		return;
	}
	if (!s->gdr_possible || !gdr_read_default_on(c->inv)) {
		check_add(c, STATUS_OK, v->name, "=%s (%s): %s", v->value, v->source,
			  s->gdr_possible ? "NCCL's own default on GPUs older than Ampere (compute capability 8.0) without "
					    "NVLink"
					  : "no GPUDirect RDMA on this node anyway");
		return;
	}
	struct finding *f = check_add(c, STATUS_WARN, v->name, "=%s (%s): NCCL does not send from GPU memory directly "
							       "(GPUDirect RDMA read) and stages every send through "
							       "host memory; its default on these Ampere-or-later GPUs "
							       "is to read directly",
				      v->value, v->source);
	finding_hint(f, "remove %s from %s", v->name, nccl_var_place(v, place, sizeof(place)));
	finding_requires(f, "gdr_possible");
}

static void dmabuf(struct check_ctx *c, const struct gdr_state *s)
{
	const struct nccl_var *v = nccl_get(&c->inv->nccl, "NCCL_DMABUF_ENABLE");
	long long n;
	char place[256];
	if (!v || nccl_skip_computed(c, v))
		return;
	if (nccl_param_int(v->value, &n, NULL) < 0 || n != 0) {
		check_add(c, STATUS_OK, v->name, "=%s (%s): NCCL may use DMA-BUF", v->value, v->source);
		return;
	}
	if (s->method == GDR_NONE) {
		check_add(c, STATUS_SKIP, v->name, "=%s (%s): no GPUDirect RDMA method on this node (see gpudirect.method)",
			  v->value, v->source);
	} else if (s->peermem_present) {
		check_add(c, STATUS_OK, v->name, "=%s (%s): NCCL uses legacy peer memory (%s) for GPUDirect RDMA instead "
						 "of DMA-BUF",
			  v->value, v->source, s->peermem_how);
	} else {
		struct finding *f = check_add(c, STATUS_FAIL, v->name, "=%s (%s) turns off DMA-BUF, this node's only "
								       "GPUDirect RDMA method (no peer-memory module "
								       "loaded): NCCL logs `GPU Direct RDMA Disabled` for "
								       "every HCA and stages all traffic through host memory",
					      v->value, v->source);
		finding_hint(f, "remove %s from %s", v->name, nccl_var_place(v, place, sizeof(place)));
		finding_requires(f, "dmabuf_possible");
	}
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct gdr_state s;
	gdr_state_get(inv, &s);
	size_t before = c->report->n;
	gdr_level_var(c, &s);
	gdr_read(c, &s);
	dmabuf(c, &s);
	if (c->report->n == before)
		check_add(c, STATUS_OK, SUBJECT_NODE, "NCCL_NET_GDR_LEVEL, NCCL_NET_GDR_READ and NCCL_DMABUF_ENABLE not "
						      "set: NCCL's defaults use GPUDirect RDMA wherever the node allows it");
	return 0;
}

const struct check_def check_rdma_nccl_gdr = {
	.id = "rdma.nccl_gdr",
	.section = "NCCL Configuration",
	.summary = "NCCL_NET_GDR_LEVEL=LOC, NCCL_NET_GDR_READ=0 and NCCL_DMABUF_ENABLE=0 do not switch off GPUDirect RDMA",
	.run = run,
	.nccl_vars = true,
};
