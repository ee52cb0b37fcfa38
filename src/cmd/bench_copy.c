/* `gpuready bench copy`: nvbandwidth's copy bandwidth tests on this node
 * (bench/copy/engine.h), each figure against its link's limit (the GPU's
 * PCIe link as sysfs reports it; bench/copy/expect.h), printed as
 * nvbandwidth prints them with a `# ` verdict line after each test, or as
 * JSON (--json; docs/bench-copy.schema.json).
 *
 *   options -> plan -> engine (a child under a deadline per step) ->
 *   results with limits -> output
 *
 * Exit: 0 every verdict passes, 1 a figure is below --expect-h2d /
 * --expect-d2h / --expect-p2p, 2 could not run (no libcuda, no GPU, an
 * allocation, a test that failed or a GPU that stopped answering). */
#define _GNU_SOURCE
#include "cmd.h"
#include "bench/copy/engine.h"
#include "bench/copy/node.h"
#include "config.h"
#include "core/parse.h"
#include "core/root.h"
#include "inventory/inventory.h"
#include "probe/probe.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tests -t names (each once, in the order given), or every one. */
static int plan_tests(const struct settings *s, struct copy_plan *p)
{
	size_t n;
	const struct copy_test *all = copy_tests(&n);
	if (!s->copy.tests.n) {
		for (size_t i = 0; i < n && i < COPY_MAX_TESTS; i++)
			p->tests[p->n_tests++] = &all[i];
		return 0;
	}
	for (size_t i = 0; i < s->copy.tests.n; i++) {
		const struct copy_test *t = copy_test_find(s->copy.tests.v[i]);
		bool dup = false;
		for (int k = 0; k < p->n_tests; k++)
			dup = dup || p->tests[k] == t;
		if (t && !dup && p->n_tests < COPY_MAX_TESTS)
			p->tests[p->n_tests++] = t;
	}
	return 0;
}

/* An --expect-* that no planned test is held to would pass unseen: the
 * tests it applies to, for the usage error (malloc'd), or NULL. */
static char *expect_unplanned(const struct settings *s, const struct copy_plan *p)
{
	static const struct {
		enum copy_expect_kind kind;
		const char *option;
	} opts[] = { { COPY_EXPECT_H2D, "--expect-h2d" }, { COPY_EXPECT_D2H, "--expect-d2h" },
		     { COPY_EXPECT_P2P, "--expect-p2p" } };
	const double given[] = { s->copy.expect_h2d, s->copy.expect_d2h, s->copy.expect_p2p };
	for (size_t k = 0; k < 3; k++) {
		bool planned = false;
		for (int i = 0; i < p->n_tests; i++)
			planned |= p->tests[i]->expect == opts[k].kind;
		if (given[k] <= 0 || planned)
			continue;
		size_t n;
		const struct copy_test *all = copy_tests(&n);
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%s applies to ", opts[k].option);
		for (size_t i = 0, shown = 0; i < n; i++)
			if (all[i].expect == opts[k].kind)
				strbuf_addf(&sb, "%s%s", shown++ ? " and " : "", all[i].name);
		strbuf_adds(&sb, ", which -t does not run: add it, or drop the expectation");
		return strbuf_detach(&sb);
	}
	return NULL;
}

/* -d and --numa (already checked by their options' forms). */
static void plan_devices(const struct settings *s, struct copy_plan *p)
{
	int n;
	p->numa = -1;
	if (s->copy.numa && strcmp(s->copy.numa, "auto") && parse_int(s->copy.numa, 10, &n) == 0)
		p->numa = n;
	if (!s->copy.devices || !strcmp(s->copy.devices, "all"))
		return;
	for (const char *c = s->copy.devices; *c && p->n_devices < COPY_MAX_GPUS;) {
		char num[8] = "";
		size_t len = strcspn(c, ",");
		if (len < sizeof(num)) {
			memcpy(num, c, len);
			num[len] = '\0';
			if (parse_int(num, 10, &n) == 0)
				p->devices[p->n_devices++] = n;
		}
		c += len + (c[len] == ',');
	}
}

struct copy_built {
	struct copy_run run;
	struct copy_gpu gpus[COPY_MAX_GPUS];
	struct copy_limit gpu_limit[COPY_MAX_GPUS];
	struct copy_result results[COPY_MAX_TESTS];
};

/* Each cell's limit: the GPU's PCIe link for the host tests (one
 * direction of it: the measured stream moves one way), the pair's path
 * for the peer tests (node.h; both directions for a Total matrix, all of
 * the GPU's links for all_to_one / one_to_all), none for the local copy
 * and latency. */
static const struct copy_limit *result_limits(const struct settings *s, const struct inventory *inv,
					      const struct copy_test *t, int m, const struct copy_engine_test *et,
					      const struct copy_built *b)
{
	if (t->unit != COPY_UNIT_GBPS || !strcmp(t->name, "device_local_copy") || et->rows * et->cols == 0)
		return NULL;
	struct copy_limit *l = calloc((size_t)(et->rows * et->cols), sizeof(*l));
	for (int r = 0; l && r < et->rows; r++)
		for (int c = 0; c < et->cols && c < b->run.n_gpus; c++) {
			struct copy_limit *x = &l[r * et->cols + c];
			if (!t->peers)
				*x = b->gpu_limit[c];
			else if (t->shape == COPY_SHAPE_ROW)
				copy_peer_limit(inv, b->gpus[c].bdf, NULL, s->copy.pcie_eff, s->copy.nvlink_eff, x);
			else if (r != c)
				copy_peer_limit(inv, b->gpus[r].bdf, b->gpus[c].bdf, s->copy.pcie_eff,
						s->copy.nvlink_eff, x);
			if (t->peers && m == 2)
				copy_limit_both(x, x);
		}
	return l;
}


static void build_run(const struct settings *s, const struct inventory *inv, const struct copy_engine_out *o,
		      struct copy_built *b)
{
	size_t nt;
	const struct copy_test *all = copy_tests(&nt);
	struct copy_run *run = &b->run;

	*run = (struct copy_run){ .version = GPUREADY_VERSION, .host = inv ? inv->kernel.hostname : NULL,
				  .driver = inv ? inv->nvidia.version : NULL, .cuda_driver = o->driver_version,
				  .n_gpus = o->n_gpus, .gpus = b->gpus, .size_mib = (uint64_t)s->copy.size_mib,
				  .loop_count = s->copy.loop_count, .samples = s->copy.samples, .numa = s->copy.numa,
				  .host_buffers = o->host_buffers,
				  .expect = { s->copy.expect_h2d, s->copy.expect_d2h, s->copy.expect_p2p },
				  .n_results = o->n_tests, .results = b->results };
	for (int i = 0; i < o->n_gpus; i++) {
		b->gpus[i] = (struct copy_gpu){ .name = o->gpus[i].name, .bdf = o->gpus[i].bdf,
						.numa_node = o->gpus[i].numa_node, .index_known = true,
						.index = o->gpus[i].ordinal,
						.numa_note = o->gpus[i].numa_note[0] ? o->gpus[i].numa_note : NULL };
		copy_gpu_limit(inv, o->gpus[i].bdf, s->copy.pcie_eff, &b->gpu_limit[i]);
	}
	for (int i = 0; i < o->n_tests; i++) {
		const struct copy_engine_test *et = &o->tests[i];
		const struct copy_test *t = &all[et->index];
		struct copy_result *r = &b->results[i];
		*r = (struct copy_result){ .test = t->name, .status = et->status,
					   .message = et->message[0] ? et->message : NULL, .rows = et->rows,
					   .cols = et->cols };
		for (int m = 0; m < t->n_matrices; m++) {
			r->value[m] = et->value[m];
			r->limit[m] = et->status == COPY_RAN ? result_limits(s, inv, t, m, et, b) : NULL;
		}
	}
}

static void free_run(struct copy_built *b)
{
	for (int i = 0; i < b->run.n_results; i++)
		for (int m = 0; m < COPY_MAX_MATRICES; m++)
			free((void *)b->results[i].limit[m]);
}

static struct inventory *load_inventory(const struct settings *s)
{
	struct root *r = NULL;
	struct inventory *inv = NULL;
	/* NVML (live, in a child under the probes' deadline) counts the
	 * NVLinks of the peer limits */
	struct load_opts lo = { .parts = INV_GPU | INV_LIVE_NVML, .live = probe_live };
	if (root_open(s->sysroot ? s->sysroot : "/", &r) < 0)
		return NULL;
	if (inventory_load(r, &lo, &inv) < 0)
		inv = NULL;
	root_free(r);
	return inv;
}

static int output(const struct settings *s, const struct copy_run *run)
{
	const char *res = copy_run_result(run);
	if (s->json) {
		json_object *j = copy_json(run);
		puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
	} else {
		copy_print_text(stdout, run);
	}
	fflush(stdout);
	return !strcmp(res, "fail") ? EXIT_CHECK_FAILED : !strcmp(res, "error") ? EXIT_TOOL_ERROR : EXIT_OK;
}

/* -l: nvbandwidth -l's index and name, then what the test measures. */
static int list_tests(void)
{
	size_t n;
	const struct copy_test *t = copy_tests(&n);
	for (size_t i = 0; i < n; i++)
		printf("%zu, %s:\n\t%s\n\n", i, t[i].name, t[i].summary);
	return EXIT_OK;
}

/* --json when nothing could be measured: every planned test an error
 * carrying the reason, so that the document still says why (result
 * "error"). */
static void failed_json(const struct settings *s, const struct inventory *inv, const struct copy_plan *p,
			struct copy_engine_out *o, struct copy_built *b)
{
	o->n_gpus = 0;
	o->n_tests = p->n_tests;
	for (int i = 0; i < p->n_tests; i++) {
		memset(&o->tests[i], 0, sizeof(o->tests[i]));
		o->tests[i].index = copy_test_index(p->tests[i]);
		o->tests[i].status = COPY_ERROR;
		snprintf(o->tests[i].message, sizeof(o->tests[i].message), "%.*s",
			 (int)sizeof(o->tests[i].message) - 1, o->error);
	}
	build_run(s, inv, o, b);
	output(s, &b->run);
}

int cmd_bench_copy(struct cmd_env *env)
{
	const struct settings *s = env->set;
	if (s->copy.list)
		return list_tests();
	char *bad = copy_opts_check(s);
	if (bad) {
		fprintf(stderr, "gpuready bench copy: %s\n", bad);
		free(bad);
		return EXIT_TOOL_ERROR;
	}
	struct copy_plan *p = calloc(1, sizeof(*p));
	struct copy_engine_out *o = calloc(1, sizeof(*o));
	struct copy_built *b = calloc(1, sizeof(*b));
	struct inventory *inv = load_inventory(s);
	int code = EXIT_TOOL_ERROR;
	if (!p || !o || !b) {
		fprintf(stderr, "gpuready bench copy: out of memory\n");
		goto out;
	}
	p->size_mib = (uint64_t)s->copy.size_mib;
	p->loop_count = s->copy.loop_count;
	p->verify = !s->copy.skip_verify;
	p->samples = s->copy.samples;
	plan_tests(s, p);
	if ((bad = expect_unplanned(s, p))) {
		fprintf(stderr, "gpuready bench copy: %s\n", bad);
		free(bad);
		goto out;
	}
	plan_devices(s, p);
	copy_plan_nodes(inv, p);
	if (copy_engine_run(p, o) < 0) {
		fprintf(stderr, "gpuready bench copy: %s\n", o->error);
		if (s->json)
			failed_json(s, inv, p, o, b);
		goto out;
	}
	build_run(s, inv, o, b);
	code = output(s, &b->run);
	free_run(b);
out:
	inventory_free(inv);
	free(p);
	free(o);
	free(b);
	return code;
}
