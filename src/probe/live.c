/* The live layer of inventory_load (probe.h): which probes run for which
 * parts, after the files are read. NVML, CUDA, GPU memory registration
 * (deadline.c) and the verbs queries (verbs.c) run in child processes
 * under a deadline per call, so a GPU or NIC that blocks its driver cannot
 * hang the command; PyTorch runs as a subprocess with a deadline of its
 * own (torch.c). */
#include "probe.h"
#include "inventory/topo.h"
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
		gdr_probe_deadline(gb, nb, k, true, true, probe_call_timeout(), inv->gdr);
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
		nvml_probe_deadline(inv->nvml, probe_call_timeout());
	}
	if (!(o->parts & INV_LIVE_CUDA))
		return;
	inv->cuda = xcalloc(1, sizeof(*inv->cuda));
	cuda_probe_deadline(inv->cuda, true, probe_call_timeout());
	inv->torch = xcalloc(1, sizeof(*inv->torch));
	/* without a GPU there is nothing for PyTorch to see: do not start Python */
	if (n > 0)
		torch_load(o->python, inv->torch);
	else
		inv->torch->why = xstrdup("no NVIDIA GPU on PCI");
}

int probe_live(struct root *r, const struct load_opts *o, struct inventory *inv)
{
	bool live = root_is_live(r);
	int e;

	if ((o->parts & INV_RDMA) && (e = verbs_load(r, &inv->rdma)) < 0)
		return e;
	if (live)
		ifaddrs_live(&inv->net);
	if (live && (o->parts & INV_RDMA))
		dcb_live(inv);
	if (live && (o->parts & INV_LIVE_GPU))
		load_live_gpu(inv, o);
	if (live && (o->parts & INV_LIVE_GDR))
		load_gdr(inv);
	return 0;
}
