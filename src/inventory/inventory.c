/* Loads the parts of the inventory a command asks for, in dependency order. */
#include "inventory.h"
#include "inventory/copy_bw.h"
#include "inventory/nvlink_rec.h"
#include "topo.h"
#include "core/strbuf.h"

#include <stdlib.h>
#include <string.h>

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
	    (e = net_load(r, &inv->net)) < 0 || (e = ifaddrs_load(r, &inv->net)) < 0 ||
	    (e = dcb_load(r, &inv->net.dcb)) < 0 || (e = rdma_load(r, &inv->rdma)) < 0 ||
	    (e = nccl_config_load(r, &inv->user, &inv->nccl)) < 0 || (e = proc_view_load(r, &inv->view)) < 0 ||
	    (e = fix_pending_load(r, &inv->fix_pending)) < 0)
		goto fail;
	if (parts & INV_RDMA) {
		if ((e = rdma_cm_load(r, &inv->rdma)) < 0 || (e = verbs_conf_load(r, &inv->rdma.verbs)) < 0 ||
		    (e = persist_load(r, &inv->persist)) < 0 ||
		    (e = host_load(r, &inv->host)) < 0)
			goto fail;
	}
	if (parts & INV_GPU) {
		if ((e = nvidia_load(r, &inv->nvidia)) < 0 || (e = fabric_load(r, &inv->fabric)) < 0 || (e = kconfig_load(r, inv->kernel.release, &inv->kconfig)) < 0 ||
		    (e = xid_load(r, &inv->xid)) < 0 || (e = nvlink_rec_load(r, &inv->nvlink_rec)) < 0)
			goto fail;
	}
	/* A driver bound to a PCI function proves its module is present. */
	for (size_t i = 0; i < inv->pci.n; i++) {
		const char *d = inv->pci.v[i].driver;
		if (d && !strv_contains(&inv->modules.bound_drivers, d))
			strv_add(&inv->modules.bound_drivers, d);
	}
	if (o->live && (e = o->live(r, o, inv)) < 0)
		goto fail;
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
	proc_view_free(&inv->view);
	nvidia_free(&inv->nvidia);
	fabric_free(&inv->fabric);
	kconfig_free(&inv->kconfig);
	xid_free(&inv->xid);
	fix_pending_free(&inv->fix_pending);
	nvlink_rec_free(&inv->nvlink_rec);
	if (inv->copy_bw) {
		free(inv->copy_bw->error);
		free(inv->copy_bw->v);
		free(inv->copy_bw);
	}
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
