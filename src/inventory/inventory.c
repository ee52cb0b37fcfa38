/* Loads the parts of the inventory a command asks for, in dependency order. */
#include "inventory.h"
#include "topo.h"
#include "core/strbuf.h"

#include <stdlib.h>
#include <string.h>

/* Registers GPU memory of every GPU with its nearest RDMA NIC (live). */
static void load_gdr(struct inventory *inv)
{
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus);
	const char **gb = xcalloc(n + 1, sizeof(char *)), **nb = xcalloc(n + 1, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct rdma_dev *nic = topo_nearest_nic(inv, gpus[i], NULL);
		if (!nic || !gpus[i]->driver || strcmp(gpus[i]->driver, "nvidia"))
			continue;
		gb[k] = gpus[i]->bdf;
		nb[k] = nic->name;
		k++;
	}
	if (k) {
		inv->gdr = xcalloc(k, sizeof(*inv->gdr));
		inv->n_gdr = k;
		gdr_probe_run(gb, nb, k, true, true, inv->gdr);
	}
	free(gb);
	free(nb);
	free(gpus);
}

static void load_live_gpu(struct inventory *inv, const struct load_opts *o)
{
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus);
	free(gpus);
	if (o->parts & INV_LIVE_NVML) {
		inv->nvml = xcalloc(1, sizeof(*inv->nvml));
		nvml_probe(inv->nvml);
	}
	if (!(o->parts & INV_LIVE_CUDA))
		return;
	inv->cuda = xcalloc(1, sizeof(*inv->cuda));
	cuda_probe(inv->cuda, true);
	inv->torch = xcalloc(1, sizeof(*inv->torch));
	/* without a GPU there is nothing for PyTorch to see: do not start Python */
	if (n > 0)
		torch_load(o->python, inv->torch);
	else
		inv->torch->why = xstrdup("no NVIDIA GPU on PCI");
}

int inventory_load(struct root *r, const struct load_opts *o, struct inventory **ret)
{
	struct inventory *inv = xcalloc(1, sizeof(*inv));
	unsigned parts = o->parts;
	bool live = root_is_live(r);
	int e = 0;
	inv->live = live;
	inv->parts = parts;
	if ((e = kernel_load(r, &inv->kernel, &inv->user)) < 0 || (e = pci_load(r, &inv->pci)) < 0 ||
	    (e = iommu_load(r, &inv->pci)) < 0 || (e = modules_load(r, inv->kernel.release, &inv->modules)) < 0 ||
	    (e = net_load(r, &inv->net)) < 0 || (e = rdma_load(r, &inv->rdma)) < 0 ||
	    (e = nccl_config_load(r, &inv->user, &inv->nccl)) < 0)
		goto fail;
	if (parts & INV_RDMA) {
		if ((e = rdma_cm_load(r, &inv->rdma)) < 0 || (e = persist_load(r, &inv->persist)) < 0 ||
		    (e = host_load(r, &inv->host)) < 0 || (e = verbs_load(r, &inv->rdma)) < 0)
			goto fail;
	}
	if (parts & INV_GPU) {
		if ((e = nvidia_load(r, &inv->nvidia)) < 0 || (e = kconfig_load(r, inv->kernel.release, &inv->kconfig)) < 0 ||
		    (e = xid_load(r, &inv->xid)) < 0)
			goto fail;
	}
	/* A driver bound to a PCI function proves its module is present. */
	for (size_t i = 0; i < inv->pci.n; i++) {
		const char *d = inv->pci.v[i].driver;
		if (d && !strv_contains(&inv->modules.bound_drivers, d))
			strv_add(&inv->modules.bound_drivers, d);
	}
	if (live && (parts & INV_LIVE_GPU))
		load_live_gpu(inv, o);
	if (live && (parts & INV_LIVE_GDR))
		load_gdr(inv);
	*ret = inv;
	return 0;
fail:
	inventory_free(inv);
	return e;
}

void inventory_free(struct inventory *inv)
{
	if (!inv)
		return;
	kernel_free(&inv->kernel, &inv->user);
	modules_free(&inv->modules);
	pci_free(&inv->pci);
	net_free(&inv->net);
	rdma_free(&inv->rdma);
	persist_free(&inv->persist);
	nccl_config_free(&inv->nccl);
	host_free(&inv->host);
	nvidia_free(&inv->nvidia);
	kconfig_free(&inv->kconfig);
	xid_free(&inv->xid);
	if (inv->nvml) {
		nvml_info_free(inv->nvml);
		free(inv->nvml);
	}
	if (inv->cuda) {
		cuda_info_free(inv->cuda);
		free(inv->cuda);
	}
	if (inv->torch) {
		torch_free(inv->torch);
		free(inv->torch);
	}
	free(inv->gdr);
	free(inv);
}
