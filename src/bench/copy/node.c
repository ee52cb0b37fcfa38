/* bench copy and this node (node.h). */
#define _GNU_SOURCE
#include "bench/copy/node.h"
#include "core/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void copy_plan_nodes(const struct inventory *inv, struct copy_plan *p)
{
	for (size_t i = 0; inv && i < inv->pci.n; i++) {
		const struct pci_dev *d = &inv->pci.v[i];
		if (d->vendor != 0x10de || (d->class_code >> 16) != 0x03 || !d->bdf)
			continue;
		if (p->n_nodes >= (int)(sizeof(p->node_of) / sizeof(p->node_of[0])))
			break;
		snprintf(p->node_bdf[p->n_nodes], sizeof(p->node_bdf[0]), "%s", d->bdf);
		p->node_of[p->n_nodes++] = d->numa_node;
	}
}

void copy_gpu_limit(const struct inventory *inv, const char *bdf, double pcie_eff, struct copy_limit *l)
{
	const struct pci_dev *d = inv ? pci_find(&inv->pci, bdf) : NULL;
	if (!d) {
		memset(l, 0, sizeof(*l));
		snprintf(l->label, sizeof(l->label), "no PCIe link known: %s is not in /sys/bus/pci/devices", bdf);
		return;
	}
	double gts = d->max_speed > 0 ? d->max_speed : d->cur_speed;
	int width = d->max_width > 0 ? d->max_width : d->cur_width;
	const struct pci_dev *up = d->upstream.n ? pci_find(&inv->pci, d->upstream.v[d->upstream.n - 1]) : NULL;
	if (up && up->max_speed > 0 && up->max_speed < gts)
		gts = up->max_speed;
	if (up && up->max_width > 0 && up->max_width < width)
		width = up->max_width;
	if (copy_expect_pcie(gts, width, pcie_eff, l) < 0)
		return;
	int now = copy_pcie_gen(d->cur_speed);
	if (now && (now != l->gen || d->cur_width != width)) {
		size_t len = strlen(l->label);
		snprintf(l->label + len, sizeof(l->label) - len, " (link now Gen%d x%d)", now, d->cur_width);
	}
}

static void copy_bw_fill(const struct inventory *inv, const struct copy_engine_out *o, struct copy_bw_info *bw)
{
	bw->v = calloc((size_t)o->n_gpus, sizeof(*bw->v));
	if (!bw->v) {
		bw->error = xstrdup("out of memory");
		return;
	}
	bw->n = (size_t)o->n_gpus;
	for (int i = 0; i < o->n_gpus; i++) {
		struct copy_bw_gpu *g = &bw->v[i];
		struct copy_limit l;
		snprintf(g->bdf, sizeof(g->bdf), "%s", o->gpus[i].bdf);
		g->ordinal = o->gpus[i].ordinal;
		copy_gpu_limit(inv, g->bdf, 0, &l);
		g->expected = l.known ? l.expected_gbps : 0;
		snprintf(g->limit, sizeof(g->limit), "%s", l.label);
		g->h2d = o->n_tests > 0 ? o->tests[0].value[0][i] : NAN;
		g->d2h = o->n_tests > 1 ? o->tests[1].value[0][i] : NAN;
		for (int t = 0; t < o->n_tests && !g->err[0]; t++)
			if (o->tests[t].status != COPY_RAN)
				snprintf(g->err, sizeof(g->err), "%s", o->tests[t].message);
	}
}

void copy_bw_measure(const struct inventory *inv, struct copy_bw_info **out)
{
	struct copy_plan *p = calloc(1, sizeof(*p));
	struct copy_engine_out *o = calloc(1, sizeof(*o));
	struct copy_bw_info *bw = calloc(1, sizeof(*bw));

	*out = bw;
	if (!p || !o || !bw) {
		if (bw)
			bw->error = xstrdup("out of memory");
		goto out;
	}
	bw->size_mib = COPY_CHECK_MIB;
	p->tests[p->n_tests++] = copy_test_find("host_to_device_memcpy_ce");
	p->tests[p->n_tests++] = copy_test_find("device_to_host_memcpy_ce");
	p->size_mib = COPY_CHECK_MIB;
	p->loop_count = 16;
	p->samples = 3;
	p->numa = -1;
	copy_plan_nodes(inv, p);
	if (copy_engine_run(p, o) < 0)
		bw->error = xstrdup(o->error);
	else
		copy_bw_fill(inv, o, bw);
out:
	free(p);
	free(o);
}
