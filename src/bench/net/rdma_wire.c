/* The pure helpers of the RDMA kernels (rdma.h): perftest's GID
 * choice, what the port counters mean, and the two wire formats (the
 * connection blob and the control message), little-endian and checked
 * field by field so that any input is safe to decode. */
#define _GNU_SOURCE
#include "rdma_int.h"

#include "core/cleanup.h"
#include "core/strbuf.h"
#include "core/wire.h"
#include "inventory/inventory.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- GIDs ---- */

static bool gid_parse(const char *s, uint8_t out[16])
{
	struct in6_addr a;
	if (!s || inet_pton(AF_INET6, s, &a) != 1)
		return false;
	memcpy(out, &a, 16);
	return true;
}

/* The sysfs form: eight groups of four hex digits. */
void nr_gid_format(const uint8_t g[16], char *buf, size_t size)
{
	snprintf(buf, size, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2],
		 g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

/* perftest's ipv6_addr_v4mapped(): ::ffff:a.b.c.d, or the IPv4 multicast
 * form ff0e::ffff:a.b.c.d. */
static bool gid_v4mapped(const uint8_t g[16])
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t mcast[12] = { 0xff, 0x0e, [10] = 0xff, [11] = 0xff };
	return !memcmp(g, mapped, 12) || !memcmp(g, mcast, 12);
}

/* perftest's roce_versions_sorted: v2 over v1; -1 unknown. */
int nr_gid_type_rank(const char *type)
{
	if (!type)
		return -1;
	if (!strcmp(type, "RoCE v2"))
		return 2;
	return !strcmp(type, "IB/RoCE v1") || !strcmp(type, "RoCE v1") ? 1 : -1;
}

/* The populated, parseable entry with the lowest index above `after`
 * (-1: any); NULL when none. */
static const struct rdma_gid *gid_next(const struct rdma_port *port, long after)
{
	const struct rdma_gid *best = NULL;
	uint8_t raw[16];
	for (size_t i = 0; i < port->n_gids; i++) {
		const struct rdma_gid *g = &port->gids[i];
		if ((long)g->index <= after || !gid_parse(g->gid, raw))
			continue;
		if (!best || g->index < best->index)
			best = g;
	}
	return best;
}

int net_rdma_choose_gid(const struct rdma_port *port)
{
	if (!port)
		return -1;
	const struct rdma_gid *best = gid_next(port, -1);
	if (!best)
		return -1;
	if (port->link_layer && !strcmp(port->link_layer, "InfiniBand"))
		return (int)best->index;
	uint8_t b[16], r[16];
	for (const struct rdma_gid *g = gid_next(port, best->index); g; g = gid_next(port, g->index)) {
		gid_parse(best->gid, b);
		gid_parse(g->gid, r);
		bool v4 = gid_v4mapped(b), rv4 = gid_v4mapped(r);
		if (rv4 && !v4) {
			best = g;
			continue;
		}
		/* perftest compares types even when the best is IPv4-mapped and
		 * the rival is not; an unknown type skips the comparison */
		int tb = nr_gid_type_rank(best->type), tr = nr_gid_type_rank(g->type);
		if (best->type && g->type && tr > tb)
			best = g;
	}
	return (int)best->index;
}

/* ---- port counters ---- */

static void delta_add(const struct counter *b, size_t nb, const struct counter *a, size_t na,
		      struct net_counter_delta **v, size_t *n)
{
	for (size_t i = 0; i < na; i++) {
		const struct counter *before = NULL;
		for (size_t k = 0; k < nb && !before; k++)
			if (!strcmp(b[k].name, a[i].name))
				before = &b[k];
		if (!before || before->err || a[i].err || before->value == a[i].value || !strcmp(a[i].name, "lifespan"))
			continue;
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		struct net_counter_delta *d = &(*v)[(*n)++];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s", a[i].name);
		d->before = before->value;
		d->after = a[i].value;
		d->meaning = rdma_counter_meaning(a[i].name);
		d->bad = d->meaning && d->after > d->before;
	}
}

int net_rdma_counters_delta(const struct rdma_port *before, const struct rdma_port *after,
			    struct net_counter_delta **ret, size_t *n)
{
	if (!before || !after || !ret || !n)
		return -EINVAL;
	struct net_counter_delta *v = NULL;
	size_t k = 0;
	delta_add(before->counters, before->n_counters, after->counters, after->n_counters, &v, &k);
	delta_add(before->hw_counters, before->n_hw_counters, after->hw_counters, after->n_hw_counters, &v, &k);
	*ret = v;
	*n = k;
	return 0;
}

/* ---- the connection blob ---- */

#define INFO_HDR 48
#define INFO_PER_QP 24
#define INFO_FLAG_GRH 1u

size_t net_rdma_info_size(int qps)
{
	return INFO_HDR + (size_t)(qps > 0 ? qps : 0) * INFO_PER_QP;
}

int net_rdma_info_encode(const struct net_rdma_peer *in, void *blob, size_t len)
{
	if (in->qps < 1 || in->qps > NET_RDMA_MAX_QPS)
		return -EINVAL;
	size_t need = net_rdma_info_size(in->qps);
	if (len != need)
		return -EMSGSIZE;
	struct wire_w w = WIRE_W(blob, len);
	wire_put_bytes(&w, "GRDM", 4);
	wire_put_u16(&w, NET_RDMA_INFO_VERSION);
	wire_put_u16(&w, (uint16_t)in->qps);
	wire_put_u32(&w, (uint32_t)need);
	wire_put_u8(&w, (uint8_t)in->link_layer);
	wire_put_u8(&w, (uint8_t)in->mtu);
	wire_put_u8(&w, (uint8_t)in->gid_index);
	wire_put_u8(&w, in->grh ? INFO_FLAG_GRH : 0);
	wire_put_u16(&w, in->lid);
	wire_put_u8(&w, in->out_reads);
	wire_put_u8(&w, 0);
	wire_put_u32(&w, in->rkey);
	wire_put_u64(&w, in->region);
	wire_put_bytes(&w, in->gid, 16);
	for (int q = 0; q < in->qps; q++) {
		wire_put_u32(&w, in->qp[q].qpn);
		wire_put_u32(&w, in->qp[q].psn);
		wire_put_u64(&w, in->qp[q].rx_addr);
		wire_put_u64(&w, in->qp[q].tx_addr);
	}
	return 0;
}

/* The per-QP entries, after the header. */
static int info_qps(struct wire_r *r, struct net_rdma_peer *out, char **err)
{
	for (int q = 0; q < out->qps; q++) {
		struct net_rdma_qp_info *i = &out->qp[q];
		i->qpn = wire_get_u32(r);
		i->psn = wire_get_u32(r);
		i->rx_addr = wire_get_u64(r);
		i->tx_addr = wire_get_u64(r);
		if (i->qpn > 0xffffff || i->psn > 0xffffff || !i->rx_addr || !i->tx_addr) {
			*err = xasprintf("QP %d: QPN 0x%x, PSN 0x%x or an address out of range", q, i->qpn, i->psn);
			return -EINVAL;
		}
	}
	return 0;
}

/* The magic, the version and the QP count, which gives the length; len
 * is the caller's (the cursor holds 0 bytes when there is no blob). */
static int info_head(struct wire_r *r, size_t len, unsigned *qps, char **err)
{
	uint8_t magic[4];
	wire_get_bytes(r, magic, 4);
	uint16_t version = wire_get_u16(r);
	if (r->short_read || len < 8) {
		*err = xasprintf("RDMA info of %zu bytes is too short", len);
		return -EMSGSIZE;
	}
	if (memcmp(magic, "GRDM", 4)) {
		*err = xstrdup("not gpuready RDMA info (bad magic)");
		return -EPROTO;
	}
	if (version != NET_RDMA_INFO_VERSION) {
		*err = xasprintf("RDMA info version %u, this gpuready speaks version %u: "
				 "run the same gpuready on both ends", version, NET_RDMA_INFO_VERSION);
		return -EPROTO;
	}
	*qps = len >= INFO_HDR ? wire_get_u16(r) : 0;
	uint32_t total = len >= INFO_HDR ? wire_get_u32(r) : 0;
	if (len < INFO_HDR || *qps < 1 || *qps > NET_RDMA_MAX_QPS || len != net_rdma_info_size((int)*qps) ||
	    total != len) {
		*err = xasprintf("RDMA info of %zu bytes does not hold %u QPs (1 .. %d, %d + %d bytes each)", len, *qps,
				 NET_RDMA_MAX_QPS, INFO_HDR, INFO_PER_QP);
		return -EMSGSIZE;
	}
	return 0;
}

int net_rdma_info_decode(const void *blob, size_t len, struct net_rdma_peer *out, char **err)
{
	struct wire_r r = WIRE_R(blob, blob ? len : 0);
	unsigned qps = 0;
	int rc = info_head(&r, len, &qps, err);
	if (rc < 0)
		return rc;
	memset(out, 0, sizeof(*out));
	out->qps = (int)qps;
	out->link_layer = wire_get_u8(&r);
	out->mtu = wire_get_u8(&r);
	out->gid_index = wire_get_u8(&r);
	uint8_t flags = wire_get_u8(&r);
	out->grh = flags & INFO_FLAG_GRH;
	out->lid = wire_get_u16(&r);
	out->out_reads = wire_get_u8(&r);
	uint8_t reserved = wire_get_u8(&r);
	out->rkey = wire_get_u32(&r);
	out->region = wire_get_u64(&r);
	wire_get_bytes(&r, out->gid, 16);
	if ((out->link_layer != IBV_LINK_LAYER_INFINIBAND && out->link_layer != IBV_LINK_LAYER_ETHERNET) ||
	    !verbs_mtu_bytes(out->mtu) || (flags & ~INFO_FLAG_GRH) || reserved || out->region == 0) {
		*err = xasprintf("RDMA info with link layer %d, MTU %d, flags 0x%x/0x%x, region %llu: out of range",
				 out->link_layer, out->mtu, flags, reserved, (unsigned long long)out->region);
		return -EINVAL;
	}
	return info_qps(&r, out, err);
}

/* ---- the synchronisation message ---- */

void net_rdma_sync_encode(const struct net_rdma_sync *m, uint8_t out[NET_RDMA_SYNC_BYTES])
{
	struct wire_w w = WIRE_W(out, NET_RDMA_SYNC_BYTES);
	wire_put_bytes(&w, "GRSY", 4);
	wire_put_u16(&w, NET_RDMA_SYNC_VERSION);
	wire_put_u16(&w, (uint16_t)m->type);
	wire_put_u32(&w, (uint32_t)m->status);
	wire_put_u32(&w, m->test);
	wire_put_u32(&w, m->flags);
	wire_put_u32(&w, m->n_windows);
	wire_put_u64(&w, m->size);
	wire_put_u64(&w, m->iters);
	wire_put_f64(&w, m->duration);
	wire_put_u64(&w, m->seed);
	wire_put_u64(&w, m->msgs);
	wire_put_u64(&w, m->bytes);
	wire_put_u64(&w, m->errors);
	wire_put_f64(&w, m->seconds);
	for (int i = 0; i < NET_WINDOWS; i++)
		wire_put_f64(&w, m->window_s[i]);
	wire_put_str(&w, m->text, sizeof(m->text));
}

int net_rdma_sync_decode(const void *buf, size_t len, struct net_rdma_sync *out, char **err)
{
	struct wire_r r = WIRE_R(buf, buf ? len : 0);
	uint8_t magic[4];
	wire_get_bytes(&r, magic, 4);
	if (len != NET_RDMA_SYNC_BYTES || r.short_read || memcmp(magic, "GRSY", 4) ||
	    wire_get_u16(&r) != NET_RDMA_SYNC_VERSION) {
		*err = xasprintf("not a version %d gpuready RDMA control message (%zu bytes)", NET_RDMA_SYNC_VERSION,
				 len);
		return -EPROTO;
	}
	memset(out, 0, sizeof(*out));
	out->type = wire_get_u16(&r);
	out->status = (int32_t)wire_get_u32(&r);
	out->test = wire_get_u32(&r);
	out->flags = wire_get_u32(&r);
	out->n_windows = wire_get_u32(&r);
	out->size = wire_get_u64(&r);
	out->iters = wire_get_u64(&r);
	out->duration = wire_get_f64(&r);
	out->seed = wire_get_u64(&r);
	out->msgs = wire_get_u64(&r);
	out->bytes = wire_get_u64(&r);
	out->errors = wire_get_u64(&r);
	out->seconds = wire_get_f64(&r);
	bool finite = isfinite(out->duration) && isfinite(out->seconds);
	for (int i = 0; i < NET_WINDOWS; i++) {
		out->window_s[i] = wire_get_f64(&r);
		finite = finite && isfinite(out->window_s[i]);
	}
	(void)wire_get_str(&r, out->text, sizeof(out->text));
	if (out->type < NET_RDMA_SYNC_START || out->type > NET_RDMA_SYNC_RESULT || out->n_windows > NET_WINDOWS ||
	    out->status > 0 || out->status < -4095 || !finite) {
		*err = xasprintf("RDMA control message of type %u, status %d, %u windows: out of range", out->type,
				 out->status, out->n_windows);
		return -EPROTO;
	}
	return 0;
}

/* The text field ends the message: 216 bytes of fields before it. */
_Static_assert(4 + 2 + 2 + 4 * 4 + 8 * 8 + 8 * NET_WINDOWS + sizeof(((struct net_rdma_sync *)0)->text) ==
		       NET_RDMA_SYNC_BYTES, "sync layout");
