/* The live NVML setting checks against inventories built by hand: compute
 * mode (F15), power limit and application clocks (F16), NVLink fabric
 * registration (F04) and NVML's P2P status between NVLink-connected GPUs
 * (F10). */
#include "testutil.h"
#include "checks/check.h"
#include "core/report.h"
#include "core/strv.h"

#include <stdio.h>
#include <string.h>

/* A live node whose NVML lists n GPUs, all healthy and with every setting
 * at its default; one NVSwitch function on PCI when nvswitch. */
struct node {
	struct inventory inv;
	struct nvml_info nvml;
	struct nvml_gpu gpus[4];
	struct pci_dev pci[1];
	struct report rep;
};

static void node_init(struct node *n, size_t ngpu, bool nvswitch)
{
	memset(n, 0, sizeof(*n));
	for (size_t i = 0; i < ngpu; i++) {
		struct nvml_gpu *g = &n->gpus[i];
		g->index = (unsigned)i;
		snprintf(g->bdf, sizeof(g->bdf), "0000:%02zx:00.0", 0x18 + 0x10 * i);
		g->compute_mode = 0;
		g->power_enforced_mw = g->power_limit_mw = g->power_default_mw = 700000;
		g->app_clock_gr = g->app_default_gr = g->max_clock_gr = 1980;
		g->app_clock_mem = g->app_default_mem = g->max_clock_mem = 2619;
		g->fabric_state = GPU_UNKNOWN, g->fabric_status = GPU_UNKNOWN, g->fabric_health_summary = GPU_UNKNOWN;
		g->nvlink_links = 18;
	}
	n->nvml = (struct nvml_info){ .loaded = true, .v = n->gpus, .n = ngpu, .p2p_queried = true };
	n->pci[0] = (struct pci_dev){ .bdf = (char *)"0000:05:00.0", .vendor = 0x10de, .device = 0x22a3,
				      .class_code = 0x068000, .driver = (char *)"nvidia-nvswitch", .numa_node = -1,
				      .iommu_group = -1 };
	n->inv.pci.v = n->pci;
	n->inv.pci.n = nvswitch ? 1 : 0;
	n->inv.live = true;
	n->inv.nvml = &n->nvml;
}

/* Every pair asked, with the given statuses for a<->b and OK for the rest. */
static void node_p2p(struct node *n, unsigned a, unsigned b, int nvlink, int rd, int wr)
{
	for (size_t i = 0; i < n->nvml.n; i++)
		for (size_t j = i + 1; j < n->nvml.n; j++) {
			bool it = i == a && j == b;
			n->gpus[i].p2p[n->gpus[i].n_p2p++] = (struct nvml_p2p_peer){
				.peer = (int)j, .nvlink = it ? nvlink : 0, .read = it ? rd : 0, .write = it ? wr : 0 };
		}
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

static const struct finding *find(const struct node *n, const char *id, const char *subject)
{
	return tu_finding(&n->rep, id, subject);
}

/* No finding of id is a warn or fail. */
static void assert_clean(const struct node *n, const char *id)
{
	for (size_t i = 0; i < n->rep.n; i++)
		if (!strcmp(n->rep.v[i]->id, id) && (n->rep.v[i]->status == STATUS_WARN || n->rep.v[i]->status == STATUS_FAIL))
			fail_msg("%s %s: %s", id, n->rep.v[i]->subject, n->rep.v[i]->message);
}

static const char *const ids[] = { "gpu.compute_mode", "gpu.power_clocks", "gpu.fabric", "gpu.nvml_p2p" };

/* A recorded tree: each skips as live only; NVML unusable: each skips and
 * points at gpu.nvml. */
static void test_live_only(void **state)
{
	(void)state;
	struct node n;
	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
		node_init(&n, 2, false);
		n.inv.live = false;
		node_run(&n, ids[k]);
		const struct finding *f = find(&n, ids[k], "gpu");
		assert_int_equal(f->status, STATUS_SKIP);
		tu_assert_has(f->message, "needs the live machine");
		report_free(&n.rep);

		node_init(&n, 2, false);
		n.nvml.loaded = false;
		node_run(&n, ids[k]);
		f = find(&n, ids[k], "nvml");
		assert_int_equal(f->status, STATUS_SKIP);
		tu_assert_has(f->message, "gpu.nvml says why");
		report_free(&n.rep);
	}
}

static void test_compute_mode(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 4, false);
	n.gpus[1].compute_mode = 2;
	n.gpus[2].compute_mode = 3;
	n.gpus[3].compute_mode = GPU_UNKNOWN;
	node_run(&n, "gpu.compute_mode");
	assert_int_equal(find(&n, "gpu.compute_mode", "0000:18:00.0")->status, STATUS_OK);
	const struct finding *f = find(&n, "gpu.compute_mode", "0000:28:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "Prohibited");
	tu_assert_has(f->hint, "`nvidia-smi -i 1 -c DEFAULT`");
	f = find(&n, "gpu.compute_mode", "0000:38:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	tu_assert_has(f->message, "Exclusive_Process");
	tu_assert_has(f->message, "CUDA error 46");
	tu_assert_has(f->hint, "`nvidia-smi -i 2 -c DEFAULT`");
	assert_int_equal(find(&n, "gpu.compute_mode", "0000:48:00.0")->status, STATUS_SKIP);
	report_free(&n.rep);
}

static void test_power_clocks(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 4, false);
	/* limit lowered with nvidia-smi -pl */
	n.gpus[1].power_enforced_mw = n.gpus[1].power_limit_mw = 500000;
	/* enforced below a default NVML limit: a cap from outside */
	n.gpus[2].power_enforced_mw = 600000;
	/* application clocks lowered; raised limits are fine */
	n.gpus[3].app_clock_gr = 1500;
	n.gpus[3].power_limit_mw = n.gpus[3].power_enforced_mw = 750000;
	node_run(&n, "gpu.power_clocks");
	const struct finding *f = find(&n, "gpu.power_clocks", "0000:18:00.0");
	assert_int_equal(f->status, STATUS_OK);
	tu_assert_has(f->message, "power limit 700 W (default 700 W)");
	f = find(&n, "gpu.power_clocks", "0000:28:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	tu_assert_has(f->message, "power limit 500 W, 29% below the default 700 W");
	tu_assert_has(f->hint, "`nvidia-smi -i 1 -pl 700`");
	f = find(&n, "gpu.power_clocks", "0000:38:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	tu_assert_has(f->message, "power limit 600 W, 14% below the default 700 W");
	tu_assert_has(f->message, "the limit set through NVML is 700 W");
	tu_assert_has(f->hint, "`nvidia-smi -q -d POWER -i 2`");
	f = find(&n, "gpu.power_clocks", "0000:48:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	tu_assert_has(f->message, "graphics application clock 1500 MHz, 24% below the default 1980 MHz (maximum 1980 MHz)");
	tu_assert_has(f->hint, "`nvidia-smi -i 3 -rac`");
	report_free(&n.rep);

	/* a default application clock below the maximum is by design;
	 * nothing reported is a skip */
	node_init(&n, 2, false);
	n.gpus[0].app_clock_gr = n.gpus[0].app_default_gr = 1312, n.gpus[0].max_clock_gr = 1530;
	n.gpus[1].power_default_mw = n.gpus[1].power_enforced_mw = n.gpus[1].power_limit_mw = GPU_UNKNOWN;
	n.gpus[1].app_clock_gr = n.gpus[1].app_clock_mem = GPU_UNKNOWN;
	node_run(&n, "gpu.power_clocks");
	assert_int_equal(find(&n, "gpu.power_clocks", "0000:18:00.0")->status, STATUS_OK);
	assert_int_equal(find(&n, "gpu.power_clocks", "0000:28:00.0")->status, STATUS_SKIP);
	report_free(&n.rep);
}

static void test_fabric(void **state)
{
	(void)state;
	struct node n;
	/* PCIe GPUs: not supported is not applicable */
	node_init(&n, 2, false);
	node_run(&n, "gpu.fabric");
	const struct finding *f = find(&n, "gpu.fabric", "nvml");
	assert_int_equal(f->status, STATUS_SKIP);
	tu_assert_has(f->message, "not applicable");
	report_free(&n.rep);

	node_init(&n, 4, true);
	for (int i = 0; i < 4; i++) {
		n.gpus[i].fabric_state = 3, n.gpus[i].fabric_status = 0, n.gpus[i].fabric_version = 3;
		n.gpus[i].fabric_health_mask = 0xaa, n.gpus[i].fabric_health_summary = 1;
	}
	n.gpus[1].fabric_state = 2;
	n.gpus[2].fabric_status = 19;
	snprintf(n.gpus[2].fabric_status_text, sizeof(n.gpus[2].fabric_status_text), "In use by another client");
	n.gpus[3].fabric_health_mask = 0xa9; /* bandwidth degraded */
	node_run(&n, "gpu.fabric");
	f = find(&n, "gpu.fabric", "0000:18:00.0");
	assert_int_equal(f->status, STATUS_OK);
	tu_assert_has(f->message, "healthy (health mask 0xaa)");
	f = find(&n, "gpu.fabric", "0000:28:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "state In Progress (2)");
	tu_assert_has(f->hint, "`systemctl status nvidia-fabricmanager`");
	tu_assert_has(f->hint, "`nvidia-smi -r -i 1`");
	f = find(&n, "gpu.fabric", "0000:38:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "completed with an error: In use by another client (19)");
	f = find(&n, "gpu.fabric", "0000:48:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "bandwidth degraded (health mask 0xa9)");
	report_free(&n.rep);

	/* recovery in progress: warn; a wrong configuration: fail; one GPU
	 * outside the fabric the others are in: warn */
	node_init(&n, 3, false);
	for (int i = 0; i < 2; i++)
		n.gpus[i].fabric_state = 3, n.gpus[i].fabric_status = 0, n.gpus[i].fabric_version = 2;
	n.gpus[0].fabric_health_mask = 0xa6;  /* route recovery in progress */
	n.gpus[1].fabric_health_mask = 0x5aa; /* insufficient NVLinks */
	node_run(&n, "gpu.fabric");
	f = find(&n, "gpu.fabric", "0000:18:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	tu_assert_has(f->message, "route recovery in progress");
	tu_assert_has(f->hint, "NVLink switch trays");
	f = find(&n, "gpu.fabric", "0000:28:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "incorrect configuration: insufficient NVLinks");
	f = find(&n, "gpu.fabric", "0000:38:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	tu_assert_has(f->message, "while 2 other GPUs of this node do");
	report_free(&n.rep);
}

static void test_p2p(void **state)
{
	(void)state;
	struct node n;
	/* NVSwitch node: read disabled between GPUs 1 and 2 */
	node_init(&n, 3, true);
	node_p2p(&n, 1, 2, 0, 4, 0);
	node_run(&n, "gpu.nvml_p2p");
	const struct finding *f = find(&n, "gpu.nvml_p2p", "0000:28:00.0<->0000:38:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "read disabled by registry key, write OK");
	tu_assert_has(f->hint, "`nvidia-smi -r -i 1`");
	tu_assert_has(f->hint, "`nvidia-smi topo -p2p r`");
	report_free(&n.rep);

	/* the variable that hides it is named */
	node_init(&n, 2, true);
	node_p2p(&n, 0, 1, 5, 5, 5);
	struct nccl_var var = { .name = (char *)"NCCL_IGNORE_DISABLED_P2P", .value = (char *)"1",
				.source = (char *)"/etc/nccl.conf" };
	n.inv.nccl.v = &var, n.inv.nccl.n = 1;
	node_run(&n, "gpu.nvml_p2p");
	f = find(&n, "gpu.nvml_p2p", "0000:18:00.0<->0000:28:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	tu_assert_has(f->message, "NCCL_IGNORE_DISABLED_P2P=1 is set (/etc/nccl.conf)");
	tu_assert_has(f->hint, "remove NCCL_IGNORE_DISABLED_P2P");
	report_free(&n.rep);

	/* bridged cards: a pair without a bridge between them is not judged */
	node_init(&n, 4, false);
	node_p2p(&n, 0, 2, 5, 5, 5);
	node_run(&n, "gpu.nvml_p2p");
	assert_clean(&n, "gpu.nvml_p2p");
	f = find(&n, "gpu.nvml_p2p", "nvml");
	assert_int_equal(f->status, STATUS_OK);
	tu_assert_has(f->message, "5 pairs of GPUs (the other pairs are not joined by NVLink)");
	report_free(&n.rep);

	/* a status NVML could not give is a warn, never OK */
	node_init(&n, 2, true);
	node_p2p(&n, 0, 1, 0, GPU_UNKNOWN, 0);
	node_run(&n, "gpu.nvml_p2p");
	f = find(&n, "gpu.nvml_p2p", "0000:18:00.0<->0000:28:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	tu_assert_has(f->message, "read not reported");
	report_free(&n.rep);

	/* fewer than two GPUs with NVLinks up: not applicable */
	node_init(&n, 2, true);
	n.gpus[1].nvlink_down = 18;
	node_run(&n, "gpu.nvml_p2p");
	f = find(&n, "gpu.nvml_p2p", "nvml");
	assert_int_equal(f->status, STATUS_SKIP);
	tu_assert_has(f->message, "1 GPU with NVLinks up");
	report_free(&n.rep);
}

/* A healthy HGX node: nothing to warn about. */
static void test_healthy(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 4, true);
	for (int i = 0; i < 4; i++)
		n.gpus[i].fabric_state = 3, n.gpus[i].fabric_status = 0, n.gpus[i].fabric_version = 3,
		n.gpus[i].fabric_health_mask = 0x1aa, n.gpus[i].fabric_health_summary = 1;
	node_p2p(&n, 9, 9, 0, 0, 0);
	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
		node_run(&n, ids[k]);
		assert_clean(&n, ids[k]);
		report_free(&n.rep);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_only), cmocka_unit_test(test_compute_mode),
		cmocka_unit_test(test_power_clocks), cmocka_unit_test(test_fabric),
		cmocka_unit_test(test_p2p), cmocka_unit_test(test_healthy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
