/* bench net's server (engine.h): one client at a time, forever or for a
 * given count; a client that says nothing, sends garbage or disappears is
 * dropped with a line on stderr and the next one is served. */
#define _GNU_SOURCE
#include "engine.h"
#include "core/clock.h"
#include "core/cleanup.h"
#include "core/exitcodes.h"
#include "core/fileio.h"
#include "core/readers.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "core/parse.h"
#include "core/tcp.h"
#include "gate.h"

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

/* ---- server ---- */

struct client {
	int fd;
	struct net_gate *gate;
	struct net_hello hello;
	uint64_t token;
	struct net_rdma *rdma;
	char who[128];
};

static void refuse(int fd, const char *why)
{
	net_msg_send(fd, NETMSG_REFUSE, why, strlen(why), clock_now() + 2.0);
}

/* Accepts the client's n data connections, each presenting the token;
 * another client's control connection meanwhile is told we are busy, and
 * connections that say nothing wait at the gate, not in our way. */
static int accept_data(int lfd, const struct client *c, int n, double deadline, int *fds, char **err)
{
	int got = 0;
	while (got < n) {
		struct net_gate_msg m;
		int r = net_gate_next(c->gate, lfd, deadline, &m);
		if (r == -EINTR)
			continue;
		if (r < 0) {
			*err = xasprintf("waiting for data connection %d of %d: %s", got + 1, n,
					 r == -ETIMEDOUT ? "the client did not open it" : strerror(-r));
			return r;
		}
		struct net_data_hello dh;
		_cleanup_free_ char *why = NULL;
		if (m.type == NETMSG_DATA_HELLO && net_data_hello_decode(m.payload, m.len, &dh, &why) == 0 &&
		    dh.token == c->token && (int)dh.nstreams == n && dh.stream == (uint32_t)got) {
			int t = net_tcp_set_tos(m.fd, c->hello.p.tclass);
			fds[got++] = m.fd;
			if (t < 0) {
				*err = xasprintf("setting ToS %d on data connection %d: %s", c->hello.p.tclass, got, strerror(-t));
				free(m.payload);
				for (int k = 0; k < got; k++)
					close(fds[k]);
				return t;
			}
		} else {
			if (m.type == NETMSG_HELLO) {
				_cleanup_free_ char *busy = xasprintf("the server is busy with %s; try again", c->who);
				refuse(m.fd, busy);
			}
			close(m.fd);
		}
		free(m.payload);
	}
	return 0;
}

/* One size, server side. */
static int serve_size(const struct net_plan *nc, int lfd, struct client *c, const struct net_start *st, char **err)
{
	const struct net_params *p = &c->hello.p;
	double deadline = net_step_deadline(nc, p, st->size, st->iters, st->duration);
	int fds[64], n = p->test == NET_TCP_BW ? p->qps : 1, r;
	if (deadline > clock_now() + SERVER_STEP_MAX_S)
		deadline = clock_now() + SERVER_STEP_MAX_S;

	if ((r = net_msg_send(c->fd, NETMSG_READY, NULL, 0, deadline)) < 0) {
		*err = xasprintf("sending READY: %s", strerror(-r));
		return r;
	}
	if (net_test_is_rdma(p->test)) {
		struct net_ctrl ctrl = { .send = net_ctrl_send, .recv = net_ctrl_recv, .state = net_ctrl_state, .ctx = &c->fd };
		struct net_samples s = { 0 };
		r = net_rdma_run(c->rdma, false, st->size, st->iters, st->duration, &ctrl, deadline, &s, err);
		net_samples_free(&s);
		return r;
	}
	if ((r = accept_data(lfd, c, n, deadline, fds, err)) < 0)
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
static int server_rdma(const struct net_plan *nc, struct client *c, char **err)
{
	size_t len = net_rdma_info_size(c->hello.p.qps);
	_cleanup_free_ uint8_t *mine = xcalloc(1, len);
	uint8_t *theirs = NULL;
	size_t got = 0;
	_cleanup_free_ char *why = NULL;
	uint64_t max = NET_ALL_MAX;
	int r = net_rdma_open(&nc->ro, &c->hello.p, c->hello.p.all ? max : c->hello.p.size, &c->rdma, err);
	if (r < 0)
		return r;
	double dl = clock_now() + net_handshake_s(nc);
	if ((r = net_msg_expect(c->fd, NETMSG_INFO, &theirs, &got, dl, &why)) < 0 ||
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

/* The client's HELLO (pl, len: the gate read it) and the answer. */
static int handshake(const struct net_plan *nc, struct client *c, const uint8_t *pl, size_t len, char **err)
{
	uint8_t buf[NET_ACCEPT_LEN];
	_cleanup_free_ char *why = NULL;
	int r = net_hello_decode(pl, len, &c->hello, &why);
	str_printable(c->hello.host, false);
	if (r == 0 && (why = net_params_check(&c->hello.p)))
		r = -EINVAL;
	if (r < 0) {
		if (r != -ETIMEDOUT && r != -ECONNRESET)
			refuse(c->fd, why);
		*err = xasprintf("handshake: %s", why);
		return r;
	}
	if (r == 0 && server_cost(&c->hello.p) > SERVER_MEM_MAX) {
		why = xasprintf("the test needs %llu MiB of buffers on the server; it allows %llu MiB "
				"(use fewer QPs or streams, or smaller messages)",
				(unsigned long long)(server_cost(&c->hello.p) >> 20),
				(unsigned long long)(SERVER_MEM_MAX >> 20));
		refuse(c->fd, why);
		*err = xasprintf("refused: %s", why);
		return -E2BIG;
	}
	snprintf(c->who + strlen(c->who), sizeof(c->who) - strlen(c->who), " (%.60s)", c->hello.host);
	if ((r = net_auth_server(nc, c->fd, &c->hello, err)) < 0)
		return r;
	struct net_accept a = { .version = NET_PROTO_VERSION };
	if (getrandom(&c->token, sizeof(c->token), 0) != sizeof(c->token))
		c->token = (uint64_t)getpid() << 32 ^ (uint64_t)(clock_now() * 1e6);
	a.token = c->token;
	snprintf(a.host, sizeof(a.host), "%s", nc->host);
	net_tcp_link(c->fd, a.link, sizeof(a.link), &a.link_gbps);
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
		a.link_gbps = net_rdma_rate(&d);
		net_rdma_close(tmp);
	}
	net_accept_encode(&a, buf);
	if ((r = net_msg_send(c->fd, NETMSG_ACCEPT, buf, sizeof(buf), clock_now() + net_handshake_s(nc))) < 0)
		*err = xasprintf("sending ACCEPT: %s", strerror(-r));
	if (r == 0 && net_test_is_rdma(c->hello.p.test) && (r = server_rdma(nc, c, err)) < 0 && *err)
		net_msg_send(c->fd, NETMSG_ERROR, *err, strlen(*err), clock_now() + 2.0);
	return r;
}

/* Serves one client to the end; returns 0 or -errno with *err. */
static int serve_client(const struct net_plan *nc, int lfd, struct client *c, const struct net_gate_msg *hello,
			unsigned *sizes, char **err)
{
	int r = handshake(nc, c, hello->payload, hello->len, err);
	if (r < 0)
		return r; /* the client was refused, or is gone */
	while (r == 0) {
		uint32_t type = 0;
		uint8_t *pl = NULL;
		size_t len = 0;
		_cleanup_free_ char *why = NULL;
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
			*err = xasprintf("the client stopped: %s", str_printable((char *)pl, false));
			r = -ECONNABORTED;
		} else if (type != NETMSG_START || net_start_decode(pl, len, &st, &why) < 0) {
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

/* Serves clients until stopped, or `clients` of them (0: forever; a
 * client is a connection that sent a HELLO); returns the last client's
 * outcome as an exit code. Whatever else comes to the gate is closed. */
static void log_drop(void *ctx, const char *addr, const char *why)
{
	(void)ctx;
	fprintf(stderr, "gpuready bench net: client %s: %s\n", addr, why);
}

int net_serve_one(const struct net_plan *nc, int lfd, double deadline, char **err)
{
	struct net_gate g;
	int r;
	net_gate_init(&g, net_handshake_s(nc), NULL, NULL);
	for (;;) {
		struct net_gate_msg m;
		r = net_gate_next(&g, lfd, deadline, &m);
		if (r == -EINTR)
			continue;
		if (r < 0) {
			*err = r == -ETIMEDOUT ? xstrdup("no client arrived in time") : xasprintf("accept: %s", strerror(-r));
			break;
		}
		if (m.type != NETMSG_HELLO) {
			close(m.fd);
			free(m.payload);
			continue;
		}
		struct client c = { .fd = m.fd, .gate = &g };
		unsigned sizes = 0;
		snprintf(c.who, sizeof(c.who), "client %s", m.addr);
		r = serve_client(nc, lfd, &c, &m, &sizes, err);
		free(m.payload);
		net_rdma_close(c.rdma);
		close(m.fd);
		break;
	}
	net_gate_free(&g);
	return r;
}

int net_serve(const struct net_plan *nc, int lfd, int clients)
{
	struct net_gate g;
	int code = EXIT_OK;
	net_gate_init(&g, net_handshake_s(nc), log_drop, NULL);
	for (int served = 1;; served++) {
		struct net_gate_msg m;
		int r = net_gate_next(&g, lfd, 0, &m);
		if (r == -EINTR) {
			served--;
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "gpuready bench net: accept: %s\n", strerror(-r));
			code = EXIT_TOOL_ERROR;
			break;
		}
		if (m.type != NETMSG_HELLO) {
			close(m.fd);
			free(m.payload);
			served--;
			continue;
		}
		struct client c = { .fd = m.fd, .gate = &g };
		unsigned sizes = 0;
		_cleanup_free_ char *err = NULL;
		/* the address without its port, as the server has always said it */
		char *host = m.addr[0] == '[' ? m.addr + 1 : m.addr, *end = strrchr(host, host == m.addr ? ':' : ']');
		if (end)
			*end = '\0';
		snprintf(c.who, sizeof(c.who), "client %s", host);
		r = serve_client(nc, lfd, &c, &m, &sizes, &err);
		free(m.payload);
		if (r < 0)
			fprintf(stderr, "gpuready bench net: %s: %s\n", c.who, err ? err : strerror(-r));
		else
			fprintf(stderr, "gpuready bench net: %s: %s, %u size%s served\n", c.who,
				net_test_name(c.hello.p.test), sizes, sizes == 1 ? "" : "s");
		net_rdma_close(c.rdma);
		close(m.fd);
		if (clients && served >= clients) {
			code = r == 0 ? EXIT_OK : r == -ETIMEDOUT || r == -ECONNRESET ? EXIT_STALLED : EXIT_TOOL_ERROR;
			break;
		}
	}
	net_gate_free(&g);
	return code;
}
