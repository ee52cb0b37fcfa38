/* gpudirect.path: for every GPU, its nearest RDMA NIC and the PCIe path
 * class between them (inventory/topo.c; the classes of `nvidia-smi topo -m`), against the
 * effective NCCL_NET_GDR_LEVEL (default PXB; NCCL documentation, Environment Variables). NCCL uses
 * GPUDirect RDMA only when the path is at or below that level: beyond it
 * the GPU's traffic is staged through host memory — warn, naming GPU, NIC,
 * path and the setting that would change it. SYS (across sockets) is a
 * warn in any case: GPUDirect RDMA across the CPU interconnect is slow
 * (the legend of `nvidia-smi topo -m`: SYS crosses the SMP interconnect
 * between NUMA nodes). A nearest NIC that cannot do GPUDirect RDMA at all
 * (gpudirect.nic) is a skip: no level makes NCCL use it, so no level is
 * suggested. A GPU of a superchip (Grace Hopper, Grace Blackwell) reaches
 * the NICs of its CPU over NVLink-C2C and that CPU's root ports: NCCL calls
 * the path P2C, and its default level allows it (gdr_level_for), so the
 * NODE path of such a node is ok (docs/failure-modes.md T05).
 *
 * NCCL_IB_HCA shapes the path too: a NIC it leaves out is not in NCCL's
 * topology (NCCL src/transport/net_ib.cc filters devices before the graph
 * search), so a GPU whose nearest NIC is excluded uses the nearest NIC
 * that NCCL does select, and that path is the one judged against the
 * level. */
#include "checks/check.h"
#include "checks/rdma/common.h"
#include "common.h"

#include <stdlib.h>

/* Does NCCL_IB_HCA select at least one port of d (active or not)? */
static bool hca_names(const struct nccl_list *hca, const struct rdma_dev *d)
{
	if (d->n_ports == 0)
		return nccl_list_selects(hca, d->name, -1);
	for (size_t k = 0; k < d->n_ports; k++)
		if (nccl_list_selects(hca, d->name, (int)d->ports[k].num))
			return true;
	return false;
}

static bool nccl_may_use(const struct rdma_dev *d, void *arg)
{
	for (size_t k = 0; k < d->n_ports; k++)
		if (nccl_uses_port(arg, d, &d->ports[k]))
			return true;
	return false;
}

/* When NCCL_IB_HCA leaves out the GPU's nearest NIC, NCCL's path is to
 * the nearest NIC it selects: *p gets that NIC and class, and *excluded
 * the one left out. False (a skip added) when NCCL selects no NIC at all. */
static bool apply_hca(struct check_ctx *c, const struct nccl_var *hv, const struct nccl_list *hca,
		      struct gpu_pair *p, const struct rdma_dev **excluded)
{
	*excluded = NULL;
	if (!hv || hca_names(hca, p->nic))
		return true;
	enum path_class cls;
	const struct rdma_dev *alt = topo_nearest_nic_where(c->inv, p->gpu, &cls, nccl_may_use, (void *)hca);
	if (!alt) {
		check_add(c, STATUS_SKIP, p->gpu->bdf, "nearest NIC %s is left out by NCCL_IB_HCA=%s (%s), and NCCL "
						       "selects no other active port (see rdma.nccl_ib_hca)",
			  p->nic->name, hv->value, hv->source);
		return false;
	}
	*excluded = p->nic;
	p->nic = alt;
	p->cls = cls;
	p->nic_pci = pci_find(&c->inv->pci, alt->pci_bdf);
	return true;
}

/* "nearest NIC mlx5_0 (0000:19:00.0) is" or, when NCCL_IB_HCA left the
 * nearest out, "nearest NIC mlx5_2 is left out by NCCL_IB_HCA=... (...);
 * the nearest NIC NCCL selects, mlx5_3 (0000:ba:00.0), is" into buf. */
static const char *nic_phrase(const struct gpu_pair *p, const struct rdma_dev *excluded, const struct nccl_var *hv,
			      char *buf, size_t size)
{
	if (excluded)
		snprintf(buf, size, "nearest NIC %s is left out by NCCL_IB_HCA=%s (%s); the nearest NIC NCCL selects, "
				    "%s (%s), is",
			 excluded->name, hv->value, hv->source, p->nic->name, p->nic->pci_bdf);
	else
		snprintf(buf, size, "nearest NIC %s (%s) is", p->nic->name, p->nic->pci_bdf);
	return buf;
}

static void judge(struct check_ctx *c, struct gpu_pair *p, const struct nccl_var *hv, const struct nccl_list *hca)
{
	const struct inventory *inv = c->inv;
	char level_txt[160], model[128], key[96], who[512];
	const struct rdma_dev *excluded;
	struct finding *f;
	if (!p->nic || p->cls == PATH_UNKNOWN) {
		check_add(c, STATUS_SKIP, p->gpu->bdf, "path to the RDMA NICs unknown (PCI hierarchy not recorded)");
		return;
	}
	if (!apply_hca(c, hv, hca, p, &excluded))
		return;
	const char *cls = path_class_name(p->cls);
	enum path_class level = gdr_level_for(inv, p->gpu, level_txt, sizeof(level_txt));
	gpu_model(inv, p->gpu, model, sizeof(model));
	nic_phrase(p, excluded, hv, who, sizeof(who));
	if (!nic_gdr_capable(inv, p->nic)) {
		/* no level makes NCCL use GPUDirect RDMA with this NIC */
		f = check_add(c, STATUS_SKIP, p->gpu->bdf, "%s %s, but it cannot do GPUDirect RDMA (see gpudirect.nic): "
							   "NCCL_NET_GDR_LEVEL does not apply",
			      who, cls);
	} else if (p->cls > level) {
		f = check_add(c, STATUS_WARN, p->gpu->bdf, "%s %s, beyond %s: NCCL will not use GPUDirect RDMA for this GPU",
			      who, cls, level_txt);
		if (p->cls <= PATH_PXB) /* a level below NCCL's default: LOC, PIX */
			finding_hint(f, "unset NCCL_NET_GDR_LEVEL (NCCL's default PXB allows this %s path) or set "
					"NCCL_NET_GDR_LEVEL=%s",
				     cls, cls);
		else if (excluded)
			finding_hint(f, "set NCCL_NET_GDR_LEVEL=%s to allow GPUDirect RDMA over this path (bandwidth "
					"through the host bridge/CPU interconnect may be lower), or let NCCL use %s (%s "
					"NCCL_IB_HCA, %s)",
				     p->cls >= PATH_SYS ? "SYS" : "PHB", excluded->name,
				     hca->exclude ? "take it out of the exclusion in" : "add it to", hv->source);
		else
			finding_hint(f, "set NCCL_NET_GDR_LEVEL=%s to allow it (bandwidth through the host "
					"bridge/CPU interconnect may be lower), or put a NIC under the GPU's PCIe switch",
				     p->cls >= PATH_SYS ? "SYS" : "PHB");
		finding_requires(f, gdr_nic_key(p->nic->name, key, sizeof(key)));
	} else if (p->cls == PATH_SYS) {
		f = check_add(c, STATUS_WARN, p->gpu->bdf, "%s SYS (across sockets): GPUDirect RDMA crosses the CPU "
							   "interconnect",
			      who);
		finding_hint(f, "place a NIC on the GPU's socket (same PCIe switch ideally: PIX)");
	} else {
		f = check_add(c, STATUS_OK, p->gpu->bdf, "%s %s (within %s)", who, cls, level_txt);
	}
	finding_detail(f, "%s, NUMA node %d; NIC NUMA node %d", model, p->gpu->numa_node,
		       p->nic_pci ? p->nic_pci->numa_node : -1);
}

static int run(struct check_ctx *c)
{
	struct gpu_pair *pairs = NULL;
	size_t n = gpu_pairs(c->inv, &pairs);
	if (n == 0 || c->inv->rdma.n == 0) {
		check_add(c, STATUS_SKIP, "gpudirect", "%s", n == 0 ? "no NVIDIA GPU on PCI" : "no RDMA device");
		free(pairs);
		return 0;
	}
	struct nccl_list hca;
	const struct nccl_var *hv = nccl_hca(c->inv, &hca);
	for (size_t i = 0; i < n; i++)
		judge(c, &pairs[i], hv, &hca);
	nccl_list_free(&hca);
	free(pairs);
	return 0;
}

const struct check_def check_gpudirect_path = {
	.id = "gpudirect.path",
	.section = "GPU-NIC Topology",
	.summary = "each GPU's nearest RDMA NIC and PCIe path class (PIX..SYS) against NCCL_NET_GDR_LEVEL",
	.run = run,
	.needs = NEEDS_GPU,
	.nccl_vars = true,
};
