/* Unit tests for bench copy's pure parts: the test catalog, link limits
 * (bench/copy/expect.c) against hand-computed values, and the output
 * (bench/copy/output.c): nvbandwidth's text layout as golden text for a
 * 1-GPU and a 4-GPU run, the verdict lines, and the JSON document
 * validated against docs/bench-copy.schema.json. */
#define _GNU_SOURCE
#include "testutil.h"
#include "core/spawn.h"
#include "bench/copy/catalog.h"
#include "bench/copy/expect.h"
#include "bench/copy/engine.h"
#include "bench/copy/output.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) (fabs((a) - (b)) < 1e-3)

static void test_catalog(void **state)
{
	(void)state;
	size_t n;
	const struct copy_test *t = copy_tests(&n);
	assert_int_equal(n, 35);
	/* nvbandwidth v0.8's order (nvbandwidth.cpp createTestcases) */
	assert_string_equal(t[0].name, "host_to_device_memcpy_ce");
	assert_string_equal(t[7].name, "device_to_device_bidirectional_memcpy_write_ce");
	assert_string_equal(t[15].name, "one_to_all_read_ce");
	assert_string_equal(t[16].name, "host_to_device_memcpy_sm");
	assert_string_equal(t[31].name, "one_to_all_read_sm");
	assert_string_equal(t[32].name, "host_device_latency_sm");
	assert_string_equal(t[33].name, "device_to_device_latency_sm");
	assert_string_equal(t[34].name, "device_local_copy");
	assert_ptr_equal(copy_test_find("34"), &t[34]);
	assert_ptr_equal(copy_test_find("device_to_device_memcpy_read_ce"), &t[4]);
	assert_int_equal(copy_test_index(&t[4]), 4);
	assert_null(copy_test_find("35"));
	assert_null(copy_test_find("-1"));
	assert_null(copy_test_find("4x"));
	assert_null(copy_test_find(""));
	assert_null(copy_test_find(NULL));
	assert_string_equal(t[6].header[0], "memcpy CE GPU(row) <-> GPU(column) Read1 bandwidth (GB/s)");
	assert_string_equal(t[23].key_suffix[1], "_write2");
	assert_string_equal(t[23].header[2], "memcpy SM GPU(row) <-> GPU(column) Total bandwidth (GB/s)");
	assert_string_equal(t[5].header[0], "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)");
	/* only the unidirectional copy-engine tests are held to an expectation */
	for (size_t i = 0; i < n; i++) {
		bool held = i == 0 || i == 1 || i == 4 || i == 5;
		assert_int_equal(t[i].expect != COPY_EXPECT_NONE, held);
		assert_int_equal(t[i].n_matrices, (i == 6 || i == 7 || i == 22 || i == 23) ? 3 : 1);
	}
}

/* GB/s per lane and direction, by hand: GT/s x data share / 8. */
static const struct {
	int gen;
	double gts, lane;
} lanes[] = {
	{ 3, 8.0, 0.984615 },  /* 8 x 128/130 / 8 */
	{ 4, 16.0, 1.969231 }, /* 16 x 128/130 / 8 */
	{ 5, 32.0, 3.938462 }, /* 32 x 128/130 / 8 */
	{ 6, 64.0, 7.375 },    /* 64 x 236/256 / 8 */
};

static void test_pcie(void **state)
{
	(void)state;
	static const int widths[] = { 1, 2, 4, 8, 16 };
	struct copy_limit l;
	for (size_t g = 0; g < sizeof(lanes) / sizeof(lanes[0]); g++)
		for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
			assert_int_equal(copy_expect_pcie(lanes[g].gts, widths[w], 0, &l), 0);
			assert_true(l.known);
			assert_int_equal(l.kind, COPY_LINK_PCIE);
			assert_int_equal(l.gen, lanes[g].gen);
			assert_int_equal(l.width, widths[w]);
			if (fabs(l.encoded_gbps - lanes[g].lane * widths[w]) > 1e-4 * widths[w])
				fail_msg("Gen%d x%d: %f GB/s, want %f", lanes[g].gen, widths[w], l.encoded_gbps,
					 lanes[g].lane * widths[w]);
			double eff = lanes[g].gen == 6 ? 0.94 : 0.88;
			assert_true(NEAR(l.efficiency, eff));
			assert_true(NEAR(l.expected_gbps, lanes[g].lane * widths[w] * eff));
		}
	/* x16 figures as vendors quote them */
	assert_int_equal(copy_expect_pcie(8.0, 16, 0, &l), 0);
	assert_true(NEAR(l.encoded_gbps, 15.754));
	assert_int_equal(copy_expect_pcie(16.0, 16, 0, &l), 0);
	assert_true(NEAR(l.encoded_gbps, 31.508));
	assert_int_equal(copy_expect_pcie(32.0, 16, 0, &l), 0);
	assert_true(NEAR(l.encoded_gbps, 63.015));
	assert_true(NEAR(l.expected_gbps, 55.454));
	assert_string_equal(l.label, "PCIe Gen5 x16");
	assert_int_equal(copy_expect_pcie(64.0, 16, 0, &l), 0);
	assert_true(NEAR(l.encoded_gbps, 118.0));
	assert_true(NEAR(l.expected_gbps, 110.92));
	assert_int_equal(copy_expect_pcie(2.5, 16, 0, &l), 0);
	assert_true(NEAR(l.encoded_gbps, 4.0));
	assert_int_equal(copy_expect_pcie(5.0, 16, 0, &l), 0);
	assert_true(NEAR(l.encoded_gbps, 8.0));
	assert_int_equal(copy_expect_pcie(32.0, 32, 0, &l), 0);
	assert_true(NEAR(l.encoded_gbps, 126.031));
	/* the site's efficiency replaces the default */
	assert_int_equal(copy_expect_pcie(32.0, 16, 0.9, &l), 0);
	assert_true(NEAR(l.expected_gbps, 56.714));
	assert_int_equal(copy_expect_pcie(64.0, 8, 0.5, &l), 0);
	assert_true(NEAR(l.expected_gbps, 29.5));
}

static void expect_unknown(int ret, const struct copy_limit *l, const char *why)
{
	if (ret != -EINVAL || l->known || l->encoded_gbps != 0 || l->expected_gbps != 0 || !strstr(l->label, why))
		fail_msg("want unknown \"%s\", got %d known=%d %f \"%s\"", why, ret, l->known, l->encoded_gbps, l->label);
}

static void test_pcie_unknown(void **state)
{
	(void)state;
	struct copy_limit l;
	expect_unknown(copy_expect_pcie(0, 16, 0, &l), &l, "no PCIe generation");
	expect_unknown(copy_expect_pcie(2.7, 16, 0, &l), &l, "2.7 GT/s");
	expect_unknown(copy_expect_pcie(-32, 16, 0, &l), &l, "no PCIe generation");
	expect_unknown(copy_expect_pcie(NAN, 16, 0, &l), &l, "no PCIe generation");
	expect_unknown(copy_expect_pcie(128.0, 16, 0, &l), &l, "no PCIe generation"); /* Gen7: not yet */
	expect_unknown(copy_expect_pcie(32.0, 0, 0, &l), &l, "x0");
	expect_unknown(copy_expect_pcie(32.0, 3, 0, &l), &l, "x3");
	expect_unknown(copy_expect_pcie(32.0, 64, 0, &l), &l, "x64");
	expect_unknown(copy_expect_pcie(32.0, 16, 1.5, &l), &l, "efficiency");
	expect_unknown(copy_expect_pcie(32.0, 16, NAN, &l), &l, "efficiency");
	/* sysfs text */
	assert_int_equal(copy_expect_pcie_text("32.0 GT/s PCIe", "16", 0, &l), 0);
	assert_string_equal(l.label, "PCIe Gen5 x16");
	assert_int_equal(copy_expect_pcie_text("8 GT/s\n", "8\n", 0, &l), 0); /* an older kernel */
	assert_string_equal(l.label, "PCIe Gen3 x8");
	assert_int_equal(copy_expect_pcie_text("2.5 GT/s PCIe", "1", 0, &l), 0);
	assert_true(NEAR(l.encoded_gbps, 0.25));
	assert_int_equal(copy_expect_pcie_text("64.0 GT/s PCIe", "4", 0, &l), 0);
	assert_true(NEAR(l.encoded_gbps, 29.5));
	expect_unknown(copy_expect_pcie_text("Unknown", "16", 0, &l), &l, "'Unknown'");
	expect_unknown(copy_expect_pcie_text("", "16", 0, &l), &l, "not a speed");
	expect_unknown(copy_expect_pcie_text(NULL, "16", 0, &l), &l, "not a speed");
	expect_unknown(copy_expect_pcie_text("32.0", "16", 0, &l), &l, "not a speed");
	expect_unknown(copy_expect_pcie_text("32.0 GB/s", "16", 0, &l), &l, "not a speed");
	expect_unknown(copy_expect_pcie_text("32.0 GT/s PCIe junk", "16", 0, &l), &l, "not a speed");
	expect_unknown(copy_expect_pcie_text("2.7 GT/s PCIe", "16", 0, &l), &l, "no PCIe generation");
	expect_unknown(copy_expect_pcie_text("32.0 GT/s PCIe", "x16", 0, &l), &l, "not a lane count");
	expect_unknown(copy_expect_pcie_text("32.0 GT/s PCIe", "", 0, &l), &l, "not a lane count");
	expect_unknown(copy_expect_pcie_text("32.0 GT/s PCIe", NULL, 0, &l), &l, "not a lane count");
	expect_unknown(copy_expect_pcie_text("32.0 GT/s PCIe", "16 lanes", 0, &l), &l, "not a lane count");
	expect_unknown(copy_expect_pcie_text("32.0 GT/s PCIe", "0", 0, &l), &l, "x0"); /* link down */
	assert_int_equal(copy_pcie_gen(16.0), 4);
	assert_int_equal(copy_pcie_gen(15.0), 0);
}

static void test_nvlink(void **state)
{
	(void)state;
	struct copy_limit l;
	assert_int_equal(copy_expect_nvlink(2, 6, 0, &l), 0); /* V100 */
	assert_true(NEAR(l.encoded_gbps, 150) && NEAR(l.expected_gbps, 120));
	assert_int_equal(copy_expect_nvlink(3, 12, 0, &l), 0); /* A100 */
	assert_true(NEAR(l.encoded_gbps, 300) && NEAR(l.expected_gbps, 240));
	assert_int_equal(copy_expect_nvlink(4, 18, 0, &l), 0); /* H100 */
	assert_true(NEAR(l.encoded_gbps, 450) && NEAR(l.expected_gbps, 360));
	assert_string_equal(l.label, "NVLink 4 x18");
	assert_int_equal(l.kind, COPY_LINK_NVLINK);
	assert_int_equal(copy_expect_nvlink(5, 18, 0, &l), 0); /* B200 */
	assert_true(NEAR(l.encoded_gbps, 900) && NEAR(l.expected_gbps, 720));
	assert_int_equal(copy_expect_nvlink(4, 8, 0.9, &l), 0); /* H800: 8 links */
	assert_true(NEAR(l.encoded_gbps, 200) && NEAR(l.expected_gbps, 180));
	assert_int_equal(copy_expect_nvlink(2, 1, 0, &l), 0); /* one link of a hybrid cube mesh */
	assert_true(NEAR(l.encoded_gbps, 25));
	expect_unknown(copy_expect_nvlink(1, 4, 0, &l), &l, "generation 1");
	expect_unknown(copy_expect_nvlink(6, 18, 0, &l), &l, "generation 6");
	expect_unknown(copy_expect_nvlink(4, 0, 0, &l), &l, "0 NVLinks");
	expect_unknown(copy_expect_nvlink(4, 19, 0, &l), &l, "19 NVLinks");
	expect_unknown(copy_expect_nvlink(4, 18, 2, &l), &l, "efficiency");
}

static void test_slower(void **state)
{
	(void)state;
	struct copy_limit gpu, host, bad, out;
	assert_int_equal(copy_expect_pcie(32.0, 16, 0, &gpu), 0);
	copy_limit_fixed(40.0, "host memory", &host);
	assert_true(host.known && NEAR(host.expected_gbps, 40) && host.kind == COPY_LINK_OTHER);
	copy_limit_slower(&gpu, &host, &out);
	assert_string_equal(out.label, "host memory");
	copy_limit_slower(&host, &gpu, &out);
	assert_string_equal(out.label, "host memory");
	copy_limit_fixed(100.0, "host memory", &host);
	copy_limit_slower(&gpu, &host, &out);
	assert_string_equal(out.label, "PCIe Gen5 x16");
	/* an end that cannot be read makes the copy's limit unknown */
	copy_expect_pcie_text("Unknown", "16", 0, &bad);
	copy_limit_slower(&gpu, &bad, &out);
	assert_false(out.known);
	assert_non_null(strstr(out.label, "Unknown"));
	copy_limit_slower(&bad, &gpu, &gpu); /* in place */
	assert_false(gpu.known);
	/* both directions of a link */
	assert_int_equal(copy_expect_nvlink(4, 18, 0, &out), 0);
	copy_limit_both(&out, &out);
	assert_true(NEAR(out.encoded_gbps, 900) && NEAR(out.expected_gbps, 720));
	assert_string_equal(out.label, "NVLink 4 x18, both directions");
	copy_limit_both(&bad, &out);
	assert_false(out.known);
	copy_limit_fixed(0, "host memory", &host);
	assert_false(host.known);
	copy_limit_fixed(NAN, NULL, &host);
	assert_false(host.known);
}

/* ---- output ---- */

static char *render(void (*fn)(FILE *, const struct copy_run *, const struct copy_result *), const struct copy_run *run,
		    const struct copy_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, run, r);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void expect_text(const char *got, const char *want)
{
	if (strcmp(got, want))
		fail_msg("got:\n%s\nwant:\n%s", got, want);
}

static const struct copy_gpu one_gpu[] = { { "NVIDIA H100 80GB HBM3", "0000:18:00.0", 0, false, 0, NULL } };

/* nvbandwidth issue #42 quotes v0.8's block for one A100; the same
 * numbers give the same bytes here. */
static void test_text_nvbandwidth_block(void **state)
{
	(void)state;
	double v[] = { 25.13 };
	struct copy_result r = { .test = "host_to_device_memcpy_sm", .rows = 1, .cols = 1, .value = { v } };
	struct copy_run run = { .n_gpus = 1, .gpus = one_gpu, .n_results = 1, .results = &r };
	char *t = render(copy_print_result, &run, &r);
	expect_text(t, "Running host_to_device_memcpy_sm.\n"
		       "memcpy SM CPU(row) -> GPU(column) bandwidth (GB/s)\n"
		       "           0\n"
		       " 0     25.13\n"
		       "\n"
		       "SUM host_to_device_memcpy_sm 25.13\n"
		       "\n"
		       "# host_to_device_memcpy_sm: 25.1 GB/s\n"
		       "\n");
	free(t);
}

static void print_text(FILE *f, const struct copy_run *run, const struct copy_result *r)
{
	(void)r;
	copy_print_text(f, run);
}

/* One GPU: the header, two host tests against its Gen5 x16 link (one held
 * to --expect-h2d), a waived peer test, and the local copy, which has no
 * link limit. */
static void print_header(FILE *f, const struct copy_run *run, const struct copy_result *r)
{
	(void)r;
	copy_print_header(f, run);
}

/* The header says where the host buffers are only as far as it knows:
 * a GPU of unknown node and one whose node could not be bound are named;
 * --numa names its node; no host test, no word on them. */
static void test_header_numa(void **state)
{
	(void)state;
	const struct copy_gpu gpus[] = {
		{ "A", "0000:01:00.0", 0, true, 0, NULL },
		{ "B", "0000:02:00.0", -1, true, 1, NULL },
		{ "C", "0000:03:00.0", -1, true, 2, "set_mempolicy cannot prefer NUMA node 3 (no memory there, or not online)" },
	};
	struct copy_run run = { .version = "0.1.0", .n_gpus = 3, .gpus = gpus, .size_mib = 512, .loop_count = 16,
				.samples = 3, .numa = "auto", .host_buffers = true };
	const char *head = "gpuready 0.1.0 bench copy (nvbandwidth's tests and layout)\n\nDriver Version: unknown\n\n"
			   "unknown\nDevice 0: A (00000000:01:00)\nDevice 1: B (00000000:02:00)\n"
			   "Device 2: C (00000000:03:00)\n\n# buffer 512 MiB, 16 copies per sample, median of 3 samples";
	char *t = render(print_header, &run, NULL), want[1024];
	snprintf(want, sizeof(want), "%s%s", head,
		 ", host buffers on each GPU's NUMA node where known\n"
		 "# GPU 1: its NUMA node is not known (sysfs numa_node): its host buffers follow the default policy\n"
		 "# GPU 2: set_mempolicy cannot prefer NUMA node 3 (no memory there, or not online)\n\n");
	expect_text(t, want);
	free(t);
	run.numa = "1";
	t = render(print_header, &run, NULL);
	snprintf(want, sizeof(want), "%s%s", head, ", host buffers on NUMA node 1\n\n");
	expect_text(t, want);
	free(t);
	run.host_buffers = false;
	t = render(print_header, &run, NULL);
	snprintf(want, sizeof(want), "%s%s", head, "\n\n");
	expect_text(t, want);
	free(t);
}

static void test_text_one_gpu(void **state)
{
	(void)state;
	struct copy_limit gen5[1];
	assert_int_equal(copy_expect_pcie(32.0, 16, 0, &gen5[0]), 0);
	double h2d[] = { 52.1 }, d2h[] = { 44.0 }, local[] = { 1104.37 };
	const struct copy_result res[] = {
		{ .test = "host_to_device_memcpy_ce", .rows = 1, .cols = 1, .value = { h2d }, .limit = { gen5 } },
		{ .test = "device_to_host_memcpy_ce", .rows = 1, .cols = 1, .value = { d2h }, .limit = { gen5 } },
		{ .test = "device_to_device_memcpy_read_ce", .status = COPY_WAIVED,
		  .message = "no GPU pair with peer access", .rows = 1, .cols = 1 },
		{ .test = "device_local_copy", .rows = 1, .cols = 1, .value = { local } },
	};
	struct copy_run run = { .version = "0.1.0", .host = "node01", .driver = "535.104.05", .cuda_driver = 12020,
				.n_gpus = 1, .gpus = one_gpu, .size_mib = 512, .loop_count = 16, .samples = 3,
				.numa = "auto", .host_buffers = true, .expect = { .h2d = 50 }, .n_results = 4,
				.results = res };
	char *t = render(print_text, &run, NULL);
	expect_text(t, "gpuready 0.1.0 bench copy (nvbandwidth's tests and layout)\n"
		       "\n"
		       "CUDA Driver Version: 12020\n"
		       "Driver Version: 535.104.05\n"
		       "\n"
		       "node01\n"
		       "Device 0: NVIDIA H100 80GB HBM3 (00000000:18:00)\n"
		       "\n"
		       "# buffer 512 MiB, 16 copies per sample, median of 3 samples, host buffers on each GPU's NUMA node\n"
		       "\n"
		       "Running host_to_device_memcpy_ce.\n"
		       "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
		       "           0\n"
		       " 0     52.10\n"
		       "\n"
		       "SUM host_to_device_memcpy_ce 52.10\n"
		       "\n"
		       "# host_to_device_memcpy_ce: 52.1 GB/s, 83% of PCIe Gen5 x16 (63.0 GB/s encoded, 55.5 GB/s "
		       "expected); pass: at least --expect-h2d 50.0 GB/s\n"
		       "\n"
		       "Running device_to_host_memcpy_ce.\n"
		       "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)\n"
		       "           0\n"
		       " 0     44.00\n"
		       "\n"
		       "SUM device_to_host_memcpy_ce 44.00\n"
		       "\n"
		       "# device_to_host_memcpy_ce: 44.0 GB/s, 70% of PCIe Gen5 x16 (63.0 GB/s encoded, 55.5 GB/s "
		       "expected)\n"
		       "\n"
		       "Waived: \n"
		       "# device_to_device_memcpy_read_ce: waived: no GPU pair with peer access\n"
		       "\n"
		       "Running device_local_copy.\n"
		       "memcpy local GPU(column) bandwidth (GB/s)\n"
		       "           0\n"
		       " 0   1104.37\n"
		       "\n"
		       "SUM device_local_copy 1104.37\n"
		       "\n"
		       "# device_local_copy: 1104.4 GB/s\n"
		       "\n"
		       "NOTE: The reported results may not reflect the full capabilities of the platform.\n"
		       "Performance can vary with software drivers, hardware clocks, and system topology.\n"
		       "\n");
	free(t);
	assert_string_equal(copy_run_result(&run), "pass");
}

/* Four GPUs: the host-to-device row with GPU 3's link trained to x8, and
 * the peer write matrix with N/A on the diagonal and for the pair 1-3
 * without peer access. */
#define NA NAN
static const double h2d4[] = { 55.12, 55.40, 54.98, 26.20 };
static const double p2p4[] = { NA,     276.07, 276.36, 276.14, /* */
			       276.19, NA,     276.29, NA,     /* */
			       275.90, 276.48, NA,     150.31, /* */
			       276.55, NA,     276.33, NA };
static const struct copy_gpu four_gpus[] = {
	{ "NVIDIA H100 80GB HBM3", "0000:18:00.0", 0, false, 0, NULL },
	{ "NVIDIA H100 80GB HBM3", "0000:2a:00.0", 0, false, 0, NULL },
	{ "NVIDIA H100 80GB HBM3", "0000:9a:00.0", 1, false, 0, NULL },
	{ "NVIDIA H100 80GB HBM3", "0000:ab:00.0", -1, false, 0, NULL },
};
struct four {
	struct copy_limit pcie[4], nvl[16];
	struct copy_result res[3];
	struct copy_run run;
};

static void four_init(struct four *f)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 4; i++)
		assert_int_equal(copy_expect_pcie(32.0, i == 3 ? 8 : 16, 0, &f->pcie[i]), 0);
	for (int i = 0; i < 16; i++)
		assert_int_equal(copy_expect_nvlink(4, 18, 0, &f->nvl[i]), 0);
	f->res[0] = (struct copy_result){ .test = "host_to_device_memcpy_ce", .rows = 1, .cols = 4, .value = { h2d4 },
					  .limit = { f->pcie } };
	f->res[1] = (struct copy_result){ .test = "device_to_device_memcpy_write_ce", .rows = 4, .cols = 4,
					  .value = { p2p4 }, .limit = { f->nvl } };
	f->res[2] = (struct copy_result){ .test = "all_to_one_write_ce", .status = COPY_ERROR,
					  .message = "cuMemcpyAsync: CUDA_ERROR_LAUNCH_FAILED (GPU 2 lost)", .rows = 1,
					  .cols = 4 };
	f->run = (struct copy_run){ .version = "0.1.0", .host = "node02", .driver = "535.104.05", .cuda_driver = 12020,
				    .n_gpus = 4, .gpus = four_gpus, .size_mib = 64, .loop_count = 16, .samples = 3,
				    .numa = "1", .host_buffers = true, .expect = { .h2d = 50, .p2p = 250 }, .n_results = 3,
				    .results = f->res };
}

static void test_text_four_gpus(void **state)
{
	(void)state;
	struct four f;
	four_init(&f);
	char *t = render(copy_print_result, &f.run, &f.res[0]);
	expect_text(t, "Running host_to_device_memcpy_ce.\n"
		       "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
		       "           0         1         2         3\n"
		       " 0     55.12     55.40     54.98     26.20\n"
		       "\n"
		       "SUM host_to_device_memcpy_ce 191.70\n"
		       "\n"
		       "# host_to_device_memcpy_ce: lowest 26.2 GB/s (GPU 3), 83% of PCIe Gen5 x8 (31.5 GB/s encoded, "
		       "27.7 GB/s expected); FAIL: 1 of 4 below --expect-h2d 50.0 GB/s: GPU 3 26.2\n"
		       "\n");
	free(t);
	t = render(copy_print_result, &f.run, &f.res[1]);
	expect_text(t, "Running device_to_device_memcpy_write_ce.\n"
		       "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n"
		       "           0         1         2         3\n"
		       " 0       N/A    276.07    276.36    276.14\n"
		       " 1    276.19       N/A    276.29       N/A\n"
		       " 2    275.90    276.48       N/A    150.31\n"
		       " 3    276.55       N/A    276.33       N/A\n"
		       "\n"
		       "SUM device_to_device_memcpy_write_ce 2636.62\n"
		       "\n"
		       "# device_to_device_memcpy_write_ce: lowest 150.3 GB/s (GPU 2 -> GPU 3), 33% of NVLink 4 x18 "
		       "(450.0 GB/s encoded, 360.0 GB/s expected); FAIL: 1 of 10 below --expect-p2p 250.0 GB/s: "
		       "GPU 2 -> GPU 3 150.3; 2 not measured (N/A)\n"
		       "\n");
	free(t);
	t = render(copy_print_result, &f.run, &f.res[2]);
	expect_text(t, "Running all_to_one_write_ce.\n"
		       "Error: cuMemcpyAsync: CUDA_ERROR_LAUNCH_FAILED (GPU 2 lost)\n"
		       "# all_to_one_write_ce: error: cuMemcpyAsync: CUDA_ERROR_LAUNCH_FAILED (GPU 2 lost)\n"
		       "\n");
	free(t);
	assert_string_equal(copy_run_result(&f.run), "fail");
}

static char *verdict_of(const struct copy_run *run, const struct copy_result *r, struct copy_verdict *v)
{
	copy_verdict_compute(run, r, v);
	return copy_verdict_line(run, r, v);
}

static void test_verdicts(void **state)
{
	(void)state;
	struct copy_verdict v;
	struct copy_limit lim[4], bad;
	const struct copy_gpu gpus2[] = { { "A", "0000:01:00.0", 0, false, 0, NULL }, { "B", "0000:02:00.0", 0, false, 0, NULL } };
	struct copy_run run = { .n_gpus = 2, .gpus = gpus2, .expect = { .h2d = 50, .d2h = 50, .p2p = 100 } };
	/* a read test names the copy's direction: column to row */
	double rd[] = { NA, 120.0, 90.0, NA };
	for (int i = 0; i < 4; i++)
		copy_expect_nvlink(4, 4, 0, &lim[i]);
	struct copy_result r = { .test = "device_to_device_memcpy_read_ce", .rows = 2, .cols = 2, .value = { rd },
				 .limit = { lim } };
	char *line = verdict_of(&run, &r, &v);
	assert_int_equal(v.status, COPY_VERDICT_FAIL);
	assert_int_equal(v.measured, 2);
	assert_int_equal(v.below, 1);
	tu_assert_has(line, "lowest 90.0 GB/s (GPU 0 -> GPU 1), 90% of NVLink 4 x4");
	tu_assert_has(line, "FAIL: 1 of 2 below --expect-p2p 100.0 GB/s: GPU 0 -> GPU 1 90.0");
	free(line);
	/* the SM variant is reported without a verdict */
	r.test = "device_to_device_memcpy_read_sm";
	line = verdict_of(&run, &r, &v);
	assert_int_equal(v.status, COPY_VERDICT_NONE);
	assert_null(strstr(line, "--expect"));
	free(line);
	/* a cell whose link could not be read is not named over a slower one */
	copy_expect_pcie_text("Unknown", "16", 0, &bad);
	struct copy_limit mixed[2];
	copy_expect_pcie(32.0, 16, 0, &mixed[0]);
	mixed[1] = bad;
	double h2d[] = { 20.0, 55.0 };
	struct copy_result h = { .test = "host_to_device_memcpy_ce", .rows = 1, .cols = 2, .value = { h2d },
				 .limit = { mixed } };
	line = verdict_of(&run, &h, &v);
	tu_assert_has(line, "lowest 20.0 GB/s (GPU 0), 32% of PCIe Gen5 x16");
	tu_assert_has(line, "FAIL: 1 of 2 below --expect-h2d 50.0 GB/s: GPU 0 20.0");
	free(line);
	/* an expectation on a test that did not run is not met: it fails */
	struct copy_result w = { .test = "device_to_host_memcpy_ce", .status = COPY_ERROR, .message = "out of memory",
				 .rows = 1, .cols = 2 };
	line = verdict_of(&run, &w, &v);
	assert_int_equal(v.status, COPY_VERDICT_FAIL);
	assert_string_equal(line, "device_to_host_memcpy_ce: error: out of memory; FAIL: --expect-d2h 50.0 GB/s not met: "
				  "nothing measured");
	free(line);
	/* a peer test that ran with no pair measured: lost peer access fails --expect-p2p */
	double none[] = { NA, NA, NA, NA };
	struct copy_result p = { .test = "device_to_device_memcpy_write_ce", .rows = 2, .cols = 2, .value = { none } };
	line = verdict_of(&run, &p, &v);
	assert_int_equal(v.status, COPY_VERDICT_FAIL);
	assert_int_equal(v.missing, 2);
	tu_assert_has(line, "nothing measured (no GPU pair with peer access)");
	tu_assert_has(line, "FAIL: --expect-p2p 100.0 GB/s not met: nothing measured");
	free(line);
	/* latencies: the highest is named, in ns */
	double lat[] = { 800.5, 812.25 };
	struct copy_result l = { .test = "host_device_latency_sm", .rows = 1, .cols = 2, .value = { lat } };
	line = verdict_of(&run, &l, &v);
	assert_string_equal(line, "host_device_latency_sm: highest 812.2 ns (GPU 1) per access, lower is better");
	free(line);
	/* every cell at its expectation passes */
	double ok[] = { 50.0, 51.0 };
	h.value[0] = ok;
	h.limit[0] = NULL;
	line = verdict_of(&run, &h, &v);
	assert_int_equal(v.status, COPY_VERDICT_PASS);
	assert_string_equal(line, "host_to_device_memcpy_ce: lowest 50.0 GB/s (GPU 0); pass: all at least --expect-h2d "
				  "50.0 GB/s");
	free(line);
}

/* The bidirectional peer tests print three matrices with nvbandwidth's
 * SUM keys. */
static void test_text_bidir(void **state)
{
	(void)state;
	const struct copy_gpu gpus2[] = { { "A", "0000:01:00.0", 0, false, 0, NULL }, { "B", "0000:02:00.0", 0, false, 0, NULL } };
	double r1[] = { NA, 370.5, 371.0, NA }, r2[] = { NA, 369.0, 368.5, NA }, tot[] = { NA, 739.5, 739.5, NA };
	struct copy_result r = { .test = "device_to_device_bidirectional_memcpy_read_ce", .rows = 2, .cols = 2,
				 .value = { r1, r2, tot } };
	struct copy_run run = { .n_gpus = 2, .gpus = gpus2, .n_results = 1, .results = &r };
	char *t = render(copy_print_result, &run, &r);
	tu_assert_has(t, "memcpy CE GPU(row) <-> GPU(column) Read1 bandwidth (GB/s)\n"
			 "           0         1\n"
			 " 0       N/A    370.50\n"
			 " 1    371.00       N/A\n"
			 "\n"
			 "SUM device_to_device_bidirectional_memcpy_read_ce_read1 741.50\n\n");
	tu_assert_has(t, "SUM device_to_device_bidirectional_memcpy_read_ce_read2 737.50\n\n");
	tu_assert_has(t, "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)\n");
	tu_assert_has(t, "SUM device_to_device_bidirectional_memcpy_read_ce_total 1479.00\n\n");
	tu_assert_has(t, "# device_to_device_bidirectional_memcpy_read_ce: lowest 368.5 GB/s (GPU 1 <-> GPU 0, read2)\n");
	free(t);
}

/* ---- JSON ---- */

static const char *python_with_jsonschema(void)
{
	static const char *const pys[] = { "python3", "/usr/bin/python3" };
	for (size_t i = 0; i < 2; i++) {
		struct spawn_result sr = { 0 };
		int rc = spawn_run((const char *const[]){ pys[i], "-c", "import jsonschema", NULL }, NULL, 30000, &sr);
		bool ok = rc == 0 && sr.exit_code == 0;
		spawn_result_free(&sr);
		if (ok)
			return pys[i];
	}
	return NULL;
}

/* Writes each document to a file and runs tests/cli/validate_schema.py on
 * them; returns its exit status. */
static int validate(json_object *const *docs, size_t n, const char *py)
{
	char *dir = tu_mkdtemp();
	struct strv argv = { 0 };
	strv_add(&argv, py);
	strv_push(&argv, xasprintf("%s/tests/cli/validate_schema.py", tu_source_dir()));
	strv_push(&argv, xasprintf("%s/docs/bench-copy.schema.json", tu_source_dir()));
	for (size_t i = 0; i < n; i++) {
		char *name = xasprintf("/doc%zu.json", i);
		tu_write(dir, name, json_object_to_json_string_ext(docs[i], JSON_C_TO_STRING_PRETTY));
		strv_push(&argv, xasprintf("%s%s", dir, name));
		free(name);
	}
	struct spawn_result sr = { 0 };
	int rc = spawn_run((const char *const *)argv.v, NULL, 60000, &sr);
	if (rc == 0)
		rc = sr.exit_code;
	if (sr.err.len)
		fputs(sr.err.buf, stderr);
	spawn_result_free(&sr);
	strv_free(&argv);
	tu_rmtree(dir);
	free(dir);
	return rc;
}

static json_object *get(json_object *o, const char *path)
{
	char *copy = xstrdup(path), *save = NULL;
	for (char *k = strtok_r(copy, "/", &save); k && o; k = strtok_r(NULL, "/", &save)) {
		if (k[0] >= '0' && k[0] <= '9')
			o = json_object_array_get_idx(o, (size_t)atoi(k));
		else if (!json_object_object_get_ex(o, k, &o))
			o = NULL;
	}
	free(copy);
	return o;
}

static void test_json(void **state)
{
	(void)state;
	struct four f;
	four_init(&f);
	json_object *doc = copy_json(&f.run);
	assert_string_equal(json_object_get_string(get(doc, "kind")), "copy");
	assert_string_equal(json_object_get_string(get(doc, "result")), "fail");
	assert_string_equal(json_object_get_string(get(doc, "tests/1/name")), "device_to_device_memcpy_write_ce");
	assert_int_equal(json_object_get_int(get(doc, "tests/1/index")), 5);
	/* N/A is null; the limits have the matrix's shape */
	assert_true(json_object_object_get_ex(get(doc, "tests/1/matrices/0/values/0"), "x", NULL) == false);
	assert_null(get(doc, "tests/1/matrices/0/values/0/0"));
	assert_true(NEAR(json_object_get_double(get(doc, "tests/1/matrices/0/values/2/3")), 150.31));
	assert_true(NEAR(json_object_get_double(get(doc, "tests/1/matrices/0/sum")), 2636.62));
	assert_string_equal(json_object_get_string(get(doc, "tests/1/matrices/0/limits/2/3/label")), "NVLink 4 x18");
	assert_string_equal(json_object_get_string(get(doc, "tests/1/verdict/status")), "fail");
	assert_int_equal(json_object_get_int(get(doc, "tests/1/verdict/below")), 1);
	assert_int_equal(json_object_get_int(get(doc, "tests/1/verdict/weakest/col")), 3);
	assert_string_equal(json_object_get_string(get(doc, "tests/0/verdict/weakest/limit/label")), "PCIe Gen5 x8");
	assert_string_equal(json_object_get_string(get(doc, "tests/2/status")), "error");
	assert_int_equal(json_object_array_length(get(doc, "tests/2/matrices")), 0);
	assert_null(get(doc, "gpus/3/numa_node"));
	assert_null(get(doc, "expect/d2h_gbps"));

	/* the schema accepts these documents and refuses a broken one */
	const char *py = python_with_jsonschema();
	if (!py) {
		json_object_put(doc);
		skip(); /* python3-jsonschema missing */
	}
	struct copy_limit gen5[1], bad[1];
	copy_expect_pcie(32.0, 16, 0, gen5);
	copy_expect_pcie_text("Unknown", "16", 0, bad);
	double h2d[] = { 52.1 }, lat[] = { 812.0 }, none[] = { NA };
	const struct copy_result res[] = {
		{ .test = "host_to_device_memcpy_ce", .rows = 1, .cols = 1, .value = { h2d }, .limit = { gen5 } },
		{ .test = "device_to_host_memcpy_ce", .rows = 1, .cols = 1, .value = { h2d }, .limit = { bad } },
		{ .test = "device_to_device_memcpy_read_ce", .status = COPY_WAIVED, .rows = 1, .cols = 1 },
		{ .test = "host_device_latency_sm", .rows = 1, .cols = 1, .value = { lat } },
		{ .test = "device_local_copy", .rows = 1, .cols = 1, .value = { none } },
	};
	struct copy_run one = { .version = "0.1.0", .n_gpus = 1, .gpus = one_gpu, .size_mib = 512, .loop_count = 16,
				.samples = 3, .expect = { .d2h = 40 }, .n_results = 5, .results = res };
	json_object *docs[] = { doc, copy_json(&one) };
	assert_int_equal(validate(docs, 2, py), 0);
	json_object_object_add(doc, "kind", json_object_new_string("net"));
	assert_true(validate(docs, 1, py) != 0);
	json_object_put(docs[0]);
	json_object_put(docs[1]);
}

/* nvbandwidth reports the median of its samples (common.h): the middle
 * one, the mean of the middle two for an even count; the order given does
 * not matter. */
static void test_median(void **state)
{
	(void)state;
	double one[] = { 7 }, three[] = { 9, 1, 5 }, four[] = { 40, 10, 30, 20 };
	assert_true(copy_median(one, 1) == 7);
	assert_true(copy_median(three, 3) == 5);
	assert_true(copy_median(four, 4) == 25);
	assert_true(isnan(copy_median(one, 0)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog),
		cmocka_unit_test(test_pcie),
		cmocka_unit_test(test_pcie_unknown),
		cmocka_unit_test(test_nvlink),
		cmocka_unit_test(test_slower),
		cmocka_unit_test(test_text_nvbandwidth_block),
		cmocka_unit_test(test_text_one_gpu),
		cmocka_unit_test(test_header_numa),
		cmocka_unit_test(test_text_four_gpus),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_text_bidir),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_median),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
