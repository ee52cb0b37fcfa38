/* `bench copy`'s options: nvbandwidth's letters, long names (as aliases
 * where gpuready's spelling differs: --testcase, --bufferSize,
 * --testSamples, --loopCount) and defaults, read from nvbandwidth v0.8's
 * command line (nvbandwidth.cpp) and constants (common.h:
 * defaultBufferSize 512 MiB, defaultAverageLoopCount 3 samples,
 * defaultLoopCount 16 copies). gpuready's own: --numa, -d (nvbandwidth's
 * -d is --disableAffinity; gpuready always places host buffers on the
 * GPU's node unless --numa says otherwise), the expectations and the
 * link efficiencies (bench/copy/expect.h). */
#include "opts/settings.h"
#include "bench/copy/catalog.h"
#include "core/parse.h"
#include "core/strbuf.h"

#include <stddef.h>
#include <string.h>

#define OFF(f) offsetof(struct settings, f)

/* --numa: "auto" (each GPU's own node, from sysfs numa_node) or a node. */
static const char *numa_form(const char *v)
{
	int n;
	if (!strcmp(v, "auto") || (parse_int(v, 10, &n) == 0 && n >= 0 && n < 1024))
		return NULL;
	return "auto or a NUMA node number (0-1023)";
}

/* -d: "all" or GPU indexes, comma-separated, each once. */
static const char *devices_form(const char *v)
{
	static const char *const form = "all or GPU indexes separated by commas (0,2,5)";
	bool seen[1024] = { false };
	if (!strcmp(v, "all"))
		return NULL;
	for (const char *p = v;; p++) {
		size_t len = strcspn(p, ",");
		char num[8];
		int n;
		if (!len || len >= sizeof(num))
			return form;
		memcpy(num, p, len);
		num[len] = '\0';
		if (parse_int(num, 10, &n) < 0 || n < 0 || n >= 1024 || seen[n])
			return form;
		seen[n] = true;
		p += len;
		if (!*p)
			return NULL;
	}
}

static const struct opt copy_rows[] = {
	{ .name = "testcase", .short_name = 't', .type = OPT_LIST, .offset = OFF(copy.tests),
	  .metavar = "NAME", .help = "Run test NAME: nvbandwidth's name (host_to_device_memcpy_ce ...) or index "
				     "(0-34, as nvbandwidth -l numbers them); repeatable, comma-separated (default: every test).",
	  .scope = SCOPE_BENCH_COPY },
	{ .name = "list", .short_name = 'l', .type = OPT_FLAG, .offset = OFF(copy.list),
	  .help = "List the tests (index, nvbandwidth's name, what it measures) and exit, as nvbandwidth -l.",
	  .scope = SCOPE_BENCH_COPY },
	{ .name = "size", .alias = "bufferSize", .short_name = 'b', .type = OPT_INT, .offset = OFF(copy.size_mib),
	  .metavar = "MiB", .help = "Buffer of each copy in MiB (the latency tests use 2 MiB, as nvbandwidth).",
	  .def = OPT_DEF_INT(512), .min = 1, .max = 65536, .scope = SCOPE_BENCH_COPY },
	{ .name = "samples", .alias = "testSamples", .short_name = 'i', .type = OPT_INT, .offset = OFF(copy.samples),
	  .metavar = "N", .help = "Timed samples per figure; the median is reported.", .def = OPT_DEF_INT(3), .min = 1,
	  .max = 1000, .scope = SCOPE_BENCH_COPY },
	{ .name = "loop-count", .alias = "loopCount", .type = OPT_INT, .offset = OFF(copy.loop_count), .metavar = "N",
	  .help = "Copies timed in each sample (after 4 untimed warm-up copies).", .def = OPT_DEF_INT(16), .min = 1,
	  .max = 100000, .scope = SCOPE_BENCH_COPY },
	{ .name = "skip-verification", .alias = "skipVerification", .short_name = 's', .type = OPT_FLAG,
	  .offset = OFF(copy.skip_verify),
	  .help = "Do not check the data after the copies (by default every destination must hold its source's "
		  "pattern, as nvbandwidth checks; a difference fails the test and names the copy).",
	  .scope = SCOPE_BENCH_COPY },
	{ .name = "numa", .type = OPT_STRING, .offset = OFF(copy.numa), .metavar = "auto|NODE",
	  .help = "Place pinned host buffers on each GPU's own NUMA node (auto: preferred, another node's memory if "
		  "it runs short), or bind them to NODE for every GPU (to see what the wrong node costs).",
	  .def = OPT_DEF_STR("auto"), .scope = SCOPE_BENCH_COPY, .valid = numa_form },
	{ .name = "devices", .short_name = 'd', .type = OPT_STRING, .offset = OFF(copy.devices), .metavar = "GPUS",
	  .help = "GPUs to measure, by CUDA index (0,2,5), or all.", .def = OPT_DEF_STR("all"),
	  .scope = SCOPE_BENCH_COPY, .valid = devices_form },
	{ .name = "expect-h2d", .type = OPT_DOUBLE, .offset = OFF(copy.expect_h2d), .metavar = "GBPS",
	  .help = "Fail a GPU whose host_to_device_memcpy_ce figure is below GBPS (10^9 bytes/s).",
	  .key = "expect_h2d", .max = 1e6, .scope = SCOPE_BENCH_COPY },
	{ .name = "expect-d2h", .type = OPT_DOUBLE, .offset = OFF(copy.expect_d2h), .metavar = "GBPS",
	  .help = "Fail a GPU whose device_to_host_memcpy_ce figure is below GBPS.", .key = "expect_d2h", .max = 1e6,
	  .scope = SCOPE_BENCH_COPY },
	{ .name = "expect-p2p", .type = OPT_DOUBLE, .offset = OFF(copy.expect_p2p), .metavar = "GBPS",
	  .help = "Fail a GPU pair whose device_to_device_memcpy_read_ce or _write_ce figure is below GBPS.",
	  .key = "expect_p2p", .max = 1e6, .scope = SCOPE_BENCH_COPY },
	{ .name = "pcie-efficiency", .type = OPT_DOUBLE, .offset = OFF(copy.pcie_eff), .metavar = "F",
	  .help = "Share of a PCIe link's encoded rate a large copy is expected to reach (0: 0.88 for Gen1-5, 0.94 "
		  "for Gen6).",
	  .key = "pcie_efficiency", .min = 0, .max = 1, .scope = SCOPE_BENCH_COPY },
	{ .name = "nvlink-efficiency", .type = OPT_DOUBLE, .offset = OFF(copy.nvlink_eff), .metavar = "F",
	  .help = "Share of the NVLinks' rate a large peer copy is expected to reach (0: 0.80).",
	  .key = "nvlink_efficiency", .min = 0, .max = 1, .scope = SCOPE_BENCH_COPY },
};
const struct opt_table copy_opts = OPT_TABLE("copy", copy_rows);

char *copy_opts_check(const struct settings *s)
{
	size_t n;
	const struct copy_test *all = copy_tests(&n);
	for (size_t i = 0; i < s->copy.tests.n; i++) {
		const char *name = s->copy.tests.v[i];
		if (copy_test_find(name))
			continue;
		if (name[0] >= '0' && name[0] <= '9')
			return xasprintf("-t %s: no such test index (0-%zu)", name, n - 1);
		struct str_nearest near = STR_NEAREST_INIT(name);
		for (size_t k = 0; k < n; k++)
			str_nearest_offer(&near, all[k].name);
		if (near.best)
			return xasprintf("-t %s: no such test (did you mean %s?)", name, near.best);
		return xasprintf("-t %s: no such test (nvbandwidth's names, such as host_to_device_memcpy_ce, or "
				 "an index 0-%zu)", name, n - 1);
	}
	return NULL;
}
