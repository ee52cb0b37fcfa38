/* NVSwitch systems, GPUs and the driver: the fabric manager (F01, F02),
 * IMEX channels (F06, T09), MIG instances (F13, T10), VBIOS parity (F14),
 * Blackwell with the proprietary module (F11), the Xid catalog (F20,
 * T13) and the NVLinks of bridged PCIe cards (T11), against inventories built by hand and small trees. */
#include "testutil.h"
#include "checks/check.h"
#include "checks/gpu/common.h"
#include "core/report.h"
#include "core/root.h"
#include "core/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node with one H100 (or the device given) and, with nvswitch, one
 * NVSwitch function; the nvidia module loaded, open flavour. */
struct node {
	struct inventory inv;
	struct pci_dev pci[2];
	struct nvidia_gpu_info gpus[3];
	struct report rep;
};

static void node_init(struct node *n, uint32_t gpu_device, bool nvswitch)
{
	memset(n, 0, sizeof(*n));
	n->pci[0] = (struct pci_dev){ .bdf = (char *)"0000:18:00.0", .vendor = VENDOR_NVIDIA, .device = gpu_device,
				      .class_code = 0x030200, .driver = (char *)"nvidia", .numa_node = -1,
				      .iommu_group = -1 };
	n->pci[1] = (struct pci_dev){ .bdf = (char *)"0000:05:00.0", .vendor = VENDOR_NVIDIA, .device = 0x22a3,
				      .class_code = 0x068000, .driver = (char *)"nvidia-nvswitch", .numa_node = -1,
				      .iommu_group = -1 };
	n->inv.pci.v = n->pci;
	n->inv.pci.n = nvswitch ? 2 : 1;
	strv_add(&n->inv.modules.loaded, "nvidia");
	n->inv.nvidia.proc_present = true;
	n->inv.nvidia.version = (char *)"570.124.06";
	n->inv.nvidia.flavour_proc = NV_FLAVOUR_OPEN;
	n->inv.nvidia.taint = (char *)"OE";
	n->inv.nvidia.gpus_listed = true;
	n->inv.nvidia.gpus = n->gpus;
	n->inv.fabric.fm.active = -1;
	n->inv.fabric.pkg_err = -ENOENT;
	n->inv.fabric.imex_nodes_err = -ENOENT;
	n->inv.fabric.imex_channels_err = -ENOENT;
}

static void add_gpu(struct node *n, const char *bdf, const char *vbios, int minor)
{
	n->gpus[n->inv.nvidia.n_gpus++] = (struct nvidia_gpu_info){ .bdf = (char *)bdf, .model = (char *)"NVIDIA H100 80GB HBM3",
								    .vbios = (char *)vbios, .minor = minor,
								    .excluded = 0, .mig_err = -ENOENT };
}

static void node_run(struct node *n, const char *id)
{
	struct strv only = STRV_INIT, skip = STRV_INIT;
	strv_add(&only, id);
	struct check_select sel = { .only = &only, .skip = &skip };
	struct site_expect expect = { 0 };
	report_init(&n->rep, "test", "host", "/");
	assert_int_equal(checks_run(NULL, &n->inv, &expect, &sel, &n->rep), 0);
	strv_free(&only);
}

static void node_done(struct node *n)
{
	report_free(&n->rep);
	strv_free(&n->inv.modules.loaded);
	for (size_t i = 0; i < n->inv.nvidia.n_gpus; i++)
		strv_free(&n->gpus[i].mig_gis);
	strv_free(&n->inv.fabric.imex_channels);
}

/* The finding of id about subject (the last one), failing when none. */
static const struct finding *find(const struct node *n, const char *id, const char *subject)
{
	return tu_finding(&n->rep, id, subject);
}

/* ---- gpu.fabricmanager (F01, F02, T08) ---- */

static void test_fm_absent_disabled_stopped(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 0x2330, true);
	node_run(&n, "gpu.fabricmanager");
	const struct finding *f = find(&n, "gpu.fabricmanager", "nvidia-fabricmanager.service");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "not installed on a node with 1 NVSwitch");
	tu_assert_has(f->hint, "`apt install nvidia-fabricmanager-570`");
	node_done(&n);
	node_init(&n, 0x2330, true);
	n.inv.nvidia.version = (char *)"580.95.05";
	node_run(&n, "gpu.fabricmanager");
	tu_assert_has(find(&n, "gpu.fabricmanager", "nvidia-fabricmanager.service")->hint,
		   "`apt install nvidia-fabricmanager` ");
	node_done(&n);

	node_init(&n, 0x2330, true);
	n.inv.fabric.fm.unit_path = (char *)"/lib/systemd/system/nvidia-fabricmanager.service";
	n.inv.fabric.fm.active = 0;
	node_run(&n, "gpu.fabricmanager");
	f = find(&n, "gpu.fabricmanager", "nvidia-fabricmanager.service");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "not enabled, so it does not start at boot, and not running");
	tu_assert_has(f->hint, "`systemctl enable --now nvidia-fabricmanager`");
	node_done(&n);

	/* enabled, running unknown: skip, never ok */
	node_init(&n, 0x2330, true);
	n.inv.fabric.fm.unit_path = (char *)"/lib/systemd/system/nvidia-fabricmanager.service";
	n.inv.fabric.fm.enabled = true;
	n.inv.fabric.fm.active_err = -ENOENT;
	node_run(&n, "gpu.fabricmanager");
	f = find(&n, "gpu.fabricmanager", "nvidia-fabricmanager.service");
	assert_int_equal(f->status, STATUS_SKIP);
	tu_assert_has(f->message, "/run/systemd/units: missing");
	node_done(&n);

	/* no NVSwitch: nothing to manage (T08) */
	node_init(&n, 0x2330, false);
	node_run(&n, "gpu.fabricmanager");
	assert_int_equal(find(&n, "gpu.fabricmanager", "nvidia-fabricmanager.service")->status, STATUS_SKIP);
	node_done(&n);
}

static void test_fm_version(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 0x2330, true);
	n.inv.fabric.fm.unit_path = (char *)"/lib/systemd/system/nvidia-fabricmanager.service";
	n.inv.fabric.fm.enabled = true;
	n.inv.fabric.fm.active = 1;
	n.inv.fabric.pkg_err = 0;
	n.inv.fabric.fm_pkg = (char *)"nvidia-fabricmanager-570";
	n.inv.fabric.fm_pkg_version = (char *)"570.86.15";
	node_run(&n, "gpu.fabricmanager");
	assert_int_equal(find(&n, "gpu.fabricmanager", "nvidia-fabricmanager.service")->status, STATUS_OK);
	const struct finding *f = find(&n, "gpu.fabricmanager", "nvidia-fabricmanager-570");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "570.86.15 differs from the driver 570.124.06");
	tu_assert_has(f->hint, "`apt install nvidia-fabricmanager-570=570.124.06-1`");
	node_done(&n);

	node_init(&n, 0x2330, true);
	n.inv.fabric.pkg_err = 0;
	n.inv.fabric.fm_pkg = (char *)"nvidia-fabricmanager-570";
	n.inv.fabric.fm_pkg_version = (char *)"570.124.06";
	node_run(&n, "gpu.fabricmanager");
	assert_int_equal(find(&n, "gpu.fabricmanager", "nvidia-fabricmanager-570")->status, STATUS_OK);
	node_done(&n);

	/* an RPM node: the version cannot be read from files */
	node_init(&n, 0x2330, true);
	n.inv.fabric.rpm_db = true;
	node_run(&n, "gpu.fabricmanager");
	const struct finding *s = find(&n, "gpu.fabricmanager", "nvidia-fabricmanager version");
	assert_int_equal(s->status, STATUS_SKIP);
	tu_assert_has(s->message, "RPM");
	node_done(&n);
}

static void test_dpkg(void **state)
{
	(void)state;
	const char *status = "Package: nvidia-fabricmanager-dev-570\nStatus: install ok installed\nVersion: 570.124.06-1\n\n"
			     "Package: nvidia-fabricmanager-565\nStatus: deinstall ok config-files\nVersion: 565.57.01-1\n\n"
			     "Package: nvidia-fabricmanager-570\nStatus: install ok installed\nPriority: optional\n"
			     "Version: 1:570.124.06-0ubuntu0.24.04.1\nDescription: x\n continued\n";
	char *pkg = NULL, *ver = NULL;
	assert_true(dpkg_find_installed(status, "nvidia-fabricmanager", &pkg, &ver));
	assert_string_equal(pkg, "nvidia-fabricmanager-570");
	assert_string_equal(ver, "570.124.06");
	free(pkg), free(ver);
	assert_true(dpkg_find_installed("Package: nvidia-fabricmanager\nVersion: 580.65.06-1\nStatus: install ok "
					"installed\n",
					"nvidia-fabricmanager", &pkg, &ver));
	assert_string_equal(pkg, "nvidia-fabricmanager");
	assert_string_equal(ver, "580.65.06");
	free(pkg), free(ver);
	assert_false(dpkg_find_installed("", "nvidia-fabricmanager", &pkg, &ver));
	assert_false(dpkg_find_installed("garbage\n\n\n:::\nPackage:\n", "nvidia-fabricmanager", &pkg, &ver));
	assert_false(dpkg_find_installed("Package: nvidia-fabricmanager-570\nStatus: install ok installed\n",
					 "nvidia-fabricmanager", &pkg, &ver)); /* no version */
}

/* The reader: unit, enablement, systemd's invocation link, the package. */
static void test_fabric_load(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_write(dir, "lib/systemd/system/nvidia-fabricmanager.service", "[Unit]\n");
	tu_symlink(dir, "etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service",
		   "/lib/systemd/system/nvidia-fabricmanager.service");
	tu_symlink(dir, "run/systemd/units/invocation:nvidia-fabricmanager.service", "0123456789abcdef");
	tu_write(dir, "var/lib/dpkg/status", "Package: nvidia-fabricmanager-570\nStatus: install ok installed\n"
					     "Version: 570.124.06-1\n");
	tu_write(dir, "etc/nvidia-imex/nodes_config.cfg", "10.0.0.1\n10.0.0.2\n");
	tu_write(dir, "dev/nvidia-caps-imex-channels/channel0", "");
	struct root *r = NULL;
	assert_int_equal(root_open(dir, &r), 0);
	struct fabric_info f = { 0 };
	assert_int_equal(fabric_load(r, &f), 0);
	assert_string_equal(f.fm.unit_path, "/lib/systemd/system/nvidia-fabricmanager.service");
	assert_true(f.fm.enabled);
	assert_int_equal(f.fm.active, 1);
	assert_string_equal(f.fm_pkg, "nvidia-fabricmanager-570");
	assert_string_equal(f.fm_pkg_version, "570.124.06");
	assert_null(f.imex.unit_path);
	assert_int_equal(f.imex.active, 0); /* /run/systemd/units listed, no link */
	assert_int_equal(f.imex_nodes_err, 0);
	assert_int_equal(f.imex_channels.n, 1);
	fabric_free(&f);
	root_free(r);
	tu_rmtree(dir);
	free(dir);

	/* a tree without /run/systemd/units or dpkg: unknown, with the reasons */
	dir = tu_mkdtemp();
	tu_write(dir, "lib/systemd/system/nvidia-fabricmanager.service", "[Unit]\n");
	tu_mkdir(dir, "var/lib/rpm");
	assert_int_equal(root_open(dir, &r), 0);
	assert_int_equal(fabric_load(r, &f), 0);
	assert_false(f.fm.enabled);
	assert_int_equal(f.fm.active, -1);
	assert_int_equal(f.fm.active_err, -ENOENT);
	assert_int_equal(f.pkg_err, -ENOENT);
	assert_true(f.rpm_db);
	assert_int_equal(f.imex_channels_err, -ENOENT);
	fabric_free(&f);
	root_free(r);
	tu_rmtree(dir);
	free(dir);
}

/* ---- gpu.imex (F06, T09) ---- */

static void test_imex(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 0x2941, false);
	node_run(&n, "gpu.imex");
	assert_int_equal(find(&n, "gpu.imex", "/dev/nvidia-caps-imex-channels")->status, STATUS_SKIP);
	node_done(&n);

	node_init(&n, 0x2941, false);
	n.inv.fabric.imex.unit_path = (char *)"/lib/systemd/system/nvidia-imex.service";
	node_run(&n, "gpu.imex");
	const struct finding *f = find(&n, "gpu.imex", "/dev/nvidia-caps-imex-channels");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->hint, "NVreg_CreateImexChannel0=1");
	node_done(&n);

	node_init(&n, 0x2941, false);
	n.inv.fabric.imex_nodes_err = 0;
	n.inv.fabric.imex_channels_err = 0;
	strv_add(&n.inv.fabric.imex_channels, "channel0");
	node_run(&n, "gpu.imex");
	assert_int_equal(find(&n, "gpu.imex", "/dev/nvidia-caps-imex-channels")->status, STATUS_OK);
	node_done(&n);

	/* unreadable: never ok */
	node_init(&n, 0x2941, false);
	n.inv.fabric.imex_nodes_err = 0;
	n.inv.fabric.imex_channels_err = -EACCES;
	node_run(&n, "gpu.imex");
	assert_int_equal(find(&n, "gpu.imex", "/dev/nvidia-caps-imex-channels")->status, STATUS_WARN);
	node_done(&n);
}

/* ---- gpu.mig (F13, T10) ---- */

static void test_mig(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 0x2330, false);
	add_gpu(&n, "0000:18:00.0", "96.00.99.00.01", 0);
	n.gpus[0].mig_err = 0;
	strv_add(&n.gpus[0].mig_gis, "gi1");
	strv_add(&n.gpus[0].mig_gis, "gi2");
	node_run(&n, "gpu.mig");
	const struct finding *f = find(&n, "gpu.mig", "0000:18:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "2 GPU instances (gi1, gi2)");
	tu_assert_has(f->hint, "nvidia-smi -i 0000:18:00.0 -mig 0");
	node_done(&n);

	/* the mig directory alone is on every MIG-capable GPU (T10) */
	node_init(&n, 0x2330, false);
	add_gpu(&n, "0000:18:00.0", "96.00.99.00.01", 0);
	n.gpus[0].mig_err = 0;
	node_run(&n, "gpu.mig");
	assert_int_equal(find(&n, "gpu.mig", "0000:18:00.0")->status, STATUS_OK);
	node_done(&n);

	node_init(&n, 0x2330, false);
	add_gpu(&n, "0000:18:00.0", "96.00.99.00.01", 0);
	node_run(&n, "gpu.mig");
	assert_int_equal(find(&n, "gpu.mig", "0000:18:00.0")->status, STATUS_SKIP);
	node_done(&n);
}

/* ---- gpu.vbios (F14) ---- */

static void test_vbios(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 0x2330, false);
	add_gpu(&n, "0000:18:00.0", "96.00.99.00.01", 0);
	add_gpu(&n, "0000:3a:00.0", "96.00.74.00.11", 1);
	add_gpu(&n, "0000:4b:00.0", "96.00.99.00.01", 2);
	node_run(&n, "gpu.vbios");
	assert_int_equal(find(&n, "gpu.vbios", "0000:18:00.0")->status, STATUS_OK);
	assert_int_equal(find(&n, "gpu.vbios", "0000:4b:00.0")->status, STATUS_OK);
	const struct finding *f = find(&n, "gpu.vbios", "0000:3a:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	tu_assert_has(f->message, "96.00.74.00.11 differs from 96.00.99.00.01");
	tu_assert_has(f->hint, "vbios_version");
	node_done(&n);

	node_init(&n, 0x2330, false);
	add_gpu(&n, "0000:18:00.0", NULL, 0);
	node_run(&n, "gpu.vbios");
	assert_int_equal(find(&n, "gpu.vbios", "0000:18:00.0")->status, STATUS_SKIP);
	node_done(&n);
}

/* ---- gpu.driver on Blackwell (F11) ---- */

static void test_blackwell_proprietary(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 0x2901, false);
	n.inv.nvidia.flavour_proc = NV_FLAVOUR_PROPRIETARY;
	n.inv.nvidia.taint = (char *)"POE";
	node_run(&n, "gpu.driver");
	const struct finding *f = find(&n, "gpu.driver", "nvidia");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "cannot drive 0000:18:00.0 (10de:2901");
	tu_assert_has(f->hint, "`apt install nvidia-driver-570-open`");
	node_done(&n);

	/* the open module on Blackwell, and the proprietary one on Hopper, are fine */
	node_init(&n, 0x2901, false);
	node_run(&n, "gpu.driver");
	assert_int_equal(find(&n, "gpu.driver", "nvidia")->status, STATUS_OK);
	node_done(&n);
	node_init(&n, 0x2330, false);
	n.inv.nvidia.flavour_proc = NV_FLAVOUR_PROPRIETARY;
	n.inv.nvidia.taint = (char *)"POE";
	node_run(&n, "gpu.driver");
	assert_int_equal(find(&n, "gpu.driver", "nvidia")->status, STATUS_OK);
	node_done(&n);
}

/* ---- gpu.xid (F19, F20, T13) ---- */

static void test_xid_catalog(void **state)
{
	(void)state;
	/* every code NVIDIA's catalog lists (1-172) has a row; warn and fail carry a hint */
	for (int code = 1; code <= 172; code++) {
		const struct xid_entry *e = xid_lookup(code);
		if (!e)
			fail_msg("Xid %d has no catalog row", code);
		const struct xid_advice *a = xid_advise(e->action);
		assert_non_null(a->action);
		assert_non_null(a->bucket);
		if (a->status == STATUS_WARN || a->status == STATUS_FAIL)
			assert_non_null(a->hint);
		else
			assert_null(a->hint);
	}
	assert_null(xid_lookup(173));
	/* the catalog's RESET_GPU codes (docs/failure-modes.md) */
	static const int reset[] = { 46, 62, 64, 95, 109, 110, 119, 120, 136, 140, 143, 155, 156, 158 };
	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++) {
		const struct xid_advice *a = xid_advise(xid_lookup(reset[i])->action);
		assert_int_equal(a->status, STATUS_FAIL);
		assert_string_equal(a->bucket, "RESET_GPU");
		tu_assert_has(a->hint, "nvidia-smi -r -i %1$s");
	}
	/* 92 is IGNORE and 94 RESTART_APP: a warning to look at ECC, no failure */
	assert_int_equal(xid_advise(xid_lookup(92)->action)->status, STATUS_WARN);
	assert_int_equal(xid_advise(xid_lookup(94)->action)->status, STATUS_WARN);
	/* application and informational Xids stay ok (T13) */
	static const int fine[] = { 8, 13, 31, 43, 45, 63, 137 };
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
		assert_int_equal(xid_advise(xid_lookup(fine[i])->action)->status, STATUS_OK);
	assert_string_equal(xid_advise(xid_lookup(79)->action)->bucket, "RESTART_BM");
	/* Xid 154 by the action it names */
	assert_int_equal(xid_advise_recovery(0)->status, STATUS_OK);
	assert_int_equal(xid_advise_recovery(1)->status, STATUS_FAIL);
	assert_int_equal(xid_advise_recovery(2)->status, STATUS_FAIL);
	assert_int_equal(xid_advise_recovery(3)->status, STATUS_WARN);
	assert_int_equal(xid_advise_recovery(-1)->status, STATUS_WARN);
	assert_int_equal(xid_advise_recovery(99)->status, STATUS_WARN);
}

static void test_xid_recovery_parse(void **state)
{
	(void)state;
	assert_int_equal(xid_parse_recovery("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 "
					    "(None) to 0x2 (Node Reboot Required)"),
			 2);
	assert_int_equal(xid_parse_recovery("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x1 "
					    "(GPU Reset Required) to 0x0 (None)"),
			 0);
	assert_int_equal(xid_parse_recovery("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed"), -1);
	assert_int_equal(xid_parse_recovery("NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus."), -1);
	assert_int_equal(xid_parse_recovery("recovery action changed from 0x0 to 0xzz"), -1);
}

/* The check's findings: the action in the message, hints only on warn and fail. */
static void test_xid_findings(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 0x2330, false);
	struct xid_event ev[] = {
		{ .pci = (char *)"0000:18:00", .code = 109, .count = 2, .last = (char *)"x", .recovery = -1 },
		{ .pci = (char *)"0000:18:00", .code = 13, .count = 5, .last = (char *)"y", .recovery = -1 },
		{ .pci = (char *)"0000:18:00", .code = 154, .count = 1, .last = (char *)"z", .recovery = 0 },
		{ .pci = (char *)"0000:18:00", .code = 999, .count = 1, .last = (char *)"w", .recovery = -1 },
	};
	n.inv.xid = (struct xid_info){ .known = true, .source = (char *)"/.gpuready/kmsg", .v = ev, .n = 4 };
	node_run(&n, "gpu.xid");
	assert_int_equal(n.rep.n, 4);
	assert_int_equal(n.rep.v[0]->status, STATUS_FAIL);
	tu_assert_has(n.rep.v[0]->message, "reset the GPU (RESET_GPU)");
	tu_assert_has(n.rep.v[0]->hint, "`nvidia-smi -r -i 0000:18:00.0`");
	assert_int_equal(n.rep.v[1]->status, STATUS_OK);
	tu_assert_has(n.rep.v[1]->message, "restart the application");
	assert_null(n.rep.v[1]->hint);
	assert_int_equal(n.rep.v[2]->status, STATUS_OK);
	assert_int_equal(n.rep.v[3]->status, STATUS_WARN);
	tu_assert_has(n.rep.v[3]->message, "not in NVIDIA's Xid catalog");
	assert_non_null(n.rep.v[3]->hint);
	n.inv.xid = (struct xid_info){ 0 };
	node_done(&n);
}

/* ---- gpu.nvml and bridged PCIe cards (F09, T11) ---- */

static void nvl_gpu(struct nvml_gpu *g, const char *bdf, int down)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->bdf, sizeof(g->bdf), "%s", bdf);
	snprintf(g->name, sizeof(g->name), "NVIDIA H100 NVL");
	g->persistence = 1, g->ecc_current = 1, g->remap_pending = 0, g->retired_pending = 0;
	g->nvlink_links = 18, g->nvlink_down = down;
}

static void run_live(struct node *n, struct nvml_gpu *v, size_t nv, const char *id)
{
	static struct nvml_info info;
	memset(&info, 0, sizeof(info));
	info.loaded = true;
	info.v = v, info.n = nv;
	n->inv.live = true;
	n->inv.nvml = &info;
	node_run(n, id);
	n->inv.nvml = NULL;
}

static void run_nvml(struct node *n, struct nvml_gpu *v, size_t nv)
{
	run_live(n, v, nv, "gpu.nvml");
}

/* Live: NVML's MIG mode, current and pending (F13) */
static void test_mig_live(void **state)
{
	(void)state;
	struct nvml_gpu v[1];
	struct node n;
	node_init(&n, 0x2330, false);
	add_gpu(&n, "0000:18:00.0", "96.00.99.00.01", 0);
	n.gpus[0].mig_err = 0;
	nvl_gpu(&v[0], "0000:18:00.0", 0);
	v[0].mig_current = 0, v[0].mig_pending = 1;
	run_live(&n, v, 1, "gpu.mig");
	const struct finding *f = find(&n, "gpu.mig", "0000:18:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "pending: on after the next GPU reset");
	node_done(&n);

	node_init(&n, 0x2330, false);
	add_gpu(&n, "0000:18:00.0", "96.00.99.00.01", 0);
	n.gpus[0].mig_err = 0;
	nvl_gpu(&v[0], "0000:18:00.0", 0);
	run_live(&n, v, 1, "gpu.mig");
	f = find(&n, "gpu.mig", "0000:18:00.0");
	assert_int_equal(f->status, STATUS_OK);
	tu_assert_has(f->message, "MIG mode off, none pending (NVML)");
	node_done(&n);
}

static void test_nvlink_bridged(void **state)
{
	(void)state;
	struct nvml_gpu v[2];
	struct node n;
	/* a bridged pair: 12 of 18 links up on both (NVIDIA/nccl#1608) */
	node_init(&n, 0x2321, false);
	nvl_gpu(&v[0], "0000:18:00.0", 6);
	nvl_gpu(&v[1], "0000:3a:00.0", 6);
	run_nvml(&n, v, 2);
	const struct finding *f = find(&n, "gpu.nvml", "0000:18:00.0");
	assert_int_equal(f->status, STATUS_OK);
	tu_assert_has(f->message, "12 of 18 NVLinks up as on every NVIDIA H100 NVL");
	node_done(&n);

	/* one card with fewer links than its peer: a fault */
	node_init(&n, 0x2321, false);
	nvl_gpu(&v[0], "0000:18:00.0", 6);
	nvl_gpu(&v[1], "0000:3a:00.0", 8);
	run_nvml(&n, v, 2);
	assert_int_equal(find(&n, "gpu.nvml", "0000:3a:00.0")->status, STATUS_FAIL);
	assert_int_equal(find(&n, "gpu.nvml", "0000:18:00.0")->status, STATUS_FAIL);
	node_done(&n);

	/* on an NVSwitch baseboard every link trains */
	node_init(&n, 0x2330, true);
	nvl_gpu(&v[0], "0000:18:00.0", 6);
	nvl_gpu(&v[1], "0000:3a:00.0", 6);
	run_nvml(&n, v, 2);
	assert_int_equal(find(&n, "gpu.nvml", "0000:18:00.0")->status, STATUS_FAIL);
	node_done(&n);

	/* a lone card cannot be compared */
	node_init(&n, 0x2321, false);
	nvl_gpu(&v[0], "0000:18:00.0", 6);
	run_nvml(&n, v, 1);
	assert_int_equal(find(&n, "gpu.nvml", "0000:18:00.0")->status, STATUS_FAIL);
	node_done(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fm_absent_disabled_stopped),
		cmocka_unit_test(test_fm_version),
		cmocka_unit_test(test_dpkg),
		cmocka_unit_test(test_fabric_load),
		cmocka_unit_test(test_imex),
		cmocka_unit_test(test_mig),
		cmocka_unit_test(test_vbios),
		cmocka_unit_test(test_blackwell_proprietary),
		cmocka_unit_test(test_xid_catalog),
		cmocka_unit_test(test_xid_recovery_parse),
		cmocka_unit_test(test_xid_findings),
		cmocka_unit_test(test_nvlink_bridged),
		cmocka_unit_test(test_mig_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
