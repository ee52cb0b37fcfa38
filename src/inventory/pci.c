/* PCI functions from /sys/bus/pci/devices (REFERENCE §5).
 *
 * Each entry is a link into /sys/devices/pciDDDD:BB/...; the components of
 * the resolved path name the host bridge and every bridge above the
 * function, which is all the topology later checks need. Old kernels print
 * link speeds without " PCIe" ("8 GT/s"), so only the leading number is
 * parsed. Recorded trees may hold plain directories instead of links; then
 * the function has no known parents. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <string.h>

static void split_path(struct pci_dev *d)
{
	/* "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0" */
	_cleanup_free_ char *copy = xstrdup(d->path);
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (str_startswith(c, "pci") && !d->root_bus && strchr(c, ':'))
			d->root_bus = xstrdup(c);
		else if (is_pci_bdf(c) && strcmp(c, d->bdf))
			strv_add(&d->upstream, c);
	}
}

static double read_speed(const struct root *r, const char *path, const char *attr)
{
	_cleanup_free_ char *s = NULL;
	double v;
	if (read_str(r, &s, "%s/%s", path, attr) < 0 || parse_leading_double(s, &v) < 0)
		return 0;
	return v;
}

static int read_width(const struct root *r, const char *path, const char *attr)
{
	uint64_t v;
	if (read_u64(r, &v, "%s/%s", path, attr) < 0 || v > 64)
		return 0;
	return (int)v;
}

static void load_one(const struct root *r, const char *bdf, struct pci_dev *d)
{
	_cleanup_free_ char *link = xasprintf("/sys/bus/pci/devices/%s", bdf);
	struct strbuf p = STRBUF_INIT;
	d->bdf = xstrdup(bdf);
	if (root_resolve(r, link, &p) == 0)
		d->path = strbuf_detach(&p);
	else
		d->path = xstrdup(link);
	strbuf_release(&p);
	split_path(d);

	d->ids_err = read_hex(r, &d->vendor, "%s/vendor", d->path);
	if (d->ids_err == 0)
		d->ids_err = read_hex(r, &d->device, "%s/device", d->path);
	d->class_err = read_hex(r, &d->class_code, "%s/class", d->path);
	read_hex(r, &d->subsys_vendor, "%s/subsystem_vendor", d->path);
	read_hex(r, &d->subsys_device, "%s/subsystem_device", d->path);
	int64_t numa;
	d->numa_node = read_s64(r, &numa, "%s/numa_node", d->path) == 0 && numa >= -1 && numa < 65536 ? (int)numa : -1;
	d->cur_speed = read_speed(r, d->path, "current_link_speed");
	d->max_speed = read_speed(r, d->path, "max_link_speed");
	d->cur_width = read_width(r, d->path, "current_link_width");
	d->max_width = read_width(r, d->path, "max_link_width");
	char *drv = NULL;
	if (read_link(r, &drv, 1, "%s/driver", d->path) == 0)
		d->driver = drv;
}

int pci_load(const struct root *r, struct pci_info *p)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	p->err = root_list(r, "/sys/bus/pci/devices", &names);
	if (p->err < 0)
		return 0;
	p->v = xcalloc(names.n, sizeof(*p->v));
	for (size_t i = 0; i < names.n; i++) {
		if (!is_pci_bdf(names.v[i]))
			continue;
		load_one(r, names.v[i], &p->v[p->n++]);
	}
	return 0;
}

const struct pci_dev *pci_find(const struct pci_info *p, const char *bdf)
{
	if (!bdf)
		return NULL;
	for (size_t i = 0; i < p->n; i++)
		if (!strcasecmp(p->v[i].bdf, bdf))
			return &p->v[i];
	return NULL;
}

void pci_free(struct pci_info *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct pci_dev *d = &p->v[i];
		free(d->bdf);
		free(d->path);
		free(d->driver);
		free(d->root_bus);
		strv_free(&d->upstream);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}
