/* The RDMA rails of a node for `gpuready cluster links` (see links_rails.h). */
#include "cluster/links_rails.h"
#include "core/strbuf.h"
#include "inventory/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The netdev of port 1 of dev (the port the rail's pair uses), or NULL. */
static const char *port1_netdev(const struct rdma_dev *dev)
{
	for (size_t i = 0; dev && i < dev->n_ports; i++)
		if (dev->ports[i].num == 1)
			return dev->ports[i].netdev;
	return NULL;
}

/* Each GPU's nearest RDMA NIC (netdev: its port 1's netdev) as a list,
 * "-" for none; whole names only. */
static size_t rail_list(const struct inventory *inv, bool netdev, char *out, size_t len)
{
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus), used = 0;
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		enum path_class cls;
		const struct rdma_dev *nic = topo_nearest_nic(inv, gpus[i], &cls);
		const char *name = netdev ? port1_netdev(nic) : nic ? nic->name : NULL;
		name = name && name[0] && !strchr(name, ',') ? name : "-";
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

size_t links_rails(const struct inventory *inv, char *out, size_t len)
{
	return rail_list(inv, false, out, len);
}

size_t links_rails_netdevs(const struct inventory *inv, char *out, size_t len)
{
	return rail_list(inv, true, out, len);
}

int links_rails_read(const char *dir, char *out, size_t len, char *ifs, size_t if_len)
{
	struct root *root = NULL;
	struct inventory *inv = NULL;
	struct load_opts o = { .parts = INV_RDMA };
	out[0] = 0;
	if (ifs)
		ifs[0] = 0;
	int r = root_open(dir, &root);
	if (r == 0 && (r = inventory_load(root, &o, &inv)) == 0) {
		links_rails(inv, out, len);
		if (ifs)
			links_rails_netdevs(inv, ifs, if_len);
	}
	inventory_free(inv);
	root_free(root);
	return r;
}
