/* Live port attributes through libibverbs, loaded at run time.
 *
 * Only what sysfs cannot tell is asked: the active and maximum MTU of each
 * port (sysfs has no MTU file; REFERENCE §1). libibverbs is loaded through
 * lib/verbs_api.h, whose verbs_query_port() deals with the exported
 * ibv_query_port filling only the older compat layout of
 * struct ibv_port_attr (REFERENCE §8, dlopen caveat).
 *
 * Never used under a recorded root: a snapshot cannot be queried. */
#include "probe.h"
#include "core/cleanup.h"
#include "core/dl.h"
#include "core/strbuf.h"
#include "lib/verbs_api.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static void query_dev(const struct verbs_api *api, struct ibv_device *dev, struct rdma_info *ri)
{
	const char *name = api->get_device_name(dev);
	struct rdma_dev *d = NULL;
	for (size_t i = 0; name && i < ri->n; i++)
		if (!strcmp(ri->v[i].name, name))
			d = &ri->v[i];
	if (!d)
		return;
	struct ibv_context *ctx = api->open_device(dev);
	if (!ctx)
		return;
	for (size_t k = 0; k < d->n_ports; k++) {
		struct ibv_port_attr a;
		if (d->ports[k].num == 0 || d->ports[k].num > 255)
			continue;
		if (verbs_query_port(api, ctx, (uint8_t)d->ports[k].num, &a) != 0)
			continue;
		d->ports[k].verbs_ok = true;
		d->ports[k].active_mtu = verbs_mtu_bytes((int)a.active_mtu);
		d->ports[k].max_mtu = verbs_mtu_bytes((int)a.max_mtu);
	}
	api->close_device(ctx);
}

int verbs_load(const struct root *r, struct rdma_info *ri)
{
	if (!root_is_live(r)) {
		ri->verbs_status = xstrdup("a recorded tree (--sysroot) cannot answer verbs queries");
		return 0;
	}
	if (ri->n == 0) {
		ri->verbs_status = xstrdup("no RDMA devices to query");
		return 0;
	}
	struct verbs_api api;
	struct dl_lib lib;
	if (verbs_api_load(&lib, &api, NULL) < 0) {
		ri->verbs_status = xasprintf("libibverbs could not be loaded: %s (install rdma-core / libibverbs1)",
					     lib.error ? lib.error : "unknown error");
		dl_close(&lib);
		return 0;
	}
	int num = 0;
	struct ibv_device **list = api.get_device_list(&num);
	if (!list) {
		ri->verbs_status = xstrdup("ibv_get_device_list failed (is ib_uverbs loaded?)");
	} else {
		for (int i = 0; i < num; i++)
			query_dev(&api, list[i], ri);
		api.free_device_list(list);
	}
	dl_close(&lib);
	return 0;
}
