/* The live interface addresses (probe.h): getifaddrs(3), the call NCCL
 * makes to find its bootstrap interfaces (NCCL src/misc/socket.cc). */
#include "probe.h"
#include "core/strbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static unsigned prefix_len(const struct sockaddr *mask)
{
	const unsigned char *b;
	size_t n;
	if (!mask)
		return 0;
	if (mask->sa_family == AF_INET) {
		b = (const unsigned char *)&((const struct sockaddr_in *)mask)->sin_addr;
		n = 4;
	} else if (mask->sa_family == AF_INET6) {
		b = (const unsigned char *)&((const struct sockaddr_in6 *)mask)->sin6_addr;
		n = 16;
	} else {
		return 0;
	}
	unsigned bits = 0;
	for (size_t i = 0; i < n; i++)
		bits += (unsigned)__builtin_popcount(b[i]);
	return bits;
}

int ifaddrs_live(struct net_info *ni)
{
	struct ifaddrs *list = NULL;
	free(ni->addrs_why);
	ni->addrs_why = NULL;
	if (getifaddrs(&list) < 0) {
		ni->addrs_why = xasprintf("getifaddrs: %s", strerror(errno));
		return 0;
	}
	for (struct ifaddrs *a = list; a; a = a->ifa_next) {
		if (!a->ifa_addr || !a->ifa_name)
			continue;
		int fam = a->ifa_addr->sa_family;
		char buf[INET6_ADDRSTRLEN];
		const void *src = fam == AF_INET ? (const void *)&((const struct sockaddr_in *)a->ifa_addr)->sin_addr
			      : fam == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)a->ifa_addr)->sin6_addr
						: NULL;
		if (!src || !inet_ntop(fam, src, buf, sizeof(buf)))
			continue;
		net_addr_add(ni, a->ifa_name, fam, buf, prefix_len(a->ifa_netmask));
	}
	freeifaddrs(list);
	ni->addrs_known = true;
	free(ni->addrs_source);
	ni->addrs_source = xstrdup("getifaddrs");
	return 0;
}
