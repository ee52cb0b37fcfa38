/* Live port attributes through libibverbs, loaded at run time.
 *
 * Only what sysfs cannot tell is asked: the active and maximum MTU of each
 * port (sysfs has no MTU file; REFERENCE §1). The declarations below are the
 * subset of rdma-core's verbs.h ABI we use. The exported ibv_query_port
 * symbol (IBVERBS_1.1) fills only the older compat layout of
 * struct ibv_port_attr, so the buffer is zeroed, oversized, and only the
 * leading compat fields are trusted (REFERENCE §8, dlopen caveat).
 *
 * Never used under a recorded root: a snapshot cannot be queried. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/dl.h"
#include "core/strbuf.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ibv_device;
struct ibv_context;

/* Leading fields of struct ibv_port_attr (rdma-core libibverbs/verbs.h). */
struct verbs_port_attr {
	uint32_t state;      /* enum ibv_port_state */
	uint32_t max_mtu;    /* enum ibv_mtu: 1=256 ... 5=4096 */
	uint32_t active_mtu;
	int32_t gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
	uint16_t port_cap_flags2;
	uint32_t active_speed_ex;
	uint8_t reserve[64]; /* room for fields newer libraries may add */
};

struct verbs_api {
	struct ibv_device **(*get_device_list)(int *num);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *dev);
	struct ibv_context *(*open_device)(struct ibv_device *dev);
	int (*close_device)(struct ibv_context *ctx);
	int (*query_port)(struct ibv_context *ctx, uint8_t port, struct verbs_port_attr *attr);
};

static const struct dl_sym verbs_syms[] = {
	{ "ibv_get_device_list", NULL, false, offsetof(struct verbs_api, get_device_list) },
	{ "ibv_free_device_list", NULL, false, offsetof(struct verbs_api, free_device_list) },
	{ "ibv_get_device_name", NULL, false, offsetof(struct verbs_api, get_device_name) },
	{ "ibv_open_device", NULL, false, offsetof(struct verbs_api, open_device) },
	{ "ibv_close_device", NULL, false, offsetof(struct verbs_api, close_device) },
	{ "ibv_query_port", NULL, false, offsetof(struct verbs_api, query_port) },
};

static const char *const verbs_libs[] = { "libibverbs.so.1", NULL };

/* enum ibv_mtu -> bytes; 0 if out of range. */
int verbs_mtu_bytes(uint32_t e);
int verbs_mtu_bytes(uint32_t e)
{
	return e >= 1 && e <= 5 ? 128 << e : 0;
}

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
		struct verbs_port_attr a;
		memset(&a, 0, sizeof(a));
		if (d->ports[k].num == 0 || d->ports[k].num > 255)
			continue;
		if (api->query_port(ctx, (uint8_t)d->ports[k].num, &a) != 0)
			continue;
		d->ports[k].verbs_ok = true;
		d->ports[k].active_mtu = verbs_mtu_bytes(a.active_mtu);
		d->ports[k].max_mtu = verbs_mtu_bytes(a.max_mtu);
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
	memset(&api, 0, sizeof(api));
	if (dl_open(&lib, verbs_libs, verbs_syms, sizeof(verbs_syms) / sizeof(verbs_syms[0]), &api) < 0) {
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
