/* `gpuready cluster nccl`: the stages' groups, the groups' bus bandwidths
 * and the output (ncclsplit.h, docs/cluster.md "cluster nccl"). */
#include "cluster/ncclsplit.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/report.h"
#include "core/strbuf.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *ncs_stage_name(enum ncs_stage s)
{
	static const char *const names[] = { "all", "halves", "pairs", "recheck" };
	return (unsigned)s < 4 ? names[s] : "?";
}

void ncs_colors_all(int n, int *color)
{
	for (int i = 0; i < n; i++)
		color[i] = 0;
}

int ncs_colors_halves(int n, int *color)
{
	for (int i = 0; i < n; i++)
		color[i] = n < 4 ? -1 : i < n / 2 ? 0 : 1;
	return n < 4 ? 0 : 2;
}

void ncs_colors_pairs(int n, const struct sched_pair *p, size_t np, int *color)
{
	for (int i = 0; i < n; i++)
		color[i] = -1;
	for (size_t k = 0; k < np; k++)
		if (p[k].a >= 0 && p[k].a < n && p[k].b >= 0 && p[k].b < n && p[k].a != p[k].b)
			color[p[k].a] = color[p[k].b] = (int)k;
}

/* One group from its members' parts: each must have been in a group of
 * the ranks rank 0 put there (a rank in another's group is caught here). */
static void collect_one(struct ncs_group *x, int c, const int *color, int n, int local, const struct ncs_part *parts,
			const struct links_node *nodes)
{
	for (int i = 0; i < n; i++)
		x->nodes += color[i] == c;
	x->ranks = x->nodes * local;
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	x->a = x->b = -1;
	for (int i = 0; i < n; i++) {
		if (color[i] != c)
			continue;
		const struct ncs_part *p = &parts[i];
		if (x->a < 0)
			x->a = i;
		x->b = i;
		char err[sizeof(p->err)];
		memcpy(err, p->err, sizeof(err));
		err[sizeof(err) - 1] = 0;
		str_printable(err, false); /* another rank's text, for a terminal */
		if (p->color != c)
			strbuf_addf(&why, "%s%s reported group %d, not %d", why.len ? "; " : "", nodes[i].name,
				    (int)p->color, c);
		else if (!p->failed && p->ranks != x->ranks)
			strbuf_addf(&why, "%s%s was in a group of %d ranks, not %d", why.len ? "; " : "", nodes[i].name,
				    (int)p->ranks, x->ranks);
		else if (p->failed || !(p->seconds > 0) || !isfinite(p->seconds))
			strbuf_addf(&why, "%s%s: %s", why.len ? "; " : "", nodes[i].name,
				    p->failed && err[0] ? err : "no time measured");
		else if (p->seconds > x->seconds)
			x->seconds = p->seconds;
		if (isfinite(p->wrong) && p->wrong > 0) /* a rank checks at most 3 x 16 Ki elements per GPU */
			x->wrong += p->wrong < 1e9 ? (int64_t)p->wrong : 1000000000;
	}
	if (why.len)
		x->err = utf8_clean(why.buf);
}

void ncs_collect(enum ncs_stage st, int round, const int *color, int n, int local, uint64_t bytes,
		 const struct ncs_part *parts, const struct links_node *nodes, struct ncs_group **g, size_t *ng)
{
	for (int c = 0; c < n; c++) {
		bool any = false;
		for (int i = 0; i < n && !any; i++)
			any = color[i] == c;
		if (!any)
			continue;
		*g = links_grow(*g, *ng, sizeof(**g));
		struct ncs_group *x = &(*g)[(*ng)++];
		*x = (struct ncs_group){ .stage = st, .round = round };
		collect_one(x, c, color, n, local, parts, nodes);
		double r = x->ranks;
		x->busbw = x->err || x->ranks < 2 ? -1 : (double)bytes / x->seconds / 1e9 * 2.0 * (r - 1) / r;
	}
}

void ncs_groups_free(struct ncs_group *g, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		free(g[i].err);
	free(g);
}

void ncs_pairs_meas(const struct ncs_group *g, size_t ng, enum ncs_stage st, int pass, struct links_meas **m,
		    size_t *nm)
{
	for (size_t i = 0; i < ng; i++) {
		if (g[i].stage != st || g[i].nodes != 2)
			continue;
		for (int d = 0; d < 2; d++) {
			*m = links_grow(*m, *nm, sizeof(**m));
			(*m)[(*nm)++] = (struct links_meas){ .from = d ? g[i].b : g[i].a, .to = d ? g[i].a : g[i].b,
							     .pass = pass, .gbps = g[i].busbw, .err = g[i].err };
		}
	}
}

static const struct ncs_group *all_group(const struct ncs_report *r)
{
	for (size_t i = 0; i < r->ng; i++)
		if (r->g[i].stage == NCS_ALL)
			return &r->g[i];
	return NULL;
}

int ncs_exit_code(const struct ncs_report *r)
{
	const struct ncs_group *all = all_group(r);
	if (!all || all->busbw < 0 || (r->expect > 0 && all->busbw < r->expect) || r->nv)
		return 1;
	for (size_t i = 0; i < r->ng; i++)
		if (r->g[i].busbw < 0 || r->g[i].wrong)
			return 1;
	return 0;
}

/* ---- text ---- */

static double pct_of(double x, double median)
{
	return median > 0 ? 100.0 * x / median : 0;
}

static void text_group(const struct ncs_report *r, const struct ncs_group *x, FILE *f)
{
	const char *a = r->nodes[x->a].name, *b = r->nodes[x->b].name;
	char who[200];
	if (x->stage == NCS_ALL)
		snprintf(who, sizeof(who), "all %d nodes", x->nodes);
	else if (x->stage == NCS_HALVES)
		snprintf(who, sizeof(who), "%s..%s (%d nodes)", a, b, x->nodes);
	else
		snprintf(who, sizeof(who), "%s - %s", a, b);
	fprintf(f, "  %-8s %-40s ", x->stage == NCS_ALL ? "" : ncs_stage_name(x->stage), who);
	if (x->busbw < 0) {
		fprintf(f, "not measured: %s\n", x->err ? x->err : "no result");
		return;
	}
	fprintf(f, "busbw %9.3f GB/s  %10.1f us", x->busbw, x->seconds * 1e6);
	if (x->wrong)
		fprintf(f, "  %lld elements wrong", (long long)x->wrong);
	if (x->stage == NCS_ALL && r->expect > 0)
		fprintf(f, "  %s the expected %.3f", x->busbw < r->expect ? "below" : "meets", r->expect);
	else if (x->nodes == 2 && r->st && r->st->n && links_is_slow(r->st, x->busbw))
		fprintf(f, "  slow (%.0f%% of the median)", pct_of(x->busbw, r->st->median));
	fputc('\n', f);
}

/* What to check next: gpuready's checks on the node, then cluster links'
 * hint (its interface's counters and transceiver, or the routes). With
 * NCCL that interface is the one towards rank 0, not NCCL's NICs: the
 * RDMA checks then, and the fabric between the nodes. */
static char *ncs_hint(const struct ncs_report *r, const struct links_verdict *v)
{
	const char *a = r->nodes[v->a].name, *b = v->b >= 0 ? r->nodes[v->b].name : NULL;
	if (!strcmp(r->backend, "nccl") && b && v->kind != LINKS_FAILED)
		return xasprintf("on %s and on %s: `gpuready rdma` (each RDMA port's state, rate, errors and settings); "
				 "then the switch ports and the routing (adaptive routing, ECMP) between them", a, b);
	if (!strcmp(r->backend, "nccl"))
		return xasprintf("on %s: `gpuready check` (its GPUs, NICs and NCCL settings), `gpuready rdma` (each RDMA "
				 "port's state, rate, errors and settings); then `gpuready cluster links` with known-good "
				 "nodes, and its NICs' cables and transceivers", a);
	struct links_report lr = { .n = r->n, .nodes = r->nodes };
	_cleanup_free_ char *hint = links_hint(&lr, v);
	const char *name = r->nodes[v->a].name, *rest = hint;
	size_t n = strlen(name);
	if (!strncmp(rest, "on ", 3) && !strncmp(rest + 3, name, n) && !strncmp(rest + 3 + n, ": ", 2))
		rest += 5 + n;
	return xasprintf("on %s: `gpuready check` (its GPUs, NICs and NCCL settings), %s", name, rest);
}

static void text_verdict(const struct ncs_report *r, const struct links_verdict *v, FILE *f)
{
	const struct links_stats *st = r->st;
	const char *a = r->nodes[v->a].name, *b = v->b >= 0 ? r->nodes[v->b].name : NULL;
	if (v->kind == LINKS_FAILED) {
		fprintf(f, "  failed pair %s - %s: %s\n", a, b, v->err ? v->err : "not measured");
		return;
	}
	if (!b) {
		fprintf(f, "  %s: %s: busbw %.3f GB/s in its pairs (their median, %.0f%% of all pairs' %.3f GB/s)",
			v->kind == LINKS_BAD_NODE ? "bad node or its cable" : v->kind == LINKS_INTERMITTENT ? "intermittent node" : "slow node, unclassified",
			a, v->ab, pct_of(v->ab, st->median), st->median);
		if (v->good_n)
			fprintf(f, "; with %d known-good node%s it was slow with %d (%.3f-%.3f GB/s)", v->good_n,
				v->good_n == 1 ? "" : "s", v->good_slow, v->good_min, v->good_max);
		else
			fputs("; no known-good node to compare it with", f);
	} else {
		fprintf(f, "  %s between %s and %s: busbw %.3f GB/s (%.0f%% of the median)",
			v->kind == LINKS_BAD_PATH ? "bad path" : v->kind == LINKS_INTERMITTENT ? "intermittent path" : "slow path, unclassified",
			a, b, v->ab, pct_of(v->ab, st->median));
		if (!isnan(v->re_ab))
			fprintf(f, "; measured again: %.3f GB/s", v->re_ab);
		if (v->kind == LINKS_BAD_PATH)
			fputs("; both are at full rate with known-good nodes: slow only together", f);
	}
	_cleanup_free_ char *hint = ncs_hint(r, v);
	fprintf(f, "\n    next: %s\n", hint);
}

int ncs_write_text(const struct ncs_report *r, FILE *f)
{
	char ranks[48];
	if (!strcmp(r->backend, "nccl"))
		snprintf(ranks, sizeof(ranks), " x %d GPU%s", r->local, r->local == 1 ? "" : "s");
	else
		snprintf(ranks, sizeof(ranks), ", host memory");
	fprintf(f, "gpuready cluster nccl: %d nodes%s, all_reduce (float, sum) of %llu bytes, %d iterations, %s backend "
		   "(%s)\n",
		r->n, ranks, (unsigned long long)r->bytes, r->iters, r->backend,
		r->library && r->library[0] ? r->library : "version unknown");
	for (size_t i = 0; i < r->ng; i++)
		if (r->g[i].stage <= NCS_HALVES || r->g[i].busbw < 0 || r->g[i].wrong ||
		    (r->st && r->st->n && links_is_slow(r->st, r->g[i].busbw)))
			text_group(r, &r->g[i], f);
	size_t pairs[4] = { 0 };
	for (size_t i = 0; i < r->ng; i++)
		pairs[r->g[i].stage]++;
	if (r->split && r->st && !r->st->n)
		fprintf(f, "  pairs: %zu, none measured\n", pairs[NCS_PAIRS]);
	else if (r->split && r->st)
		fprintf(f, "  pairs: %zu%s; median busbw %.3f GB/s, slow below %.3f GB/s%s; %zu measured again with "
			   "known-good nodes\n",
			pairs[NCS_PAIRS], strcmp(r->backend, "nccl") ? "" : ", NCCL's ring algorithm", r->st->median,
			r->st->threshold, r->expect > 0 ? " and the expectation" : "", pairs[NCS_RECHECK]);
	else if (!r->split)
		fputs("  the all-node bus bandwidth meets the expectation: no split\n", f);
	if (r->nv) {
		fputs("\nVerdicts:\n", f);
		for (size_t i = 0; i < r->nv; i++)
			text_verdict(r, &r->v[i], f);
	} else if (r->split) {
		fputs("\nNo slow node and no slow pair", f);
		fputs(r->expect > 0 && all_group(r) && all_group(r)->busbw < r->expect
			      ? ": every pair is alike, so the fabric as a whole or the expectation is off\n"
			      : ".\n",
		      f);
	}
	fprintf(f, "\nResult: %s (%.1f s)\n", ncs_exit_code(r) ? "FAIL" : "PASS", r->elapsed);
	return ferror(f) ? -1 : 0;
}

/* ---- JSON (docs/cluster.md, "cluster nccl") ---- */

static json_object *jnum(double x)
{
	return isfinite(x) && x >= 0 ? json_object_new_double(x) : NULL;
}

static json_object *json_group(const struct ncs_report *r, const struct ncs_group *x)
{
	json_object *o = json_object_new_object(), *nodes = json_object_new_array();
	json_object_object_add(o, "stage", json_object_new_string(ncs_stage_name(x->stage)));
	if (x->stage >= NCS_PAIRS)
		json_object_object_add(o, "round", json_object_new_int(x->round + 1));
	if (x->stage == NCS_ALL || x->stage == NCS_HALVES) {
		json_object_object_add(o, "first", utf8_json_string(r->nodes[x->a].name));
		json_object_object_add(o, "last", utf8_json_string(r->nodes[x->b].name));
	} else {
		json_object_array_add(nodes, utf8_json_string(r->nodes[x->a].name));
		json_object_array_add(nodes, utf8_json_string(r->nodes[x->b].name));
	}
	if (x->stage >= NCS_PAIRS)
		json_object_object_add(o, "nodes", nodes);
	else
		json_object_put(nodes);
	json_object_object_add(o, "node_count", json_object_new_int(x->nodes));
	json_object_object_add(o, "ranks", json_object_new_int(x->ranks));
	json_object_object_add(o, "time_us", x->busbw < 0 ? NULL : jnum(x->seconds * 1e6));
	json_object_object_add(o, "busbw", jnum(x->busbw));
	json_object_object_add(o, "wrong", json_object_new_int64(x->wrong));
	json_object_object_add(o, "slow", json_object_new_boolean(x->nodes == 2 && r->st && r->st->n && x->busbw >= 0 &&
								   links_is_slow(r->st, x->busbw)));
	json_object_object_add(o, "error", x->err ? utf8_json_string(x->err) : NULL);
	return o;
}

static json_object *json_verdict(const struct ncs_report *r, const struct links_verdict *v)
{
	json_object *o = json_object_new_object(), *nodes = json_object_new_array();
	json_object_object_add(o, "kind", json_object_new_string(links_kind_name(v->kind)));
	json_object_array_add(nodes, utf8_json_string(r->nodes[v->a].name));
	if (v->b >= 0)
		json_object_array_add(nodes, utf8_json_string(r->nodes[v->b].name));
	json_object_object_add(o, "nodes", nodes);
	json_object_object_add(o, "busbw", jnum(v->ab));
	if (v->b < 0 && v->kind != LINKS_FAILED) {
		json_object_object_add(o, "good_partners", json_object_new_int(v->good_n));
		json_object_object_add(o, "good_slow", json_object_new_int(v->good_slow));
	}
	if (v->b >= 0 && v->kind != LINKS_FAILED)
		json_object_object_add(o, "busbw_again", jnum(v->re_ab));
	if (v->kind == LINKS_FAILED)
		json_object_object_add(o, "error", utf8_json_string(v->err ? v->err : "not measured"));
	_cleanup_free_ char *next = ncs_hint(r, v);
	json_object_object_add(o, "hint", utf8_json_string(next));
	return o;
}

int ncs_write_json(const struct ncs_report *r, FILE *f)
{
	json_object *o = json_object_new_object(), *nodes = json_object_new_array(), *g = json_object_new_array(),
		    *v = json_object_new_array();
	for (int i = 0; i < r->n; i++)
		json_object_array_add(nodes, utf8_json_string(r->nodes[i].name));
	for (size_t i = 0; i < r->ng; i++)
		json_object_array_add(g, json_group(r, &r->g[i]));
	for (size_t i = 0; i < r->nv; i++)
		json_object_array_add(v, json_verdict(r, &r->v[i]));
	json_object_object_add(o, "schema_version", json_object_new_int(1));
	json_object_object_add(o, "nodes", nodes);
	json_object_object_add(o, "gpus_per_node", json_object_new_int(r->local));
	json_object_object_add(o, "backend", json_object_new_string(r->backend));
	json_object_object_add(o, "library", utf8_json_string(r->library ? r->library : ""));
	json_object_object_add(o, "collective", json_object_new_string("all_reduce"));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)r->bytes));
	json_object_object_add(o, "iters", json_object_new_int(r->iters));
	json_object_object_add(o, "expect_busbw", r->expect > 0 ? json_object_new_double(r->expect) : NULL);
	json_object_object_add(o, "split", json_object_new_boolean(r->split));
	if (r->split && r->st) {
		json_object *s = json_object_new_object();
		json_object_object_add(s, "median", jnum(r->st->median));
		json_object_object_add(s, "mad", jnum(r->st->mad));
		json_object_object_add(s, "threshold", jnum(r->st->threshold));
		json_object_object_add(o, "pairs", s);
	}
	json_object_object_add(o, "groups", g);
	json_object_object_add(o, "verdicts", v);
	json_object_object_add(o, "elapsed_s", json_object_new_double(r->elapsed));
	json_object_object_add(o, "result", json_object_new_string(ncs_exit_code(r) ? "fail" : "pass"));
	fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return ferror(f) ? -1 : 0;
}
