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
