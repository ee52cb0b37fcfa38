/* Loads every part of the inventory in dependency order. */
#include "inventory.h"
#include "core/strbuf.h"

#include <stdlib.h>

int inventory_load(struct root *r, struct inventory **ret)
{
	struct inventory *inv = xcalloc(1, sizeof(*inv));
	int e;
	inv->live = root_is_live(r);
	if ((e = kernel_load(r, &inv->kernel, &inv->user)) < 0 ||
	    (e = pci_load(r, &inv->pci)) < 0 ||
	    (e = modules_load(r, inv->kernel.release, &inv->modules)) < 0 ||
	    (e = net_load(r, &inv->net)) < 0 ||
	    (e = rdma_load(r, &inv->rdma)) < 0 ||
	    (e = rdma_cm_load(r, &inv->rdma)) < 0 ||
	    (e = verbs_load(r, &inv->rdma)) < 0 ||
	    (e = persist_load(r, &inv->persist)) < 0 ||
	    (e = nccl_config_load(r, &inv->user, &inv->nccl)) < 0 ||
	    (e = host_load(r, &inv->host)) < 0) {
		inventory_free(inv);
		return e;
	}
	/* A driver bound to a PCI function proves its module is present. */
	for (size_t i = 0; i < inv->pci.n; i++) {
		const char *d = inv->pci.v[i].driver;
		if (d && !strv_contains(&inv->modules.bound_drivers, d))
			strv_add(&inv->modules.bound_drivers, d);
	}
	*ret = inv;
	return 0;
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
	free(inv);
}
