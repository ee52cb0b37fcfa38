/* `gpuready bench net`: point-to-point bandwidth and latency, RDMA and TCP,
 * perftest-grade (see src/bench/net.h for the roles and net_proto.h for the
 * protocol).
 *
 *   gpuready bench net --server [--bind ADDR] [-p PORT] [--once]
 *   gpuready bench net HOST --test tcp_bw [-s SIZE | -a] [-n N | -D SEC] [-q N] [-b]
 *   gpuready bench net --loopback --test write_bw ...
 *
 * The server serves one client at a time, forever (or --once): a client
 * that says nothing, sends garbage or disappears is dropped with a line on
 * stderr and the next one is served. The client prints an info block, a
 * perftest-like table with the share of the link's rate, what latency is
 * usual for comparison, the RDMA port counters that moved, and the verdict
 * (--expect-gbps). Exit codes: 0 pass, 1 below --expect-gbps or data that
 * arrived wrong, 2 could not run (refused, no device, bad options), 3 the
 * peer disappeared or a step passed its deadline. */
#include "cmd.h"
#include "config.h"
#include "bench/net.h"
#include "bench/net_proto.h"
#include "bench/net_rdma.h"
#include "bench/net_tcp.h"
#include "job/launch.h"
#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/fileio.h"
#include "core/readers.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/* A client gets this long for each message of the handshake (-T when
 * given): a silent or confused client must not hold the server. */
#define HANDSHAKE_DEFAULT_S 10.0
/* Without -T: 60 s plus the data at 100 MB/s per step, the rule of the
 * collective benchmarks (a working link is far faster). */
#define STEP_BASE_S 60.0
#define STEP_RATE 1e8
/* What one client may cost the server, whatever it asks: its buffers
 * (RDMA: a send and a receive region per QP; TCP: a message to send and
 * one to check per stream) and how long one step may hold it. The limits
 * protect a server other people share; a client asking for more is refused
 * with the numbers. */
#define SERVER_MEM_MAX (2ull << 30)
#define SERVER_STEP_MAX_S 3900.0

struct net_cmd {
	const struct settings *s;
	struct net_params p;
	struct net_rdma_opts ro;
	char host[64];
};

static struct inventory *load_rdma(void);
static const struct rdma_port *find_port(const struct inventory *inv, const char *dev, int port);
static double rdma_rate(const struct net_rdma_desc *d);

static double handshake_s(const struct net_cmd *nc)
{
	return nc->s->bench.timeout > 0 ? nc->s->bench.timeout : HANDSHAKE_DEFAULT_S;
}

static double step_deadline(const struct net_cmd *nc, const struct net_params *p, uint64_t size, uint64_t iters,
			    double duration)
{
	double t = nc->s->bench.timeout;
	if (t <= 0)
		t = STEP_BASE_S + duration + (double)size * (double)(iters ? iters : 1) * (p->bidir ? 2 : 1) / STEP_RATE;
	return clock_now() + t;
}

/* The sizes of the run: -a, or -s. */
static size_t sizes_of(const struct net_params *p, uint64_t *out)
{
	size_t n = 0;
	if (!p->all) {
		out[0] = p->size;
		return 1;
	}
	for (uint64_t s = NET_ALL_MIN; s <= NET_ALL_MAX; s *= 2)
		out[n++] = s;
	return n;
}

/* The interface a connected socket leaves through, and its speed. */
static void tcp_link(int fd, char *name, size_t len, double *gbps)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct ifaddrs *ifa = NULL;
	snprintf(name, len, "?");
	*gbps = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 || getifaddrs(&ifa) < 0)
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != ss.ss_family)
			continue;
		bool same = ss.ss_family == AF_INET
				    ? ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
					      ((struct sockaddr_in *)&ss)->sin_addr.s_addr
				    : !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
					      &((struct sockaddr_in6 *)&ss)->sin6_addr, sizeof(struct in6_addr));
		if (!same)
			continue;
		snprintf(name, len, "%s", i->ifa_name);
		struct root *r = NULL;
		int64_t mbps;
		/* the netdev's speed in Mb/s (REFERENCE §1); loopback has none */
		if (root_open("/", &r) == 0 && read_s64(r, &mbps, "/sys/class/net/%s/speed", i->ifa_name) == 0 && mbps > 0)
			*gbps = (double)mbps / 1000.0;
		root_free(r);
		break;
	}
	freeifaddrs(ifa);
}

/* ---- server ---- */

struct client {
	int fd;
	struct net_hello hello;
	uint64_t token;
	struct net_rdma *rdma;
	char who[128];
};

static int ctrl_send(struct net_ctrl *c, const void *buf, size_t len, double deadline)
{
	return net_msg_send(*(int *)c->ctx, NETMSG_CTRL, buf, len, deadline);
}

static int ctrl_recv(struct net_ctrl *c, void *buf, size_t len, double deadline)
{
	uint8_t *p = NULL;
	size_t n = 0;
	char why[256];
	int r = net_msg_expect(*(int *)c->ctx, NETMSG_CTRL, &p, &n, deadline, why, sizeof(why));
	if (r == 0 && n != len)
		r = -EPROTO;
	if (r == 0)
		memcpy(buf, p, len);
	free(p);
	return r;
}

static int ctrl_state(struct net_ctrl *c)
{
	return (int)tcp_peer_state(*(int *)c->ctx);
}

static void refuse(int fd, const char *why)
{
	net_msg_send(fd, NETMSG_REFUSE, why, strlen(why), clock_now() + 2.0);
}

/* Accepts the client's n data connections, each presenting the token;
 * another client's control connection meanwhile is told we are busy. */
static int accept_data(int lfd, const struct client *c, int n, double hs, double deadline, int *fds, char **err)
{
	int got = 0;
	while (got < n) {
		int fd = tcp_accept(lfd, deadline);
		if (fd == -EAGAIN)
			continue;
		if (fd < 0) {
			*err = xasprintf("waiting for data connection %d of %d: %s", got + 1, n,
					 fd == -ETIMEDOUT ? "the client did not open it" : strerror(-fd));
			return fd;
		}
		uint32_t type = 0;
		uint8_t *pl = NULL;
		size_t len = 0;
		struct net_data_hello dh;
		char why[256];
		int r = net_msg_recv(fd, &type, &pl, &len, NET_MSG_MAX, clock_now() + hs);
		if (r == 0 && type == NETMSG_DATA_HELLO && net_data_hello_decode(pl, len, &dh, why, sizeof(why)) == 0 &&
		    dh.token == c->token && (int)dh.nstreams == n && dh.stream == (uint32_t)got) {
			fds[got++] = fd;
		} else {
			if (r == 0 && type == NETMSG_HELLO) {
				_cleanup_free_ char *busy = xasprintf("the server is busy with %s; try again", c->who);
				refuse(fd, busy);
			}
			close(fd);
		}
		free(pl);
	}
	return 0;
}

/* One size, server side. */
static int serve_size(const struct net_cmd *nc, int lfd, struct client *c, const struct net_start *st, char **err)
{
	const struct net_params *p = &c->hello.p;
	double deadline = step_deadline(nc, p, st->size, st->iters, st->duration);
	int fds[64], n = p->test == NET_TCP_BW ? p->qps : 1, r;
	if (deadline > clock_now() + SERVER_STEP_MAX_S)
		deadline = clock_now() + SERVER_STEP_MAX_S;

	if ((r = net_msg_send(c->fd, NETMSG_READY, NULL, 0, deadline)) < 0) {
		*err = xasprintf("sending READY: %s", strerror(-r));
		return r;
	}
	if (net_test_is_rdma(p->test)) {
		struct net_ctrl ctrl = { .send = ctrl_send, .recv = ctrl_recv, .state = ctrl_state, .ctx = &c->fd };
		struct net_samples s = { 0 };
		r = net_rdma_run(c->rdma, false, st->size, st->iters, st->duration, &ctrl, deadline, &s, err);
		net_samples_free(&s);
		return r;
	}
	if ((r = accept_data(lfd, c, n, handshake_s(nc), deadline, fds, err)) < 0)
		return r;
	if (p->test == NET_TCP_LAT) {
		r = net_tcp_lat_server(fds[0], st->size, deadline, err);
	} else {
		struct net_samples rx = { 0 };
		uint8_t buf[NET_RESULT_LEN];
		/* -n is per stream, as perftest's is per QP */
		r = net_tcp_bw(fds, n, p->bidir, true, st->size, st->iters * (uint64_t)n, st->duration, deadline, &rx, err);
		net_result_encode(&rx, buf);
		if (r == 0 && (r = net_msg_send(c->fd, NETMSG_RESULT, buf, sizeof(buf), deadline)) < 0)
			*err = xasprintf("sending the result: %s", strerror(-r));
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return r;
}

/* RDMA: open our endpoint with the client's parameters and swap QP info. */
static int server_rdma(const struct net_cmd *nc, struct client *c, char **err)
{
	size_t len = net_rdma_info_size(c->hello.p.qps);
	_cleanup_free_ uint8_t *mine = xcalloc(1, len);
	uint8_t *theirs = NULL;
	size_t got = 0;
	char why[256];
	uint64_t max = NET_ALL_MAX;
	int r = net_rdma_open(&nc->ro, &c->hello.p, c->hello.p.all ? max : c->hello.p.size, &c->rdma, err);
	if (r < 0)
		return r;
	double dl = clock_now() + handshake_s(nc);
	if ((r = net_msg_expect(c->fd, NETMSG_INFO, &theirs, &got, dl, why, sizeof(why))) < 0 ||
	    (r = net_rdma_info(c->rdma, mine, len)) < 0 || (r = net_msg_send(c->fd, NETMSG_INFO, mine, len, dl)) < 0) {
		if (!*err)
			*err = xasprintf("exchanging QP attributes: %s", r == -ECONNABORTED ? why : strerror(-r));
		free(theirs);
		return r;
	}
	r = net_rdma_connect(c->rdma, theirs, got, err);
	free(theirs);
	return r;
}

/* A step must be one the HELLO announced: one of its sizes, its iterations
 * or its duration (the server's costs were checked against those). */
static bool start_agrees(const struct net_params *p, const struct net_start *st)
{
	bool size_ok = p->all ? st->size >= NET_ALL_MIN && st->size <= NET_ALL_MAX && !(st->size & (st->size - 1))
			      : st->size == p->size;
	return size_ok && st->duration == p->duration && st->iters == (p->duration > 0 ? 0 : p->iters);
}

/* The buffers a client's parameters make the server hold (see
 * SERVER_MEM_MAX). */
static uint64_t server_cost(const struct net_params *p)
{
	uint64_t size = p->all ? NET_ALL_MAX : p->size;
	return 2 * size * (uint64_t)p->qps * (p->bidir ? 2 : 1);
}

static int handshake(const struct net_cmd *nc, struct client *c, char **err)
{
	uint8_t *pl = NULL, buf[NET_ACCEPT_LEN];
	size_t len = 0;
	char why[256];
	int r = net_msg_expect(c->fd, NETMSG_HELLO, &pl, &len, clock_now() + handshake_s(nc), why, sizeof(why));
	if (r == 0)
		r = net_hello_decode(pl, len, &c->hello, why, sizeof(why));
	free(pl);
	if (r == 0) {
		_cleanup_free_ char *perr = net_params_check(&c->hello.p);
		if (perr) {
			snprintf(why, sizeof(why), "%s", perr);
			r = -EINVAL;
		}
	}
	if (r < 0) {
		if (r != -ETIMEDOUT && r != -ECONNRESET)
			refuse(c->fd, why);
		*err = xasprintf("handshake: %s", why);
		return r;
	}
	if (r == 0 && server_cost(&c->hello.p) > SERVER_MEM_MAX) {
		snprintf(why, sizeof(why), "the test needs %llu MiB of buffers on the server; it allows %llu MiB "
					    "(use fewer QPs or streams, or smaller messages)",
			 (unsigned long long)(server_cost(&c->hello.p) >> 20), (unsigned long long)(SERVER_MEM_MAX >> 20));
		refuse(c->fd, why);
		*err = xasprintf("refused: %s", why);
		return -E2BIG;
	}
	snprintf(c->who + strlen(c->who), sizeof(c->who) - strlen(c->who), " (%.60s)", c->hello.host);
	struct net_accept a = { .version = NET_PROTO_VERSION };
	if (getrandom(&c->token, sizeof(c->token), 0) != sizeof(c->token))
		c->token = (uint64_t)getpid() << 32 ^ (uint64_t)(clock_now() * 1e6);
	a.token = c->token;
	snprintf(a.host, sizeof(a.host), "%s", nc->host);
	tcp_link(c->fd, a.link, sizeof(a.link), &a.link_gbps);
	if (net_test_is_rdma(c->hello.p.test)) {
		struct net_rdma *tmp = NULL;
		/* refuse before accepting when this end cannot run verbs; the
		 * probe opens the device with the smallest buffers */
		struct net_params probe = c->hello.p;
		probe.all = false;
		probe.size = 4096;
		probe.qps = 1;
		probe.bidir = false;
		r = net_rdma_open(&nc->ro, &probe, 4096, &tmp, err);
		if (r < 0) {
			char *msg = xasprintf("the server cannot run %s: %s", net_test_name(c->hello.p.test), *err);
			refuse(c->fd, msg);
			free(*err);
			*err = msg;
			return r;
		}
		struct net_rdma_desc d;
		net_rdma_describe(tmp, &d);
		snprintf(a.link, sizeof(a.link), "%.40s:%d", d.dev, d.port);
		a.link_gbps = rdma_rate(&d);
		net_rdma_close(tmp);
	}
	net_accept_encode(&a, buf);
	if ((r = net_msg_send(c->fd, NETMSG_ACCEPT, buf, sizeof(buf), clock_now() + handshake_s(nc))) < 0)
		*err = xasprintf("sending ACCEPT: %s", strerror(-r));
	if (r == 0 && net_test_is_rdma(c->hello.p.test) && (r = server_rdma(nc, c, err)) < 0 && *err)
		net_msg_send(c->fd, NETMSG_ERROR, *err, strlen(*err), clock_now() + 2.0);
	return r;
}

/* Serves one client to the end; returns 0 or -errno with *err. */
static int serve_client(const struct net_cmd *nc, int lfd, struct client *c, unsigned *sizes, char **err)
{
	int r = handshake(nc, c, err);
	if (r < 0)
		return r; /* the client was refused, or is gone */
	while (r == 0) {
		uint32_t type = 0;
		uint8_t *pl = NULL;
		size_t len = 0;
		char why[256];
		struct net_start st;
		/* between sizes the client may think (print, read counters) */
		r = net_msg_recv(c->fd, &type, &pl, &len, NET_MSG_MAX, clock_now() + STEP_BASE_S);
		if (r < 0) {
			*err = xasprintf("waiting for the next step: %s",
					 r == -ECONNRESET ? "the client disconnected" : strerror(-r));
		} else if (type == NETMSG_BYE) {
			free(pl);
			break;
		} else if (type == NETMSG_ERROR) {
			*err = xasprintf("the client stopped: %s", (char *)pl);
			r = -ECONNABORTED;
		} else if (type != NETMSG_START || net_start_decode(pl, len, &st, why, sizeof(why)) < 0) {
			*err = xasprintf("the client sent a malformed step (%s)", type == NETMSG_START ? why : "not START");
			r = -EPROTO;
		} else if (!start_agrees(&c->hello.p, &st)) {
			*err = xasprintf("the client asked for a step it did not announce (%llu B, %llu iterations, %g s)",
					 (unsigned long long)st.size, (unsigned long long)st.iters, st.duration);
			r = -EPROTO;
		} else if ((r = serve_size(nc, lfd, c, &st, err)) == 0) {
			(*sizes)++;
		}
		free(pl);
	}
	if (r < 0 && c->fd >= 0 && r != -ECONNRESET)
		net_msg_send(c->fd, NETMSG_ERROR, *err, strlen(*err), clock_now() + 2.0);
	return r;
}

static void describe_peer(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN] = "?";
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		inet_ntop(ss.ss_family, ss.ss_family == AF_INET ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
								  : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr,
			  a, sizeof(a));
	snprintf(out, len, "client %s", a);
}

/* Serves clients until stopped, or `clients` of them (0: forever);
 * returns the last client's outcome as an exit code. */
static int serve(const struct net_cmd *nc, int lfd, int clients)
{
	for (int served = 1;; served++) {
		int fd = tcp_accept(lfd, 0);
		if (fd == -EAGAIN || fd == -EINTR)
			continue;
		if (fd < 0) {
			fprintf(stderr, "gpuready bench net: accept: %s\n", strerror(-fd));
			return EXIT_TOOL_ERROR;
		}
		struct client c = { .fd = fd };
		unsigned sizes = 0;
		_cleanup_free_ char *err = NULL;
		describe_peer(fd, c.who, sizeof(c.who));
		int r = serve_client(nc, lfd, &c, &sizes, &err);
		if (r < 0)
			fprintf(stderr, "gpuready bench net: %s: %s\n", c.who, err ? err : strerror(-r));
		else
			fprintf(stderr, "gpuready bench net: %s: %s, %u size%s served\n", c.who,
				net_test_name(c.hello.p.test), sizes, sizes == 1 ? "" : "s");
		net_rdma_close(c.rdma);
		close(fd);
		if (clients && served >= clients)
			return r == 0 ? EXIT_OK : r == -ETIMEDOUT || r == -ECONNRESET ? EXIT_STALLED : EXIT_TOOL_ERROR;
	}
}

/* ---- client ---- */

struct run_out {
	struct net_bw_row *bw;
	struct net_lat_row *lat;
	size_t n;
	uint64_t errors;
};

struct client_side {
	const struct net_cmd *nc;
	int fd;
	const char *server;
	int port;
	struct net_accept acc;
	char link[64];
	double link_gbps;        /* the slower known end; 0 unknown */
	struct net_rdma *rdma;
	struct net_rdma_desc desc;
};

static int client_connect(struct client_side *cs, char **err)
{
	const struct net_cmd *nc = cs->nc;
	char msg[256] = "", why[256];
	uint8_t hb[NET_HELLO_LEN], *pl = NULL;
	size_t len = 0;
	struct net_hello h = { .version = NET_PROTO_VERSION, .p = nc->p };
	snprintf(h.host, sizeof(h.host), "%s", nc->host);

	cs->fd = tcp_connect(cs->server, cs->port, clock_now() + nc->s->connect_timeout, msg, sizeof(msg));
	if (cs->fd < 0) {
		*err = xasprintf("%s (is `gpuready bench net --server` running there?)", msg);
		return -EHOSTUNREACH; /* never reached: exit 2, not a peer lost */
	}
	net_hello_encode(&h, hb);
	int r = net_msg_send(cs->fd, NETMSG_HELLO, hb, sizeof(hb), clock_now() + handshake_s(nc));
	if (r == 0)
		r = net_msg_expect(cs->fd, NETMSG_ACCEPT, &pl, &len, clock_now() + handshake_s(nc) + 30, why, sizeof(why));
	if (r == 0)
		r = net_accept_decode(pl, len, &cs->acc, why, sizeof(why));
	free(pl);
	if (r < 0) {
		*err = xasprintf("the server %s: %s%s", r == -ECONNABORTED ? "refused" : "did not accept", why,
				 r == -ETIMEDOUT ? " (it serves one client at a time: it may be busy with another, or stuck)"
						 : "");
		return r;
	}
	tcp_link(cs->fd, cs->link, sizeof(cs->link), &cs->link_gbps);
	if (cs->acc.link_gbps > 0 && (cs->link_gbps <= 0 || cs->acc.link_gbps < cs->link_gbps))
		cs->link_gbps = cs->acc.link_gbps;
	return 0;
}

/* A port's rate: on Ethernet (RoCE) the netdev's speed, since the port's
 * `rate` file only approximates it (REFERENCE §1; mlx5 says "4X QDR" for
 * speeds it does not know); on InfiniBand the port's rate. */
static double rdma_rate(const struct net_rdma_desc *d)
{
	double gbps = d->rate_gbps;
	struct inventory *inv = strcmp(d->link_layer, "Ethernet") ? NULL : load_rdma();
	const struct rdma_port *pt = find_port(inv, d->dev, d->port);
	struct root *r = NULL;
	int64_t mbps;
	if (pt && pt->netdev && root_open("/", &r) == 0 && read_s64(r, &mbps, "/sys/class/net/%s/speed", pt->netdev) == 0 &&
	    mbps > 0)
		gbps = (double)mbps / 1000.0;
	root_free(r);
	inventory_free(inv);
	return gbps;
}

static int client_rdma(struct client_side *cs, char **err)
{
	const struct net_params *p = &cs->nc->p;
	size_t len = net_rdma_info_size(p->qps);
	_cleanup_free_ uint8_t *mine = xcalloc(1, len);
	uint8_t *theirs = NULL;
	size_t got = 0;
	char why[256];
	uint64_t max = NET_ALL_MAX;
	int r = net_rdma_open(&cs->nc->ro, p, p->all ? max : p->size, &cs->rdma, err);
	if (r < 0)
		return r;
	net_rdma_describe(cs->rdma, &cs->desc);
	double dl = clock_now() + handshake_s(cs->nc);
	if ((r = net_rdma_info(cs->rdma, mine, len)) < 0 || (r = net_msg_send(cs->fd, NETMSG_INFO, mine, len, dl)) < 0 ||
	    (r = net_msg_expect(cs->fd, NETMSG_INFO, &theirs, &got, dl + 30, why, sizeof(why))) < 0) {
		if (!*err)
			*err = xasprintf("exchanging QP attributes: %s", r == -ECONNABORTED ? why : strerror(-r));
		return r;
	}
	r = net_rdma_connect(cs->rdma, theirs, got, err);
	free(theirs);
	double ours = rdma_rate(&cs->desc);
	cs->link_gbps = ours > 0 && (cs->acc.link_gbps <= 0 || ours < cs->acc.link_gbps) ? ours : cs->acc.link_gbps;
	return r;
}

static int open_streams(struct client_side *cs, int n, int *fds, double deadline, char **err)
{
	char msg[256];
	for (int i = 0; i < n; i++) {
		uint8_t b[NET_DATA_HELLO_LEN];
		struct net_data_hello dh = { .token = cs->acc.token, .stream = (uint32_t)i, .nstreams = (uint32_t)n };
		fds[i] = tcp_connect(cs->server, cs->port, deadline, msg, sizeof(msg));
		int r = fds[i] < 0 ? fds[i] : 0;
		if (r == 0) {
			net_data_hello_encode(&dh, b);
			r = net_msg_send(fds[i], NETMSG_DATA_HELLO, b, sizeof(b), deadline);
		}
		if (r < 0) {
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
static int client_tcp(struct client_side *cs, const struct net_start *st, double deadline, struct net_samples *s,
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
		char why[256];
		r = net_tcp_bw(fds, n, true, p->bidir, st->size, st->iters * (uint64_t)n, st->duration, deadline, &mine,
			       err);
		if (r == 0 && (r = net_msg_expect(cs->fd, NETMSG_RESULT, &pl, &len, deadline, why, sizeof(why))) == 0)
			r = net_result_decode(pl, len, &theirs, why, sizeof(why));
		if (r < 0 && !*err)
			*err = xasprintf("the server's result: %s", why);
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

static int run_size(struct client_side *cs, uint64_t size, struct net_samples *s, char **err)
{
	const struct net_params *p = &cs->nc->p;
	struct net_start st = { .size = size, .iters = p->duration > 0 ? 0 : p->iters, .duration = p->duration };
	uint8_t b[NET_START_LEN], *pl = NULL;
	size_t len = 0;
	char why[256];
	double deadline = step_deadline(cs->nc, p, size, st.iters, st.duration);
	net_start_encode(&st, b);
	int r = net_msg_send(cs->fd, NETMSG_START, b, sizeof(b), deadline);
	if (r == 0)
		r = net_msg_expect(cs->fd, NETMSG_READY, &pl, &len, deadline, why, sizeof(why));
	free(pl);
	if (r < 0) {
		*err = xasprintf("starting %llu B: %s", (unsigned long long)size, r == -ECONNABORTED ? why : strerror(-r));
		return r;
	}
	memset(s, 0, sizeof(*s));
	if (!net_test_is_rdma(p->test))
		return client_tcp(cs, &st, deadline, s, err);
	struct net_ctrl ctrl = { .send = ctrl_send, .recv = ctrl_recv, .state = ctrl_state, .ctx = &cs->fd };
	return net_rdma_run(cs->rdma, true, size, st.iters, st.duration, &ctrl, deadline, s, err);
}

/* ---- output ---- */

#define RULE "---------------------------------------------------------------------------------------\n"

static void print_info(const struct client_side *cs)
{
	const struct net_params *p = &cs->nc->p;
	bool rdma = net_test_is_rdma(p->test);
	printf(RULE);
	printf("                    %s %s test (gpuready bench net)\n", rdma ? "RDMA" : "TCP",
	       net_test_is_lat(p->test) ? "latency" : "bandwidth");
	printf(" Test            : %s\n", net_test_name(p->test));
	printf(" Server          : %s:%d (%s)\n", cs->server, cs->port, cs->acc.host);
	if (rdma) {
		const struct net_rdma_desc *d = &cs->desc;
		printf(" Device          : %s\n Port            : %d\n Number of qps   : %d\n", d->dev, d->port, p->qps);
		printf(" Transport type  : IB\n Connection type : RC\n Mtu             : %d[B]\n", d->mtu);
		printf(" Link type       : %s\n GID index       : %d (%s)\n GID             : %s\n", d->link_layer,
		       d->gid_index, d->gid_type, d->gid);
		printf(" Memory          : %s\n", d->mem);
	} else {
		printf(" Streams         : %d\n", p->qps);
	}
	if (cs->link_gbps > 0)
		printf(" Link            : %s, %g Gb/s (server: %s)\n", rdma ? cs->desc.dev : cs->link, cs->link_gbps,
		       cs->acc.link);
	else
		printf(" Link            : %s, rate unknown (server: %s)\n", rdma ? cs->desc.dev : cs->link, cs->acc.link);
	printf(" Direction       : %s\n", p->bidir ? "both ways at once" : "client to server");
	if (p->duration > 0)
		printf(" Duration        : %g s per size\n", p->duration);
	else
		printf(" Iterations      : %llu per size\n", (unsigned long long)p->iters);
	if (p->test == NET_TCP_BW)
		printf(" Data check      : every message's sequence number, every 64th message's payload\n");
	else if (p->test == NET_TCP_LAT)
		printf(" Data check      : every echo\n");
	printf(RULE);
}

static void print_header(const struct net_params *p, bool gbits)
{
	if (net_test_is_lat(p->test))
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
		       "   99%% percentile[usec]   99.9%% percentile[usec] \n");
	else
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]   Link share\n",
		       gbits ? "Gb/sec" : "MiB/sec", gbits ? "Gb/sec" : "MiB/sec");
}

static void print_bw(const struct net_bw_row *r, bool gbits, bool rdma)
{
	/* MiB/s to Gb/s: x 2^20 x 8 / 10^9 */
	double k = gbits ? 1048576.0 * 8 / 1e9 : 1.0;
	char share[32];
	if (r->link_share >= 0)
		snprintf(share, sizeof(share), "%.1f%%", r->link_share * 100);
	else
		snprintf(share, sizeof(share), "n/a");
	printf(" %-10llu %-14llu %-18.2f %-21.2f %-15.6f %s\n", (unsigned long long)r->bytes,
	       (unsigned long long)r->iters, r->peak_mibs * k, r->avg_mibs * k, r->msg_rate_mpps, share);
	if (r->errors)
		printf(" # %llu %s arrived wrong (%llu-byte messages)\n", (unsigned long long)r->errors,
		       rdma ? "bytes" : "messages", (unsigned long long)r->bytes);
	fflush(stdout);
}

static void print_lat(const struct net_lat_row *r)
{
	printf(" %-7llu %-10llu     %-7.2f        %-7.2f      %-7.2f            %-7.2f        %-7.2f         %-7.2f"
	       "                %-7.2f\n",
	       (unsigned long long)r->bytes, (unsigned long long)r->iters, r->min, r->max, r->typical, r->avg, r->stdev,
	       r->p99, r->p999);
	if (r->errors)
		printf(" # %llu echoes of %llu bytes came back wrong\n", (unsigned long long)r->errors,
		       (unsigned long long)r->bytes);
	fflush(stdout);
}

/* What latency to expect, for reading the numbers: seed 004 measured both
 * on one 40GbE link (ib_write_lat 0.85 us; TCP 21.9 us). */
static void print_latency_note(const struct net_params *p)
{
	printf(RULE);
	if (net_test_is_rdma(p->test))
		printf(" For comparison: ib_write_lat (2 B) measured 0.85 usec over a direct 40GbE RoCE link between\n"
		       " two ConnectX-3 Pro nodes, against 21.9 usec over TCP on the same link. Several times that\n"
		       " points at the path: switch hops, PCIe, or GPU memory behind another root complex.\n");
	else
		printf(" For comparison: a direct 40GbE link between two ConnectX-3 Pro nodes measured 21.9 usec over\n"
		       " TCP and 0.85 usec over RDMA. TCP pays the kernel's network stack on both ends; loopback and\n"
		       " a local veth measure that stack alone, without a wire.\n");
}

/* ---- counters (RDMA) ---- */

static struct inventory *load_rdma(void)
{
	struct root *r = NULL;
	struct inventory *inv = NULL;
	struct load_opts o = { .parts = INV_RDMA };
	if (root_open("/", &r) < 0)
		return NULL;
	if (inventory_load(r, &o, &inv) < 0)
		inv = NULL;
	root_free(r);
	return inv;
}

static const struct rdma_port *find_port(const struct inventory *inv, const char *dev, int port)
{
	const struct rdma_dev *d = inv ? rdma_find(&inv->rdma, dev) : NULL;
	for (size_t i = 0; d && i < d->n_ports; i++)
		if ((int)d->ports[i].num == port)
			return &d->ports[i];
	return NULL;
}

/* Prints the counters that moved; returns how many are bad. */
static int print_counters(const struct client_side *cs, const struct inventory *before, const struct inventory *after,
			  struct net_counter_delta **ret, size_t *n)
{
	const struct rdma_port *b = find_port(before, cs->desc.dev, cs->desc.port);
	const struct rdma_port *a = find_port(after, cs->desc.dev, cs->desc.port);
	int bad = 0;
	*ret = NULL;
	*n = 0;
	if (!b || !a || net_rdma_counters_delta(b, a, ret, n) < 0) {
		printf(" Port counters   : could not be read for %s port %d\n", cs->desc.dev, cs->desc.port);
		return 0;
	}
	printf(" Port counters   : %zu moved during the run\n", *n);
	for (size_t i = 0; i < *n; i++) {
		const struct net_counter_delta *d = &(*ret)[i];
		printf("   %-28s +%llu%s%s\n", d->name, (unsigned long long)(d->after - d->before), d->meaning ? ": " : "",
		       d->meaning ? d->meaning : "");
		bad += d->bad;
	}
	return bad;
}

/* ---- JSON ---- */

static json_object *jrow_bw(const struct net_bw_row *r)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "bytes", json_object_new_uint64(r->bytes));
	json_object_object_add(o, "iterations", json_object_new_uint64(r->iters));
	json_object_object_add(o, "bw_peak_mibs", json_object_new_double(r->peak_mibs));
	json_object_object_add(o, "bw_avg_mibs", json_object_new_double(r->avg_mibs));
	json_object_object_add(o, "bw_avg_gbps", json_object_new_double(r->avg_gbps));
	json_object_object_add(o, "msg_rate_mpps", json_object_new_double(r->msg_rate_mpps));
	json_object_object_add(o, "link_share", r->link_share >= 0 ? json_object_new_double(r->link_share) : NULL);
	json_object_object_add(o, "errors", json_object_new_uint64(r->errors));
	return o;
}

static json_object *jrow_lat(const struct net_lat_row *r)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "bytes", json_object_new_uint64(r->bytes));
	json_object_object_add(o, "iterations", json_object_new_uint64(r->iters));
	const double v[] = { r->min, r->max, r->typical, r->avg, r->stdev, r->p99, r->p999 };
	const char *k[] = { "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "p99_us", "p999_us" };
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		json_object_object_add(o, k[i], json_object_new_double(v[i]));
	json_object_object_add(o, "errors", json_object_new_uint64(r->errors));
	/* a -D run that stopped at the samples it keeps, before its time ran out */
	json_object_object_add(o, "stopped_at_sample_limit", json_object_new_boolean(r->capped));
	return o;
}

static int write_json(const char *path, const struct client_side *cs, const struct run_out *ro,
		      const struct net_counter_delta *cd, size_t ncd, const char *result, const char *error)
{
	const struct net_params *p = &cs->nc->p;
	json_object *o = json_object_new_object(), *rows = json_object_new_array(), *ctr = json_object_new_array();
	json_object_object_add(o, "tool", json_object_new_string("gpuready"));
	json_object_object_add(o, "version", json_object_new_string(GPUREADY_VERSION));
	json_object_object_add(o, "kind", json_object_new_string("net"));
	json_object_object_add(o, "test", json_object_new_string(net_test_name(p->test)));
	json_object_object_add(o, "server", json_object_new_string(cs->server));
	json_object_object_add(o, "server_host", json_object_new_string(cs->acc.host));
	json_object_object_add(o, "server_link", json_object_new_string(cs->acc.link));
	json_object_object_add(o, "link", json_object_new_string(net_test_is_rdma(p->test) ? cs->desc.dev : cs->link));
	json_object_object_add(o, "link_gbps", cs->link_gbps > 0 ? json_object_new_double(cs->link_gbps) : NULL);
	json_object_object_add(o, "qps", json_object_new_int(p->qps));
	json_object_object_add(o, "bidirectional", json_object_new_boolean(p->bidir));
	json_object_object_add(o, "iterations", json_object_new_uint64(p->iters));
	json_object_object_add(o, "duration_s", json_object_new_double(p->duration));
	if (net_test_is_rdma(p->test)) {
		json_object_object_add(o, "gid_index", json_object_new_int(cs->desc.gid_index));
		json_object_object_add(o, "mtu", json_object_new_int(cs->desc.mtu));
		json_object_object_add(o, "memory", json_object_new_string(cs->desc.mem));
	}
	for (size_t i = 0; i < ro->n; i++)
		json_object_array_add(rows, ro->bw ? jrow_bw(&ro->bw[i]) : jrow_lat(&ro->lat[i]));
	for (size_t i = 0; i < ncd; i++) {
		json_object *c = json_object_new_object();
		json_object_object_add(c, "name", json_object_new_string(cd[i].name));
		json_object_object_add(c, "delta", json_object_new_uint64(cd[i].after - cd[i].before));
		json_object_object_add(c, "bad", json_object_new_boolean(cd[i].bad));
		json_object_object_add(c, "meaning", cd[i].meaning ? json_object_new_string(cd[i].meaning) : NULL);
		json_object_array_add(ctr, c);
	}
	json_object_object_add(o, "rows", rows);
	json_object_object_add(o, "counters", ctr);
	json_object_object_add(o, "expect_gbps",
			       cs->nc->s->net.expect_gbps > 0 ? json_object_new_double(cs->nc->s->net.expect_gbps) : NULL);
	json_object_object_add(o, "result", json_object_new_string(result));
	json_object_object_add(o, "error", error ? json_object_new_string(error) : NULL);
	int ret = file_write_json(path, o);
	json_object_put(o);
	return ret;
}

/* ---- the client's run ---- */

/* Wrong data fails the run; so does bandwidth below --expect-gbps at the
 * largest size. Congestion or error counters that rose are reported (a
 * warning line), not failed: a fabric under other load moves them too. */
static int verdict(const struct net_cmd *nc, const struct run_out *ro, int bad_counters)
{
	double want = nc->s->net.expect_gbps;
	int code = EXIT_OK;
	if (ro->errors) {
		printf(" Verdict         : FAILED: %llu %s arrived wrong: the data path corrupts data\n",
		       (unsigned long long)ro->errors, net_test_is_rdma(nc->p.test) ? "bytes" : "messages");
		code = EXIT_CHECK_FAILED;
	}
	if (want > 0 && ro->bw && ro->n) {
		const struct net_bw_row *last = &ro->bw[ro->n - 1];
		bool ok = last->avg_gbps >= want;
		printf(" Verdict         : %s: %.2f Gb/s at %llu B, %s the expected %.2f Gb/s\n", ok ? "OK" : "FAILED",
		       last->avg_gbps, (unsigned long long)last->bytes, ok ? "at or above" : "below", want);
		if (!ok)
			code = EXIT_CHECK_FAILED;
	}
	if (bad_counters)
		printf(" Warning         : error or congestion counters rose during the run (above)\n");
	return code;
}

/* Measures every size; fills ro; returns 0 or -errno with *err. */
static int measure(struct client_side *cs, struct run_out *ro, char **err)
{
	const struct net_params *p = &cs->nc->p;
	bool gbits = cs->nc->s->net.gbits, lat = net_test_is_lat(p->test);
	uint64_t sizes[32];
	size_t n = sizes_of(p, sizes);
	int r = 0;

	ro->bw = lat ? NULL : xcalloc(n, sizeof(*ro->bw));
	ro->lat = lat ? xcalloc(n, sizeof(*ro->lat)) : NULL;
	print_header(p, gbits);
	for (size_t i = 0; i < n && r == 0; i++) {
		struct net_samples s = { 0 };
		r = run_size(cs, sizes[i], &s, err);
		if (r == 0) {
			if (lat) {
				net_lat_row_from(&s, sizes[i], &ro->lat[ro->n]);
				print_lat(&ro->lat[ro->n]);
				if (s.capped)
					printf(" # stopped at %u samples, before -D ran out\n", NET_LAT_MAX_SAMPLES);
			} else {
				/* both directions at once: each has the link's rate */
				uint64_t ways = p->bidir ? 2 : 1;
				net_bw_row_from(&s, sizes[i], cs->link_gbps * (double)ways, &ro->bw[ro->n]);
				/* perftest's column: iterations x QPs, one way (print_report_bw) */
				ro->bw[ro->n].iters = p->duration > 0 ? s.msgs / ways : p->iters * (uint64_t)p->qps;
				print_bw(&ro->bw[ro->n], gbits, net_test_is_rdma(p->test));
			}
			ro->errors += s.errors;
			ro->n++;
		}
		net_samples_free(&s);
	}
	return r;
}

static int client_run(const struct net_cmd *nc, const char *server, int port)
{
	struct client_side cs = { .nc = nc, .fd = -1, .server = server, .port = port };
	struct run_out ro = { 0 };
	struct net_counter_delta *cd = NULL;
	size_t ncd = 0;
	_cleanup_free_ char *err = NULL;
	struct inventory *before = NULL, *after = NULL;
	int code = EXIT_OK, bad = 0;

	int r = client_connect(&cs, &err);
	if (r == 0 && net_test_is_rdma(nc->p.test))
		r = client_rdma(&cs, &err);
	if (r < 0) {
		fprintf(stderr, "gpuready bench net: %s\n", err);
		if (nc->s->json_file)
			write_json(nc->s->json_file, &cs, &ro, NULL, 0, "error", err);
		net_rdma_close(cs.rdma);
		if (cs.fd >= 0)
			close(cs.fd);
		return r == -ETIMEDOUT || r == -ECONNRESET ? EXIT_STALLED : EXIT_TOOL_ERROR;
	}
	print_info(&cs);
	if (net_test_is_rdma(nc->p.test))
		before = load_rdma();
	r = measure(&cs, &ro, &err);
	if (r == 0)
		net_msg_send(cs.fd, NETMSG_BYE, NULL, 0, clock_now() + 2.0);
	else if (r != -ECONNRESET)
		net_msg_send(cs.fd, NETMSG_ERROR, err, strlen(err), clock_now() + 2.0);
	if (net_test_is_lat(nc->p.test))
		print_latency_note(&nc->p);
	printf(RULE);
	if (net_test_is_rdma(nc->p.test)) {
		after = load_rdma();
		bad = print_counters(&cs, before, after, &cd, &ncd);
		printf(RULE);
	}
	if (r < 0) {
		fprintf(stderr, "gpuready bench net: %s\n", err);
		code = r == -ETIMEDOUT || r == -ECONNRESET || r == -EPIPE ? EXIT_STALLED : EXIT_TOOL_ERROR;
	} else {
		code = verdict(nc, &ro, bad);
	}
	if (nc->s->json_file && write_json(nc->s->json_file, &cs, &ro, cd, ncd,
					   code == EXIT_OK ? "pass" : code == EXIT_CHECK_FAILED ? "fail" : "error",
					   r < 0 ? err : NULL) < 0) {
		fprintf(stderr, "gpuready bench net: cannot write %s\n", nc->s->json_file);
		code = EXIT_TOOL_ERROR;
	}
	inventory_free(before);
	inventory_free(after);
	free(cd);
	free(ro.bw);
	free(ro.lat);
	net_rdma_close(cs.rdma);
	close(cs.fd);
	return fflush(stdout) == 0 ? code : EXIT_TOOL_ERROR;
}

/* ---- entry ---- */

struct loop_server {
	const struct net_cmd *nc;
	int lfd;
	int code;
};

static void *loop_server_main(void *arg)
{
	struct loop_server *ls = arg;
	ls->code = serve(ls->nc, ls->lfd, 1);
	return NULL;
}

static char *options_from(const struct settings *s, struct net_cmd *nc)
{
	net_params_default(&nc->p);
	if (s->net.test) {
		int t = net_test_parse(s->net.test);
		if (t < 0)
			return xasprintf("--test %s: write_bw, write_lat, read_bw, read_lat, send_bw, send_lat, tcp_bw or "
					 "tcp_lat", s->net.test);
		nc->p.test = (enum net_test)t;
	}
	nc->p.size = s->net.size;
	nc->p.all = s->net.all;
	nc->p.iters = s->net.iters;
	nc->p.duration = s->net.duration;
	nc->p.qps = s->net.qps;
	nc->p.bidir = s->net.bidir;
	nc->p.mtu = s->net.mtu;
	nc->p.tclass = s->net.tclass;
	nc->p.sl = s->net.sl;
	nc->ro = (struct net_rdma_opts){ .dev = s->net.dev, .port = s->net.ib_port, .gid_index = s->net.gid,
					 .mem = NET_MEM_HOST, .gpu = -1 };
	if (s->net.mem && strcmp(s->net.mem, "host")) {
		const char *m = s->net.mem;
		if (strncmp(m, "cuda", 4) || (m[4] && (m[4] != ':' || !m[5])))
			return xasprintf("--mem %s: host, cuda or cuda:GPU", m);
		nc->ro.mem = NET_MEM_CUDA;
		if (m[4] == ':') {
			char *end;
			long g = strtol(m + 5, &end, 10);
			if (*end || g < 0 || g > 1023)
				return xasprintf("--mem %s: the GPU is a CUDA ordinal", m);
			nc->ro.gpu = (int)g;
		}
	}
	tcp_hostname(nc->host, sizeof(nc->host));
	return net_params_check(&nc->p);
}

int cmd_bench_net(struct cmd_env *env)
{
	const struct settings *s = env->set;
	struct net_cmd nc = { .s = s };
	_cleanup_free_ char *err = options_from(s, &nc);
	char msg[256] = "";

	if (err) {
		fprintf(stderr, "gpuready bench net: %s\n", err);
		return EXIT_TOOL_ERROR;
	}
	if (s->net.server + s->net.loopback + (env->args.n > 0) != 1) {
		fprintf(stderr, "gpuready bench net: give --server, --loopback, or the server's HOST (one of them)\n");
		return EXIT_TOOL_ERROR;
	}
	if (s->net.server) {
		int lfd = tcp_listen(s->net.bind, s->net.port, msg, sizeof(msg));
		if (lfd < 0) {
			fprintf(stderr, "gpuready bench net: %s\n", msg);
			return EXIT_TOOL_ERROR;
		}
		fprintf(stderr, "gpuready bench net: serving on %s:%d\n", s->net.bind ? s->net.bind : "*", s->net.port);
		int code = serve(&nc, lfd, s->net.clients);
		close(lfd);
		return code;
	}
	if (s->net.loopback) {
		/* -d A,B: the server end on device B (two local HCAs, a cable
		 * between them); otherwise both ends on the same device */
		struct net_cmd snc = nc;
		_cleanup_free_ char *devs = s->net.dev ? xstrdup(s->net.dev) : NULL;
		char *comma = devs ? strchr(devs, ',') : NULL;
		if (comma) {
			*comma = '\0';
			nc.ro.dev = devs;
			snc.ro.dev = comma + 1;
		}
		struct loop_server ls = { .nc = &snc, .lfd = tcp_listen("127.0.0.1", 0, msg, sizeof(msg)) };
		pthread_t th;
		if (ls.lfd < 0 || pthread_create(&th, NULL, loop_server_main, &ls)) {
			fprintf(stderr, "gpuready bench net: --loopback: %s\n", ls.lfd < 0 ? msg : "cannot start the server");
			if (ls.lfd >= 0)
				close(ls.lfd);
			return EXIT_TOOL_ERROR;
		}
		int code = client_run(&nc, "127.0.0.1", tcp_local_port(ls.lfd));
		/* a client that never connected leaves the server in accept() */
		shutdown(ls.lfd, SHUT_RDWR);
		pthread_join(th, NULL);
		close(ls.lfd);
		return code != EXIT_OK ? code : ls.code;
	}
	char *host = NULL;
	int port = s->net.port;
	if (launch_split_hostport(env->args.v[0], &host, &port) < 0) {
		fprintf(stderr, "gpuready bench net: '%s' is not HOST or HOST:PORT\n", env->args.v[0]);
		return EXIT_TOOL_ERROR;
	}
	int code = client_run(&nc, host, port);
	free(host);
	return code;
}
