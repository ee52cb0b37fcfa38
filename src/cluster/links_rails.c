/* The RDMA rails of a node for `gpuready cluster links` (see links_rails.h). */
#include "cluster/links_rails.h"
#include "core/strbuf.h"
#include "inventory/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t links_rails(const struct inventory *inv, char *out, size_t len)
{
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus), used = 0;
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		enum path_class cls;
		const struct rdma_dev *nic = topo_nearest_nic(inv, gpus[i], &cls);
		const char *name = nic ? nic->name : "-";
		size_t need = strlen(name) + (i > 0);
		if (used + need + 1 > len) {
			n = i; /* what fits: whole names only */
			break;
		}
		used += (size_t)snprintf(out + used, len - used, "%s%s", i ? "," : "", name);
	}
	free(gpus);
	return n;
}

int links_rails_read(const char *dir, char *out, size_t len)
{
	struct root *root = NULL;
	struct inventory *inv = NULL;
	struct load_opts o = { .parts = INV_RDMA };
	out[0] = 0;
	int r = root_open(dir, &root);
	if (r == 0 && (r = inventory_load(root, &o, &inv)) == 0)
		links_rails(inv, out, len);
	inventory_free(inv);
	root_free(root);
	return r;
}
