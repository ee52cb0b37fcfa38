/* GPUDirect RDMA method decision; see common.h.
 *
 * DMA-BUF needs the open NVIDIA kernel modules (dma-buf export of CUDA
 * memory exists only there) and a kernel with RDMA dma-buf MRs (5.12+);
 * bring-up guides commonly recommend 6.2+ and CONFIG_PCI_P2PDMA=y (NVIDIA
 * open-gpu-kernel-modules README; Linux drivers/infiniband/hw/mlx5/mr.c). Legacy
 * peer memory is detected as NCCL does: any of
 * /sys/kernel/mm/memory_peers/nv_mem/version, .../nv_mem_nc/version,
 * /sys/module/nvidia_peermem/version (NCCL src/transport/net_ib/gdr.cc). DMA-BUF is preferred
 * when both are usable (NCCL tries it first). */
#include "common.h"
#include "checks/rdma/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gdr_method_name(enum gdr_method m)
{
	return m == GDR_DMABUF ? "DMA-BUF" : m == GDR_PEERMEM ? "legacy peer memory (nvidia_peermem)" : "none";
}

bool nic_gdr_capable(const struct inventory *inv, const struct rdma_dev *d)
{
	const struct pci_dev *p = pci_find(&inv->pci, d->pci_bdf);
	if (p && !p->ids_err && p->vendor == VENDOR_MELLANOX)
		return nic_provider(p->device) != PROVIDER_MLX4;
	return !(d->name && !strncmp(d->name, "mlx4_", 5));
}

/* Why DMA-BUF cannot be used on a node with a driver loaded. */
static const char *dmabuf_why_not(const struct gdr_state *s)
{
	if (s->pre_turing)
		return "GPUs older than Turing cannot run the open kernel modules";
	return s->flavour != NV_FLAVOUR_OPEN ? "proprietary NVIDIA driver" : "kernel older than 5.12";
}

void gdr_state_get(const struct inventory *inv, struct gdr_state *s)
{
	memset(s, 0, sizeof(*s));
	const struct pci_dev **gpus = NULL;
	s->gpus = topo_gpus(inv, &gpus);
	free(gpus);
	s->nics = inv->rdma.n;
	for (size_t i = 0; i < inv->rdma.n; i++)
		s->gdr_nics += nic_gdr_capable(inv, &inv->rdma.v[i]);
	const struct nvidia_info *nv = &inv->nvidia;
	s->driver_loaded = nv->proc_present || modules_state(&inv->modules, "nvidia") == MODULE_LOADED;
	s->flavour = nv->flavour_proc;
	if (s->flavour == NV_FLAVOUR_UNKNOWN && nv->taint)
		s->flavour = strchr(nv->taint, 'P') ? NV_FLAVOUR_PROPRIETARY : NV_FLAVOUR_OPEN;
	s->kmaj = s->kmin = -1;
	kernel_version(inv->kernel.release, &s->kmaj, &s->kmin);
	s->kernel_dmabuf = s->kmaj > 5 || (s->kmaj == 5 && s->kmin >= 12);
	s->p2pdma = kconfig_get(&inv->kconfig, "CONFIG_PCI_P2PDMA");
	s->dmabuf_usable = s->driver_loaded && s->flavour == NV_FLAVOUR_OPEN && s->kernel_dmabuf;
	/* NCCL's peer-memory detection (NCCL src/transport/net_ib/gdr.cc), then the module list */
	if (nv->peermem_marker)
		s->peermem_how = nv->peermem_marker;
	else if (modules_state(&inv->modules, "nvidia_peermem") == MODULE_LOADED)
		s->peermem_how = "nvidia_peermem loaded";
	else if (modules_state(&inv->modules, "nv_peer_mem") == MODULE_LOADED)
		s->peermem_how = "nv_peer_mem loaded";
	s->peermem_present = s->peermem_how != NULL;
	s->provider = "mlx5_ib";
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		if (!nic_host_function(p))
			continue;
		if (!s->nic_functions++ && nic_provider(p->device) == PROVIDER_MLX4)
			s->provider = "mlx4_ib";
	}
	s->pre_turing = gpu_first_pre_turing(inv);
	s->gdr_possible = s->gpus > 0 && s->gdr_nics > 0;
	s->dmabuf_possible = s->gdr_possible && !s->pre_turing;

	if (s->gpus == 0)
		snprintf(s->why, sizeof(s->why), "no NVIDIA GPU on PCI");
	else if (s->nics == 0)
		snprintf(s->why, sizeof(s->why), "no RDMA device (GPUDirect RDMA is for multi-server training)");
	else if (s->gdr_nics == 0)
		snprintf(s->why, sizeof(s->why), "no RDMA NIC that can do GPUDirect RDMA (ConnectX-3/mlx4 cannot): "
						 "NCCL stages through host memory");
	else if (!s->driver_loaded)
		snprintf(s->why, sizeof(s->why), "the NVIDIA driver is not loaded");
	else if (s->dmabuf_usable) {
		s->method = GDR_DMABUF;
		snprintf(s->why, sizeof(s->why), "open NVIDIA driver %s and kernel %d.%d (>= 5.12)%s",
			 inv->nvidia.version ? inv->nvidia.version : "", s->kmaj, s->kmin,
			 s->peermem_present ? "; nvidia_peermem is loaded too" : "");
	} else if (s->peermem_present) {
		s->method = GDR_PEERMEM;
		snprintf(s->why, sizeof(s->why), "%s; DMA-BUF unusable: %s", s->peermem_how, dmabuf_why_not(s));
	} else {
		snprintf(s->why, sizeof(s->why), "DMA-BUF unusable (%s) and no peer-memory module", dmabuf_why_not(s));
	}
}

void gdr_facts(struct finding *f, const struct gdr_state *s)
{
	finding_fact_bool(f, "gdr_possible", s->gdr_possible);
	finding_fact_bool(f, "dmabuf_possible", s->dmabuf_possible);
}

const char *gdr_nic_key(const char *nic, char *buf, size_t size)
{
	snprintf(buf, size, "gdr_possible.%s", nic ? nic : "?");
	return buf;
}
