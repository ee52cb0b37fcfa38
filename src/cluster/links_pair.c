/* One pair of `gpuready cluster links` over TCP (see links_pair.h). */
#define _GNU_SOURCE
#include "cluster/links_pair.h"
#include "bench/net/tcp.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HELLO_MAGIC 0x67706c6bu /* "gplk" */

struct hello {
	uint32_t magic, step, rank, dir;
	uint64_t nonce;
};

double links_pair_budget(double duration)
{
	return LINKS_CONNECT_S + 2 * (duration + LINKS_SLACK_S);
}

static int send_hello(int fd, const struct links_pair_opts *o, uint32_t dir, double deadline)
{
	struct hello h = { htobe32(HELLO_MAGIC), htobe32(o->step), htobe32((uint32_t)o->me), htobe32(dir),
			   htobe64(o->nonce) };
	return tcp_write_all(fd, &h, sizeof(h), deadline);
}

/* The connecting side: connection 0 carries the server's data, 1 ours. */
static int connect_both(const struct links_pair_opts *o, const struct links_peer *p, int fds[2], char **err)
{
	double deadline = clock_now() + LINKS_CONNECT_S;
	for (uint32_t d = 0; d < 2; d++) {
		_cleanup_free_ char *e = NULL;
		fds[d] = tcp_connect(p->addr, p->port, deadline, &e);
		if (fds[d] < 0) {
			*err = xasprintf("could not connect to %s at %s:%d: %s", p->name, p->addr, p->port,
					 e ? e : strerror(-fds[d]));
			return fds[d];
		}
		int r = send_hello(fds[d], o, d, deadline);
		if (r < 0) {
			*err = xasprintf("%s at %s:%d took the connection but not the hello: %s", p->name, p->addr,
					 p->port, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* The serving side: accepts until both of the peer's connections said
 * hello for this step; anything else is closed. */
static int accept_both(const struct links_pair_opts *o, const struct links_peer *p, int fds[2], char **err)
{
	double deadline = clock_now() + LINKS_CONNECT_S;
	while (fds[0] < 0 || fds[1] < 0) {
		int fd = tcp_accept(o->listen_fd, deadline);
		if (fd == -EAGAIN)
			continue;
		if (fd < 0) {
			*err = xasprintf("%s did not connect within %.0f s (%s)", p->name, LINKS_CONNECT_S,
					 fd == -ETIMEDOUT ? "nothing arrived" : strerror(-fd));
			return fd;
		}
		struct hello h;
		int r = tcp_read_all(fd, &h, sizeof(h), deadline < clock_now() + 2 ? deadline : clock_now() + 2);
		uint32_t dir = be32toh(h.dir);
		if (r < 0 || be32toh(h.magic) != HELLO_MAGIC || be32toh(h.step) != o->step || be64toh(h.nonce) != o->nonce ||
		    (int)be32toh(h.rank) != p->rank || dir > 1 || fds[dir] >= 0) {
			close(fd); /* a stray or late connection */
			continue;
		}
		fds[dir] = fd;
	}
	return 0;
}

/* One direction: this rank sends or receives for the duration. */
static int direction(int fd, bool send, const struct links_pair_opts *o, double *gbps, char **err)
{
	struct net_samples rx = { 0 };
	double deadline = clock_now() + o->duration + LINKS_SLACK_S;
	int r = net_tcp_bw(&fd, 1, send, !send, LINKS_MSG_BYTES, 0, o->duration, deadline, &rx, err);
	if (r == 0 && !send) {
		if (rx.errors)
			r = -EBADMSG, *err = xasprintf("%llu messages arrived wrong", (unsigned long long)rx.errors);
		else if (rx.seconds <= 0 || !rx.bytes)
			r = -ENODATA, *err = xstrdup("no data arrived");
		else
			*gbps = (double)rx.bytes * 8 / rx.seconds / 1e9;
	}
	net_samples_free(&rx);
	return r;
}

int links_pair_run(const struct links_pair_opts *o, const struct links_peer *peer, double *gbps, char **err)
{
	int fds[2] = { -1, -1 }, r;
	bool serve = o->me < peer->rank;
	_cleanup_free_ char *e = NULL;
	*gbps = -1;
	r = serve ? accept_both(o, peer, fds, &e) : connect_both(o, peer, fds, &e);
	/* connection 0: the server sends; connection 1: the client sends */
	for (int d = 0; r == 0 && d < 2; d++) {
		bool send = (d == 0) == serve;
		r = direction(fds[d], send, o, gbps, &e);
		if (r < 0) {
			char *more = xasprintf("%s %s: %s", send ? "sending to" : "receiving from", peer->name,
					       e ? e : strerror(-r));
			free(e);
			e = more;
		}
	}
	for (int d = 0; d < 2; d++)
		if (fds[d] >= 0)
			close(fds[d]);
	if (r < 0) {
		*gbps = -1;
		*err = TAKE_PTR(e);
	}
	return r;
}

/* The interface holding addr, into ifname. */
static void interface_of(const struct sockaddr *sa, char *ifname, size_t len)
{
	struct ifaddrs *ifs = NULL;
	ifname[0] = 0;
	if (getifaddrs(&ifs) < 0)
		return;
	for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != sa->sa_family)
			continue;
		bool same = sa->sa_family == AF_INET
				    ? !memcmp(&((const struct sockaddr_in *)sa)->sin_addr,
					      &((struct sockaddr_in *)i->ifa_addr)->sin_addr, sizeof(struct in_addr))
				    : !memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
					      &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, sizeof(struct in6_addr));
		if (same) {
			snprintf(ifname, len, "%s", i->ifa_name);
			break;
		}
	}
	freeifaddrs(ifs);
}

int links_route_address(const char *host, char *addr, size_t addr_len, char *ifname, size_t if_len, char **err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai = NULL;
	int r = getaddrinfo(host, "9", &hints, &ai);
	if (r) {
		*err = xasprintf("cannot resolve %s: %s", host, gai_strerror(r));
		return -EHOSTUNREACH;
	}
	r = -EHOSTUNREACH;
	for (struct addrinfo *a = ai; a && r < 0; a = a->ai_next) {
		_cleanup_close_ int fd = socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		if (fd < 0 || connect(fd, a->ai_addr, a->ai_addrlen) < 0 ||
		    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
			continue;
		if (getnameinfo((struct sockaddr *)&ss, sl, addr, (socklen_t)addr_len, NULL, 0, NI_NUMERICHOST))
			continue;
		interface_of((struct sockaddr *)&ss, ifname, if_len);
		r = 0;
	}
	freeaddrinfo(ai);
	if (r < 0)
		*err = xasprintf("no route from this host to %s", host);
	return r;
}
