/* One pair of `gpuready cluster links` over one RDMA rail (see
 * links_rdma.h). */
#define _GNU_SOURCE
#include "cluster/links_rdma.h"
#include "bench/net/engine.h"
#include "cluster/links.h"
#include "cluster/links_pair.h"
#include "cluster/links_render.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int links_rail_mode_parse(const char *s)
{
	return !s ? -1
	       : !strcmp(s, "tcp")  ? LINKS_MEASURE_TCP
	       : !strcmp(s, "rdma") ? LINKS_MEASURE_RDMA
	       : !strcmp(s, "all")  ? LINKS_MEASURE_ALL
				    : -1;
}

int links_rail_count(const char *rails)
{
	int n = rails && rails[0] ? 1 : 0;
	for (const char *p = rails; n && *p; p++)
		n += *p == ',';
	return n;
}

int links_rail_device(const char *rails, int i, char *out, size_t len)
{
	const char *p = rails ? rails : "";
	out[0] = 0;
	for (int k = 0; k < i && p; k++)
		p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
	if (!p || !*p || i < 0)
		return -ENODEV;
	size_t n = strcspn(p, ",");
	if (!n || (n == 1 && *p == '-'))
		return -ENODEV;
	snprintf(out, len, "%.*s", (int)n, p);
	return 0;
}

uint32_t links_pair_rails(int mode, const char *rails_a, const char *rails_b)
{
	uint32_t mask = mode & LINKS_MEASURE_TCP ? 1u << LINKS_RAIL_TCP : 0;
	if (!(mode & LINKS_MEASURE_RDMA))
		return mask;
	int na = links_rail_count(rails_a), nb = links_rail_count(rails_b), k = na > nb ? na : nb;
	char d[2][64];
	bool any = false;
	for (int i = 0; i < k && i < LINKS_RAILS_MAX; i++) {
		/* a GPU without an RDMA NIC on both nodes is no rail */
		if (links_rail_device(rails_a, i, d[0], sizeof(d[0])) < 0 && links_rail_device(rails_b, i, d[1], sizeof(d[1])) < 0)
			continue;
		mask |= 1u << (i + 1);
		any = true;
	}
	/* --rail rdma and neither node has a rail: rail 0, failed (no RDMA device) */
	return any || (mode & LINKS_MEASURE_TCP) ? mask : mask | 1u << 1;
}

int links_rails_most(int mode, const char *const *rails, int n)
{
	if (!(mode & LINKS_MEASURE_RDMA))
		return 0;
	int most = 1;
	for (int i = 0; i < n; i++)
		most = links_rail_count(rails[i]) > most ? links_rail_count(rails[i]) : most;
	return most < LINKS_RAILS_MAX ? most : LINKS_RAILS_MAX;
}

char *links_rail_missing(int rail, const struct links_node *a, const struct links_node *b)
{
	char d[64];
	const struct links_node *x[2] = { a, b };
	if (!a->rails[0] && !b->rails[0])
		return xasprintf("rail %d: no RDMA device on %s nor on %s (no RDMA NIC near a GPU)", rail, a->name, b->name);
	for (int k = 0; k < 2; k++) {
		if (links_rail_device(x[k]->rails, rail, d, sizeof(d)) < 0)
			return x[k]->rails[0] ? xasprintf("rail %d: %s has no RDMA device for GPU %d (its rails: %s)", rail,
							  x[k]->name, rail, x[k]->rails)
					      : xasprintf("rail %d: no RDMA device on %s (no RDMA NIC near a GPU)", rail,
							  x[k]->name);
		if (!x[k]->rport)
			return xasprintf("rail %d: %s has no RDMA data listener", rail, x[k]->name);
	}
	return NULL;
}

int links_rdma_listen(const char *addr, int *port)
{
	_cleanup_free_ char *e = NULL;
	int fd = tcp_listen(addr, 0, &e);
	*port = fd >= 0 ? tcp_local_port(fd) : 0;
	return fd;
}

double links_rdma_step_s(double duration)
{
	return duration + LINKS_SLACK_S;
}

/* A direction: the server's wait for its client (connect, plus a step),
 * then the engine's waits: the HELLO, the token's exchange and ACCEPT,
 * the QP attributes (each a step plus the engine's 30 s), START/READY and
 * the run (a step), the wait for BYE (STEP_BASE_S), and 2 s to part. */
double links_rdma_budget(double duration)
{
	double t = links_rdma_step_s(duration);
	return 2 * (LINKS_CONNECT_S + t + 5 * t + 3 * 30 + STEP_BASE_S + 2);
}

static void sink_header(void *ctx, const struct net_params *p)
{
	(void)ctx, (void)p;
}

static void sink_bw(void *ctx, const struct net_bw_row *row, bool rdma)
{
	(void)ctx, (void)row, (void)rdma;
}

static void sink_lat(void *ctx, const struct net_lat_row *row, bool capped)
{
	(void)ctx, (void)row, (void)capped;
}

/* The engine's plan of one direction: write_bw, 64 KiB, the duration. */
static void plan_of(const struct links_rdma_opts *o, struct net_plan *nc)
{
	*nc = (struct net_plan){ 0 };
	net_params_default(&nc->p);
	nc->p.test = NET_WRITE_BW;
	nc->p.size = LINKS_RDMA_MSG_KIB * 1024u;
	nc->p.duration = o->duration;
	nc->ro = (struct net_rdma_opts){ .dev = o->dev, .port = 1, .gid_index = -1, .mem = NET_MEM_HOST, .gpu = -1 };
	snprintf(nc->host, sizeof(nc->host), "%s", o->host ? o->host : "");
	nc->timeout = links_rdma_step_s(o->duration);
	nc->connect_timeout = LINKS_CONNECT_S;
	if (o->key)
		nc->key = *o->key;
}

/* The writing side: connects to the peer's RDMA listener and measures. */
static int write_to(const struct links_rdma_opts *o, const struct net_plan *nc, double *gbps, char **err)
{
	struct net_client_side cs = { .nc = nc, .fd = -1, .server = o->peer_addr, .port = o->peer_rport };
	struct net_run ro = { 0 };
	const struct net_row_sink sink = { .header = sink_header, .bw = sink_bw, .lat = sink_lat };
	int r = net_client_connect(&cs, err);
	if (r == 0)
		r = net_client_rdma(&cs, err);
	if (r == 0)
		r = net_client_measure(&cs, &ro, &sink, err);
	if (r == 0 && (ro.n < 1 || ro.errors || ro.bw[0].avg_gbps <= 0)) {
		r = ro.errors ? -EBADMSG : -ENODATA;
		*err = ro.errors ? xasprintf("%llu messages arrived wrong", (unsigned long long)ro.errors)
				 : xstrdup("no data moved");
	}
	if (r == 0) {
		*gbps = ro.bw[0].avg_gbps;
		net_msg_send(cs.fd, NETMSG_BYE, NULL, 0, clock_now() + 2.0);
	} else if (cs.fd >= 0 && r != -ECONNRESET && *err) {
		net_msg_send(cs.fd, NETMSG_ERROR, *err, strlen(*err), clock_now() + 2.0);
	}
	/* the engine's advice to a bench net client; here the peer is a rank */
	char *advice = *err ? strstr(*err, " (is `gpuready bench net --server` running there?)") : NULL;
	if (advice)
		*advice = 0;
	free(ro.bw);
	free(ro.lat);
	net_rdma_close(cs.rdma);
	if (cs.fd >= 0)
		close(cs.fd);
	return r;
}

int links_rdma_pair_run(const struct links_rdma_opts *o, double *gbps, char **err)
{
	struct net_plan nc;
	int ret = 0;
	plan_of(o, &nc);
	*gbps = -1;
	/* step 0: the lower rank serves, the higher writes; step 1 swapped */
	for (int step = 0; step < 2; step++) {
		bool serve = (step == 0) == (o->me < o->peer);
		_cleanup_free_ char *e = NULL;
		if (serve) {
			double deadline = clock_now() + LINKS_CONNECT_S + 2 * nc.timeout;
			int r = net_serve_one(&nc, o->listen_fd, deadline, &e);
			(void)r; /* the writer reports the direction, with the server's refusal if any */
			continue;
		}
		ret = write_to(o, &nc, gbps, &e);
		if (ret < 0) {
			*gbps = -1;
			*err = xasprintf("%s %s over %s: %s", "writing to", o->peer_name, o->dev, e ? e : strerror(-ret));
		}
	}
	auth_key_wipe(&nc.key);
	return ret;
}
