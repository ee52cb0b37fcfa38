/* gpu.copy_bandwidth against inventories built by hand: each GPU's
 * measured host copies against its PCIe link's expected figure (ok, warn
 * below 0.75, fail below 0.5), a GPU whose figure could not be measured,
 * no known limit (skip, never ok), a run that could not measure, the
 * check skipped when --bench was not given, and the cluster fact's bands
 * and how nodes vote on them. */
#include "testutil.h"
#include "bench/copy/node.h"
#include "checks/check.h"
#include "cluster/cluster.h"
#include "core/report.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "inventory/copy_bw.h"
#include "inventory/gpu_live.h"
#include "inventory/nvlink_rec.h"
#include "lib/nvml_api.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct node {
	struct inventory inv;
	struct copy_bw_info bw;
	struct copy_bw_gpu gpus[4];
	struct report rep;
};

/* A live node of n GPUs on Gen5 x16 links (55.46 GB/s expected), each at
 * h2d 56.1 and d2h 53.5 GB/s (public H100 figures, cuda-samples #357). */
static void node_init(struct node *n, size_t ngpu)
{
	memset(n, 0, sizeof(*n));
	for (size_t i = 0; i < ngpu; i++) {
		struct copy_bw_gpu *g = &n->gpus[i];
		snprintf(g->bdf, sizeof(g->bdf), "0000:%02zx:00.0", 0x18 + 0x11 * i);
		g->ordinal = (int)i;
		g->h2d = 56.1;
		g->d2h = 53.5;
		g->expected = 55.46;
		snprintf(g->limit, sizeof(g->limit), "PCIe Gen5 x16");
	}
	n->bw = (struct copy_bw_info){ .size_mib = 64, .n = ngpu, .v = n->gpus };
	n->inv.live = true;
	n->inv.copy_bw = &n->bw;
}

static void node_run(struct node *n)
{
	struct strv only = STRV_INIT, skip = STRV_INIT;
	strv_add(&only, "gpu.copy_bandwidth");
	struct check_select sel = { .only = &only, .skip = &skip };
	struct site_expect expect = { 0 };
	report_init(&n->rep, "test", "host", "/");
	assert_int_equal(checks_run(NULL, &n->inv, &expect, &sel, &n->rep), 0);
	strv_free(&only);
}

static const struct finding *find(const struct node *n, const char *subject)
{
	return tu_finding(&n->rep, "gpu.copy_bandwidth", subject);
}

static void test_healthy(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 4);
	node_run(&n);
	for (int i = 0; i < 4; i++) {
		const struct finding *f = find(&n, n.gpus[i].bdf);
		assert_non_null(f);
		assert_int_equal(f->status, STATUS_OK);
	}
	assert_non_null(strstr(find(&n, "0000:18:00.0")->message, "device to host is 96% of the 55.5 GB/s"));
	report_free(&n.rep);
}

/* nvbandwidth issue #6: one H100 at 14.2 GB/s beside three at 57. */
static void test_slow_slot(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 4);
	n.gpus[2].h2d = 14.2;
	n.gpus[1].d2h = 40.0; /* 72%: warn */
	node_run(&n);
	const struct finding *f = find(&n, "0000:3a:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	assert_non_null(strstr(f->message, "host to device is 26%"));
	assert_non_null(strstr(f->hint, "lspci -vv -s 0000:3a:00.0"));
	assert_non_null(strstr(f->hint, "gpuready bench copy -d 2 -t 0,1"));
	f = find(&n, "0000:29:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	assert_non_null(f->hint);
	assert_int_equal(find(&n, "0000:18:00.0")->status, STATUS_OK);
	report_free(&n.rep);
}

/* Fail closed: no limit is a skip; a missing figure a warning. */
static void test_unknown(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 2);
	n.gpus[0].expected = 0;
	snprintf(n.gpus[0].limit, sizeof(n.gpus[0].limit), "no PCIe link known");
	n.gpus[1].d2h = NAN;
	snprintf(n.gpus[1].err, sizeof(n.gpus[1].err), "GPU 1 (0000:29:00.0): cuMemcpyAsync: CUDA_ERROR_UNKNOWN (999)");
	node_run(&n);
	assert_int_equal(find(&n, "0000:18:00.0")->status, STATUS_SKIP);
	const struct finding *f = find(&n, "0000:29:00.0");
	assert_int_equal(f->status, STATUS_WARN);
	assert_non_null(strstr(f->message, "cuMemcpyAsync"));
	assert_non_null(f->hint);
	report_free(&n.rep);
}

/* A copy that changed the data fails the GPU whatever its figures; the
 * hint looks for PCIe errors on that GPU. */
static void test_bad_data(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 2);
	n.gpus[1].h2d = NAN;
	n.gpus[1].bad_data = true;
	snprintf(n.gpus[1].err, sizeof(n.gpus[1].err),
		 "1 measurement failed the data check: the copy from host memory to GPU 1 (0000:29:00.0) (issued by "
		 "GPU 1) left 1 of 67108864 bytes different from the source, the first at byte 22369621");
	node_run(&n);
	const struct finding *f = find(&n, "0000:29:00.0");
	assert_int_equal(f->status, STATUS_FAIL);
	assert_non_null(strstr(f->message, "GPU 1: a copy changed the data it moved: 1 measurement failed"));
	assert_non_null(strstr(f->hint, "lspci -vv -s 0000:29:00.0"));
	assert_int_equal(find(&n, "0000:18:00.0")->status, STATUS_OK);
	report_free(&n.rep);
}

static void test_not_asked_and_error(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, 1);
	n.inv.copy_bw = NULL;
	node_run(&n);
	const struct finding *f = find(&n, "copy");
	assert_int_equal(f->status, STATUS_SKIP);
	assert_non_null(strstr(f->message, "--bench"));
	report_free(&n.rep);

	/* a GPU on PCI that could not be measured warns; no GPU on PCI skips */
	struct pci_dev gpu = { .bdf = (char *)"0000:18:00.0", .vendor = 0x10de, .device = 0x2330,
			       .class_code = 0x030200, .numa_node = -1, .iommu_group = -1 };
	node_init(&n, 1);
	n.bw.error = (char *)"cuInit: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected";
	node_run(&n);
	assert_int_equal(find(&n, "copy")->status, STATUS_SKIP);
	report_free(&n.rep);

	node_init(&n, 1);
	n.inv.pci.v = &gpu;
	n.inv.pci.n = 1;
	n.bw.error = (char *)"cannot load the CUDA driver library: libcuda.so.1: cannot open shared object file";
	node_run(&n);
	f = find(&n, "copy");
	assert_int_equal(f->status, STATUS_WARN);
	assert_non_null(strstr(f->message, "libcuda.so.1"));
	assert_non_null(f->hint);
	report_free(&n.rep);
}

/* The cluster fact: a healthy node's GPUs all vote "75%+", a node with a
 * slow slot holds a second band and so drifts from its shape's majority;
 * a GPU with no limit is "no PCIe limit known", one that could not be
 * measured "not measured" (without its reason), one whose copy changed
 * the data "data check failed", a run that measured
 * nothing on a node with a GPU "not measured"; no fact without --bench or
 * without a GPU on PCI. */
static void test_cluster_fact(void **state)
{
	(void)state;
	struct node n;
	struct strv f = STRV_INIT;
	node_init(&n, 4);
	facts_collect(&n.inv, &f);
	assert_string_equal(facts_get(&f, "gpu.copy_bandwidth"), "75%+ of PCIe limit");
	strv_free(&f);
	n.gpus[2].h2d = 14.2;
	n.gpus[1].d2h = 40.0;
	facts_collect(&n.inv, &f);
	assert_string_equal(facts_get(&f, "gpu.copy_bandwidth"),
			    "50-75% of PCIe limit,75%+ of PCIe limit,<50% of PCIe limit");
	strv_free(&f);
	node_init(&n, 2);
	n.gpus[1].expected = 0;
	snprintf(n.gpus[1].limit, sizeof(n.gpus[1].limit), "no PCIe link known: 0000:29:00.0 is not in /sys");
	facts_collect(&n.inv, &f);
	assert_string_equal(facts_get(&f, "gpu.copy_bandwidth"), "75%+ of PCIe limit,no PCIe limit known");
	strv_free(&f);
	n.gpus[0].h2d = NAN;
	snprintf(n.gpus[0].err, sizeof(n.gpus[0].err), "GPU 0 (0000:18:00.0): cuMemcpyAsync: CUDA_ERROR_UNKNOWN (999)");
	facts_collect(&n.inv, &f);
	assert_string_equal(facts_get(&f, "gpu.copy_bandwidth"), "no PCIe limit known,not measured");
	strv_free(&f);
	n.gpus[1].bad_data = true; /* a copy changed the data: its own band */
	snprintf(n.gpus[1].err, sizeof(n.gpus[1].err), "1 measurement failed the data check");
	facts_collect(&n.inv, &f);
	assert_string_equal(facts_get(&f, "gpu.copy_bandwidth"), "data check failed,not measured");
	strv_free(&f);
	n.inv.copy_bw = NULL;
	facts_collect(&n.inv, &f);
	assert_null(facts_get(&f, "gpu.copy_bandwidth"));
	strv_free(&f);

	/* the whole run failed: "not measured" where a GPU is on PCI */
	struct pci_dev gpu = { .bdf = (char *)"0000:18:00.0", .vendor = 0x10de, .device = 0x2330,
			       .class_code = 0x030200, .numa_node = -1, .iommu_group = -1 };
	node_init(&n, 0);
	n.bw.error = (char *)"cuInit: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected";
	facts_collect(&n.inv, &f);
	assert_null(facts_get(&f, "gpu.copy_bandwidth"));
	strv_free(&f);
	n.inv.pci.v = &gpu;
	n.inv.pci.n = 1;
	facts_collect(&n.inv, &f);
	assert_string_equal(facts_get(&f, "gpu.copy_bandwidth"), "not measured");
	strv_free(&f);
}

/* The vote: among seven nodes of one shape, the two whose GPU could not be
 * measured (for different reasons, yet with one value) and the one with no
 * known limit stand apart from the healthy majority. */
static void test_cluster_vote(void **state)
{
	(void)state;
	static const char *const names[] = { "n01", "n02", "n03", "n04", "n05", "n06", "n07" };
	struct node_record r[7];
	for (int i = 0; i < 7; i++) {
		struct node n;
		node_init(&n, 2);
		if (i == 4 || i == 6) {
			n.gpus[1].d2h = NAN;
			snprintf(n.gpus[1].err, sizeof(n.gpus[1].err), "%s",
				 i == 4 ? "GPU 1 (0000:29:00.0): cuMemcpyAsync: CUDA_ERROR_UNKNOWN (999)"
					: "CUDA call cuStreamSynchronize on GPU 1 (0000:29:00.0) did not return within 120 s");
		}
		if (i == 5) {
			n.gpus[0].expected = 0;
			snprintf(n.gpus[0].limit, sizeof(n.gpus[0].limit), "no PCIe link known");
		}
		node_run(&n);
		record_build(&n.inv, &n.rep, names[i], &r[i]);
		report_free(&n.rep);
	}
	assert_string_equal(facts_get(&r[4].facts, "gpu.copy_bandwidth"), facts_get(&r[6].facts, "gpu.copy_bandwidth"));
	struct drift d;
	drift_compute(r, 7, NULL, &d);
	bool want[7] = { false, false, false, false, true, true, true };
	for (int i = 0; i < 7; i++)
		assert_int_equal(d.drifts[i], want[i]);
	const struct drift_row *row = NULL;
	for (size_t i = 0; i < d.n_rows; i++)
		if (!strcmp(d.rows[i].key, "gpu.copy_bandwidth"))
			row = &d.rows[i];
	assert_non_null(row);
	assert_string_equal(row->values[0].value, "75%+ of PCIe limit");
	assert_int_equal(row->values[0].n, 4);
	assert_int_equal(row->kind, DRIFT_MINORITY);
	drift_free(&d);
	for (int i = 0; i < 7; i++)
		record_free(&r[i]);
}

/* Two GPUs in NVML, 0000:18:00.0 and 0000:29:00.0, named name, with 18
 * NVLinks each, all up, NVML's NVLink version version. */
static void peer_init(struct inventory *inv, struct nvml_info *nvml, struct nvml_gpu g[2], const char *name,
		      int version)
{
	memset(g, 0, 2 * sizeof(*g));
	for (int i = 0; i < 2; i++) {
		snprintf(g[i].bdf, sizeof(g[i].bdf), "0000:%02x:00.0", 0x18 + 0x11 * i);
		snprintf(g[i].name, sizeof(g[i].name), "%s", name);
		g[i].nvlink_links = 18;
		g[i].nvlink_version = version;
	}
	nvml->v = g;
	nvml->n = 2;
	inv->nvml = nvml;
}

/* bench copy's peer limits: NVLink 4 x18 on an NVSwitch baseboard (450
 * GB/s per direction, 360 expected at 0.80), unknown without NVSwitch or
 * NVML, the slower PCIe link where no NVLink is active. */
static void test_peer_limit(void **state)
{
	(void)state;
	struct inventory inv = { .live = true };
	struct nvml_info nvml = { .loaded = true };
	struct nvml_gpu g[2];
	struct pci_dev pci[3] = {
		{ .bdf = (char *)"0000:05:00.0", .vendor = 0x10de, .class_code = 0x068000, .numa_node = -1 },
		{ .bdf = (char *)"0000:18:00.0", .vendor = 0x10de, .class_code = 0x030200, .max_speed = 32,
		  .max_width = 16, .cur_speed = 32, .cur_width = 16 },
		{ .bdf = (char *)"0000:29:00.0", .vendor = 0x10de, .class_code = 0x030200, .max_speed = 16,
		  .max_width = 16, .cur_speed = 16, .cur_width = 16 },
	};
	struct copy_limit l;
	peer_init(&inv, &nvml, g, "NVIDIA H100 80GB HBM3", 0);
	inv.pci.v = pci;
	inv.pci.n = 3;
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_true(l.known);
	assert_int_equal(l.gen, 4);
	assert_int_equal(l.width, 18);
	assert_true(fabs(l.encoded_gbps - 450) < 0.01 && fabs(l.expected_gbps - 360) < 0.01);
	assert_string_equal(l.label, "NVLink 4 x18 (generation from the GPU name)");
	copy_peer_limit(&inv, "0000:18:00.0", NULL, 0, 0, &l);
	assert_true(l.known && l.width == 18);
	g[1].nvlink_down = 2; /* the pair is limited by the GPU with fewer links up */
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_int_equal(l.width, 16);
	inv.pci.v = pci + 1;
	inv.pci.n = 2;
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_false(l.known);
	assert_non_null(strstr(l.label, "no NVSwitch"));
	g[0].nvlink_links = g[1].nvlink_links = 0;
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_true(l.known);
	assert_int_equal(l.gen, 4); /* the Gen4 x16 link of 0000:29:00.0, the slower end */
	nvml.loaded = false;
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_false(l.known);
	assert_non_null(strstr(l.label, "NVML"));
}

/* NVML's NVLink version: only the values whose meaning the sources agree
 * on, or that a driver was seen to answer, are decoded (5 for an A100,
 * 7 for an H100: lib/nvml_api.h); the GPU's name comes first, NVML's
 * answer serves GPUs whose name says nothing, and the label says which
 * gave the generation. */
static void test_peer_limit_nvml_version(void **state)
{
	(void)state;
	static const unsigned v[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1000 };
	static const int gen[] = { 0, 1, 2, 0, 0, 3, 0, 4, 0, 0, 0 };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_int_equal(nvml_nvlink_gen(v[i]), gen[i]);

	struct inventory inv = { .live = true };
	struct nvml_info nvml = { .loaded = true };
	struct nvml_gpu g[2];
	struct pci_dev pci[1] = {
		{ .bdf = (char *)"0000:05:00.0", .vendor = 0x10de, .class_code = 0x068000, .numa_node = -1 },
	};
	struct copy_limit l;
	peer_init(&inv, &nvml, g, "NVIDIA Graphics Device", 7); /* no generation in the name; an H100's answer */
	inv.pci.v = pci;
	inv.pci.n = 1;
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_true(l.known);
	assert_int_equal(l.gen, 4);
	assert_true(fabs(l.encoded_gbps - 450) < 0.01);
	assert_string_equal(l.label, "NVLink 4 x18 (generation from NVML)");
	/* the name comes first: an H100 that answers 7 is NVLink 4, not the
	 * "5.0" of CUDA 12.8's enum names */
	for (int i = 0; i < 2; i++)
		snprintf(g[i].name, sizeof(g[i].name), "NVIDIA H100 80GB HBM3");
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_true(l.known);
	assert_int_equal(l.gen, 4);
	assert_string_equal(l.label, "NVLink 4 x18 (generation from the GPU name)");
	/* one GPU by name, the other by NVML */
	snprintf(g[1].name, sizeof(g[1].name), "NVIDIA Graphics Device");
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_true(l.known);
	assert_string_equal(l.label, "NVLink 4 x18 (generation from the GPU name and NVML)");
	/* a value whose meaning is disputed (6: "4.0" by the enum's names, 3
	 * by TensorRT-LLM's table) gives no generation */
	g[1].nvlink_version = 6;
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_false(l.known);
	assert_non_null(strstr(l.label, "not known"));
	/* the generations of two GPUs differ (an A100's 5 on one) */
	g[1].nvlink_version = 5;
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_false(l.known);
	assert_string_equal(l.label, "the GPUs' NVLink generations differ");
	snprintf(g[1].name, sizeof(g[1].name), "NVIDIA H100 80GB HBM3");
	/* no generation from either source */
	for (int i = 0; i < 2; i++) {
		snprintf(g[i].name, sizeof(g[i].name), "NVIDIA Graphics Device");
		g[i].nvlink_version = NVML_NVLINK_VERSION_INVALID;
	}
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_false(l.known);
	assert_non_null(strstr(l.label, "not known"));
}

/* A recorded tree: .gpuready/nvlink as snapshot writes it (and refuses
 * what it would not write), and the peer limit from it with the driver's
 * model names, where NVML cannot be asked. */
static void test_peer_limit_recorded(void **state)
{
	(void)state;
	struct nvml_gpu g[3];
	struct nvml_info nvml = { .loaded = true, .v = g, .n = 3 };
	memset(g, 0, sizeof(g));
	static const int up[] = { 18, 16, 0 }, ver[] = { 7, 7, GPU_UNKNOWN }; /* an H100's answer */
	for (int i = 0; i < 3; i++) {
		snprintf(g[i].bdf, sizeof(g[i].bdf), "0000:%02x:00.0", 0x18 + 0x11 * i);
		g[i].nvlink_links = up[i] ? 18 : 0;
		g[i].nvlink_down = up[i] ? 18 - up[i] : 0;
		g[i].nvlink_version = ver[i];
	}
	struct strbuf sb = STRBUF_INIT;
	nvlink_rec_format(&nvml, &sb);
	assert_string_equal(sb.buf, "0000:18:00.0 18 0 7\n0000:29:00.0 18 2 7\n0000:3a:00.0 0 0 -\n");
	strbuf_adds(&sb, "# a comment\n0000:4b:00.0 18 19 6\n0000:5c:00.0 x 0 6\n0000:6d:00.0 18 0\n");
	struct inventory inv = { .live = false };
	nvlink_rec_parse(sb.buf, sb.len, &inv.nvlink_rec);
	inv.nvlink_rec.known = true;
	assert_int_equal(inv.nvlink_rec.n, 3);
	assert_int_equal(inv.nvlink_rec.bad, 3);
	assert_int_equal(nvlink_rec_find(&inv.nvlink_rec, "0000:3A:00.0")->version, GPU_UNKNOWN);
	strbuf_release(&sb);

	struct pci_dev sw = { .bdf = (char *)"0000:05:00.0", .vendor = 0x10de, .class_code = 0x068000, .numa_node = -1 };
	struct nvidia_gpu_info ng[2] = { { .bdf = (char *)"0000:18:00.0", .model = (char *)"NVIDIA H100 80GB HBM3" },
					 { .bdf = (char *)"0000:29:00.0", .model = (char *)"NVIDIA H100 80GB HBM3" } };
	inv.pci.v = &sw;
	inv.pci.n = 1;
	inv.nvidia.gpus = ng;
	inv.nvidia.n_gpus = 2;
	struct copy_limit l;
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_true(l.known);
	assert_int_equal(l.width, 16); /* the GPU with 2 links down */
	assert_string_equal(l.label, "NVLink 4 x16 (generation from the GPU name)");
	/* a model name that says nothing: the recorded version, decoded */
	ng[0].model = ng[1].model = (char *)"NVIDIA Graphics Device";
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_true(l.known);
	assert_string_equal(l.label, "NVLink 4 x16 (generation from NVML)");
	inv.nvlink_rec.v[0].version = inv.nvlink_rec.v[1].version = GPU_UNKNOWN; /* an older driver: nothing */
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_false(l.known);
	nvlink_rec_free(&inv.nvlink_rec);
	copy_peer_limit(&inv, "0000:18:00.0", "0000:29:00.0", 0, 0, &l);
	assert_false(l.known);
	assert_non_null(strstr(l.label, ".gpuready/nvlink"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy),
		cmocka_unit_test(test_slow_slot),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_bad_data),
		cmocka_unit_test(test_not_asked_and_error),
		cmocka_unit_test(test_cluster_fact),
		cmocka_unit_test(test_cluster_vote),
		cmocka_unit_test(test_peer_limit),
		cmocka_unit_test(test_peer_limit_nvml_version),
		cmocka_unit_test(test_peer_limit_recorded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
