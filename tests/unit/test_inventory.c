/* The inventory readers on recorded trees: the fixtures (written from the
 * kernel's sysfs formats) and small synthetic trees for the odd cases real
 * captures have (links stored as files, empty attributes, missing files),
 * and what a snapshot keeps of the configuration files they scan. */
#define _GNU_SOURCE
#include "testutil.h"
#include "checks/rdma/common.h"
#include "inventory/inventory.h"
#include "probe/probe.h"
#include "snapshot/writer.h"

#include <errno.h>
#include <ftw.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static struct inventory *load(const char *dir)
{
	struct root *r = NULL;
	struct inventory *inv = NULL;
	assert_int_equal(root_open(dir, &r), 0);
	assert_false(root_is_live(r));
	assert_int_equal(inventory_load(r, &(struct load_opts){ .parts = INV_ALL, .live = probe_live }, &inv), 0);
	root_free(r);
	return inv;
}

static struct inventory *load_fixture(const char *name)
{
	char *dir = tu_fixture(name);
	struct inventory *inv = load(dir);
	free(dir);
	return inv;
}

static void test_healthy_h100(void **state)
{
	(void)state;
	struct inventory *inv = load_fixture("h100-8x-cx7-roce");
	assert_string_equal(inv->kernel.release, "6.8.0-52-generic");
	assert_non_null(inv->kernel.hostname);
	assert_int_equal(inv->rdma.n, 8);
	const struct rdma_dev *d = rdma_find(&inv->rdma, "mlx5_0");
	assert_non_null(d);
	assert_string_equal(d->pci_bdf, "0000:19:00.0");
	assert_string_equal(d->hca_type, "MT4129");
	assert_string_equal(d->fw_ver, "28.39.1002");
	assert_string_equal(d->uverbs, "uverbs0");
	assert_true(d->uverbs_node);
	assert_int_equal(d->n_ports, 1);
	const struct rdma_port *p = &d->ports[0];
	assert_int_equal(p->state, PORT_ACTIVE);
	assert_string_equal(p->state_name, "ACTIVE");
	assert_int_equal(p->phys_state, PHYS_LINKUP);
	assert_string_equal(p->link_layer, "Ethernet");
	assert_true(p->rate_gbps == 400.0);
	assert_string_equal(p->netdev, "ens1f0np0");
	assert_int_equal(p->n_gids, 4);
	assert_true(p->gid_types_known);
	assert_int_equal(port_best_gid(p)->index, 3);
	assert_int_equal(p->roce_tos, 104);
	assert_true(p->n_counters >= 6);
	assert_true(p->n_hw_counters >= 4);
	assert_string_equal(rdma_dev_model(inv, d), "ConnectX-7");

	const struct netdev *n = net_find(&inv->net, "ens1f0np0");
	assert_non_null(n);
	assert_int_equal(n->mtu, 9000);
	assert_int_equal(n->speed, 400000);
	assert_int_equal(n->carrier, 1);
	assert_string_equal(n->pci_bdf, "0000:19:00.0");
	const struct netdev *lo = net_find(&inv->net, "lo");
	assert_non_null(lo);
	assert_true(lo->is_virtual);

	const struct pci_dev *pd = pci_find(&inv->pci, "0000:19:00.0");
	assert_non_null(pd);
	assert_int_equal(pd->vendor, 0x15b3);
	assert_int_equal(pd->device, 0x1021);
	assert_string_equal(pd->driver, "mlx5_core");
	assert_non_null(pd->root_bus);
	assert_true(pd->upstream.n >= 2); /* root port and switch ports above */

	assert_int_equal(modules_state(&inv->modules, "mlx5_ib"), MODULE_LOADED);
	assert_int_equal(modules_state(&inv->modules, "rdma_ucm"), MODULE_LOADED);
	assert_int_equal(modules_state(&inv->modules, "nvidia_peermem"), MODULE_ABSENT);

	assert_true(inv->persist.n >= 1);
	assert_true(inv->persist.v[0].enabled);
	assert_string_equal(inv->persist.v[0].unit, "rdma-cm-tos.service");

	const struct nccl_var *tc = nccl_get(&inv->nccl, "NCCL_IB_TC");
	assert_non_null(tc);
	assert_string_equal(tc->value, "104");
	assert_true(tc->login_only);
	assert_non_null(strstr(tc->source, "/etc/profile.d/"));

	assert_int_equal(inv->host.rmem_max, 268435456);
	assert_true(inv->host.n_limits >= 2);
	assert_false(inv->host.rlimit_known); /* live only */
	inventory_free(inv);
}

static void test_mlx4_two_ports_one_function(void **state)
{
	(void)state;
	struct inventory *inv = load_fixture("v100-cx3pro");
	const struct rdma_dev *d = rdma_find(&inv->rdma, "mlx4_0");
	assert_non_null(d);
	assert_int_equal(d->n_ports, 2);
	assert_string_equal(d->ports[0].netdev, "ens6");
	assert_string_equal(d->ports[1].netdev, "ens6d1");
	assert_int_equal(d->ports[1].state, PORT_ACTIVE);
	assert_int_equal(d->ports[0].state, 1);
	assert_non_null(port_gid(&d->ports[1], 2));
	assert_true(gid_is_v2(port_gid(&d->ports[1], 2)));
	assert_int_equal(d->ports[1].n_hw_counters, 0);
	assert_string_equal(rdma_dev_model(inv, d), "ConnectX-3 Pro");
	assert_int_equal(modules_state(&inv->modules, "mlx4_ib"), MODULE_LOADED);
	inventory_free(inv);
}

static void test_nccl_precedence(void **state)
{
	(void)state;
	struct inventory *inv = load_fixture("h100-roce-broken");
	const struct nccl_var *tc = nccl_get(&inv->nccl, "NCCL_IB_TC");
	assert_non_null(tc);
	assert_string_equal(tc->value, "104");
	assert_string_equal(tc->source, "recorded environment");
	assert_int_equal(tc->shadowed.n, 1);
	assert_non_null(strstr(tc->shadowed.v[0], "106"));
	const struct nccl_var *dis = nccl_get(&inv->nccl, "NCCL_IB_DISABLE");
	assert_non_null(dis);
	assert_non_null(strstr(dis->source, "/etc/nccl.conf:"));
	assert_true(inv->nccl.env_recorded);
	inventory_free(inv);

	/* ~/.nccl.conf beats /etc/nccl.conf, and both lose to the environment */
	inv = load_fixture("ndr-ib-4port");
	const struct nccl_var *sl = nccl_get(&inv->nccl, "NCCL_IB_SL");
	assert_non_null(sl);
	assert_string_equal(sl->value, "3");
	assert_non_null(strstr(sl->source, "/root/.nccl.conf"));
	assert_int_equal(sl->shadowed.n, 1);
	assert_non_null(strstr(sl->shadowed.v[0], "/etc/nccl.conf"));
	inventory_free(inv);
}

static void test_ib_ports(void **state)
{
	(void)state;
	struct inventory *inv = load_fixture("ndr-ib-4port");
	const struct rdma_dev *d = rdma_find(&inv->rdma, "mlx5_3");
	assert_non_null(d);
	assert_string_equal(d->ports[0].link_layer, "InfiniBand");
	assert_true(d->ports[0].rate_gbps == 200.0);
	assert_false(d->ports[0].gid_types_known);
	assert_string_equal(inv->rdma.verbs_status,
			    "a recorded tree (--sysroot) cannot answer verbs queries");
	inventory_free(inv);
}

/* A capture copied without symlinks: each link became a file holding its
 * target text (as in the shared realdata captures). */
static void test_link_stand_ins(void **state)
{
	(void)state;
	char *t = tu_mkdtemp();
	const char *pci = "sys/devices/pci0000:80/0000:80:02.2/0000:82:00.0";
	char *ib = xasprintf("%s/infiniband/mlx4_0", pci);
	char *p = xasprintf("%s/ports/1/state", ib);
	tu_write(t, p, "4: ACTIVE\n");
	free(p);
	p = xasprintf("%s/ports/1/phys_state", ib);
	tu_write(t, p, "5: LinkUp\n");
	free(p);
	p = xasprintf("%s/ports/1/link_layer", ib);
	tu_write(t, p, "InfiniBand\n");
	free(p);
	p = xasprintf("%s/vendor", pci);
	tu_write(t, p, "0x15b3\n");
	free(p);
	p = xasprintf("%s/device", pci);
	tu_write(t, p, "0x1003\n");
	free(p);
	p = xasprintf("%s/device", ib);
	tu_write(t, p, "../../../0000:82:00.0"); /* link stand-in, no newline */
	free(p);
	tu_write(t, "sys/class/infiniband/mlx4_0", "../../devices/pci0000:80/0000:80:02.2/0000:82:00.0/infiniband/mlx4_0");
	tu_write(t, "sys/class/infiniband/scif0", "../../devices/scif_dma_0/infiniband/scif0"); /* dangling */
	tu_write(t, "sys/bus/pci/devices/0000:82:00.0", "../../../devices/pci0000:80/0000:80:02.2/0000:82:00.0");
	tu_write(t, "sys/class/net/eth1/speed", ""); /* empty attribute: unreadable */

	struct inventory *inv = load(t);
	assert_int_equal(inv->rdma.n, 2);
	const struct rdma_dev *d = rdma_find(&inv->rdma, "mlx4_0");
	assert_non_null(d);
	assert_string_equal(d->pci_bdf, "0000:82:00.0");
	assert_int_equal(d->n_ports, 1);
	assert_int_equal(d->ports[0].state, PORT_ACTIVE);
	assert_string_equal(rdma_dev_model(inv, d), "ConnectX-3");
	const struct rdma_dev *s = rdma_find(&inv->rdma, "scif0");
	assert_non_null(s);
	assert_int_equal(s->n_ports, 0);
	const struct pci_dev *pd = pci_find(&inv->pci, "0000:82:00.0");
	assert_non_null(pd);
	assert_string_equal(pd->root_bus, "pci0000:80");
	const struct netdev *n = net_find(&inv->net, "eth1");
	assert_non_null(n);
	assert_int_equal(n->speed, -1);
	assert_int_equal(n->carrier, -1);
	inventory_free(inv);
	free(ib);
	tu_rmtree(t);
	free(t);
}

static void test_empty_root(void **state)
{
	(void)state;
	char *t = tu_mkdtemp();
	struct inventory *inv = load(t);
	assert_int_equal(inv->rdma.n, 0);
	assert_true(inv->rdma.err < 0);
	assert_int_equal(inv->pci.n, 0);
	assert_null(inv->kernel.release);
	assert_int_equal(modules_state(&inv->modules, "ib_core"), MODULE_UNKNOWN);
	assert_int_equal(inv->host.rmem_err, -ENOENT);
	assert_false(inv->nccl.env_known);
	inventory_free(inv);
	tu_rmtree(t);
	free(t);
}

/* Walks ri with for_each_rdma_port into "dev/port" labels. */
static void walk(const struct rdma_info *ri, struct strv *out)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(ri, d, p)
		strv_push(out, xasprintf("%s/%u", d->name, p->num));
}

static void test_port_iterator(void **state)
{
	(void)state;
	struct strv got = STRV_INIT;
	struct rdma_info empty = { 0 };
	walk(&empty, &got);
	assert_int_equal(got.n, 0);

	struct rdma_port p0[] = { { .num = 1 }, { .num = 2 } }, p2[] = { { .num = 1 } };
	struct rdma_dev none[] = { { .name = "scif0" } };
	struct rdma_info only_empty = { .v = none, .n = 1 };
	walk(&only_empty, &got);
	assert_int_equal(got.n, 0);

	/* devices without ports first, between and last are passed over */
	struct rdma_dev devs[] = {
		{ .name = "scif0" },
		{ .name = "mlx4_0", .ports = p0, .n_ports = 2 },
		{ .name = "mlx5_9" },
		{ .name = "mlx5_0", .ports = p2, .n_ports = 1 },
		{ .name = "siw0" },
	};
	struct rdma_info ri = { .v = devs, .n = ARRAY_SIZE(devs) };
	walk(&ri, &got);
	tu_expect_strv(&got, (const char *const[]){ "mlx4_0/1", "mlx4_0/2", "mlx5_0/1" }, 3, "ports in order");
	strv_free(&got);

	/* break leaves the walk; continue goes on with the next port */
	const struct rdma_dev *d = NULL;
	const struct rdma_port *p = NULL;
	size_t seen = 0;
	for_each_rdma_port(&ri, d, p) {
		seen++;
		if (p->num == 2)
			break;
	}
	assert_int_equal(seen, 2);
	assert_string_equal(d->name, "mlx4_0");
	seen = 0;
	for_each_rdma_port(&ri, d, p) {
		if (p->num == 1)
			continue;
		seen++;
	}
	assert_int_equal(seen, 1);

	/* the same walk, writable */
	struct rdma_dev *wd;
	struct rdma_port *wp;
	for_each_rdma_port(&ri, wd, wp)
		wp->roce_tos = (int)wp->num;
	assert_int_equal(p0[1].roce_tos, 2);
	assert_int_equal(p2[0].roce_tos, 1);
}

static void test_gid_parse(void **state)
{
	(void)state;
	struct rdma_gid g = { .gid = "0000:0000:0000:0000:0000:ffff:0a00:0001" };
	assert_true(rdma_gid_parse(&g));
	assert_true(IN6_IS_ADDR_V4MAPPED(&g.addr));
	assert_int_equal(g.addr.s6_addr[12], 10);
	assert_int_equal(g.addr.s6_addr[15], 1);
	g.gid = "fe80:0000:0000:0000:bace:f6ff:fea1:b2c4";
	assert_true(rdma_gid_parse(&g));
	assert_true(IN6_IS_ADDR_LINKLOCAL(&g.addr));
	assert_false(IN6_IS_ADDR_V4MAPPED(&g.addr));
	g.gid = "0000:0000:0000:0000:0000:0000:0000:0000";
	assert_true(rdma_gid_parse(&g));
	assert_true(IN6_IS_ADDR_UNSPECIFIED(&g.addr));
	/* malformed: not parsed, and the address left zero */
	const char *bad[] = { "garbage", "", "fe80:0000:0000:0000:bace:f6ff:fea1", "fe80::1::2",
			      "0000:0000:0000:0000:0000:ffff:0a00:0001:0000", "fe80:0000:0000:0000:bace:f6ff:fea1:b2c4\n" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		g.gid = (char *)bad[i];
		assert_false(rdma_gid_parse(&g));
		assert_false(g.parsed);
		assert_true(IN6_IS_ADDR_UNSPECIFIED(&g.addr));
	}
	g.gid = NULL;
	assert_false(rdma_gid_parse(&g));
}

/* The GID table as sysfs shows it: zero entries are unused and left out;
 * text that does not parse is kept, unparsed, unless it is all zeros. */
static void test_gid_table(void **state)
{
	(void)state;
	char *t = tu_mkdtemp();
	static const char *const gids[][2] = {
		{ "0", "fe80:0000:0000:0000:bace:f6ff:fea1:b2c4\n" },
		{ "1", "0000:0000:0000:0000:0000:0000:0000:0000\n" },
		{ "2", "0000:0000:0000:0000:0000:ffff:0a00:0001\n" },
		{ "3", "not a gid\n" },
		{ "4", "0:0\n" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(gids); i++) {
		char *p = xasprintf("sys/class/infiniband/mlx5_0/ports/1/gids/%s", gids[i][0]);
		tu_write(t, p, gids[i][1]);
		free(p);
	}
	struct inventory *inv = load(t);
	const struct rdma_dev *d = rdma_find(&inv->rdma, "mlx5_0");
	assert_non_null(d);
	assert_int_equal(d->n_ports, 1);
	const struct rdma_port *p = &d->ports[0];
	assert_int_equal(p->n_gids, 3);
	assert_true(port_gid(p, 0)->parsed);
	assert_true(IN6_IS_ADDR_LINKLOCAL(&port_gid(p, 0)->addr));
	assert_null(port_gid(p, 1));
	assert_true(IN6_IS_ADDR_V4MAPPED(&port_gid(p, 2)->addr));
	assert_string_equal(port_gid(p, 2)->gid, "0000:0000:0000:0000:0000:ffff:0a00:0001");
	assert_false(port_gid(p, 3)->parsed);
	assert_string_equal(port_gid(p, 3)->gid, "not a gid");
	assert_null(port_gid(p, 4));
	inventory_free(inv);
	tu_rmtree(t);
	free(t);
}

/* ---- what a snapshot keeps of the files persist.c scans ---- */

static int secret_found;

static int find_secret(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	size_t len = 0;
	char *data = tu_read_file(path, &len);
	if (data && memmem(data, len, "s3cr3t", 6)) {
		print_error("secret in %s\n", path);
		secret_found++;
	}
	free(data);
	return 0;
}

/* Snapshots src into a new directory and returns it. */
static char *snapshot_of(const char *src)
{
	char *dst = tu_mkdtemp();
	struct root *r = NULL;
	struct snap_writer *w = NULL;
	struct inventory *inv = NULL;
	char *err = NULL;
	assert_int_equal(root_open(src, &r), 0);
	assert_int_equal(snap_writer_open(dst, &w, &err), 0);
	struct root_recorder rec = snap_writer_recorder(w);
	root_set_recorder(r, &rec);
	assert_int_equal(inventory_load(r, &(struct load_opts){ .parts = INV_FILES }, &inv), 0);
	root_set_recorder(r, NULL);
	assert_int_equal(snap_writer_finish(w, true, &err), 0);
	snap_writer_free(w);
	inventory_free(inv);
	root_free(r);
	return dst;
}

static void expect_same_writers(const struct persist_info *a, const struct persist_info *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_string_equal(a->v[i].kind, b->v[i].kind);
		assert_string_equal(a->v[i].path, b->v[i].path);
		assert_true(a->v[i].enabled == b->v[i].enabled);
		assert_true(!a->v[i].unit == !b->v[i].unit && !a->v[i].via == !b->v[i].via);
		if (a->v[i].via)
			assert_string_equal(a->v[i].via, b->v[i].via);
	}
}

/* Units (one with a NUL, which ends the scan and hides a ToS line before
 * it), udev rules (a secret before RUN, two programs, a NUL), scripts and
 * rc.local: the snapshot names the same ToS writers, via the same
 * programs, and holds none of the secrets. */
static void test_snapshot_keeps_what_persist_reads(void **state)
{
	(void)state;
	char *t = tu_mkdtemp();
	static const char unit_nul[] = "# writes default_roce_tos\nExecStart=/opt/other.sh\n\0ExecStart=/opt/s3cr3t\n";
	static const char udev_nul[] = "RUN+=\"/opt/udev-tos.sh\"\n\0 default_roce_tos s3cr3t\n";
	tu_write(t, "etc/systemd/system/a.service", "[Service]\nEnvironment=S=s3cr3t\nExecStartPre=-/opt/pre.sh --k s3cr3t\n"
					       "\tExecStart=@/opt/tos.sh arg s3cr3t\n");
	tu_symlink(t, "etc/systemd/system/multi-user.target.wants/a.service", "/etc/systemd/system/a.service");
	tu_write_bytes(t, "etc/systemd/system/b.service", unit_nul, sizeof(unit_nul) - 1);
	tu_write(t, "etc/udev/rules.d/10-a.rules", "KERNEL==\"mlx5_*\", ENV{K}=\"s3cr3t\", RUN+=\"/opt/pre.sh s3cr3t\", "
					      "RUN+=\"/opt/udev-tos.sh\" # s3cr3t\n");
	tu_write_bytes(t, "etc/udev/rules.d/20-b.rules", udev_nul, sizeof(udev_nul) - 1);
	tu_write(t, "etc/rc.local", "TOKEN=s3cr3t\necho 104 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos\n");
	tu_write(t, "opt/pre.sh", "curl -H s3cr3t\n");
	tu_write(t, "opt/tos.sh", "KEY=s3cr3t\necho 104 > $CFG/default_roce_tos\n");
	tu_write(t, "opt/other.sh", "KEY=s3cr3t\ncma_roce_tos -d mlx5_0 -t 104\n");
	tu_write(t, "opt/udev-tos.sh", "KEY=s3cr3t\necho 104 > $CFG/default_roce_tos\n");
	char *snap = snapshot_of(t);
	struct inventory *a = load(t), *b = load(snap);
	assert_int_equal(a->persist.n, 5);
	assert_string_equal(a->persist.v[1].via, "/opt/other.sh");
	assert_string_equal(a->persist.v[2].via, "/opt/udev-tos.sh");
	expect_same_writers(&a->persist, &b->persist);
	secret_found = 0;
	assert_int_equal(nftw(snap, find_secret, 16, FTW_PHYS), 0);
	assert_int_equal(secret_found, 0);
	/* a snapshot of the snapshot keeps the same */
	char *again = snapshot_of(snap);
	size_t l1, l2;
	char *p1 = xasprintf("%s/etc/systemd/system/b.service", snap), *p2 = xasprintf("%s/etc/systemd/system/b.service", again);
	char *d1 = tu_read_file(p1, &l1), *d2 = tu_read_file(p2, &l2);
	assert_int_equal(l1, l2);
	assert_memory_equal(d1, d2, l1);
	assert_non_null(memchr(d1, '\0', l1));
	free(d1);
	free(d2);
	free(p1);
	free(p2);
	inventory_free(a);
	inventory_free(b);
	tu_rmtree(again);
	tu_rmtree(snap);
	tu_rmtree(t);
	free(again);
	free(snap);
	free(t);
}

/* The name index behind pci_find, net_find and rdma_find answers what a
 * scan of the array answers: the first item of that name in array order
 * (BDFs ignoring case, interface and device names not), none for a name
 * that is absent or NULL; an array it was not built over is scanned. */
static void test_name_index(void **state)
{
	(void)state;
	struct pci_dev fns[] = {
		{ .bdf = "0000:19:00.0" }, { .bdf = "0000:0A:00.0" }, { .bdf = "0000:0a:00.0" }, { .bdf = "0000:01:00.0" },
	};
	struct pci_info pi = { .v = fns, .n = 3 };
	assert_ptr_equal(pci_find(&pi, "0000:0a:00.0"), &fns[1]); /* no index: a scan */
	const struct name_key bdf = { .size = sizeof(fns[0]), .off = offsetof(struct pci_dev, bdf), .fold = true };
	name_index_build(&pi.by_bdf, &bdf, pi.v, pi.n);
	assert_int_equal(pi.by_bdf.n, 3);
	assert_ptr_equal(pci_find(&pi, "0000:0a:00.0"), &fns[1]);
	assert_ptr_equal(pci_find(&pi, "0000:0A:00.0"), &fns[1]);
	assert_ptr_equal(pci_find(&pi, "0000:19:00.0"), &fns[0]);
	assert_null(pci_find(&pi, "0000:01:00.0")); /* beyond n when it was built */
	assert_null(pci_find(&pi, "0000:02:00.0"));
	assert_null(pci_find(&pi, NULL));
	pi.n = 4; /* the array grew: the index no longer answers for it */
	assert_ptr_equal(pci_find(&pi, "0000:01:00.0"), &fns[3]);
	name_index_build(&pi.by_bdf, &bdf, pi.v, pi.n);
	assert_ptr_equal(pci_find(&pi, "0000:01:00.0"), &fns[3]);
	name_index_free(&pi.by_bdf);
	assert_false(pi.by_bdf.built);

	struct netdev nets[] = { { .name = "ETH0" }, { .name = NULL }, { .name = "eth0" } };
	struct net_info ni = { .v = nets, .n = ARRAY_SIZE(nets) };
	const struct name_key name = { .size = sizeof(nets[0]), .off = offsetof(struct netdev, name) };
	name_index_build(&ni.by_name, &name, ni.v, ni.n);
	assert_int_equal(ni.by_name.n, 2); /* the nameless one is left out */
	assert_ptr_equal(net_find(&ni, "eth0"), &nets[2]);
	assert_ptr_equal(net_find(&ni, "ETH0"), &nets[0]);
	assert_null(net_find(&ni, "Eth0"));
	name_index_free(&ni.by_name);

	/* many devices, listed out of order: each found where it is */
	enum { N = 2000 };
	struct rdma_dev *devs = xcalloc(N, sizeof(*devs));
	for (size_t i = 0; i < N; i++)
		devs[i].name = xasprintf("mlx5_%zu", (N - 1 - i) * 7 % N);
	struct rdma_info ri = { .v = devs, .n = N };
	const struct name_key dev = { .size = sizeof(devs[0]), .off = offsetof(struct rdma_dev, name) };
	name_index_build(&ri.by_name, &dev, ri.v, ri.n);
	for (size_t i = 0; i < N; i++)
		assert_ptr_equal(rdma_find(&ri, devs[i].name), &devs[i]);
	assert_null(rdma_find(&ri, "mlx5_2000"));
	assert_null(rdma_find(&ri, "mlx5_"));
	for (size_t i = 0; i < N; i++)
		free(devs[i].name);
	free(devs);
	name_index_free(&ri.by_name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_h100),   cmocka_unit_test(test_mlx4_two_ports_one_function),
		cmocka_unit_test(test_nccl_precedence), cmocka_unit_test(test_ib_ports),
		cmocka_unit_test(test_link_stand_ins), cmocka_unit_test(test_empty_root),
		cmocka_unit_test(test_port_iterator),  cmocka_unit_test(test_gid_parse),
		cmocka_unit_test(test_gid_table),      cmocka_unit_test(test_snapshot_keeps_what_persist_reads),
		cmocka_unit_test(test_name_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
