/* PCIe path classes from sysfs paths; see topo.h. */
#include "topo.h"
#include "core/strbuf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *path_class_name(enum path_class c)
{
	static const char *const n[] = {
		[PATH_SELF] = "X", [PATH_PIX] = "PIX", [PATH_PXB] = "PXB", [PATH_PHB] = "PHB",
		[PATH_NODE] = "NODE", [PATH_SYS] = "SYS", [PATH_UNKNOWN] = "?",
	};
	return c <= PATH_UNKNOWN ? n[c] : "?";
}

/* The chain of a function: the bridges above it, then itself. */
static size_t chain(const struct pci_dev *d, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < d->upstream.n && n + 1 < max; i++)
		out[n++] = d->upstream.v[i];
	out[n++] = d->bdf;
	return n;
}

enum path_class pci_path_class(const struct pci_dev *a, const struct pci_dev *b, struct strv *bridges)
{
	const char *ca[64], *cb[64];
	if (a == b)
		return PATH_SELF;
	if (!a->root_bus || !b->root_bus)
		return PATH_UNKNOWN;
	size_t na = chain(a, ca, 64), nb = chain(b, cb, 64);
	size_t common = 0;
	if (!strcmp(a->root_bus, b->root_bus))
		while (common < na && common < nb && !strcmp(ca[common], cb[common]))
			common++;
	if (bridges) {
		/* the lowest common bridge and every bridge below it */
		size_t from = common ? common - 1 : 0;
		for (size_t i = from; i + 1 < na; i++)
			if (!strv_contains(bridges, ca[i]))
				strv_add(bridges, ca[i]);
		for (size_t i = from; i + 1 < nb; i++)
			if (!strv_contains(bridges, cb[i]))
				strv_add(bridges, cb[i]);
	}
	if (common > 0) {
		/* bridges strictly between the common bridge and each device */
		size_t below_a = na - common - 1, below_b = nb - common - 1;
		return below_a <= 1 && below_b <= 1 ? PATH_PIX : PATH_PXB;
	}
	if (!strcmp(a->root_bus, b->root_bus))
		return PATH_PHB;
	/* numa_node -1 is "no NUMA information" (single node) */
	if (a->numa_node < 0 || b->numa_node < 0 || a->numa_node == b->numa_node)
		return PATH_NODE;
	return PATH_SYS;
}

const struct rdma_dev *topo_nearest_nic(const struct inventory *inv, const struct pci_dev *gpu, enum path_class *cls)
{
	return topo_nearest_nic_where(inv, gpu, cls, NULL, NULL);
}

const struct rdma_dev *topo_nearest_nic_where(const struct inventory *inv, const struct pci_dev *gpu,
					      enum path_class *cls, bool (*keep)(const struct rdma_dev *, void *),
					      void *arg)
{
	const struct rdma_dev *best = NULL;
	enum path_class bc = PATH_UNKNOWN;
	for (size_t i = 0; i < inv->rdma.n; i++) {
		const struct rdma_dev *d = &inv->rdma.v[i];
		const struct pci_dev *p = pci_find(&inv->pci, d->pci_bdf);
		/* an NVSwitch management port (VPD SW_MNG) carries no GPU traffic */
		if (!p || p->nvswitch_mgmt || (keep && !keep(d, arg)))
			continue;
		enum path_class c = pci_path_class(gpu, p, NULL);
		if (!best || c < bc) {
			best = d;
			bc = c;
		}
	}
	if (cls)
		*cls = bc;
	return best;
}

bool topo_is_gpu(const struct inventory *inv, const struct pci_dev *p)
{
	bool gpu = pci_is_nvidia_gpu(p);
	/* a recording without vendor/device files, or a class that cannot be
	 * read: the NVIDIA driver's own GPU list names it */
	for (size_t k = 0; !gpu && (p->ids_err || p->class_err) && k < inv->nvidia.n_gpus; k++)
		gpu = !strcasecmp(inv->nvidia.gpus[k].bdf, p->bdf);
	return gpu;
}

size_t topo_gpus(const struct inventory *inv, const struct pci_dev ***ret)
{
	const struct pci_dev **v = xcalloc(inv->pci.n + 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < inv->pci.n; i++)
		if (topo_is_gpu(inv, &inv->pci.v[i]))
			v[n++] = &inv->pci.v[i];
	*ret = v;
	return n;
}
