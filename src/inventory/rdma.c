/* RDMA devices from /sys/class/infiniband (Linux drivers/infiniband/core/sysfs.c).
 *
 * Per device: node type, firmware, HCA type, PCI function (the `device`
 * link, or the device's own sysfs path when a recording lacks the link),
 * its uverbs character device. Per port: state, physical state, link layer,
 * rate, the populated GIDs with their type and netdev, and the counters.
 * A port's netdev is the one its GIDs name, else the PCI function's netdev
 * whose dev_port matches (mlx4 puts both ports on one function), else the
 * function's only netdev. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const struct name_key rdma_key = { .size = sizeof(struct rdma_dev), .off = offsetof(struct rdma_dev, name) };

/* An all-zero GID is an empty table entry (the kernel prints zeros for an
 * unused index, linux drivers/infiniband/core/sysfs.c show_port_gid). Text
 * that does not parse counts as empty when it holds only '0' and ':'. */
static bool gid_is_zero(const struct rdma_gid *g)
{
	if (g->parsed)
		return IN6_IS_ADDR_UNSPECIFIED(&g->addr);
	for (const char *s = g->gid; *s; s++)
		if (*s != '0' && *s != ':')
			return false;
	return true;
}

bool rdma_gid_parse(struct rdma_gid *g)
{
	struct in6_addr a = IN6ADDR_ANY_INIT;
	g->parsed = g->gid && inet_pton(AF_INET6, g->gid, &a) == 1;
	g->addr = g->parsed ? a : (struct in6_addr)IN6ADDR_ANY_INIT;
	return g->parsed;
}

static int cmp_num(const void *a, const void *b)
{
	unsigned long x = strtoul(*(char *const *)a, NULL, 10), y = strtoul(*(char *const *)b, NULL, 10);
	return x < y ? -1 : x > y;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Lists a directory's numeric entries in numeric order. */
static int list_numeric(const struct root *r, const char *path, struct strv *out)
{
	_cleanup_strv_ struct strv all = STRV_INIT;
	int ret = root_list(r, path, &all);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < all.n; i++)
		if (all_digits(all.v[i]) && strlen(all.v[i]) < 6)
			strv_add(out, all.v[i]);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(char *), cmp_num);
	return 0;
}

static void load_counters(const struct root *r, const char *dir, struct counter **ret, size_t *ret_n)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	if (root_list(r, dir, &names) < 0 || names.n == 0)
		return;
	struct counter *c = xcalloc(names.n, sizeof(*c));
	size_t n = 0;
	for (size_t i = 0; i < names.n; i++) {
		uint64_t v = 0;
		int err = read_u64(r, &v, "%s/%s", dir, names.v[i]);
		/* a counter that is there but cannot be read stays, with why */
		c[n].name = xstrdup(names.v[i]);
		c[n].value = err < 0 ? 0 : v;
		c[n].err = err < 0 ? err : 0;
		n++;
	}
	*ret = c;
	*ret_n = n;
}

static void load_gids(const struct root *r, const char *pdir, struct rdma_port *p)
{
	_cleanup_strv_ struct strv idx = STRV_INIT;
	_cleanup_free_ char *gdir = xasprintf("%s/gids", pdir);
	_cleanup_free_ char *tdir = xasprintf("%s/gid_attrs/types", pdir);
	if (list_numeric(r, gdir, &idx) < 0 || idx.n == 0)
		return;
	p->gid_types_known = root_exists(r, tdir);
	p->gids = xcalloc(idx.n, sizeof(*p->gids));
	for (size_t i = 0; i < idx.n; i++) {
		struct rdma_gid *e = &p->gids[p->n_gids];
		if (read_str(r, &e->gid, "%s/%s", gdir, idx.v[i]) < 0)
			continue;
		rdma_gid_parse(e);
		if (gid_is_zero(e)) {
			free(e->gid);
			*e = (struct rdma_gid){ 0 };
			continue;
		}
		p->n_gids++;
		e->index = (unsigned)strtoul(idx.v[i], NULL, 10);
		char *s = NULL;
		if (read_str(r, &s, "%s/%s", tdir, idx.v[i]) == 0)
			e->type = s;
		if (read_str(r, &s, "%s/gid_attrs/ndevs/%s", pdir, idx.v[i]) == 0)
			e->ndev = s;
	}
}

/* Netdev of a port without GID netdevs: match dev_port among the PCI
 * function's interfaces. */
static char *port_netdev_from_pci(const struct root *r, const char *pci_path, unsigned port)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	_cleanup_free_ char *dir = xasprintf("%s/net", pci_path);
	if (root_list(r, dir, &names) < 0 || names.n == 0)
		return NULL;
	if (names.n == 1)
		return xstrdup(names.v[0]);
	for (size_t i = 0; i < names.n; i++) {
		uint64_t dp;
		if (read_u64(r, &dp, "%s/%s/dev_port", dir, names.v[i]) == 0 && dp + 1 == port)
			return xstrdup(names.v[i]);
	}
	return NULL;
}

static void load_port(const struct root *r, const char *ddir, const char *pci_path, const char *num,
		      struct rdma_port *p)
{
	_cleanup_free_ char *pdir = xasprintf("%s/ports/%s", ddir, num);
	char *s = NULL;
	p->num = (unsigned)strtoul(num, NULL, 10);
	p->state = p->phys_state = -1;
	p->roce_tos = -1;
	if (read_str(r, &s, "%s/state", pdir) == 0) {
		if (parse_num_colon_name(s, &p->state, &p->state_name) < 0)
			p->state = -1;
		free(s);
	}
	if (read_str(r, &s, "%s/phys_state", pdir) == 0) {
		if (parse_num_colon_name(s, &p->phys_state, &p->phys_name) < 0)
			p->phys_state = -1;
		free(s);
	}
	p->link_layer_err = read_str(r, &s, "%s/link_layer", pdir);
	if (p->link_layer_err == 0)
		p->link_layer = s;
	if (read_str(r, &s, "%s/rate", pdir) == 0) {
		p->rate = s;
		if (parse_leading_double(s, &p->rate_gbps) < 0)
			p->rate_gbps = 0;
	}
	load_gids(r, pdir, p);
	for (size_t i = 0; i < p->n_gids && !p->netdev; i++)
		if (p->gids[i].ndev)
			p->netdev = xstrdup(p->gids[i].ndev);
	if (!p->netdev && pci_path)
		p->netdev = port_netdev_from_pci(r, pci_path, p->num);
	_cleanup_free_ char *cdir = xasprintf("%s/counters", pdir);
	_cleanup_free_ char *hdir = xasprintf("%s/hw_counters", pdir);
	load_counters(r, cdir, &p->counters, &p->n_counters);
	load_counters(r, hdir, &p->hw_counters, &p->n_hw_counters);
}

/* The uverbs entry under the device's PCI function (<pci>/infiniband_verbs/
 * uverbsN, whose ibdev names the device): found even when a recording lacks
 * /sys/class/infiniband_verbs. */
static void find_uverbs_under(const struct root *r, const char *pci_path, struct rdma_dev *d)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	_cleanup_free_ char *dir = xasprintf("%s/infiniband_verbs", pci_path);
	if (root_list(r, dir, &names) < 0)
		return;
	for (size_t i = 0; i < names.n && !d->uverbs; i++) {
		_cleanup_free_ char *ibdev = NULL;
		if (!str_startswith(names.v[i], "uverbs"))
			continue;
		/* without an ibdev file, a single uverbs entry belongs to the only device */
		if (read_str(r, &ibdev, "%s/%s/ibdev", dir, names.v[i]) == 0 ? strcmp(ibdev, d->name) == 0
									      : names.n == 1)
			d->uverbs = xstrdup(names.v[i]);
	}
}

static void load_dev(const struct root *r, const char *name, struct rdma_dev *d)
{
	_cleanup_free_ char *cls = xasprintf("/sys/class/infiniband/%s", name);
	_cleanup_strbuf_ struct strbuf ddir = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf pci = STRBUF_INIT;
	d->name = xstrdup(name);
	d->node_type = -1;
	d->ports_err = -ENOENT;
	d->dir_err = root_resolve(r, cls, &ddir);
	if (d->dir_err < 0)
		return;
	char *s = NULL;
	if (read_str(r, &s, "%s/node_type", ddir.buf) == 0) {
		if (parse_num_colon_name(s, &d->node_type, &d->node_type_name) < 0)
			d->node_type = -1;
		free(s);
	}
	d->fw_ver_err = read_str(r, &d->fw_ver, "%s/fw_ver", ddir.buf);
	read_str(r, &d->hca_type, "%s/hca_type", ddir.buf);
	read_str(r, &d->board_id, "%s/board_id", ddir.buf);
	read_str(r, &d->node_guid, "%s/node_guid", ddir.buf);

	_cleanup_free_ char *devlink = xasprintf("%s/device", ddir.buf);
	const char *pci_path = NULL;
	if (root_resolve(r, devlink, &pci) == 0) {
		d->pci_bdf = sysfs_path_bdf(pci.buf);
		pci_path = pci.buf;
	} else {
		d->pci_bdf = sysfs_path_bdf(ddir.buf);
		if (d->pci_bdf) {
			/* .../<bdf>/infiniband/<name>: the function is two up */
			char *cut = strstr(ddir.buf, d->pci_bdf);
			strbuf_add(&pci, ddir.buf, (size_t)(cut - ddir.buf) + strlen(d->pci_bdf));
			pci_path = pci.buf;
		}
	}

	if (pci_path)
		find_uverbs_under(r, pci_path, d);

	_cleanup_strv_ struct strv ports = STRV_INIT;
	_cleanup_free_ char *pdir = xasprintf("%s/ports", ddir.buf);
	d->ports_err = list_numeric(r, pdir, &ports);
	if (d->ports_err < 0)
		return;
	d->ports = xcalloc(ports.n, sizeof(*d->ports));
	for (size_t i = 0; i < ports.n; i++)
		load_port(r, ddir.buf, pci_path, ports.v[i], &d->ports[d->n_ports++]);
}

static void load_uverbs(const struct root *r, struct rdma_info *ri)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	ri->dev_recorded = root_exists(r, "/dev");
	for (size_t k = 0; k < ri->n; k++)
		if (ri->v[k].uverbs) {
			_cleanup_free_ char *node = xasprintf("/dev/infiniband/%s", ri->v[k].uverbs);
			ri->v[k].uverbs_node = root_exists(r, node);
		}
	if (root_list(r, "/sys/class/infiniband_verbs", &names) < 0)
		return;
	ri->uverbs_class = true;
	for (size_t i = 0; i < names.n; i++) {
		if (!str_startswith(names.v[i], "uverbs"))
			continue;
		_cleanup_free_ char *ibdev = NULL;
		if (read_str(r, &ibdev, "/sys/class/infiniband_verbs/%s/ibdev", names.v[i]) < 0)
			continue;
		/* device names are directory entries: one at most is named ibdev */
		size_t k = name_lookup(&ri->by_name, &rdma_key, ri->v, ri->n, ibdev);
		struct rdma_dev *d = k < ri->n ? &ri->v[k] : NULL;
		if (!d || d->uverbs)
			continue;
		d->uverbs = xstrdup(names.v[i]);
		_cleanup_free_ char *node = xasprintf("/dev/infiniband/%s", names.v[i]);
		d->uverbs_node = root_exists(r, node);
	}
}

struct dev_job {
	const struct strv *names;
	struct rdma_dev *v;
};

static void load_dev_item(const struct root *r, size_t i, void *ud)
{
	struct dev_job *j = ud;
	load_dev(r, j->names->v[i], &j->v[i]);
}

int rdma_load(const struct root *r, struct rdma_info *ri)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	ri->err = root_list(r, "/sys/class/infiniband", &names);
	ri->rdma_cm_node = root_exists(r, "/dev/infiniband/rdma_cm");
	if (ri->err < 0)
		return 0;
	ri->v = xcalloc(names.n, sizeof(*ri->v));
	struct dev_job job = { &names, ri->v };
	root_for_each(r, names.n, load_dev_item, &job);
	ri->n = names.n;
	name_index_build(&ri->by_name, &rdma_key, ri->v, ri->n);
	load_uverbs(r, ri);
	return 0;
}

int rdma_cm_load(const struct root *r, struct rdma_info *ri)
{
	struct rdma_dev *d;
	struct rdma_port *p;
	ri->configfs_present = root_exists(r, "/sys/kernel/config/rdma_cm");
	for_each_rdma_port(ri, d, p) {
		_cleanup_free_ char *dir = xasprintf("/sys/kernel/config/rdma_cm/%s/ports/%u", d->name, p->num);
		uint64_t tos;
		p->roce_tos_err = read_u64(r, &tos, "%s/default_roce_tos", dir);
		if (p->roce_tos_err == 0) {
			if (tos > 255)
				p->roce_tos_err = -ERANGE;
			else
				p->roce_tos = (int)tos;
		}
		read_str(r, &p->roce_mode, "%s/default_roce_mode", dir);
	}
	return 0;
}

bool rdma_port_step(const struct rdma_info *ri, size_t *dev, size_t *port)
{
	while (*dev < ri->n && *port >= ri->v[*dev].n_ports) {
		(*dev)++;
		*port = 0;
	}
	return *dev < ri->n;
}

const struct rdma_dev *rdma_find(const struct rdma_info *r, const char *name)
{
	size_t i = name_lookup(&r->by_name, &rdma_key, r->v, r->n, name);
	return i < r->n ? &r->v[i] : NULL;
}

static void free_counters(struct counter *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].name);
	free(c);
}

void rdma_free(struct rdma_info *ri)
{
	for (size_t i = 0; i < ri->n; i++) {
		struct rdma_dev *d = &ri->v[i];
		for (size_t k = 0; k < d->n_ports; k++) {
			struct rdma_port *p = &d->ports[k];
			free(p->state_name);
			free(p->phys_name);
			free(p->link_layer);
			free(p->rate);
			free(p->netdev);
			free(p->roce_mode);
			for (size_t g = 0; g < p->n_gids; g++) {
				free(p->gids[g].gid);
				free(p->gids[g].type);
				free(p->gids[g].ndev);
			}
			free(p->gids);
			free_counters(p->counters, p->n_counters);
			free_counters(p->hw_counters, p->n_hw_counters);
		}
		free(d->ports);
		free(d->name);
		free(d->node_type_name);
		free(d->fw_ver);
		free(d->hca_type);
		free(d->board_id);
		free(d->node_guid);
		free(d->pci_bdf);
		free(d->uverbs);
	}
	free(ri->v);
	free(ri->verbs_status);
	verbs_conf_free(&ri->verbs);
	name_index_free(&ri->by_name);
	memset(ri, 0, sizeof(*ri));
}
