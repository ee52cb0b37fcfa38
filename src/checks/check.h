/* How a check is written.
 *
 * A check is a pure function of the inventory and the site's expectations
 * (expect.h): it reads
 * the structs, decides, and adds findings to the report. It never reads
 * files itself and never prints. Its run() returns 0, or -errno when the
 * check itself broke (a bug, not a verdict); the verdict is the findings.
 * Not applicable is a skip with the reason, never a silent pass.
 *
 * Adding a check (STYLE.md practices 3 and 17):
 *   1. src/checks/<area>/<name>.c defines
 *        const struct check_def check_<area>_<name> = {
 *            .id = "<area>.<name>", .section = "...", .summary = "...",
 *            .run = run, };
 *   2. one line in the table in src/checks/registry.c (order = output order);
 *   3. one line in meson.build's check_sources;
 *   4. a unit test of its policy and a fixture that shows it failing.
 * tests/unit/test_registry.c fails if a check file is not registered. */
#ifndef GPUREADY_CHECK_H
#define GPUREADY_CHECK_H

#include "core/report.h"
#include "inventory/inventory.h"
#include "checks/expect.h"
#include "core/strv.h"

struct check_def;

struct check_ctx {
	const struct inventory *inv;
	const struct site_expect *expect;
	struct report *report;
	const struct check_def *def;
};

struct check_def {
	const char *id;       /* "rdma.port_state" */
	const char *section;  /* title it is shown under */
	const char *summary;  /* one line, for `gpuready list-checks` and docs */
	int (*run)(struct check_ctx *c);
	/* Its verdicts depend on the values of NCCL_* variables: while a file
	 * that may set them could not be read (inventory nccl.unreadable),
	 * none of its OK findings is sure, and checks_run() makes each a
	 * warning that names the file (fail closed, docs/adding-a-check.md). */
	bool nccl_vars;
	/* What it cannot run without (NEEDS_*): when missing, checks_run()
	 * adds one skip that names the root cause instead of running it, so
	 * a node without GPUs reads "no NVIDIA GPU on PCI" once per check,
	 * always in the same words. */
	unsigned needs;
	/* An inventory listing (the effective NCCL variables), not a verdict:
	 * its OK findings are info, shown with -v and in JSON, not counted
	 * as passing. */
	bool listing;
};

enum {
	NEEDS_LIVE = 1u << 0,        /* the running system (NVML, CUDA, PyTorch): not a recorded tree */
	NEEDS_GPU = 1u << 1,         /* an NVIDIA GPU on PCI (gpu.pci says when there is none) */
	NEEDS_RDMA_DEVICE = 1u << 2, /* an RDMA device (rdma.devices says when there is none) */
};

/* Adds a finding with this check's id and section. */
struct finding *check_add(struct check_ctx *c, enum status st, const char *subject, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The registry, in output order. */
extern const struct check_def *const check_registry[];
extern const size_t check_registry_n;

/* The checks of one area ("rdma") or all (area NULL), filtered by the
 * --only/--skip globs, run in registry order. Returns 0 or the first
 * check's -errno (the other checks still run). */
/* Which checks run: IDs matching a pattern of only (all when empty) and
 * none of skip. A pattern is a shell glob on the whole ID, or a bare
 * area name ("rdma", no '.' and no glob character) for all its checks. */
struct check_select {
	const struct strv *only, *skip;
};

int checks_run(const char *area, const struct inventory *inv, const struct site_expect *expect,
	       const struct check_select *sel, struct report *rep);

/* True if id is selected by sel's only/skip patterns. */
bool check_selected(const struct check_select *sel, const char *id);

/* A pattern that selects nothing is a usage error, for --only and --skip
 * alike: each of pats must match a check of area (of any area when area
 * is NULL). Returns 0, or -EINVAL with *err (malloc'd) naming `what`
 * ("--only") and the pattern, and where to look: the area that has the
 * checks it matches, or the nearest area or ID and the list of areas. */
int check_patterns_validate(const struct strv *pats, const char *what, const char *area, char **err);

#endif
