/* PCI functions from /sys/bus/pci/devices (Linux drivers/pci/pci-sysfs.c).
 *
 * Each entry is a link into /sys/devices/pciDDDD:BB/...; the components of
 * the resolved path name the host bridge and every bridge above the
 * function, which is all the topology later checks need. Old kernels print
 * link speeds without " PCIe" ("8 GT/s"), so only the leading number is
 * parsed. Recorded trees may hold plain directories instead of links; then
 * the function has no known parents. */
#define _GNU_SOURCE /* memmem */
#include "inventory.h"
#include "nvl5.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct name_key pci_key = { .size = sizeof(struct pci_dev), .off = offsetof(struct pci_dev, bdf), .fold = true };

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

/* `resource`: one "start end flags" line per BAR (Linux drivers/pci/pci-sysfs.c). */
static void load_resource(const struct root *r, struct pci_dev *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	d->resource_err = read_all(r, &sb, "%s/resource", d->path);
	if (d->resource_err == 0 && sb.len == 0)
		d->resource_err = -ENODATA;
	if (d->resource_err < 0)
		return;
	const char *p = sb.buf;
	for (int i = 0; i < 7 && *p; i++) {
		unsigned long long start, end, flags;
		if (sscanf(p, "%llx %llx %llx", &start, &end, &flags) == 3 && end > start)
			d->bar_size[i] = end - start + 1;
		const char *nl = strchr(p, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
}

int pci_find_ext_cap(const unsigned char *cfg, size_t len, unsigned id)
{
	if (len < 0x104)
		return -ENODATA;
	unsigned off = 0x100;
	for (int guard = 0; guard < 96 && off >= 0x100 && off + 4 <= len; guard++) {
		uint32_t h = (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
			     (uint32_t)cfg[off + 3] << 24;
		if (h == 0 || h == 0xffffffffu)
			return 0;
		if ((h & 0xffff) == id)
			return (int)off;
		off = (h >> 20) & 0xffc;
	}
	return 0;
}

/* The ACS capability of a bridge: Capability at +4, Control at +6. */
static void load_acs(const struct root *r, struct pci_dev *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *p = xasprintf("%s/config", d->path);
	if (root_read(r, p, 65536, &sb) < 0)
		return;
	d->config_len = (int)sb.len;
	const unsigned char *c = (const unsigned char *)sb.buf;
	int off = pci_find_ext_cap(c, sb.len, 0x000d);
	if (off > 0 && (size_t)off + 8 <= sb.len) {
		d->acs_off = off;
		d->acs_cap = (uint16_t)(c[off + 4] | c[off + 5] << 8);
		d->acs_ctrl = (uint16_t)(c[off + 6] | c[off + 7] << 8);
	}
}

bool pci_vpd_sw_mng(const char *vpd, size_t len)
{
	static const char tok[] = "SW_MNG";
	return vpd && len >= sizeof(tok) - 1 && memmem(vpd, len, tok, sizeof(tok) - 1) != NULL;
}

/* The VPD of a Mellanox physical function: NVLink 5 baseboards expose their
 * NVSwitch management ports as ConnectX-7 functions with the rails' PCI ID
 * whose VPD says SW_MNG (NVIDIA/gpu-operator#2781,
 * bottlerocket-os/bottlerocket-kernel-kit#142). PCI VPD is at most 32 KiB
 * (its addresses are 15 bits: PCI Local Bus Specification 3.0, 6.4). */
static void load_vpd(const struct root *r, struct pci_dev *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *p = xasprintf("%s/vpd", d->path);
	d->vpd_err = root_read(r, p, 32768, &sb);
	if (d->vpd_err == 0 && sb.len == 0)
		d->vpd_err = -ENODATA;
	d->nvswitch_mgmt = d->vpd_err == 0 && pci_vpd_sw_mng(sb.buf, sb.len);
}

bool pci_bdf_nvswitch_mgmt(const struct pci_info *p, const char *bdf)
{
	const struct pci_dev *d = bdf ? pci_find(p, bdf) : NULL;
	return d && d->nvswitch_mgmt;
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
	load_resource(r, d);
	read_str(r, &d->local_cpulist, "%s/local_cpulist", d->path);
	_cleanup_free_ char *physfn = xasprintf("%s/physfn", d->path);
	d->is_vf = root_exists(r, physfn);
	char *grp = NULL;
	d->iommu_group = -1;
	if (read_link(r, &grp, 1, "%s/iommu_group", d->path) == 0) {
		int g;
		if (parse_int(grp, 10, &g) == 0 && g >= 0)
			d->iommu_group = g;
		free(grp);
	}
	if (d->class_err == 0 && pci_is_bridge(d))
		load_acs(r, d);
	d->vpd_err = -ENOENT;
	if (d->ids_err == 0 && d->vendor == VENDOR_MELLANOX && !d->is_vf)
		load_vpd(r, d);
}

struct pci_job {
	const struct strv *bdfs;
	struct pci_dev *v;
};

static void load_item(const struct root *r, size_t i, void *ud)
{
	struct pci_job *j = ud;
	load_one(r, j->bdfs->v[i], &j->v[i]);
}

int pci_load(const struct root *r, struct pci_info *p)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	_cleanup_strv_ struct strv bdfs = STRV_INIT;
	p->err = root_list(r, "/sys/bus/pci/devices", &names);
	if (p->err < 0)
		return 0;
	for (size_t i = 0; i < names.n; i++)
		if (is_pci_bdf(names.v[i]))
			strv_add(&bdfs, names.v[i]);
	p->v = xcalloc(bdfs.n, sizeof(*p->v));
	struct pci_job job = { &bdfs, p->v };
	root_for_each(r, bdfs.n, load_item, &job);
	p->n = bdfs.n;
	name_index_build(&p->by_bdf, &pci_key, p->v, p->n);
	return 0;
}

bool pci_is_bridge(const struct pci_dev *d)
{
	return d->class_err == 0 && (d->class_code >> 8) == 0x0604;
}

bool pci_is_nvidia_gpu(const struct pci_dev *d)
{
	if (d->ids_err || d->class_err || d->vendor != VENDOR_NVIDIA)
		return false;
	unsigned c = d->class_code >> 8;
	return c == 0x0302 || c == 0x0300;
}

/* IOMMU groups and units (Linux Documentation/ABI/testing/sysfs-kernel-iommu_groups): each function's group type. */
int iommu_load(const struct root *r, struct pci_info *p)
{
	_cleanup_strv_ struct strv groups = STRV_INIT;
	if (root_list(r, "/sys/kernel/iommu_groups", &groups) == 0 && groups.n > 0)
		p->iommu_groups = true;
	root_list(r, "/sys/class/iommu", &p->iommu_units);
	for (size_t i = 0; i < p->n; i++) {
		struct pci_dev *d = &p->v[i];
		if (d->iommu_group < 0)
			continue;
		char *t = NULL;
		if (read_str(r, &t, "/sys/kernel/iommu_groups/%d/type", d->iommu_group) == 0)
			d->iommu_type = t;
	}
	return 0;
}

const struct pci_dev *pci_find(const struct pci_info *p, const char *bdf)
{
	size_t i = name_lookup(&p->by_bdf, &pci_key, p->v, p->n, bdf);
	return i < p->n ? &p->v[i] : NULL;
}

void pci_free(struct pci_info *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct pci_dev *d = &p->v[i];
		free(d->bdf);
		free(d->path);
		free(d->driver);
		free(d->root_bus);
		free(d->iommu_type);
		free(d->local_cpulist);
		strv_free(&d->upstream);
	}
	free(p->v);
	strv_free(&p->iommu_units);
	name_index_free(&p->by_bdf);
	memset(p, 0, sizeof(*p));
}
