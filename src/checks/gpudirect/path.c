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
 * NODE path of such a node is ok (docs/failure-modes.md T05). */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct gpu_pair *pairs = NULL;
	size_t n = gpu_pairs(inv, &pairs);
	char level_txt[160], model[128], key[96];
	if (n == 0 || inv->rdma.n == 0) {
		check_add(c, STATUS_SKIP, "gpudirect", "%s", n == 0 ? "no NVIDIA GPU on PCI" : "no RDMA device");
		free(pairs);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct gpu_pair *p = &pairs[i];
		const char *cls = path_class_name(p->cls);
		struct finding *f;
		enum path_class level = gdr_level_for(inv, p->gpu, level_txt, sizeof(level_txt));
		gpu_model(inv, p->gpu, model, sizeof(model));
		if (!p->nic || p->cls == PATH_UNKNOWN) {
			check_add(c, STATUS_SKIP, p->gpu->bdf, "path to the RDMA NICs unknown (PCI hierarchy not recorded)");
			continue;
		}
		if (!nic_gdr_capable(inv, p->nic)) {
			/* no level makes NCCL use GPUDirect RDMA with this NIC */
			f = check_add(c, STATUS_SKIP, p->gpu->bdf, "nearest NIC %s (%s) is %s, but it cannot do GPUDirect "
								   "RDMA (see gpudirect.nic): NCCL_NET_GDR_LEVEL does not apply",
				      p->nic->name, p->nic->pci_bdf, cls);
		} else if (p->cls > level) {
			f = check_add(c, STATUS_WARN, p->gpu->bdf, "nearest NIC %s (%s) is %s, beyond %s: NCCL will not use "
								   "GPUDirect RDMA for this GPU",
				      p->nic->name, p->nic->pci_bdf, cls, level_txt);
			if (p->cls <= PATH_PXB) /* a level below NCCL's default: LOC, PIX */
				finding_hint(f, "unset NCCL_NET_GDR_LEVEL (NCCL's default PXB allows this %s path) or set "
						"NCCL_NET_GDR_LEVEL=%s",
					     cls, cls);
			else
				finding_hint(f, "set NCCL_NET_GDR_LEVEL=%s to allow it (bandwidth through the host "
						"bridge/CPU interconnect may be lower), or put a NIC under the GPU's PCIe "
						"switch",
					     p->cls >= PATH_SYS ? "SYS" : "PHB");
			finding_requires(f, gdr_nic_key(p->nic->name, key, sizeof(key)));
		} else if (p->cls == PATH_SYS) {
			f = check_add(c, STATUS_WARN, p->gpu->bdf, "nearest NIC %s (%s) is SYS (across sockets): GPUDirect "
								   "RDMA crosses the CPU interconnect",
				      p->nic->name, p->nic->pci_bdf);
			finding_hint(f, "place a NIC on the GPU's socket (same PCIe switch ideally: PIX)");
		} else {
			f = check_add(c, STATUS_OK, p->gpu->bdf, "nearest NIC %s (%s) is %s (within %s)", p->nic->name,
				      p->nic->pci_bdf, cls, level_txt);
		}
		finding_detail(f, "%s, NUMA node %d; NIC NUMA node %d", model, p->gpu->numa_node,
			       p->nic_pci ? p->nic_pci->numa_node : -1);
	}
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
