/* bench net's client (engine.h): connect and hand-shake, set up RDMA, and
 * measure every size, streaming each row to the caller's sink. */
#define _GNU_SOURCE
#include "engine.h"
#include "core/clock.h"
#include "core/cleanup.h"
#include "core/exitcodes.h"
#include "core/fileio.h"
#include "core/readers.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- client ---- */


int net_client_connect(struct net_client_side *cs, char **err)
{
	const struct net_plan *nc = cs->nc;
	_cleanup_free_ char *msg = NULL, *why = NULL;
	uint8_t hb[NET_HELLO_LEN], *pl = NULL;
	size_t len = 0;
	struct net_hello h = { .version = NET_PROTO_VERSION, .p = nc->p,
			       .flags = nc->key.set ? NET_HELLO_HAS_TOKEN : 0 };
	snprintf(h.host, sizeof(h.host), "%s", nc->host);
	auth_nonce(h.nonce);

	cs->fd = tcp_connect(cs->server, cs->port, clock_now() + nc->connect_timeout, &msg);
	if (cs->fd < 0) {
		*err = xasprintf("%s (is `gpuready bench net --server` running there?)", msg);
		return -EHOSTUNREACH; /* never reached: exit 2, not a peer lost */
	}
	net_hello_encode(&h, hb);
	int r = net_msg_send(cs->fd, NETMSG_HELLO, hb, sizeof(hb), clock_now() + net_handshake_s(nc));
	if (r == 0)
		r = net_auth_client(nc, cs->fd, &h, &why);
	if (r == 0)
		r = net_msg_expect(cs->fd, NETMSG_ACCEPT, &pl, &len, clock_now() + net_handshake_s(nc) + 30, &why);
	if (r == 0)
		r = net_accept_decode(pl, len, &cs->acc, &why);
	free(pl);
	if (r < 0) {
		*err = xasprintf("the server %s: %s%s", r == -ECONNABORTED ? "refused" : "did not accept",
				 why ? why : strerror(-r),
				 r == -ETIMEDOUT ? " (it serves one client at a time: it may be busy with another, or stuck)"
						 : "");
		return r;
	}
	net_tcp_link(cs->fd, cs->link, sizeof(cs->link), &cs->link_gbps);
	if (cs->acc.link_gbps > 0 && (cs->link_gbps <= 0 || cs->acc.link_gbps < cs->link_gbps))
		cs->link_gbps = cs->acc.link_gbps;
	return 0;
}

/* A port's rate: on Ethernet (RoCE) the netdev's speed, since the port's
 * `rate` file only approximates it (kernel sysfs-class-infiniband ABI; mlx5 says "4X QDR" for
 * speeds it does not know); on InfiniBand the port's rate. */
double net_rdma_rate(const struct net_rdma_desc *d)
{
	double gbps = d->rate_gbps;
	struct inventory *inv = strcmp(d->link_layer, "Ethernet") ? NULL : net_load_rdma();
	const struct rdma_port *pt = net_find_port(inv, d->dev, d->port);
	struct root *r = NULL;
	int64_t mbps;
	if (pt && pt->netdev && root_open("/", &r) == 0 && read_s64(r, &mbps, "/sys/class/net/%s/speed", pt->netdev) == 0 &&
	    mbps > 0)
		gbps = (double)mbps / 1000.0;
	root_free(r);
	inventory_free(inv);
	return gbps;
}

int net_client_rdma(struct net_client_side *cs, char **err)
{
	const struct net_params *p = &cs->nc->p;
	size_t len = net_rdma_info_size(p->qps);
	_cleanup_free_ uint8_t *mine = xcalloc(1, len);
	uint8_t *theirs = NULL;
	size_t got = 0;
	_cleanup_free_ char *why = NULL;
	uint64_t max = NET_ALL_MAX;
	int r = net_rdma_open(&cs->nc->ro, p, p->all ? max : p->size, &cs->rdma, err);
	if (r < 0)
		return r;
	net_rdma_describe(cs->rdma, &cs->desc);
	double dl = clock_now() + net_handshake_s(cs->nc);
	if ((r = net_rdma_info(cs->rdma, mine, len)) < 0 || (r = net_msg_send(cs->fd, NETMSG_INFO, mine, len, dl)) < 0 ||
	    (r = net_msg_expect(cs->fd, NETMSG_INFO, &theirs, &got, dl + 30, &why)) < 0) {
		if (!*err)
			*err = xasprintf("exchanging QP attributes: %s", r == -ECONNABORTED ? why : strerror(-r));
		return r;
	}
	r = net_rdma_connect(cs->rdma, theirs, got, err);
	free(theirs);
	double ours = net_rdma_rate(&cs->desc);
	cs->link_gbps = ours > 0 && (cs->acc.link_gbps <= 0 || ours < cs->acc.link_gbps) ? ours : cs->acc.link_gbps;
	return r;
}

static int open_streams(struct net_client_side *cs, int n, int *fds, double deadline, char **err)
{
	_cleanup_free_ char *msg = NULL;
	for (int i = 0; i < n; i++) {
		uint8_t b[NET_DATA_HELLO_LEN];
		struct net_data_hello dh = { .token = cs->acc.token, .stream = (uint32_t)i, .nstreams = (uint32_t)n };
		fds[i] = tcp_connect(cs->server, cs->port, deadline, &msg);
		/* refused until the deadline: the server went away, its deadline passed */
		int r = fds[i] == -ECONNREFUSED ? -ETIMEDOUT : fds[i] < 0 ? fds[i] : 0, tos = 0;
		if (r == 0)
			r = tos = net_tcp_set_tos(fds[i], cs->nc->p.tclass);
		if (r == 0) {
			net_data_hello_encode(&dh, b);
			r = net_msg_send(fds[i], NETMSG_DATA_HELLO, b, sizeof(b), deadline);
		}
		if (r < 0) {
			if (tos < 0)
				*err = xasprintf("data connection %d: setting ToS %d: %s", i, cs->nc->p.tclass, strerror(-r));
			else
				*err = xasprintf("data connection %d: %s", i, fds[i] < 0 ? msg : strerror(-r));
			for (int k = 0; k <= i; k++)
				if (fds[k] >= 0)
					close(fds[k]);
			return r;
		}
	}
	return 0;
}

/* The TCP part of one size. */
static int client_tcp(struct net_client_side *cs, const struct net_start *st, double deadline, struct net_samples *s,
		      char **err)
{
	const struct net_params *p = &cs->nc->p;
	int fds[64], n = p->test == NET_TCP_BW ? p->qps : 1, r;
	if ((r = open_streams(cs, n, fds, deadline, err)) < 0)
		return r;
	if (p->test == NET_TCP_LAT) {
		r = net_tcp_lat_client(fds[0], st->size, st->iters, st->duration, deadline, s, err);
	} else {
		struct net_samples mine = { 0 }, theirs = { 0 };
		uint8_t *pl = NULL;
		size_t len = 0;
		_cleanup_free_ char *why = NULL;
		r = net_tcp_bw(fds, n, true, p->bidir, st->size, st->iters * (uint64_t)n, st->duration, deadline, &mine,
			       err);
		if (r == 0 && (r = net_msg_expect(cs->fd, NETMSG_RESULT, &pl, &len, deadline, &why)) == 0)
			r = net_result_decode(pl, len, &theirs, &why);
		if (r < 0 && !*err)
			*err = xasprintf("the server's result: %s", why ? why : strerror(-r));
		free(pl);
		/* what the server received, plus what we received with -b */
		*s = theirs;
		if (p->bidir) {
			s->bytes += mine.bytes;
			s->msgs += mine.msgs;
			s->errors += mine.errors;
			s->seconds = mine.seconds > s->seconds ? mine.seconds : s->seconds;
			s->n_windows = 0;
		}
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return r;
}

static int net_client_run_size(struct net_client_side *cs, uint64_t size, struct net_samples *s, char **err)
{
	const struct net_params *p = &cs->nc->p;
	struct net_start st = { .size = size, .iters = p->duration > 0 ? 0 : p->iters, .duration = p->duration };
	uint8_t b[NET_START_LEN], *pl = NULL;
	size_t len = 0;
	_cleanup_free_ char *why = NULL;
	double deadline = net_step_deadline(cs->nc, p, size, st.iters, st.duration);
	net_start_encode(&st, b);
	int r = net_msg_send(cs->fd, NETMSG_START, b, sizeof(b), deadline);
	if (r == 0)
		r = net_msg_expect(cs->fd, NETMSG_READY, &pl, &len, deadline, &why);
	free(pl);
	if (r < 0) {
		*err = xasprintf("starting %llu B: %s", (unsigned long long)size, r == -ECONNABORTED ? why : strerror(-r));
		return r;
	}
	memset(s, 0, sizeof(*s));
	if (!net_test_is_rdma(p->test))
		return client_tcp(cs, &st, deadline, s, err);
	struct net_ctrl ctrl = { .send = net_ctrl_send, .recv = net_ctrl_recv, .state = net_ctrl_state, .ctx = &cs->fd };
	return net_rdma_run(cs->rdma, true, size, st.iters, st.duration, &ctrl, deadline, s, err);
}

/* Measures every size; fills ro and hands each row to sink as it
 * completes; returns 0 or -errno with *err. */
int net_client_measure(struct net_client_side *cs, struct net_run *ro, const struct net_row_sink *sink, char **err)
{
	const struct net_params *p = &cs->nc->p;
	bool lat = net_test_is_lat(p->test);
	uint64_t sizes[32];
	size_t n = net_sizes_of(p, sizes);
	int r = 0;

	ro->bw = lat ? NULL : xcalloc(n, sizeof(*ro->bw));
	ro->lat = lat ? xcalloc(n, sizeof(*ro->lat)) : NULL;
	sink->header(sink->ctx, p);
	for (size_t i = 0; i < n && r == 0; i++) {
		struct net_samples s = { 0 };
		r = net_client_run_size(cs, sizes[i], &s, err);
		if (r == 0) {
			if (lat) {
				net_lat_row_from(&s, sizes[i], &ro->lat[ro->n]);
				sink->lat(sink->ctx, &ro->lat[ro->n], s.capped);
			} else {
				/* both directions at once: each has the link's rate */
				uint64_t ways = p->bidir ? 2 : 1;
				net_bw_row_from(&s, sizes[i], cs->link_gbps * (double)ways, &ro->bw[ro->n]);
				/* perftest's column: iterations x QPs, one way (print_report_bw) */
				ro->bw[ro->n].iters = p->duration > 0 ? s.msgs / ways : p->iters * (uint64_t)p->qps;
				sink->bw(sink->ctx, &ro->bw[ro->n], net_test_is_rdma(p->test));
			}
			ro->errors += s.errors;
			ro->n++;
		}
		net_samples_free(&s);
	}
	return r;
}
