/* NVLink 5 baseboards (HGX B200): the PCI VPD reader that finds the
 * NVSwitch management ports (SW_MNG), gpu.nvlsm (F03), gpu.fabricmanager on
 * a node whose NVSwitches are not on PCI, and the rail checks that leave
 * the management ports alone (T07), against the hgx-b200-8x-cx7-ib fixture
 * and inventories built by hand. */
#include "testutil.h"
#include "checks/check.h"
#include "checks/gpu/common.h"
#include "core/report.h"
#include "core/root.h"
#include "core/strv.h"
#include "inventory/nvl5.h"
#include "inventory/topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MGMT_BDF "0000:e9:00.0"

/* The finding of id about subject (the last one), failing when none. */
static const struct finding *find(const struct report *rep, const char *id, const char *subject)
{
	return tu_finding(rep, id, subject);
}

static void run_check(struct inventory *inv, const char *id, struct report *rep)
{
	struct strv only = STRV_INIT, skip = STRV_INIT;
	strv_add(&only, id);
	struct check_select sel = { .only = &only, .skip = &skip };
	struct site_expect expect = { 0 };
	report_init(rep, "test", "host", "/");
	assert_int_equal(checks_run(NULL, inv, &expect, &sel, rep), 0);
	strv_free(&only);
}

/* ---- the VPD token ---- */

static void test_vpd_sw_mng(void **state)
{
	(void)state;
	static const char mgmt[] = "\x82\x05" "\x00" "CX-7 \x90\x20\x00VA\x1dMLX:MN=MLNX:SMDL=SW_MNG\x78";
	static const char rail[] = "\x82\x05" "\x00" "CX-7 \x90\x10\x00VA\x0dMLX:MODL=CX7\x78";
	assert_true(pci_vpd_sw_mng(mgmt, sizeof(mgmt) - 1));
	assert_false(pci_vpd_sw_mng(rail, sizeof(rail) - 1));
	/* binary: a NUL before the token does not hide it; a cut token is none */
	static const char nul[] = "\0\0SW_MNG";
	assert_true(pci_vpd_sw_mng(nul, sizeof(nul) - 1));
	assert_false(pci_vpd_sw_mng("SW_MN", 5));
	assert_false(pci_vpd_sw_mng("", 0));
	assert_false(pci_vpd_sw_mng(NULL, 0));
}

/* ---- the fixture: four management ports, eight rails ---- */

static struct inventory *load(const char *dir)
{
	struct root *r = NULL;
	assert_int_equal(root_open(dir, &r), 0);
	struct inventory *inv = NULL;
	assert_int_equal(inventory_load(r, &(struct load_opts){ .parts = INV_FILES }, &inv), 0);
	root_free(r);
	return inv;
}

static void test_fixture_vpd(void **state)
{
	(void)state;
	char *dir = tu_fixture("hgx-b200-8x-cx7-ib");
	struct inventory *inv = load(dir);
	size_t mgmt = 0, rails = 0;
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *d = &inv->pci.v[i];
		if (d->vendor != VENDOR_MELLANOX)
			continue;
		assert_int_equal(d->vpd_err, 0);
		if (d->nvswitch_mgmt)
			mgmt++;
		else
			rails++;
	}
	assert_int_equal(mgmt, 4);
	assert_int_equal(rails, 8);
	assert_int_equal(nvswitch_mgmt_count(inv), 4);
	assert_int_equal(nvswitch_count(inv), 0);
	assert_null(nvswitch_mgmt_unknown(inv));
	assert_true(pci_bdf_nvswitch_mgmt(&inv->pci, MGMT_BDF));
	assert_false(pci_bdf_nvswitch_mgmt(&inv->pci, NULL));
	/* no GPU's nearest NIC is a management port */
	struct gpu_pair *pairs = NULL;
	size_t n = gpu_pairs(inv, &pairs);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(pairs[i].nic_pci);
		assert_false(pairs[i].nic_pci->nvswitch_mgmt);
		assert_int_equal(pairs[i].cls, PATH_PIX);
	}
	free(pairs);
	assert_true(inv->fabric.nvlsm_bin);
	assert_true(inv->fabric.nvlsm_conf);

	struct report rep;
	run_check(inv, "gpu.nvlsm", &rep);
	assert_int_equal(find(&rep, "gpu.nvlsm", "nvlsm")->status, STATUS_OK);
	assert_int_equal(find(&rep, "gpu.nvlsm", "ib_umad")->status, STATUS_OK);
	assert_int_equal(find(&rep, "gpu.nvlsm", "mlx5_ib")->status, STATUS_OK);
	report_free(&rep);
	run_check(inv, "gpu.fabricmanager", &rep);
	assert_int_equal(find(&rep, "gpu.fabricmanager", "nvidia-fabricmanager.service")->status, STATUS_OK);
	report_free(&rep);
	/* T07: the management ports are no rails */
	run_check(inv, "rdma.link_rate", &rep);
	const struct finding *f = find(&rep, "rdma.link_rate", "mlx5_8/1");
	assert_int_equal(f->status, STATUS_SKIP);
	tu_assert_has(f->message, "NVSwitch management port (VPD SW_MNG)");
	assert_int_equal(find(&rep, "rdma.link_rate", "mlx5_0/1")->status, STATUS_OK);
	report_free(&rep);
	/* their firmware is compared among themselves, not with the rails' */
	run_check(inv, "rdma.firmware", &rep);
	tu_assert_has(find(&rep, "rdma.firmware", "NVSwitch management port")->message, "4 NICs");
	tu_assert_has(find(&rep, "rdma.firmware", "ConnectX-7")->message, "8 NICs");
	report_free(&rep);
	inventory_free(inv);
	free(dir);
}

/* A PCI function at sys/devices/<path> with its bus link. */
static void add_fn(const char *dir, const char *path, const char *vendor, const char *device, const char *cls)
{
	static const char *const attr[] = { "vendor", "device", "class" };
	const char *val[] = { vendor, device, cls };
	char p[256], link[256];
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "sys/devices/%s/%s", path, attr[i]);
		snprintf(link, sizeof(link), "%s\n", val[i]);
		tu_write(dir, p, link);
	}
	const char *bdf = strrchr(path, '/') + 1;
	snprintf(p, sizeof(p), "sys/bus/pci/devices/%s", bdf);
	snprintf(link, sizeof(link), "../../../devices/%s", path);
	tu_symlink(dir, p, link);
}

/* A VPD only root may read: the management ports cannot be told. */
static void test_vpd_unreadable(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	add_fn(dir, "pci0000:e8/0000:e8:01.0/0000:e9:00.0", "0x15b3", "0x1021", "0x020700");
	tu_write(dir, "sys/devices/pci0000:e8/0000:e8:01.0/0000:e9:00.0/vpd", "");
	add_fn(dir, "pci0000:15/0000:18:00.0", "0x10de", "0x2901", "0x030200");
	tu_write(dir, ".gpuready/unreadable", "EACCES /sys/devices/pci0000:e8/0000:e8:01.0/0000:e9:00.0/vpd\n");
	struct inventory *inv = load(dir);
	const struct pci_dev *d = pci_find(&inv->pci, MGMT_BDF);
	assert_non_null(d);
	assert_int_equal(d->vpd_err, -EACCES);
	assert_false(d->nvswitch_mgmt);
	assert_ptr_equal(nvswitch_mgmt_unknown(inv), d);
	struct report rep;
	run_check(inv, "gpu.nvlsm", &rep);
	const struct finding *f = find(&rep, "gpu.nvlsm", "nvlsm");
	assert_int_equal(f->status, STATUS_SKIP);
	tu_assert_has(f->message, "cannot tell");
	tu_assert_has(f->message, "0000:e9:00.0/vpd: Permission denied");
	report_free(&rep);
	inventory_free(inv);

	/* an empty VPD is no VPD: not applicable, not unknown */
	tu_write(dir, ".gpuready/unreadable", "");
	inv = load(dir);
	d = pci_find(&inv->pci, MGMT_BDF);
	assert_int_equal(d->vpd_err, -ENODATA);
	assert_null(nvswitch_mgmt_unknown(inv));
	run_check(inv, "gpu.nvlsm", &rep);
	f = find(&rep, "gpu.nvlsm", "nvlsm");
	assert_int_equal(f->status, STATUS_SKIP);
	tu_assert_has(f->message, "not an NVLink 5 baseboard");
	report_free(&rep);
	inventory_free(inv);
	tu_rmtree(dir);
	free(dir);
}

/* ---- gpu.nvlsm and gpu.fabricmanager by hand (F03) ---- */

struct node {
	struct inventory inv;
	struct pci_dev pci[2];
	struct report rep;
};

static void node_init(struct node *n, bool mgmt)
{
	memset(n, 0, sizeof(*n));
	n->pci[0] = (struct pci_dev){ .bdf = (char *)"0000:18:00.0", .vendor = VENDOR_NVIDIA, .device = 0x2901,
				      .class_code = 0x030200, .driver = (char *)"nvidia", .numa_node = -1,
				      .iommu_group = -1, .vpd_err = -ENOENT };
	n->pci[1] = (struct pci_dev){ .bdf = (char *)MGMT_BDF, .vendor = VENDOR_MELLANOX, .device = 0x1021,
				      .class_code = 0x020700, .driver = (char *)"mlx5_core", .numa_node = -1,
				      .iommu_group = -1, .nvswitch_mgmt = mgmt };
	n->inv.pci.v = n->pci;
	n->inv.pci.n = 2;
	strv_add(&n->inv.modules.loaded, "nvidia");
	strv_add(&n->inv.modules.loaded, "mlx5_ib");
	strv_add(&n->inv.modules.loaded, "ib_umad");
	n->inv.nvidia.version = (char *)"570.124.06";
	n->inv.fabric.fm.active = -1;
	n->inv.fabric.pkg_err = -ENOENT;
	n->inv.fabric.imex_nodes_err = -ENOENT;
	n->inv.fabric.imex_channels_err = -ENOENT;
	n->inv.fabric.nvlsm_bin = n->inv.fabric.nvlsm_conf = true;
}

static void node_done(struct node *n)
{
	report_free(&n->rep);
	strv_free(&n->inv.modules.loaded);
}

/* Runs check id on the node, then node_done(): its finding about subject
 * has status st and a message that contains part (and, when hint is not
 * NULL, a hint that contains it). */
static void expect_one(struct node *n, const char *id, const char *subject, enum status st, const char *part,
		       const char *hint)
{
	run_check(&n->inv, id, &n->rep);
	const struct finding *f = find(&n->rep, id, subject);
	assert_int_equal(f->status, st);
	tu_assert_has(f->message, part);
	if (hint)
		tu_assert_has(f->hint, hint);
	node_done(n);
}

static void test_nvlsm(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, true);
	run_check(&n.inv, "gpu.nvlsm", &n.rep);
	assert_int_equal(find(&n.rep, "gpu.nvlsm", "nvlsm")->status, STATUS_OK);
	assert_int_equal(find(&n.rep, "gpu.nvlsm", "ib_umad")->status, STATUS_OK);
	node_done(&n);

	/* the package missing, or only its configuration */
	node_init(&n, true);
	n.inv.fabric.nvlsm_bin = n.inv.fabric.nvlsm_conf = false;
	expect_one(&n, "gpu.nvlsm", "nvlsm", STATUS_FAIL,
		   "/opt/nvidia/nvlsm/sbin/nvlsm and /usr/share/nvidia/nvlsm/nvlsm.conf missing on a node with 1 "
		   "NVSwitch management port:",
		   "`apt install nvlsm` (from the fabric manager's repository), then "
		   "`systemctl restart nvidia-fabricmanager`");
	node_init(&n, true);
	n.inv.fabric.nvlsm_conf = false;
	expect_one(&n, "gpu.nvlsm", "nvlsm", STATUS_FAIL, "/usr/share/nvidia/nvlsm/nvlsm.conf missing", NULL);

	/* ib_umad not loaded; mlx5_ib built in is fine */
	node_init(&n, true);
	strv_free(&n.inv.modules.loaded);
	strv_add(&n.inv.modules.loaded, "nvidia");
	strv_add(&n.inv.modules.builtin, "mlx5_ib");
	run_check(&n.inv, "gpu.nvlsm", &n.rep);
	const struct finding *f = find(&n.rep, "gpu.nvlsm", "ib_umad");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "nvlsm has no /dev/infiniband/umad*");
	tu_assert_has(f->hint, "`modprobe ib_umad && echo ib_umad > /etc/modules-load.d/ib_umad.conf`");
	assert_int_equal(find(&n.rep, "gpu.nvlsm", "mlx5_ib")->status, STATUS_OK);
	strv_free(&n.inv.modules.builtin);
	node_done(&n);

	/* modules unknown: skip, never ok */
	node_init(&n, true);
	strv_free(&n.inv.modules.loaded);
	n.inv.modules.proc_err = -EACCES;
	n.inv.modules.sys_err = -EACCES;
	n.inv.modules.builtin_err = -ENOENT;
	run_check(&n.inv, "gpu.nvlsm", &n.rep);
	assert_int_equal(find(&n.rep, "gpu.nvlsm", "ib_umad")->status, STATUS_SKIP);
	node_done(&n);

	/* no management port: not applicable */
	node_init(&n, false);
	expect_one(&n, "gpu.nvlsm", "nvlsm", STATUS_SKIP, "not an NVLink 5 baseboard", NULL);
}

static void test_fabricmanager_nvl5(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, true);
	expect_one(&n, "gpu.fabricmanager", "nvidia-fabricmanager.service", STATUS_FAIL,
		   "not installed on a node with 1 NVSwitch management port:", "`apt install nvidia-fabricmanager-570`");
	node_init(&n, false);
	expect_one(&n, "gpu.fabricmanager", "nvidia-fabricmanager.service", STATUS_SKIP, "no NVSwitch management port",
		   NULL);
}

/* ---- rdma.port_state (T07): a management port that is down is skipped ---- */

static void test_port_state_mgmt(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, true);
	struct rdma_port port = { .num = 1, .state = 1, .state_name = (char *)"DOWN", .phys_state = 2,
				  .phys_name = (char *)"Polling", .link_layer = (char *)"InfiniBand",
				  .rate = (char *)"40 Gb/sec (4X QDR)", .rate_gbps = 40, .roce_tos = -1 };
	struct rdma_dev dev = { .name = (char *)"mlx5_8", .node_type = 1, .pci_bdf = (char *)MGMT_BDF,
				.ports = &port, .n_ports = 1 };
	n.inv.rdma.v = &dev;
	n.inv.rdma.n = 1;
	run_check(&n.inv, "rdma.port_state", &n.rep);
	const struct finding *f = find(&n.rep, "rdma.port_state", "mlx5_8/1");
	assert_int_equal(f->status, STATUS_SKIP);
	tu_assert_has(f->message, "not judged against the compute fabric");
	node_done(&n);
	/* the same port on a rail fails */
	node_init(&n, false);
	n.inv.rdma.v = &dev;
	n.inv.rdma.n = 1;
	strv_add(&n.inv.modules.loaded, "ib_uverbs");
	run_check(&n.inv, "rdma.port_state", &n.rep);
	assert_true(find(&n.rep, "rdma.port_state", "mlx5_8/1")->status != STATUS_SKIP);
	node_done(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vpd_sw_mng),
		cmocka_unit_test(test_fixture_vpd),
		cmocka_unit_test(test_vpd_unreadable),
		cmocka_unit_test(test_nvlsm),
		cmocka_unit_test(test_fabricmanager_nvl5),
		cmocka_unit_test(test_port_state_mgmt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
