/* The pure helpers of the RDMA kernels (rdma.h): perftest's GID
 * choice, what the port counters mean, and the two wire formats (the
 * connection blob and the control message), little-endian and checked
 * field by field so that any input is safe to decode. */
#define _GNU_SOURCE
#include "rdma_int.h"

#include "core/cleanup.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- little-endian fields ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void putf(uint8_t *p, double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	put64(p, u);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static double getf(const uint8_t *p)
{
	uint64_t u = get64(p);
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

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
		if (!before || before->value == a[i].value || !strcmp(a[i].name, "lifespan"))
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
	uint8_t *b = blob;
	memset(b, 0, len);
	memcpy(b, "GRDM", 4);
	put16(b + 4, NET_RDMA_INFO_VERSION);
	put16(b + 6, (uint16_t)in->qps);
	put32(b + 8, (uint32_t)need);
	b[12] = (uint8_t)in->link_layer;
	b[13] = (uint8_t)in->mtu;
	b[14] = (uint8_t)in->gid_index;
	b[15] = in->grh ? INFO_FLAG_GRH : 0;
	put16(b + 16, in->lid);
	b[18] = in->out_reads;
	put32(b + 20, in->rkey);
	put64(b + 24, in->region);
	memcpy(b + 32, in->gid, 16);
	for (int q = 0; q < in->qps; q++) {
		uint8_t *e = b + INFO_HDR + (size_t)q * INFO_PER_QP;
		put32(e, in->qp[q].qpn);
		put32(e + 4, in->qp[q].psn);
		put64(e + 8, in->qp[q].rx_addr);
		put64(e + 16, in->qp[q].tx_addr);
	}
	return 0;
}

static int info_qps(const uint8_t *b, struct net_rdma_peer *out, char *why, size_t whylen)
{
	for (int q = 0; q < out->qps; q++) {
		const uint8_t *e = b + INFO_HDR + (size_t)q * INFO_PER_QP;
		struct net_rdma_qp_info *i = &out->qp[q];
		i->qpn = get32(e);
		i->psn = get32(e + 4);
		i->rx_addr = get64(e + 8);
		i->tx_addr = get64(e + 16);
		if (i->qpn > 0xffffff || i->psn > 0xffffff || !i->rx_addr || !i->tx_addr) {
			snprintf(why, whylen, "QP %d: QPN 0x%x, PSN 0x%x or an address out of range", q, i->qpn, i->psn);
			return -EINVAL;
		}
	}
	return 0;
}

int net_rdma_info_decode(const void *blob, size_t len, struct net_rdma_peer *out, char *why, size_t whylen)
{
	const uint8_t *b = blob;
	if (whylen)
		why[0] = '\0';
	if (!b || len < 8) {
		snprintf(why, whylen, "RDMA info of %zu bytes is too short", len);
		return -EMSGSIZE;
	}
	if (memcmp(b, "GRDM", 4)) {
		snprintf(why, whylen, "not gpuready RDMA info (bad magic)");
		return -EPROTO;
	}
	if (get16(b + 4) != NET_RDMA_INFO_VERSION) {
		snprintf(why, whylen, "RDMA info version %u, this gpuready speaks version %u: run the same gpuready on both "
				      "ends", get16(b + 4), NET_RDMA_INFO_VERSION);
		return -EPROTO;
	}
	unsigned qps = len >= INFO_HDR ? get16(b + 6) : 0;
	if (len < INFO_HDR || qps < 1 || qps > NET_RDMA_MAX_QPS || len != net_rdma_info_size((int)qps) ||
	    get32(b + 8) != len) {
		snprintf(why, whylen, "RDMA info of %zu bytes does not hold %u QPs (1 .. %d, %d + %d bytes each)", len, qps,
			 NET_RDMA_MAX_QPS, INFO_HDR, INFO_PER_QP);
		return -EMSGSIZE;
	}
	memset(out, 0, sizeof(*out));
	out->qps = (int)qps;
	out->link_layer = b[12];
	out->mtu = b[13];
	out->gid_index = b[14];
	out->grh = b[15] & INFO_FLAG_GRH;
	out->lid = get16(b + 16);
	out->out_reads = b[18];
	out->rkey = get32(b + 20);
	out->region = get64(b + 24);
	memcpy(out->gid, b + 32, 16);
	if ((out->link_layer != IBV_LINK_LAYER_INFINIBAND && out->link_layer != IBV_LINK_LAYER_ETHERNET) ||
	    !verbs_mtu_bytes(out->mtu) || (b[15] & ~INFO_FLAG_GRH) || b[19] || out->region == 0) {
		snprintf(why, whylen, "RDMA info with link layer %d, MTU %d, flags 0x%x/0x%x, region %llu: out of range",
			 out->link_layer, out->mtu, b[15], b[19], (unsigned long long)out->region);
		return -EINVAL;
	}
	return info_qps(b, out, why, whylen);
}

/* ---- the synchronisation message ---- */

#define SYNC_TEXT 216

void net_rdma_sync_encode(const struct net_rdma_sync *m, uint8_t out[NET_RDMA_SYNC_BYTES])
{
	memset(out, 0, NET_RDMA_SYNC_BYTES);
	memcpy(out, "GRSY", 4);
	put16(out + 4, NET_RDMA_SYNC_VERSION);
	put16(out + 6, (uint16_t)m->type);
	put32(out + 8, (uint32_t)m->status);
	put32(out + 12, m->test);
	put32(out + 16, m->flags);
	put32(out + 20, m->n_windows);
	put64(out + 24, m->size);
	put64(out + 32, m->iters);
	putf(out + 40, m->duration);
	put64(out + 48, m->seed);
	put64(out + 56, m->msgs);
	put64(out + 64, m->bytes);
	put64(out + 72, m->errors);
	putf(out + 80, m->seconds);
	for (int i = 0; i < NET_WINDOWS; i++)
		putf(out + 88 + 8 * i, m->window_s[i]);
	snprintf((char *)out + SYNC_TEXT, NET_RDMA_SYNC_BYTES - SYNC_TEXT, "%s", m->text);
}

int net_rdma_sync_decode(const void *buf, size_t len, struct net_rdma_sync *out, char *why, size_t whylen)
{
	const uint8_t *b = buf;
	if (!b || len != NET_RDMA_SYNC_BYTES || memcmp(b, "GRSY", 4) || get16(b + 4) != NET_RDMA_SYNC_VERSION) {
		snprintf(why, whylen, "not a version %d gpuready RDMA control message (%zu bytes)", NET_RDMA_SYNC_VERSION,
			 len);
		return -EPROTO;
	}
	memset(out, 0, sizeof(*out));
	out->type = get16(b + 6);
	out->status = (int32_t)get32(b + 8);
	out->test = get32(b + 12);
	out->flags = get32(b + 16);
	out->n_windows = get32(b + 20);
	out->size = get64(b + 24);
	out->iters = get64(b + 32);
	out->duration = getf(b + 40);
	out->seed = get64(b + 48);
	out->msgs = get64(b + 56);
	out->bytes = get64(b + 64);
	out->errors = get64(b + 72);
	out->seconds = getf(b + 80);
	bool finite = isfinite(out->duration) && isfinite(out->seconds);
	for (int i = 0; i < NET_WINDOWS; i++) {
		out->window_s[i] = getf(b + 88 + 8 * i);
		finite = finite && isfinite(out->window_s[i]);
	}
	memcpy(out->text, b + SYNC_TEXT, sizeof(out->text));
	out->text[sizeof(out->text) - 1] = '\0';
	if (out->type < NET_RDMA_SYNC_START || out->type > NET_RDMA_SYNC_RESULT || out->n_windows > NET_WINDOWS ||
	    out->status > 0 || out->status < -4095 || !finite) {
		snprintf(why, whylen, "RDMA control message of type %u, status %d, %u windows: out of range", out->type,
			 out->status, out->n_windows);
		return -EPROTO;
	}
	return 0;
}

_Static_assert(SYNC_TEXT + sizeof(((struct net_rdma_sync *)0)->text) == NET_RDMA_SYNC_BYTES, "sync layout");
_Static_assert(88 + 8 * NET_WINDOWS == SYNC_TEXT, "sync layout");
