/* gpu.copy_bandwidth: each GPU's host<->GPU copy bandwidth against its
 * PCIe link (live, opt-in: `gpuready check --bench` measures it with bench
 * copy's engine, nvbandwidth's host_to_device_memcpy_ce and
 * device_to_host_memcpy_ce, and the command puts the figures in the
 * inventory; src/bench/copy/node.h). Without --bench, or on a recorded
 * tree, the check is skipped, so `check` stays fast.
 *
 * The expected figure is the link's encoded rate x 0.88 (bench/copy/
 * expect.h, with its sources: public H100 Gen5 x16 figures reach 0.90-0.91
 * of 63.02 GB/s, nvbandwidth issue #6; Gen4 x16 0.80-0.86 of 31.51 GB/s,
 * the nvbandwidth README and issues #15 and #42), so a healthy GPU lands at
 * about 0.9-1.05 of it. A link trained to half its width or speed, or host
 * memory behind a busy or remote socket, lands at half or less (nvbandwidth
 * issue #6: one H100 at 14.2 GB/s beside three at 57): below 0.5 of the
 * expected figure fails, below 0.75 warns (short of what every public
 * healthy figure reaches). A figure with no known limit is skipped, not
 * passed: the verdict needs the limit. A run that could not measure warns
 * with its reason, unless no NVIDIA GPU is on PCI (then there is nothing to
 * measure: skip). A copy whose destination did not hold its source's data
 * afterwards (the data check nvbandwidth also makes) fails: the path
 * corrupts data, whatever its speed. */
#include "checks/check.h"
#include "common.h"
#include "inventory/copy_bw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define WARN_SHARE 0.75
#define FAIL_SHARE 0.5

static void judge(struct check_ctx *c, const struct copy_bw_gpu *g, unsigned mib)
{
	struct finding *f;
	if (g->bad_data) {
		f = check_add(c, STATUS_FAIL, g->bdf, "GPU %d: a copy changed the data it moved: %s", g->ordinal, g->err);
		finding_hint(f, "look for PCIe errors with `lspci -vv -s %s` (DevSta, the AER status) and repeat with "
			     "`gpuready bench copy -d %d -t 0,1`",
			     g->bdf, g->ordinal);
		return;
	}
	if (g->err[0] || isnan(g->h2d) || isnan(g->d2h)) {
		f = check_add(c, STATUS_WARN, g->bdf, "GPU %d: copy bandwidth not measured: %s", g->ordinal,
			      g->err[0] ? g->err : "no figure");
		finding_hint(f, "run `gpuready bench copy -d %d -t 0,1` to see the failing call", g->ordinal);
		return;
	}
	if (!(g->expected > 0)) {
		check_add(c, STATUS_SKIP, g->bdf, "GPU %d: host to device %.1f GB/s, device to host %.1f GB/s; no limit to "
			  "judge them against (%s)", g->ordinal, g->h2d, g->d2h, g->limit);
		return;
	}
	double low = g->h2d < g->d2h ? g->h2d : g->d2h;
	const char *dir = g->h2d < g->d2h ? "host to device" : "device to host";
	double share = low / g->expected;
	enum status st = share < FAIL_SHARE ? STATUS_FAIL : share < WARN_SHARE ? STATUS_WARN : STATUS_OK;
	f = check_add(c, st, g->bdf, "GPU %d: host to device %.1f GB/s, device to host %.1f GB/s (%u MiB copies); %s is "
		      "%.0f%% of the %.1f GB/s a healthy %s reaches%s", g->ordinal, g->h2d, g->d2h, mib, dir, share * 100,
		      g->expected, g->limit,
		      c->inv->live ? "" : " (measured on the machine running gpuready, judged against the tree's link: "
					  "a test hook)");
	if (st != STATUS_OK)
		finding_hint(f, "compare the link with `lspci -vv -s %s` (LnkSta against LnkCap) and measure again with "
			     "`gpuready bench copy -d %d -t 0,1` (its --numa option shows what another node's memory gives)",
			     g->bdf, g->ordinal);
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct copy_bw_info *bw = inv->copy_bw;
	/* Not NEEDS_LIVE: bw is there only when the command measured, live or,
	 * in tests, on a tree (cluster/testhook.h, GPUREADY_TEST_BENCH_TREE);
	 * a tree without it is skipped in NEEDS_LIVE's words (check.c). */
	if (!inv->live && !bw) {
		check_add(c, STATUS_SKIP, "gpu", "needs the live machine: a recorded tree cannot be queried");
		return 0;
	}
	if (!bw) {
		check_add(c, STATUS_SKIP, "copy", "not measured: `gpuready check --bench` measures each GPU's host copies");
		return 0;
	}
	const struct pci_dev **gpus = NULL;
	size_t ng = topo_gpus(inv, &gpus);
	free(gpus);
	if (bw->error && ng == 0) {
		check_add(c, STATUS_SKIP, "copy", "no NVIDIA GPU on PCI: nothing to measure (%s)", bw->error);
		return 0;
	}
	if (bw->error) {
		struct finding *f = check_add(c, STATUS_WARN, "copy", "copy bandwidth could not be measured: %s", bw->error);
		finding_hint(f, "run `gpuready bench copy -t 0,1` for the whole error");
		return 0;
	}
	for (size_t i = 0; i < bw->n; i++)
		judge(c, &bw->v[i], bw->size_mib);
	return 0;
}

const struct check_def check_gpu_copy_bandwidth = {
	.id = "gpu.copy_bandwidth",
	.section = "Copy bandwidth (live, --bench)",
	.summary = "live with --bench: each GPU's host<->GPU copy bandwidth reaches its PCIe link's expected rate",
	.run = run,
};
