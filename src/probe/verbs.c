/* Live port attributes through libibverbs, loaded at run time.
 *
 * Only what sysfs cannot tell is asked: the active and maximum MTU of each
 * port (sysfs has no MTU file; Linux drivers/infiniband/core/sysfs.c). libibverbs is loaded through
 * lib/verbs_api.h, whose verbs_query_port() deals with the exported
 * ibv_query_port filling only the older compat layout of
 * struct ibv_port_attr (rdma-core libibverbs/verbs.h: ibv_query_port's compat layout).
 *
 * The queries run in a child process under the live probes' deadline per
 * call (core/isolate.h, probe_call_timeout()), as NVML's and CUDA's do:
 * ibv_open_device and ibv_query_port go to the NIC's driver, which can
 * block on a device in trouble, and a fork costs little next to opening
 * every device. The child names each call, sends a status line (empty
 * when the devices could be listed) and then one record per port that
 * answered; the parent applies the records it got, so a call that never
 * returns leaves only the ports after it unqueried, and verbs_status names
 * the call.
 *
 * Never used under a recorded root: a snapshot cannot be queried. */
#include "probe.h"
#include "core/cleanup.h"
#include "core/dl.h"
#include "core/strbuf.h"
#include "lib/verbs_api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The child's status line: why the ports could not be queried at all. */
#define VERBS_STATUS_MAX 256

/* One port that answered: ri->v[dev].ports[port], MTUs in bytes. */
struct verbs_rec {
	uint32_t dev, port;
	int32_t active_mtu, max_mtu;
};

static void query_dev(const struct verbs_api *api, struct ibv_device *dev, const struct rdma_info *ri,
		      struct isolate_ctx *t)
{
	const char *name = api->get_device_name(dev);
	size_t di = ri->n;
	for (size_t i = 0; name && i < ri->n; i++)
		if (!strcmp(ri->v[i].name, name))
			di = i;
	if (di == ri->n)
		return;
	const struct rdma_dev *d = &ri->v[di];
	isolate_step(t, "ibv_open_device(%s)", d->name);
	struct ibv_context *ctx = api->open_device(dev);
	if (!ctx)
		return;
	for (size_t k = 0; k < d->n_ports; k++) {
		struct ibv_port_attr a;
		if (d->ports[k].num == 0 || d->ports[k].num > 255)
			continue;
		isolate_step(t, "ibv_query_port(%s, port %d)", d->name, d->ports[k].num);
		if (verbs_query_port(api, ctx, (uint8_t)d->ports[k].num, &a) != 0)
			continue;
		struct verbs_rec rec = { .dev = (uint32_t)di, .port = (uint32_t)k,
					 .active_mtu = verbs_mtu_bytes((int)a.active_mtu),
					 .max_mtu = verbs_mtu_bytes((int)a.max_mtu) };
		(void)isolate_send(t, &rec, sizeof(rec));
	}
	isolate_step(t, "ibv_close_device(%s)", d->name);
	api->close_device(ctx);
}

/* In the child: the status line, then a record per port that answered. */
static void verbs_child(struct isolate_ctx *t, void *arg)
{
	const struct rdma_info *ri = arg;
	char status[VERBS_STATUS_MAX] = "";
	struct verbs_api api;
	struct dl_lib lib;

	isolate_step(t, "loading libibverbs.so.1");
	if (verbs_api_load(&lib, &api, NULL) < 0) {
		snprintf(status, sizeof(status), "libibverbs could not be loaded: %s (install rdma-core / libibverbs1)",
			 lib.error ? lib.error : "unknown error");
		(void)isolate_send(t, status, sizeof(status));
		dl_close(&lib);
		return;
	}
	int num = 0;
	isolate_step(t, "ibv_get_device_list");
	struct ibv_device **list = api.get_device_list(&num);
	if (!list)
		snprintf(status, sizeof(status), "ibv_get_device_list failed (is ib_uverbs loaded?)");
	(void)isolate_send(t, status, sizeof(status));
	if (list) {
		for (int i = 0; i < num; i++)
			query_dev(&api, list[i], ri, t);
		isolate_step(t, "ibv_free_device_list");
		api.free_device_list(list);
	}
	dl_close(&lib);
}

/* In the parent: what the child sent, applied to ri (records that name no
 * port of ri are dropped). */
static void verbs_apply(const struct strbuf *b, struct rdma_info *ri)
{
	char status[VERBS_STATUS_MAX];
	struct verbs_rec rec;

	if (b->len < sizeof(status))
		return;
	memcpy(status, b->buf, sizeof(status));
	status[sizeof(status) - 1] = '\0';
	if (status[0])
		ri->verbs_status = xstrdup(status);
	for (size_t at = sizeof(status); at + sizeof(rec) <= b->len; at += sizeof(rec)) {
		memcpy(&rec, b->buf + at, sizeof(rec));
		if (rec.dev >= ri->n || rec.port >= ri->v[rec.dev].n_ports)
			continue;
		struct rdma_port *p = &ri->v[rec.dev].ports[rec.port];
		p->verbs_ok = true;
		p->active_mtu = rec.active_mtu;
		p->max_mtu = rec.max_mtu;
	}
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
	size_t ports = 0;
	for (size_t i = 0; i < ri->n; i++)
		ports += ri->v[i].n_ports;
	double timeout = probe_call_timeout();
	struct isolate_result res;
	int e = isolate_run(verbs_child, ri, timeout, VERBS_STATUS_MAX + ports * sizeof(struct verbs_rec), &res);
	if (e < 0) {
		ri->verbs_status = xasprintf("could not start the verbs queries' process: %s", strerror(-e));
		return 0;
	}
	verbs_apply(&res.out, ri);
	bool whole = res.out.len >= VERBS_STATUS_MAX && (res.out.len - VERBS_STATUS_MAX) % sizeof(struct verbs_rec) == 0;
	if (res.end != ISOLATE_DONE || !whole) {
		char why[VERBS_STATUS_MAX + 64];
		(void)probe_end_reason(&res, "libibverbs", timeout, why, sizeof(why));
		free(ri->verbs_status);
		ri->verbs_status = xstrdup(why);
	}
	isolate_result_free(&res);
	return 0;
}
