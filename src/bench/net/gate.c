/* The `bench net` server's door (gate.h). */
#define _GNU_SOURCE
#include "gate.h"
#include "proto.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define STR_(x) #x
#define STR(x) STR_(x)

struct net_gate_conn {
	int fd;
	double deadline;
	size_t got, want;        /* want: the header, then header and payload */
	uint8_t buf[NET_FRAME_HDR + NET_GATE_FRAME_MAX];
	char addr[80];
};

void net_gate_init(struct net_gate *g, double seconds, void (*on_drop)(void *ctx, const char *addr, const char *why),
		   void *ctx)
{
	*g = (struct net_gate){ .v = xcalloc(NET_GATE_MAX, sizeof(*g->v)), .on_drop = on_drop, .ctx = ctx,
				.seconds = seconds > 0 && seconds < NET_GATE_S ? seconds : NET_GATE_S };
}

/* Closes connection i; why (NULL: say nothing) goes to on_drop. */
static void drop(struct net_gate *g, size_t i, const char *why)
{
	if (why && g->on_drop)
		g->on_drop(g->ctx, g->v[i].addr, why);
	close(g->v[i].fd);
	g->v[i] = g->v[--g->n];
}

void net_gate_free(struct net_gate *g)
{
	while (g->n)
		drop(g, g->n - 1, NULL);
	free(g->v);
	g->v = NULL;
}

static void admit(struct net_gate *g, int lfd)
{
	int fd = tcp_accept(lfd, clock_now());
	if (fd < 0)
		return;
	if (g->n == NET_GATE_MAX) {
		size_t oldest = 0;
		for (size_t i = 1; i < g->n; i++)
			if (g->v[i].deadline < g->v[oldest].deadline)
				oldest = i;
		drop(g, oldest, "dropped: " STR(NET_GATE_MAX) " connections were waiting and it was the oldest");
	}
	struct net_gate_conn *c = &g->v[g->n++];
	c->fd = fd;
	c->deadline = clock_now() + g->seconds;
	c->got = 0;
	c->want = NET_FRAME_HDR;
	tcp_peer_name(fd, c->addr, sizeof(c->addr));
}

/* Reads what connection i sent; 1 when its first frame is whole, 0 when
 * not yet, -1 when it was dropped (closed, not our protocol, too big). */
static int pull(struct net_gate *g, size_t i)
{
	struct net_gate_conn *c = &g->v[i];
	ssize_t n = recv(c->fd, c->buf + c->got, c->want - c->got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		drop(g, i, c->got ? "the peer closed the connection in the middle of a message" : NULL);
		return -1;
	}
	c->got += (size_t)n;
	if (c->got < c->want)
		return 0;
	if (c->want > NET_FRAME_HDR)
		return 1;
	uint32_t type;
	size_t len;
	bool ours = net_frame_hdr_decode(c->buf, &type, &len) == 0;
	if (!ours || len > NET_GATE_FRAME_MAX) {
		const char *why = ours ? "the peer sent an oversized message" : "the peer does not speak gpuready's protocol";
		/* the reason, as the handshake always gave it; the peer may not listen */
		net_msg_send(c->fd, NETMSG_REFUSE, why, strlen(why), clock_now() + 0.5);
		drop(g, i, why);
		return -1;
	}
	c->want = NET_FRAME_HDR + len;
	return len ? 0 : 1;
}

static void hand_over(struct net_gate *g, size_t i, struct net_gate_msg *out)
{
	struct net_gate_conn *c = &g->v[i];
	size_t len;
	net_frame_hdr_decode(c->buf, &out->type, &len);
	out->fd = c->fd;
	out->len = len;
	out->payload = xcalloc(1, len + 1);
	memcpy(out->payload, c->buf + NET_FRAME_HDR, len);
	memcpy(out->addr, c->addr, sizeof(out->addr));
	g->v[i] = g->v[--g->n];
}

/* Drops the connections whose own deadline passed; the earliest deadline
 * left (or `until`). */
static double expire(struct net_gate *g, double now, double until)
{
	for (size_t i = g->n; i-- > 0;)
		if (g->v[i].deadline <= now)
			drop(g, i, "the peer said nothing by the deadline");
	for (size_t i = 0; i < g->n; i++)
		if (until <= 0 || g->v[i].deadline < until)
			until = g->v[i].deadline;
	return until;
}

int net_gate_next(struct net_gate *g, int lfd, double deadline, struct net_gate_msg *out)
{
	struct pollfd pf[NET_GATE_MAX + 1];
	for (;;) {
		double now = clock_now();
		if (deadline > 0 && now >= deadline)
			return -ETIMEDOUT;
		double wake = expire(g, now, deadline);
		pf[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (size_t i = 0; i < g->n; i++)
			pf[i + 1] = (struct pollfd){ .fd = g->v[i].fd, .events = POLLIN };
		int ms = wake > 0 ? (int)((wake - now) * 1000.0) + 1 : -1;
		int n = poll(pf, g->n + 1, ms);
		if (n < 0)
			return -errno;
		/* waiting connections first, from the end (drop() moves the
		 * last one into the slot it frees) */
		size_t waiting = g->n;
		for (size_t i = waiting; n > 0 && i-- > 0;) {
			if (!pf[i + 1].revents)
				continue;
			if (pull(g, i) == 1) {
				hand_over(g, i, out);
				return 0;
			}
		}
		if (pf[0].revents & POLLIN)
			admit(g, lfd);
		else if (pf[0].revents & (POLLERR | POLLNVAL))
			return -EBADF;
	}
}
