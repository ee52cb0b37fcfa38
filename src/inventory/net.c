/* Network interfaces from /sys/class/net (Linux Documentation/ABI/testing/sysfs-class-net).
 *
 * `carrier` and `speed` refuse to be read on a link that is down (EINVAL
 * live; empty files in recorded trees): both are then "unknown", not 0. An
 * interface is physical when its resolved sysfs path runs through a PCI
 * function; that function's BDF is the last one in the path. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static const struct name_key net_key = { .size = sizeof(struct netdev), .off = offsetof(struct netdev, name) };

char *sysfs_path_bdf(const char *path)
{
	_cleanup_free_ char *copy = xstrdup(path);
	char *save = NULL, *last = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save))
		if (is_pci_bdf(c))
			last = c;
	return last ? xstrdup(last) : NULL;
}

/* An ARP sysctl of conf/<dir> (Documentation/networking/ip-sysctl.rst), -1 unknown. */
static int arp_sysctl(const struct root *r, const char *dir, const char *what)
{
	int64_t v;
	return read_s64(r, &v, "/proc/sys/net/ipv4/conf/%s/arp_%s", dir, what) == 0 && v >= 0 && v <= 8 ? (int)v : -1;
}

/* Carrier transitions (Documentation/ABI/testing/sysfs-class-net): a
 * kernel before 4.16 has carrier_changes only. */
static void load_carrier_counts(const struct root *r, const char *path, struct netdev *n)
{
	int64_t v;
	n->carrier_changes = n->carrier_up = n->carrier_down = -1;
	n->carrier_changes_err = read_s64(r, &v, "%s/carrier_changes", path);
	if (n->carrier_changes_err == 0 && v >= 0)
		n->carrier_changes = v;
	else if (n->carrier_changes_err == 0)
		n->carrier_changes_err = -EINVAL;
	int64_t up, down;
	n->carrier_counts_err = read_s64(r, &up, "%s/carrier_up_count", path);
	if (n->carrier_counts_err == 0)
		n->carrier_counts_err = read_s64(r, &down, "%s/carrier_down_count", path);
	if (n->carrier_counts_err == 0 && (up < 0 || down < 0))
		n->carrier_counts_err = -EINVAL;
	if (n->carrier_counts_err == 0)
		n->carrier_up = up, n->carrier_down = down;
}

/* DCQCN enable flags of MLNX_OFED/DOCA-OFED's mlx5 (NVIDIA MLNX_OFED
 * documentation, "Explicit Congestion Notification (ECN)"): ecn/roce_np
 * and ecn/roce_rp, each with enable/<priority 0..7>. The inbox driver has
 * no ecn/ directory. */
static void load_ecn(const struct root *r, const char *path, struct netdev *n)
{
	static const char *const proto[2] = { [ECN_NP] = "roce_np", [ECN_RP] = "roce_rp" };
	_cleanup_strv_ struct strv entries = STRV_INIT;
	_cleanup_free_ char *dir = xasprintf("%s/ecn", path);
	n->ecn_err = root_list(r, dir, &entries);
	for (int k = 0; k < 2; k++)
		for (int prio = 0; prio < 8; prio++) {
			int64_t v;
			int err = n->ecn_err < 0 ? n->ecn_err
						 : read_s64(r, &v, "%s/%s/enable/%d", dir, proto[k], prio);
			n->ecn[k][prio] = err < 0 ? err : v == 0 || v == 1 ? (int)v : -EINVAL;
		}
}

static void load_one(const struct root *r, const char *name, struct netdev *n)
{
	_cleanup_free_ char *base = xasprintf("/sys/class/net/%s", name);
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	n->name = xstrdup(name);
	n->arp_ignore = arp_sysctl(r, name, "ignore");
	n->arp_announce = arp_sysctl(r, name, "announce");
	if (root_resolve(r, base, &path) < 0) {
		/* dangling link (e.g. lo into an uncaptured devices/virtual) */
		n->is_virtual = true;
		n->carrier = -1;
		n->speed = -1;
		n->mtu = -1;
		n->type = -1;
		n->carrier_changes = n->carrier_up = n->carrier_down = -1;
		n->carrier_changes_err = n->carrier_counts_err = n->ecn_err = -ENOENT;
		return;
	}
	char *s = NULL;
	if (read_str(r, &s, "%s/operstate", path.buf) == 0)
		n->operstate = s;
	int64_t v;
	n->carrier = read_s64(r, &v, "%s/carrier", path.buf) == 0 && (v == 0 || v == 1) ? (int)v : -1;
	n->speed = read_s64(r, &v, "%s/speed", path.buf) == 0 && v > 0 ? v : -1;
	n->mtu = read_s64(r, &v, "%s/mtu", path.buf) == 0 && v > 0 ? v : -1;
	n->type = read_s64(r, &v, "%s/type", path.buf) == 0 && v >= 0 && v < 65536 ? (int)v : -1;
	n->pci_bdf = str_startswith(path.buf, "/sys/devices/virtual/") ? NULL : sysfs_path_bdf(path.buf);
	n->is_virtual = n->pci_bdf == NULL;
	load_carrier_counts(r, path.buf, n);
	if (n->is_virtual) {
		n->ecn_err = -ENOENT;
		for (int k = 0; k < 2; k++)
			for (int prio = 0; prio < 8; prio++)
				n->ecn[k][prio] = -ENOENT;
	} else {
		load_ecn(r, path.buf, n);
	}
	/* netdev_upper_dev_link() names the master `master` (net/core/dev.c) */
	if (read_link(r, &s, 1, "%s/master", path.buf) == 0)
		n->master = s;
	/* a Linux bridge has a bridge/ directory (Documentation/ABI/testing/sysfs-class-net) */
	struct stat st;
	_cleanup_free_ char *br = xasprintf("%s/bridge", path.buf);
	n->is_bridge = root_stat(r, br, &st) == 0 && S_ISDIR(st.st_mode);
}

int net_load(const struct root *r, struct net_info *ni)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	ni->all_arp_ignore = arp_sysctl(r, "all", "ignore");
	ni->all_arp_announce = arp_sysctl(r, "all", "announce");
	ni->err = root_list(r, "/sys/class/net", &names);
	if (ni->err < 0)
		return 0;
	ni->v = xcalloc(names.n, sizeof(*ni->v));
	for (size_t i = 0; i < names.n; i++) {
		/* bonding_masters is a regular file in the class directory */
		_cleanup_free_ char *p = xasprintf("/sys/class/net/%s", names.v[i]);
		struct stat st;
		if (root_stat(r, p, &st) == 0 && !S_ISDIR(st.st_mode))
			continue;
		load_one(r, names.v[i], &ni->v[ni->n++]);
	}
	name_index_build(&ni->by_name, &net_key, ni->v, ni->n);
	return bond_load(r, ni);
}

const struct netdev *net_find(const struct net_info *n, const char *name)
{
	size_t i = name_lookup(&n->by_name, &net_key, n->v, n->n, name);
	return i < n->n ? &n->v[i] : NULL;
}

void net_free(struct net_info *n)
{
	for (size_t i = 0; i < n->n; i++) {
		free(n->v[i].name);
		free(n->v[i].operstate);
		free(n->v[i].pci_bdf);
		free(n->v[i].master);
	}
	bond_free(n);
	free(n->v);
	for (size_t i = 0; i < n->n_addrs; i++) {
		free(n->addrs[i].ifname);
		free(n->addrs[i].text);
	}
	free(n->addrs);
	free(n->addrs_source);
	free(n->addrs_why);
	dcb_free(&n->dcb);
	name_index_free(&n->by_name);
	memset(n, 0, sizeof(*n));
}
