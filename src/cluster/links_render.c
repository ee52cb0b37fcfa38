/* The output of `gpuready cluster links` (see links_render.h). */
#define _GNU_SOURCE
#include "cluster/links_render.h"
#include "core/cleanup.h"
#include "core/report.h"
#include "core/strbuf.h"
#include "cluster/links_rdma.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The first pass as a matrix, rows sending, columns receiving: Gb/s, NAN
 * not measured, -1 failed. */
static float *matrix(const struct links_report *r)
{
	size_t n = (size_t)r->n;
	float *x = xcalloc(n * n + 1, sizeof(*x));
	for (size_t i = 0; i < n * n; i++)
		x[i] = NAN;
	for (size_t i = 0; i < r->n_m; i++) {
		const struct links_meas *m = &r->m[i];
		if (m->pass == 1 && m->from >= 0 && m->to >= 0 && m->from < r->n && m->to < r->n)
			x[(size_t)m->from * n + (size_t)m->to] = m->gbps < 0 ? -1.0f : (float)m->gbps;
	}
	return x;
}

static double pct(const struct links_report *r, double gbps)
{
	return r->st->median > 0 ? 100.0 * gbps / r->st->median : 0;
}

void links_report_device(const struct links_report *r, int i, char *out, size_t len)
{
	out[0] = 0;
	if (r->rail != LINKS_RAIL_TCP && i >= 0 && i < r->n)
		links_rail_device(r->nodes[i].rails, r->rail - 1, out, len);
}

/* On node x: its rail's port state and rate (`ibstat DEV`, infiniband-diags'
 * ibstat(8)), for a ConnectX (mlx5) the link's own view (`mlxlink -d DEV
 * -m`, NVIDIA MFT), and the counters of the port's netdev where the node
 * knows it (RoCE: `ethtool -S IF`). */
static void rail_device_hint(struct strbuf *sb, const struct links_report *r, int x)
{
	char d[64];
	links_report_device(r, x, d, sizeof(d));
	if (!d[0]) {
		strbuf_addf(sb, "on %s: `ibv_devinfo -l` (the RDMA devices it has; rail %d is the one nearest GPU %d)",
			    r->nodes[x].name, r->rail - 1, r->rail - 1);
		return;
	}
	strbuf_addf(sb, "on %s: `ibstat %s` (the port's state and rate)", r->nodes[x].name, d);
	if (!strncmp(d, "mlx5_", 5))
		strbuf_addf(sb, ", `mlxlink -d %s -m` (the link's speed, errors and the transceiver)", d);
	char ifname[64];
	if (links_rail_device(r->nodes[x].rail_ifs, r->rail - 1, ifname, sizeof(ifname)) == 0)
		strbuf_addf(sb, ", `ethtool -S %s` (its netdev's errors, discards and pause frames)", ifname);
}

/* The hint of a verdict on an RDMA rail. */
static char *rail_hint(const struct links_report *r, const struct links_verdict *v)
{
	struct strbuf sb = STRBUF_INIT;
	rail_device_hint(&sb, r, v->a);
	if (v->b >= 0) {
		strbuf_adds(&sb, "; ");
		rail_device_hint(&sb, r, v->b);
	}
	if (v->kind == LINKS_BAD_NODE || v->b < 0)
		strbuf_adds(&sb, "; then reseat or swap its cable or transceiver");
	else if (v->kind == LINKS_FAILED)
		strbuf_adds(&sb, "; a port down, a device that cannot be opened, or a node that stopped fails a rail");
	else
		strbuf_adds(&sb, "; then the switch ports and the routing between the two NICs");
	return strbuf_detach(&sb);
}

char *links_hint(const struct links_report *r, const struct links_verdict *v)
{
	const struct links_node *a = &r->nodes[v->a], *b = v->b >= 0 ? &r->nodes[v->b] : NULL;
	struct strbuf sb = STRBUF_INIT;
	if (r->rail != LINKS_RAIL_TCP)
		return rail_hint(r, v);
	if (v->kind == LINKS_BAD_NODE || (!b && v->kind != LINKS_FAILED)) {
		if (a->ifname[0])
			strbuf_addf(&sb, "on %s: `ethtool -S %s` (errors, discards, pause frames), `ip -s link show %s`, "
					 "`ethtool -m %s` (the transceiver's temperature and receive power)",
				    a->name, a->ifname, a->ifname, a->ifname);
		else
			strbuf_addf(&sb, "on %s: `ip -s link` (errors and drops of the interface holding %s)", a->name,
				    a->addr);
		if (a->rdma[0])
			strbuf_addf(&sb, ", `mlxlink -d %s -m` (the link's state, speed and errors)", a->rdma);
		strbuf_adds(&sb, "; then reseat or swap its cable or transceiver");
		return strbuf_detach(&sb);
	}
	strbuf_addf(&sb, "on %s: `ip route get %s`, on %s: `ip route get %s` (the route and interface each takes)",
		    a->name, b->addr, b->name, a->addr);
	if (v->kind == LINKS_FAILED)
		strbuf_adds(&sb, "; a firewall between them, or a node that stopped, refuses or stalls a pair");
	else
		strbuf_adds(&sb, "; then the switch ports and the routing (ECMP, link aggregation) between them");
	return strbuf_detach(&sb);
}

static const char *dir_note(const struct links_verdict *v)
{
	if (v->b >= 0)
		return "";
	return v->slow_ab && !v->slow_ba ? " (slow when it sends)" : v->slow_ba && !v->slow_ab ? " (slow when it receives)" : "";
}

/* "rail tcp 10.0.0.4 on eth0", or "rail 3: mlx5_3 on node04". */
static void rail_of(const struct links_report *r, int x, char *out, size_t len)
{
	const struct links_node *a = &r->nodes[x];
	char d[64];
	links_report_device(r, x, d, sizeof(d));
	if (r->rail == LINKS_RAIL_TCP)
		snprintf(out, len, "rail tcp %s%s%s", a->addr, a->ifname[0] ? " on " : "", a->ifname);
	else
		snprintf(out, len, "rail %d: %s on %s", r->rail - 1, d[0] ? d : "no device", a->name);
}

static void text_node(const struct links_report *r, const struct links_verdict *v, FILE *f)
{
	const struct links_node *a = &r->nodes[v->a];
	const char *what = v->kind == LINKS_BAD_NODE	  ? "bad node or its cable"
			   : v->kind == LINKS_INTERMITTENT ? "intermittent node"
							   : "slow node, unclassified";
	char on[256];
	rail_of(r, v->a, on, sizeof(on));
	fprintf(f, "  %s: %s (%s)%s: in the first pass it sent at %.2f Gb/s and received at %.2f Gb/s "
		   "(medians, %.0f%% and %.0f%% of %.2f Gb/s)",
		what, a->name, on, dir_note(v), v->ab, v->ba, pct(r, v->ab), pct(r, v->ba), r->st->median);
	if (v->good_n)
		fprintf(f, "; with %d known-good node%s it was slow with %d (%.2f-%.2f Gb/s)", v->good_n,
			v->good_n == 1 ? "" : "s", v->good_slow, v->good_min, v->good_max);
	else
		fprintf(f, "; no known-good node to compare it with");
	fprintf(f, "\n");
}

static void text_pair(const struct links_report *r, const struct links_verdict *v, FILE *f)
{
	const struct links_node *a = &r->nodes[v->a], *b = &r->nodes[v->b];
	if (v->kind == LINKS_FAILED && r->rail != LINKS_RAIL_TCP) {
		fprintf(f, "  failed pair %s - %s (rail %d, %s pass): %s\n", a->name, b->name, r->rail - 1,
			v->pass == 2 ? "second" : "first", v->err);
		return;
	}
	if (v->kind == LINKS_FAILED) {
		fprintf(f, "  failed pair %s - %s (%s pass): %s\n", a->name, b->name, v->pass == 2 ? "second" : "first",
			v->err);
		return;
	}
	const char *what = v->kind == LINKS_BAD_PATH	  ? "bad path"
			   : v->kind == LINKS_INTERMITTENT ? "intermittent path"
							   : "slow path, unclassified";
	char on[384], da[64], db[64];
	links_report_device(r, v->a, da, sizeof(da));
	links_report_device(r, v->b, db, sizeof(db));
	if (r->rail == LINKS_RAIL_TCP)
		snprintf(on, sizeof(on), "rail tcp %s - %s", a->addr, b->addr);
	else
		snprintf(on, sizeof(on), "rail %d: %s on %s - %s on %s", r->rail - 1, da, a->name, db, b->name);
	fprintf(f, "  %s between %s and %s (%s): %s -> %s %.2f Gb/s, %s -> %s %.2f Gb/s (%.0f%% and "
		   "%.0f%% of the median)",
		what, a->name, b->name, on, a->name, b->name, v->ab, b->name, a->name, v->ba, pct(r, v->ab),
		pct(r, v->ba));
	if (!isnan(v->re_ab) || !isnan(v->re_ba))
		fprintf(f, "; measured again: %.2f and %.2f Gb/s", v->re_ab, v->re_ba);
	if (v->kind == LINKS_BAD_PATH)
		fprintf(f, "; both are at full rate with known-good nodes: slow only together");
	fprintf(f, "\n");
}

/* A heat map's cell: % of the median, X failed, . not measured. */
static void map_cell(const struct links_report *r, float v, FILE *f)
{
	if (isnan(v))
		fprintf(f, " %4s", ".");
	else if (v < 0)
		fprintf(f, " %4s", "X");
	else
		fprintf(f, " %4.0f", pct(r, v));
}

static void text_map(const struct links_report *r, const float *x, FILE *f)
{
	size_t n = (size_t)r->n, w = 4;
	for (size_t i = 0; i < n; i++)
		if (strlen(r->nodes[i].name) > w)
			w = strlen(r->nodes[i].name);
	fprintf(f, "\nheat map (%% of the median %.2f Gb/s; rows send, columns receive; X failed, . not measured):\n",
		r->st->median);
	fprintf(f, "  %*s %-*s", 3, "", (int)w, "");
	for (size_t j = 0; j < n; j++)
		fprintf(f, " %4zu", j);
	fprintf(f, "\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "  %3zu %-*s", i, (int)w, r->nodes[i].name);
		for (size_t j = 0; j < n; j++) {
			if (i == j)
				fprintf(f, " %4s", "-");
			else
				map_cell(r, x[i * n + j], f);
		}
		fprintf(f, "\n");
	}
}

/* One cell of the block map: the lowest rate from block bi to block bj
 * (-1 when a pair there failed, NAN when none was measured). */
static float block_cell(const float *x, size_t n, size_t b, size_t bi, size_t bj)
{
	float low = NAN;
	for (size_t i = bi * b; i < n && i < (bi + 1) * b; i++)
		for (size_t j = bj * b; j < n && j < (bj + 1) * b; j++) {
			float v = x[i * n + j];
			if (i == j || isnan(v))
				continue;
			if (v < 0)
				return -1;
			low = isnan(low) || v < low ? v : low;
		}
	return low;
}

/* Above LINKS_TEXT_MAP_MAX nodes: blocks of consecutive nodes (rank
 * order) so that at most that many fit a row, each cell the worst pair
 * between two blocks: a bad node shows as a row and a column of low
 * blocks, a bad path as one low cell; --svg and --json have every pair. */
static void text_block_map(const struct links_report *r, const float *x, FILE *f)
{
	size_t n = (size_t)r->n, b = (n + LINKS_TEXT_MAP_MAX - 1) / LINKS_TEXT_MAP_MAX, nb = (n + b - 1) / b;
	fprintf(f, "\nheat map of %zu nodes in %zu blocks of %zu (the lowest %% of the median %.2f Gb/s between two "
		   "blocks; rows send, columns receive; X a failed pair, . none measured):\n", n, nb, b, r->st->median);
	fprintf(f, "  %3s %-21s", "", "");
	for (size_t j = 0; j < nb; j++)
		fprintf(f, " %4zu", j);
	fprintf(f, "\n");
	for (size_t i = 0; i < nb; i++) {
		size_t last = (i + 1) * b < n ? (i + 1) * b - 1 : n - 1;
		char label[64];
		snprintf(label, sizeof(label), "%.10s..%.10s", r->nodes[i * b].name, r->nodes[last].name);
		fprintf(f, "  %3zu %-21s", i, label);
		for (size_t j = 0; j < nb; j++)
			map_cell(r, block_cell(x, n, b, i, j), f);
		fprintf(f, "\n");
	}
}

/* The RDMA rails by GPU affinity, grouped by identical lists (at most a
 * few groups shown), when this run measured TCP only (--rail tcp). */
static void text_rails(const struct links_report *r, FILE *f)
{
	int shown = 0, *group = xcalloc((size_t)r->n + 1, sizeof(int));
	for (int i = 0; i < r->n; i++)
		group[i] = -1;
	for (int i = 0; i < r->n; i++) {
		if (!r->nodes[i].rails[0] || group[i] >= 0)
			continue;
		int count = 0;
		for (int j = i; j < r->n; j++)
			if (group[j] < 0 && !strcmp(r->nodes[j].rails, r->nodes[i].rails))
				group[j] = i, count++;
		if (!shown)
			fprintf(f, "RDMA rails by GPU affinity (the NIC nearest GPU 0, 1, ...; not measured: this run "
				   "measures TCP):\n");
		if (shown++ < 4)
			fprintf(f, "  %s on %d node%s (%s%s)\n", r->nodes[i].rails, count, count == 1 ? "" : "s",
				r->nodes[i].name, count > 1 ? ", ..." : "");
	}
	if (shown > 4)
		fprintf(f, "  and %d more different lists (--json has every node's)\n", shown - 4);
	free(group);
}

/* The run's summary (the first block), then the rail's heading when it
 * is an RDMA rail. */
static void text_heading(const struct links_report *r, FILE *f)
{
	if (r->block == 0) {
		fprintf(f, "cluster links: %d nodes, %zu pairs in %d rounds (%s), %s, %.2g s per direction; second pass: "
			   "%zu pairs in %d rounds; %.0f s\n",
			r->n, r->pairs, r->rounds, r->sampled ? "random matchings" : "every pair",
			r->measured ? r->measured : "tcp", r->duration, r->pairs2, r->rounds2, r->elapsed);
		if (r->sampled)
			fprintf(f, "seed %llu (--rounds %d --seed %llu measures the same pairs again)\n",
				(unsigned long long)r->seed, r->rounds, (unsigned long long)r->seed);
	}
	if (r->block > 0)
		fputc('\n', f);
	if (r->rail != LINKS_RAIL_TCP)
		fprintf(f, "rail %d over RDMA (the NIC nearest GPU %d on each node; write_bw, %u KiB messages, each "
			   "direction measured by the node that writes):\n",
			r->rail - 1, r->rail - 1, LINKS_RDMA_MSG_KIB);
	else if (r->block > 0)
		fprintf(f, "rail tcp:\n");
}

int links_write_text(const struct links_report *r, FILE *f)
{
	const struct links_stats *st = r->st;
	text_heading(r, f);
	if (st->n)
		fprintf(f, "median %.2f Gb/s, MAD %.3f Gb/s: slow below %.2f Gb/s (median - 3 x 1.4826 x MAD, at least "
			   "25%% under the median%s)\n",
			st->median, st->mad, st->threshold, st->expect > 0 ? ", and under --expect-gbps" : "");
	else
		fprintf(f, "no rate was measured\n");
	if (st->expect > 0 && st->n && st->median < st->expect)
		fprintf(f, "the median %.2f Gb/s is below --expect-gbps %.2f: the whole fabric is slow\n", st->median,
			st->expect);
	if (r->block == 0 && r->rail == LINKS_RAIL_TCP && (!r->measured || !strcmp(r->measured, "tcp")))
		text_rails(r, f);
	size_t count[LINKS_FAILED + 1] = { 0 };
	for (size_t i = 0; i < r->n_v; i++)
		count[r->v[i].kind]++;
	if (!r->n_v)
		fprintf(f, "no suspect: every pair within the noise of the median\n");
	else
		fprintf(f, "%zu bad node%s, %zu bad path%s, %zu intermittent, %zu unclassified, %zu failed pair%s:\n",
			count[LINKS_BAD_NODE], count[LINKS_BAD_NODE] == 1 ? "" : "s", count[LINKS_BAD_PATH],
			count[LINKS_BAD_PATH] == 1 ? "" : "s", count[LINKS_INTERMITTENT], count[LINKS_UNCLASSIFIED],
			count[LINKS_FAILED], count[LINKS_FAILED] == 1 ? "" : "s");
	for (size_t i = 0; i < r->n_v; i++) {
		const struct links_verdict *v = &r->v[i];
		if (v->b < 0)
			text_node(r, v, f);
		else
			text_pair(r, v, f);
		_cleanup_free_ char *h = links_hint(r, v);
		fprintf(f, "    check next %s\n", h);
	}
	if (st->n) {
		float *x = matrix(r);
		if (r->n <= LINKS_TEXT_MAP_MAX)
			text_map(r, x, f);
		else
			text_block_map(r, x, f);
		free(x);
	}
	return ferror(f) ? -1 : 0;
}

/* ---- JSON (docs/cluster-links.schema.json), written as it goes: the
 * matrix of a large fleet is millions of numbers ---- */

static void jstr(FILE *f, const char *raw)
{
	_cleanup_free_ char *s = utf8_clean(raw); /* an error text from another rank may be anything */
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void jnum(FILE *f, double x)
{
	if (isnan(x) || isinf(x) || x < 0)
		fputs("null", f);
	else
		fprintf(f, "%.6g", x);
}

/* "tcp", or the RDMA rail's index. */
static void json_rail(const struct links_report *r, FILE *f)
{
	if (r->rail == LINKS_RAIL_TCP)
		fputs("\"tcp\"", f);
	else
		fprintf(f, "%d", r->rail - 1);
}

static void json_nodes(const struct links_report *r, FILE *f)
{
	fputs("\"nodes\":[", f);
	for (int i = 0; i < r->n; i++) {
		const struct links_node *x = &r->nodes[i];
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		jstr(f, x->name);
		fputs(",\"address\":", f);
		jstr(f, x->addr);
		fputs(",\"interface\":", f);
		if (x->ifname[0])
			jstr(f, x->ifname);
		else
			fputs("null", f);
		fputs(",\"rdma_device\":", f);
		if (x->rdma[0])
			jstr(f, x->rdma);
		else
			fputs("null", f);
		fputs(",\"rdma_rails\":[", f);
		_cleanup_free_ char *rails = xstrdup(x->rails);
		char *save = NULL;
		int k = 0;
		for (char *t = strtok_r(rails, ",", &save); t; t = strtok_r(NULL, ",", &save), k++) {
			fputs(k ? "," : "", f);
			jstr(f, t);
		}
		fputs("]}", f);
	}
	fputs("],\n", f);
}

static void json_matrix(const struct links_report *r, FILE *f)
{
	float *x = matrix(r);
	size_t n = (size_t)r->n;
	fputs("\"matrix_gbps\":[", f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n[" : "\n[", f);
		for (size_t j = 0; j < n; j++) {
			if (j)
				fputc(',', f);
			jnum(f, x[i * n + j]);
		}
		fputc(']', f);
	}
	fputs("],\n", f);
	free(x);
}

static void json_measurements(const struct links_report *r, FILE *f)
{
	bool first = true;
	fputs("\"second_pass_gbps\":[", f);
	for (size_t i = 0; i < r->n_m; i++) {
		const struct links_meas *m = &r->m[i];
		if (m->pass != 2 || m->gbps < 0)
			continue;
		fprintf(f, "%s{\"from\":%d,\"to\":%d,\"gbps\":", first ? "" : ",", m->from, m->to);
		jnum(f, m->gbps);
		fputc('}', f);
		first = false;
	}
	fputs("],\n\"failures\":[", f);
	first = true;
	for (size_t i = 0; i < r->n_m; i++) {
		const struct links_meas *m = &r->m[i];
		if (m->gbps >= 0)
			continue;
		fprintf(f, "%s{\"from\":%d,\"to\":%d,\"pass\":%d,\"rail\":", first ? "" : ",", m->from, m->to, m->pass);
		json_rail(r, f);
		fputs(",\"error\":", f);
		jstr(f, m->err ? m->err : "no result");
		fputc('}', f);
		first = false;
	}
	fputs("],\n", f);
}

static void json_rate(FILE *f, const char *key, double x, bool comma)
{
	fprintf(f, "%s\"%s\":", comma ? "," : "", key);
	jnum(f, x);
}

static void json_verdict(const struct links_report *r, const struct links_verdict *v, FILE *f)
{
	fprintf(f, "{\"kind\":\"%s\",\"nodes\":[", links_kind_name(v->kind));
	jstr(f, r->nodes[v->a].name);
	if (v->b >= 0) {
		fputc(',', f);
		jstr(f, r->nodes[v->b].name);
	}
	fputs("],\"rail\":", f);
	json_rail(r, f);
	fputs(",\"rates_gbps\":{", f);
	if (v->b < 0) {
		json_rate(f, "sent", v->ab, false);
		json_rate(f, "received", v->ba, true);
		json_rate(f, "with_good_min", v->good_n ? v->good_min : NAN, true);
		json_rate(f, "with_good_max", v->good_n ? v->good_max : NAN, true);
		fprintf(f, "},\"good_partners\":%d,\"slow_with_good\":%d,\"slow_sending\":%s,\"slow_receiving\":%s",
			v->good_n, v->good_slow, v->slow_ab ? "true" : "false", v->slow_ba ? "true" : "false");
	} else {
		json_rate(f, "a_to_b", v->ab, false);
		json_rate(f, "b_to_a", v->ba, true);
		json_rate(f, "again_a_to_b", v->re_ab, true);
		json_rate(f, "again_b_to_a", v->re_ba, true);
		fputc('}', f);
	}
	if (v->kind == LINKS_FAILED) {
		fprintf(f, ",\"pass\":%d,\"error\":", v->pass);
		jstr(f, v->err);
	}
	_cleanup_free_ char *h = links_hint(r, v);
	fputs(",\"hint\":", f);
	jstr(f, h);
	fputc('}', f);
}

/* The block's statistics, matrix, measurements and verdicts; nodes: the
 * node list between the statistics and the matrix (the first block). */
static void json_block(const struct links_report *r, bool nodes, FILE *f)
{
	const struct links_stats *st = r->st;
	json_rate(f, "median_gbps", st->median, false);
	json_rate(f, "mad_gbps", st->n ? st->mad : NAN, true);
	json_rate(f, "threshold_gbps", st->n ? st->threshold : NAN, true);
	json_rate(f, "expect_gbps", st->expect > 0 ? st->expect : NAN, true);
	fprintf(f, ",\"below_expect\":%s,\n", st->expect > 0 && st->n && st->median < st->expect ? "true" : "false");
	if (nodes)
		json_nodes(r, f);
	json_matrix(r, f);
	json_measurements(r, f);
	fputs("\"verdicts\":[", f);
	for (size_t i = 0; i < r->n_v; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_verdict(r, &r->v[i], f);
	}
	fputc(']', f);
}

void links_json_head(const struct links_report *r, FILE *f)
{
	fputs("{\"schema_version\":2,\"rail\":", f);
	json_rail(r, f);
	fprintf(f, ",\"duration_s\":%g,\"elapsed_s\":%.1f,\n", r->duration, r->elapsed);
	fprintf(f, "\"schedule\":{\"kind\":\"%s\",\"rounds\":%d,\"pairs\":%zu,\"seed\":", r->sampled ? "random" : "circle",
		r->rounds, r->pairs);
	if (r->sampled)
		fprintf(f, "%llu", (unsigned long long)r->seed);
	else
		fputs("null", f);
	fprintf(f, "},\n\"second_pass\":{\"rounds\":%d,\"pairs\":%zu},\n", r->rounds2, r->pairs2);
	json_block(r, true, f);
}

void links_json_rail(const struct links_report *r, FILE *f)
{
	fputs("{\"rail\":", f);
	json_rail(r, f);
	fputs(",\"devices\":[", f);
	for (int i = 0; i < r->n; i++) {
		char d[64];
		links_report_device(r, i, d, sizeof(d));
		fputs(i ? "," : "", f);
		if (d[0])
			jstr(f, d);
		else
			fputs("null", f);
	}
	fputs("],\n", f);
	json_block(r, false, f);
	fprintf(f, ",\"exit\":%d}", links_exit_code(r->st, r->v, r->n_v));
}

/* ---- SVG: one square per direction, red (0%) to green (100% and over),
 * rows send, columns receive, each square's <title> its rate ---- */

static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

static void svg_color(double p, char *buf, size_t len)
{
	if (p > 100)
		p = 100;
	if (p < 0)
		p = 0;
	/* red -> yellow at 50% -> green */
	int red = p < 50 ? 220 : (int)(220 - (p - 50) * 3.4), green = p < 50 ? (int)(p * 3.6) : 180;
	snprintf(buf, len, "#%02x%02x40", red, green);
}

static void svg_cell(const struct links_report *r, FILE *f, int i, int j, float v, int x, int y, int c)
{
	char col[16];
	if (i == j || isnan(v))
		snprintf(col, sizeof(col), "%s", i == j ? "#ffffff" : "#dddddd");
	else if (v < 0)
		snprintf(col, sizeof(col), "#000000");
	else
		svg_color(pct(r, v), col, sizeof(col));
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>", x, y, c, c, col);
	svg_text(f, r->nodes[i].name);
	fputs(" -&gt; ", f);
	svg_text(f, r->nodes[j].name);
	if (i != j && !isnan(v))
		fprintf(f, v < 0 ? ": failed" : ": %.2f Gb/s (%.0f%%)", v, pct(r, v));
	fputs("</title></rect>\n", f);
}

int links_write_svg(const struct links_report *r, FILE *f)
{
	int n = r->n, c = n <= 32 ? 24 : n <= 128 ? 8 : 2, label = n <= 128 ? 120 : 0, top = 40 + label;
	int w = label + 20 + n * c + 20, h = top + n * c + 20;
	if (w < 560)
		w = 560;
	float *x = matrix(r);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
		   "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		w, h);
	fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"13\">gpuready cluster links: %d nodes, %% of the median %.2f "
		   "Gb/s (rows send, columns receive)</text>\n",
		n, r->st->median);
	for (int i = 0; i < n && label; i++) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label + 15, top + i * c + c / 2 + 4);
		svg_text(f, r->nodes[i].name);
		fprintf(f, "</text>\n<text transform=\"translate(%d,%d) rotate(-60)\">", label + 20 + i * c + c / 2,
			top - 4);
		svg_text(f, r->nodes[i].name);
		fputs("</text>\n", f);
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			svg_cell(r, f, i, j, x[(size_t)i * (size_t)n + (size_t)j], label + 20 + j * c, top + i * c, c);
	fputs("</svg>\n", f);
	free(x);
	return ferror(f) ? -1 : 0;
}

void links_write_progress(FILE *f, int r, int rounds, double elapsed, bool end)
{
	double left = rounds - r;
	fprintf(f, "\rgpuready cluster links: round %d of %d, %.0f s elapsed, about %.0f s left   %s", r, rounds, elapsed,
		r ? elapsed / r * (left > 0 ? left : 0) : 0.0, end ? "\n" : "");
}
