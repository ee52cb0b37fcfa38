/* TCP with deadlines (see tcp.h). Sockets are non-blocking while
 * connecting and blocking afterwards; every wait is a poll() bounded by
 * the caller's deadline. */
#define _GNU_SOURCE
#include "tcp.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Milliseconds left until deadline for poll(): -1 without one, 0 past it. */
static int ms_left(double deadline)
{
	if (deadline <= 0)
		return -1;
	double left = deadline - clock_now();
	if (left <= 0)
		return 0;
	return left > 3600.0 ? 3600000 : (int)(left * 1000.0) + 1;
}

static int wait_fd(int fd, short events, double deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	for (;;) {
		int r = poll(&p, 1, ms_left(deadline));
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int resolve(const char *host, int port, bool passive, struct addrinfo **ret, char **err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : AI_ADDRCONFIG };
	char ports[16];
	snprintf(ports, sizeof(ports), "%d", port);
	int r = getaddrinfo(host && *host ? host : NULL, ports, &hints, ret);
	if (r) {
		*err = xasprintf("cannot resolve '%s': %s", host ? host : "*", gai_strerror(r));
		return -EHOSTUNREACH;
	}
	return 0;
}

int tcp_listen(const char *host, int port, char **err)
{
	struct addrinfo *ai = NULL;
	int r = resolve(host, port, true, &ai, err), last = -EADDRNOTAVAIL;
	if (r < 0)
		return r;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol), one = 1;
		if (fd < 0) {
			last = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1024) == 0) {
			freeaddrinfo(ai);
			return fd;
		}
		last = -errno;
		close(fd);
	}
	freeaddrinfo(ai);
	const char *hint = "";
	if (last == -EADDRINUSE)
		hint = " (another job or program holds the port: choose one with --master HOST:PORT)";
	else if (last == -EADDRNOTAVAIL)
		hint = " (the address is not one of this host's: is this rank 0's host?)";
	*err = xasprintf("cannot listen on %s:%d: %s%s", host && *host ? host : "*", port, strerror(-last), hint);
	return last;
}

int tcp_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static void tune(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
}

/* One non-blocking connect attempt to a; 0 and *fd, or -errno. */
static int try_connect(const struct addrinfo *a, double deadline, int *ret_fd)
{
	int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
	if (fd < 0)
		return -errno;
	int r = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : -errno;
	if (r == -EINPROGRESS) {
		r = wait_fd(fd, POLLOUT, deadline);
		if (r == 0) {
			int soerr = 0;
			socklen_t sl = sizeof(soerr);
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
			r = -soerr;
		}
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	tune(fd);
	*ret_fd = fd;
	return 0;
}

int tcp_connect(const char *host, int port, double deadline, char **err)
{
	_cleanup_free_ char *unresolved = NULL; /* the last failure to resolve host */
	int last = -ETIMEDOUT;
	for (;;) {
		struct addrinfo *ai = NULL;
		char *why = NULL;
		int r = resolve(host, port, false, &ai, &why);
		if (r < 0) {
			free(unresolved);
			unresolved = why;
		} else {
			for (struct addrinfo *a = ai; a; a = a->ai_next) {
				/* an address that drops SYNs must not eat the whole deadline */
				double step = clock_now() + 5.0;
				int fd = -1;
				r = try_connect(a, deadline > 0 && deadline < step ? deadline : step, &fd);
				if (r == 0) {
					freeaddrinfo(ai);
					return fd;
				}
				last = r;
			}
			freeaddrinfo(ai);
		}
		if (deadline > 0 && clock_now() + 0.1 >= deadline)
			break;
		usleep(100000);
	}
	if (last == -EHOSTUNREACH && unresolved)
		*err = TAKE_PTR(unresolved);
	else
		*err = xasprintf("cannot connect to %s:%d: %s", host, port, strerror(-last));
	return last;
}

int tcp_accept(int lfd, double deadline)
{
	int r = wait_fd(lfd, POLLIN, deadline);
	if (r < 0)
		return r;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EAGAIN || errno == ECONNABORTED ? -EAGAIN : -errno;
	tune(fd);
	return fd;
}

int tcp_write_all(int fd, const void *buf, size_t len, double deadline)
{
	const char *p = buf;
	while (len) {
		int r = wait_fd(fd, POLLOUT, deadline);
		if (r < 0)
			return r;
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

enum tcp_peer_state tcp_peer_state(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLRDHUP };
	char c;

	if (poll(&pfd, 1, 0) <= 0)
		return TCP_PEER_IDLE;
	if (pfd.revents & POLLIN) { /* data first: a message sent before closing explains more */
		ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n > 0)
			return TCP_PEER_DATA;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return TCP_PEER_IDLE;
		return TCP_PEER_GONE;
	}
	return pfd.revents & (POLLHUP | POLLERR | POLLNVAL | POLLRDHUP) ? TCP_PEER_GONE : TCP_PEER_IDLE;
}

int tcp_read_all(int fd, void *buf, size_t len, double deadline)
{
	char *p = buf;
	while (len) {
		int r = wait_fd(fd, POLLIN, deadline);
		if (r < 0)
			return r;
		ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

char *tcp_local_addresses(void)
{
	struct ifaddrs *ifa = NULL;
	struct strbuf sb = STRBUF_INIT;

	if (getifaddrs(&ifa) == 0) {
		for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
			char a[INET_ADDRSTRLEN];
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
			    (i->ifa_flags & IFF_LOOPBACK))
				continue;
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, a, sizeof(a));
			strbuf_addf(&sb, "%s,", a);
		}
		freeifaddrs(ifa);
	}
	strbuf_adds(&sb, "127.0.0.1");
	return strbuf_detach(&sb);
}

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return sa->sa_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

char *tcp_resolve_addresses(const char *host, bool drop_loopback, char **err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct strbuf sb = STRBUF_INIT;
	int r = getaddrinfo(host, NULL, &hints, &ai);

	if (r) {
		*err = xasprintf("cannot resolve '%s': %s", host, gai_strerror(r));
		return NULL;
	}
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		char num[INET6_ADDRSTRLEN];
		if (drop_loopback && is_loopback(a->ai_addr))
			continue;
		if (getnameinfo(a->ai_addr, a->ai_addrlen, num, sizeof(num), NULL, 0, NI_NUMERICHOST))
			continue;
		/* each address once, as a whole item of the list */
		size_t nl = strlen(num);
		bool seen = false;
		for (const char *at = sb.buf; !seen && (at = strstr(at, num)); at += nl)
			seen = (at == sb.buf || at[-1] == ',') && (at[nl] == ',' || at[nl] == '\0');
		if (!seen)
			strbuf_addf(&sb, "%s%s", sb.len ? "," : "", num);
	}
	freeaddrinfo(ai);
	return strbuf_detach(&sb);
}

void tcp_peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN] = "?";

	snprintf(buf, len, "?");
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%d", a, ntohs(s4->sin_port));
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%d", a, ntohs(s6->sin6_port));
	}
}

void tcp_hostname(char *buf, size_t len)
{
	if (gethostname(buf, len) < 0 || !*buf)
		snprintf(buf, len, "localhost");
	buf[len - 1] = '\0';
	char *dot = strchr(buf, '.');
	if (dot)
		*dot = '\0';
}
