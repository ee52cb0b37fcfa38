/* What both ends of bench net share (engine.h): step deadlines, the sizes
 * of a run, the link a socket leaves through, the RDMA port counters. */
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

double net_handshake_s(const struct net_plan *nc)
{
	return nc->timeout > 0 ? nc->timeout : HANDSHAKE_DEFAULT_S;
}

double net_step_deadline(const struct net_plan *nc, const struct net_params *p, uint64_t size, uint64_t iters,
			    double duration)
{
	double t = nc->timeout;
	if (t <= 0)
		t = STEP_BASE_S + duration + (double)size * (double)(iters ? iters : 1) * (p->bidir ? 2 : 1) / STEP_RATE;
	return clock_now() + t;
}

/* The sizes of the run: -a, or -s. */
size_t net_sizes_of(const struct net_params *p, uint64_t *out)
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
void net_tcp_link(int fd, char *name, size_t len, double *gbps)
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
		/* the netdev's speed in Mb/s (kernel sysfs-class-net ABI); loopback has none */
		if (root_open("/", &r) == 0 && read_s64(r, &mbps, "/sys/class/net/%s/speed", i->ifa_name) == 0 && mbps > 0)
			*gbps = (double)mbps / 1000.0;
		root_free(r);
		break;
	}
	freeifaddrs(ifa);
}

/* ---- counters (RDMA) ---- */

struct inventory *net_load_rdma(void)
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

const struct rdma_port *net_find_port(const struct inventory *inv, const char *dev, int port)
{
	const struct rdma_dev *d = inv ? rdma_find(&inv->rdma, dev) : NULL;
	for (size_t i = 0; d && i < d->n_ports; i++)
		if ((int)d->ports[i].num == port)
			return &d->ports[i];
	return NULL;
}

/* The RDMA kernels' control messages over the control connection (a
 * struct net_ctrl whose ctx points at the fd). */
int net_ctrl_send(struct net_ctrl *c, const void *buf, size_t len, double deadline)
{
	return net_msg_send(*(int *)c->ctx, NETMSG_CTRL, buf, len, deadline);
}

int net_ctrl_recv(struct net_ctrl *c, void *buf, size_t len, double deadline)
{
	uint8_t *p = NULL;
	size_t n = 0;
	_cleanup_free_ char *why = NULL;
	int r = net_msg_expect(*(int *)c->ctx, NETMSG_CTRL, &p, &n, deadline, &why);
	if (r == 0 && n != len)
		r = -EPROTO;
	if (r == 0)
		memcpy(buf, p, len);
	free(p);
	return r;
}

int net_ctrl_state(struct net_ctrl *c)
{
	return (int)tcp_peer_state(*(int *)c->ctx);
}

int net_auth_server(const struct net_plan *nc, int fd, const struct net_hello *h, char **err)
{
	bool has = h->flags & NET_HELLO_HAS_TOKEN;
	unsigned char nonce_l[AUTH_NONCE_LEN], body[2 * AUTH_NONCE_LEN];
	uint8_t *pl = NULL;
	size_t len = 0;
	double dl = clock_now() + net_handshake_s(nc);

	if (nc->key.set != has) {
		*err = xstrdup(has ? "the client has a job token and the server has none: give the server the same "
				     "GPUREADY_JOB_TOKEN or --token-file"
				   : "the server requires a job token: give the client the same GPUREADY_JOB_TOKEN or "
				     "--token-file");
		net_msg_send(fd, NETMSG_REFUSE, *err, strlen(*err), clock_now() + 2.0);
		return -EACCES;
	}
	if (!has)
		return 0;
	auth_nonce(nonce_l);
	memcpy(body, nonce_l, AUTH_NONCE_LEN);
	auth_proof(&nc->key, AUTH_LISTENER, h->nonce, nonce_l, NET_AUTH_CONTEXT, 0, body + AUTH_NONCE_LEN);
	_cleanup_free_ char *why = NULL;
	int r = net_msg_send(fd, NETMSG_CHALLENGE, body, sizeof(body), dl);
	if (r == 0)
		r = net_msg_expect(fd, NETMSG_PROOF, &pl, &len, dl, &why);
	if (r == 0 && (len != AUTH_PROOF_LEN ||
		       !auth_verify(&nc->key, AUTH_CONNECTOR, h->nonce, nonce_l, NET_AUTH_CONTEXT, 0, pl))) {
		*err = xstrdup("the client could not prove the job token (a different GPUREADY_JOB_TOKEN or --token-file?)");
		net_msg_send(fd, NETMSG_REFUSE, *err, strlen(*err), clock_now() + 2.0);
		r = -EACCES;
	} else if (r < 0) {
		*err = xasprintf("the job token's challenge: %s", why ? why : strerror(-r));
	}
	free(pl);
	return r;
}

int net_auth_client(const struct net_plan *nc, int fd, const struct net_hello *h, char **err)
{
	uint8_t *pl = NULL;
	size_t len = 0;
	unsigned char proof[AUTH_PROOF_LEN];
	double dl = clock_now() + net_handshake_s(nc) + 30;

	if (!nc->key.set)
		return 0;
	int r = net_msg_expect(fd, NETMSG_CHALLENGE, &pl, &len, dl, err);
	if (r == -EPROTO) {
		free(*err);
		*err = xstrdup("the server did not ask for the job token: it has none, or it is not the server you meant");
		return -EACCES;
	}
	if (r < 0)
		return r;
	if (len != 2 * AUTH_NONCE_LEN ||
	    !auth_verify(&nc->key, AUTH_LISTENER, h->nonce, pl, NET_AUTH_CONTEXT, 0, pl + AUTH_NONCE_LEN)) {
		free(pl);
		*err = xstrdup("the server could not prove the job token: a different token, or not the server you meant");
		return -EACCES;
	}
	auth_proof(&nc->key, AUTH_CONNECTOR, h->nonce, pl, NET_AUTH_CONTEXT, 0, proof);
	free(pl);
	r = net_msg_send(fd, NETMSG_PROOF, proof, sizeof(proof), dl);
	if (r < 0)
		*err = xasprintf("sending the job token's proof: %s", strerror(-r));
	return r;
}
