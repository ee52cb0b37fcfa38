/* Linux bonding interfaces from /sys/class/net (Linux
 * drivers/net/bonding/bond_sysfs.c and bond_sysfs_slave.c, whose formats
 * this follows; Documentation/networking/bonding.rst).
 *
 * A bond is a netdev with a `bonding/` directory. Its `mode` reads
 * "<name> <number>" ("802.3ad 4"), `slaves` the slave names separated by
 * spaces (empty without slaves), `mii_status` "up" or "down",
 * `active_slave` a name or nothing. `ad_num_ports` and `ad_partner_mac`
 * are empty outside 802.3ad mode, and ad_partner_mac also for a reader
 * without CAP_NET_ADMIN. Each slave has `bonding_slave/` with `mii_status`
 * (bond_slave_link_status(): "up", "going down", "down", "going back"),
 * `state` ("active", "backup"), `link_failure_count`, `ad_aggregator_id`
 * and `ad_{actor,partner}_oper_port_state` (a number, or "N/A" outside
 * 802.3ad or before the port has an aggregator). Every value is read
 * through the root, so `gpuready snapshot` records it. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int bond_parse_mode(const char *s, int *mode, char **name)
{
	const char *sp = s ? strrchr(s, ' ') : NULL;
	int m;
	if (!sp || sp == s || parse_int(sp + 1, 10, &m) < 0 || m < BOND_BALANCE_RR || m > BOND_BALANCE_ALB)
		return -EINVAL;
	*mode = m;
	*name = xstrndup(s, (size_t)(sp - s));
	return 0;
}

/* A number, or -1 for "N/A", empty or unreadable. */
static int read_small(const struct root *r, const char *dir, const char *attr)
{
	int64_t v;
	if (read_s64(r, &v, "%s/%s", dir, attr) < 0 || v < 0 || v > 65535)
		return -1;
	return (int)v;
}

static void load_slave(const struct root *r, const char *name, struct bond_slave *s)
{
	_cleanup_free_ char *dir = xasprintf("/sys/class/net/%s/bonding_slave", name);
	char *t = NULL;
	int64_t v;
	s->name = xstrdup(name);
	s->mii_err = read_str(r, &t, "%s/mii_status", dir);
	if (s->mii_err == 0)
		s->mii_status = t;
	if (read_str(r, &t, "%s/state", dir) == 0)
		s->state = t;
	s->link_failures = read_s64(r, &v, "%s/link_failure_count", dir) == 0 && v >= 0 ? v : -1;
	s->aggregator_id = read_small(r, dir, "ad_aggregator_id");
	s->actor_state = read_small(r, dir, "ad_actor_oper_port_state");
	s->partner_state = read_small(r, dir, "ad_partner_oper_port_state");
}

static void load_bond(const struct root *r, const char *name, struct bond *b)
{
	_cleanup_free_ char *dir = xasprintf("/sys/class/net/%s/bonding", name);
	char *t = NULL;
	b->name = xstrdup(name);
	b->mode = -1;
	b->ad_num_ports = -1;
	b->mode_err = read_str(r, &t, "%s/mode", dir);
	if (b->mode_err == 0) {
		if (bond_parse_mode(t, &b->mode, &b->mode_name) < 0)
			b->mode_err = -EINVAL;
		free(t);
	}
	_cleanup_free_ char *slaves = NULL;
	b->slaves_err = read_str(r, &slaves, "%s/slaves", dir);
	if (b->slaves_err == 0) {
		_cleanup_strv_ struct strv names = STRV_INIT;
		char *save = NULL;
		for (char *w = strtok_r(slaves, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
			strv_add(&names, w);
		b->slaves = xcalloc(names.n ? names.n : 1, sizeof(*b->slaves));
		for (size_t i = 0; i < names.n; i++)
			load_slave(r, names.v[i], &b->slaves[b->n_slaves++]);
	}
	if (read_str(r, &t, "%s/mii_status", dir) == 0)
		b->mii_status = t;
	if (read_str(r, &t, "%s/active_slave", dir) == 0)
		b->active_slave = t;
	if (read_str(r, &t, "%s/xmit_hash_policy", dir) == 0) {
		char *sp = strrchr(t, ' ');
		if (sp)
			*sp = '\0';
		b->xmit_hash_policy = t;
	}
	b->ad_num_ports = read_small(r, dir, "ad_num_ports");
	b->ad_partner_mac_err = read_str(r, &t, "%s/ad_partner_mac", dir);
	if (b->ad_partner_mac_err == 0)
		b->ad_partner_mac = t;
}

int bond_load(const struct root *r, struct net_info *ni)
{
	size_t n = 0;
	for (size_t i = 0; i < ni->n; i++) {
		_cleanup_free_ char *p = xasprintf("/sys/class/net/%s/bonding", ni->v[i].name);
		struct stat st;
		if (root_stat(r, p, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (!ni->bonds)
			ni->bonds = xcalloc(ni->n, sizeof(*ni->bonds));
		load_bond(r, ni->v[i].name, &ni->bonds[n++]);
	}
	ni->n_bonds = n;
	return 0;
}

const struct bond *bond_find(const struct net_info *n, const char *name)
{
	for (size_t i = 0; name && i < n->n_bonds; i++)
		if (!strcmp(n->bonds[i].name, name))
			return &n->bonds[i];
	return NULL;
}

void bond_free(struct net_info *n)
{
	for (size_t i = 0; i < n->n_bonds; i++) {
		struct bond *b = &n->bonds[i];
		for (size_t k = 0; k < b->n_slaves; k++) {
			free(b->slaves[k].name);
			free(b->slaves[k].mii_status);
			free(b->slaves[k].state);
		}
		free(b->slaves);
		free(b->name);
		free(b->mode_name);
		free(b->mii_status);
		free(b->active_slave);
		free(b->xmit_hash_policy);
		free(b->ad_partner_mac);
	}
	free(n->bonds);
	n->bonds = NULL;
	n->n_bonds = 0;
}
