/* Interface addresses.
 *
 * sysfs has none: on the live machine the live layer lists them with
 * getifaddrs(3), as NCCL does to pick its bootstrap interface (NCCL
 * src/misc/socket.cc), and `gpuready snapshot` writes them to
 * .gpuready/ifaddrs, one "IFNAME inet|inet6 ADDRESS/PREFIX" per line
 * (docs/snapshot-layout.md), which a recorded tree is read from. A tree
 * without that file has no addresses to judge, and says so. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define IFADDRS_FILE "/.gpuready/ifaddrs"

bool net_addr_add(struct net_info *ni, const char *ifname, int family, const char *text, unsigned prefix)
{
	struct net_addr a = { .family = family, .prefix = prefix };
	if (!ifname || !*ifname || (family != AF_INET && family != AF_INET6))
		return false;
	if (prefix > (family == AF_INET ? 32u : 128u))
		return false;
	if (inet_pton(family, text, family == AF_INET ? (void *)&a.a4 : (void *)&a.a6) != 1)
		return false;
	char buf[INET6_ADDRSTRLEN];
	if (!inet_ntop(family, family == AF_INET ? (void *)&a.a4 : (void *)&a.a6, buf, sizeof(buf)))
		return false;
	a.ifname = xstrdup(ifname);
	a.text = xstrdup(buf);
	ni->addrs = xreallocarray(ni->addrs, ni->n_addrs + 1, sizeof(*ni->addrs));
	ni->addrs[ni->n_addrs++] = a;
	return true;
}

bool net_addr_routable(const struct net_addr *a)
{
	if (a->family == AF_INET) {
		uint32_t v = ntohl(a->a4.s_addr);
		return v != 0 && (v >> 24) != 127 && (v >> 16) != 0xa9fe; /* 169.254/16: link-local (RFC 3927) */
	}
	return !IN6_IS_ADDR_LOOPBACK(&a->a6) && !IN6_IS_ADDR_LINKLOCAL(&a->a6) && !IN6_IS_ADDR_UNSPECIFIED(&a->a6);
}

static int parse_line(void *ud, char *line, unsigned no)
{
	struct net_info *ni = ud;
	(void)no;
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *save = NULL, *name = strtok_r(line, " \t", &save), *fam = strtok_r(NULL, " \t", &save),
	     *addr = strtok_r(NULL, " \t", &save), *extra = strtok_r(NULL, " \t", &save);
	if (!name)
		return 0;
	int family = fam && !strcmp(fam, "inet") ? AF_INET : fam && !strcmp(fam, "inet6") ? AF_INET6 : -1;
	char *slash = addr ? strchr(addr, '/') : NULL;
	uint64_t prefix = 0;
	bool ok = family > 0 && slash && !extra;
	if (ok) {
		*slash = '\0';
		ok = parse_u64(slash + 1, 10, &prefix) == 0 && prefix <= 128 &&
		     net_addr_add(ni, name, family, addr, (unsigned)prefix);
	}
	if (!ok)
		ni->addrs_bad++;
	return 0;
}

void ifaddrs_parse(const char *text, size_t len, struct net_info *ni)
{
	str_foreach_line(text, len, parse_line, ni);
}

void ifaddrs_format(const struct net_info *ni, struct strbuf *out)
{
	for (size_t i = 0; i < ni->n_addrs; i++) {
		const struct net_addr *a = &ni->addrs[i];
		strbuf_addf(out, "%s %s %s/%u\n", a->ifname, a->family == AF_INET ? "inet" : "inet6", a->text, a->prefix);
	}
}

int ifaddrs_load(const struct root *r, struct net_info *ni)
{
	if (root_is_live(r)) {
		ni->addrs_why = xstrdup("the live interface addresses were not listed (getifaddrs not run)");
		return 0;
	}
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e = read_all(r, &sb, IFADDRS_FILE);
	if (e < 0) {
		ni->addrs_why = xasprintf("no interface addresses recorded in this tree (%s: %s)", &IFADDRS_FILE[1],
					  read_strerror(e));
		return 0;
	}
	ifaddrs_parse(sb.buf, sb.len, ni);
	ni->addrs_known = true;
	ni->addrs_source = xstrdup(IFADDRS_FILE);
	return 0;
}
