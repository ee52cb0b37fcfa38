/* bench copy and this node (node.h). */
#define _GNU_SOURCE
#include "bench/copy/node.h"
#include "core/strbuf.h"
#include "inventory/nvlink_rec.h"
#include "lib/nvml_api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

static const struct nvml_gpu *nvml_gpu_of(const struct inventory *inv, const char *bdf)
{
	for (size_t i = 0; inv->nvml && inv->nvml->loaded && i < inv->nvml->n; i++)
		if (!strcasecmp(inv->nvml->v[i].bdf, bdf))
			return &inv->nvml->v[i];
	return NULL;
}

/* The GPU at bdf as NVML counts its NVLinks: NVML's answer on the live
 * machine, else a recorded tree's .gpuready/nvlink with the driver's model
 * name (/proc/driver/nvidia/gpus); false when neither has it. */
static bool peer_gpu(const struct inventory *inv, const char *bdf, struct nvml_gpu *out)
{
	const struct nvml_gpu *g = nvml_gpu_of(inv, bdf);
	const struct nvlink_rec *r = g ? NULL : nvlink_rec_find(&inv->nvlink_rec, bdf);
	if (g)
		*out = *g;
	if (!r)
		return g != NULL;
	memset(out, 0, sizeof(*out));
	snprintf(out->bdf, sizeof(out->bdf), "%s", r->bdf);
	out->nvlink_links = r->links;
	out->nvlink_down = r->down;
	out->nvlink_version = r->version;
	for (size_t i = 0; i < inv->nvidia.n_gpus; i++)
		if (inv->nvidia.gpus[i].bdf && inv->nvidia.gpus[i].model && !strcasecmp(inv->nvidia.gpus[i].bdf, bdf))
			snprintf(out->name, sizeof(out->name), "%s", inv->nvidia.gpus[i].model);
	return true;
}

/* The NVLink generation of a GPU by its name; 0 unknown. */
static int nvlink_gen(const char *name)
{
	static const struct { const char *part; int gen; } gens[] = {
		{ "V100", 2 }, { "A100", 3 }, { "A800", 3 }, { "H100", 4 }, { "H200", 4 }, { "H800", 4 }, { "H20", 4 },
		{ "B100", 5 }, { "B200", 5 }, { "B300", 5 }, { "GB200", 5 }, { "GB300", 5 },
	};
	for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
		if (strstr(name, gens[i].part))
			return gens[i].gen;
	return 0;
}

/* The NVLink generation of a GPU: from its name where the name says
 * (exact product families), else from NVML's answer where that is one of
 * the values whose meaning is known (lib/nvml_api.h); *from says which,
 * for the limit's label. 0 unknown. */
static int nvlink_gen_of(const struct nvml_gpu *g, const char **from)
{
	int by_name = nvlink_gen(g->name);
	*from = by_name || g->nvlink_version <= 0 ? "name" : "NVML";
	return by_name ? by_name : g->nvlink_version > 0 ? nvml_nvlink_gen((unsigned)g->nvlink_version) : 0;
}

static bool has_nvswitch(const struct inventory *inv)
{
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *d = &inv->pci.v[i];
		if ((d->vendor == 0x10de && (d->class_code >> 8) == 0x0680) || d->nvswitch_mgmt)
			return true;
	}
	return false;
}

static void unknown_limit(struct copy_limit *l, const char *why)
{
	memset(l, 0, sizeof(*l));
	snprintf(l->label, sizeof(l->label), "%s", why);
}

void copy_peer_limit(const struct inventory *inv, const char *a, const char *b, double pcie_eff, double nvlink_eff,
		     struct copy_limit *l)
{
	struct nvml_gpu na, nb;
	const struct nvml_gpu *ga = inv && peer_gpu(inv, a, &na) ? &na : NULL,
			      *gb = inv && b && peer_gpu(inv, b, &nb) ? &nb : NULL;
	if (!ga || (b && !gb)) {
		unknown_limit(l, "the NVLinks are not known (NVML did not list the GPUs; a tree: .gpuready/nvlink)");
		return;
	}
	int la = ga->nvlink_links - ga->nvlink_down, lb = gb ? gb->nvlink_links - gb->nvlink_down : la;
	const char *from_a, *from_b;
	int links = la < lb ? la : lb, gen = nvlink_gen_of(ga, &from_a), gen_b = gb ? nvlink_gen_of(gb, &from_b) : gen;
	if (links <= 0 && b) {
		struct copy_limit pb;
		copy_gpu_limit(inv, a, pcie_eff, l);
		copy_gpu_limit(inv, b, pcie_eff, &pb);
		copy_limit_slower(l, &pb, l);
		return;
	}
	if (links <= 0)
		unknown_limit(l, "no active NVLink: the GPU's peer copies go over PCIe");
	else if (!gen || !gen_b)
		unknown_limit(l, "the GPUs' NVLink generation is not known (not from NVML, nor from their names)");
	else if (gen_b != gen)
		unknown_limit(l, "the GPUs' NVLink generations differ");
	else if (!has_nvswitch(inv))
		unknown_limit(l, "no NVSwitch: how many NVLinks join this pair is not known");
	else if (copy_expect_nvlink(gen, links, nvlink_eff, l) == 0) {
		/* which source gave the generation: NVML's answer, or the name */
		const char *fb = gb ? from_b : from_a;
		bool nvml = !strcmp(from_a, "NVML") && !strcmp(fb, "NVML"), name = !nvml && !strcmp(from_a, fb);
		size_t len = strlen(l->label);
		snprintf(l->label + len, sizeof(l->label) - len, "%s",
			 nvml ? " (generation from NVML)"
			 : name ? " (generation from the GPU name)"
				: " (generation from the GPU name and NVML)");
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
		for (int t = 0; t < o->n_tests && !g->err[0]; t++) {
			const struct copy_engine_test *et = &o->tests[t];
			/* a failed data check leaves only the failing GPUs' cells empty */
			if (et->status == COPY_RAN || (et->status == COPY_BAD_DATA && !isnan(et->value[0][i])))
				continue;
			g->bad_data = et->status == COPY_BAD_DATA;
			if (g->bad_data && et->row_note[i][0]) /* this GPU's own copy */
				snprintf(g->err, sizeof(g->err), "the data check failed: %s", et->row_note[i]);
			else
				snprintf(g->err, sizeof(g->err), "%s", et->message);
		}
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
	p->verify = true;
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
