/* rdma.nccl_gid_index: NCCL_IB_GID_INDEX points at a RoCE v2 GID on every
 * port NCCL will use.
 *
 * A wrong index shows up as `ibv_modify_qp ... Invalid argument` or as
 * RoCE v1 traffic that routers drop (NCCL documentation, Environment Variables). Unset, NCCL >= 2.21
 * picks a RoCE v2 GID itself (NCCL_IB_ROCE_VERSION_NUM=2, IPv4 first);
 * older NCCL uses index 0, which is RoCE v1 on mlx5 — reported as a note
 * because the NCCL version is not known from files. A RoCE v2 GID with a
 * link-local (fe80::) address only works inside one L2 segment: warn.
 * Since 2.22 NCCL ignores the index on InfiniBand ports, so only RoCE
 * ports count. One finding for the variable; each port is a detail line. */
#include "checks/check.h"
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct verdict {
	enum status worst;
	size_t ports, bad;
	const struct rdma_gid *suggest; /* a RoCE v2 IPv4 GID seen */
	bool suggest_everywhere;         /* its index is RoCE v2 IPv4 on every port judged */
	struct strbuf first_problem;
};

static void bump(struct verdict *v, enum status s)
{
	if (status_rank(s) > status_rank(v->worst))
		v->worst = s;
}

/* Judges one port for index idx (-1: unset); appends a detail line. */
static enum status judge(const struct inventory *inv, const struct rdma_dev *d, const struct rdma_port *p, int idx,
			 struct strbuf *line, struct verdict *v)
{
	char lbl[96], ip[32];
	const struct rdma_gid *best = port_best_gid(p);
	port_label(d, p, lbl, sizeof(lbl));
	if (best && gid_ipv4(best, NULL, 0) && !v->suggest)
		v->suggest = best;
	if (idx < 0) {
		const char *note = NULL;
		unsigned ai = nccl_auto_gid_index(inv, p, &note);
		const struct rdma_gid *g = port_gid(p, ai);
		if (!g) {
			strbuf_addf(line, "%s: NCCL >= 2.21 would use index %u, which is empty", lbl, ai);
			return STATUS_FAIL;
		}
		const char *addr = gid_ipv4(g, ip, sizeof(ip)) ? ip : g->gid;
		if (!gid_is_v2(g) || gid_link_local(g)) {
			strbuf_addf(line, "%s: no GID matches NCCL's selection (RoCE v2, NCCL_IB_ADDR_FAMILY): NCCL >= 2.21 "
					  "falls back to index %u (%s%s%s)",
				    lbl, ai, g->type ? g->type : "type unknown", gid_link_local(g) ? ", link-local " : ", ",
				    addr);
			return STATUS_WARN;
		}
		strbuf_addf(line, "%s: NCCL >= 2.21 selects index %u (%s, %s)%s%s", lbl, ai, g->type, addr, note ? "; " : "",
			    note ? note : "");
		return STATUS_OK;
	}
	const struct rdma_gid *g = port_gid(p, (unsigned)idx);
	if (!g) {
		strbuf_addf(line, "%s: GID %d is empty (ibv_modify_qp fails with Invalid argument)", lbl, idx);
		return STATUS_FAIL;
	}
	if (g->type && !gid_is_v2(g)) {
		strbuf_addf(line, "%s: GID %d is %s (%s), not RoCE v2", lbl, idx, g->type, g->gid);
		return STATUS_FAIL;
	}
	if (gid_link_local(g)) {
		strbuf_addf(line, "%s: GID %d is RoCE v2 but link-local (%s): not routable beyond one L2 segment", lbl,
			    idx, g->gid);
		return STATUS_WARN;
	}
	strbuf_addf(line, "%s: GID %d is %s %s", lbl, idx, g->type ? g->type : "(type unknown)",
		    gid_ipv4(g, ip, sizeof(ip)) ? ip : g->gid);
	return STATUS_OK;
}

/* Judges idx on every active RoCE port NCCL uses (hca: NCCL_IB_HCA, NULL
 * for all), one line per port into lines, the tally into vd. */
static void judge_ports(const struct inventory *inv, const struct nccl_list *hca, int idx, struct verdict *vd,
			struct strv *lines)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		if (!port_is_roce(p) || !nccl_uses_port(hca, d, p))
			continue;
		struct strbuf line = STRBUF_INIT;
		enum status s = judge(inv, d, p, idx, &line, vd);
		vd->ports++;
		if (s == STATUS_WARN || s == STATUS_FAIL) {
			vd->bad++;
			if (!vd->first_problem.len)
				strbuf_adds(&vd->first_problem, line.buf);
		}
		bump(vd, s);
		strv_push(lines, strbuf_detach(&line));
	}
}

/* Whether GID index `index` is RoCE v2 with an IPv4 address on every port
 * NCCL uses: only then is one NCCL_IB_GID_INDEX right everywhere. */
static bool suggestion_fits_all(const struct inventory *inv, const struct nccl_list *hca, unsigned index)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		if (!port_is_roce(p) || !nccl_uses_port(hca, d, p))
			continue;
		const struct rdma_gid *g = port_gid(p, index);
		if (!g || !gid_is_v2(g) || !gid_ipv4(g, NULL, 0))
			return false;
	}
	return true;
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_IB_GID_INDEX");
	struct nccl_list hca;
	struct finding *f;
	char place[256];
	int idx = -1;

	if (nccl_skip_computed(c, v))
		return 0;
	long long n = -1;
	if (nccl_int_var(c, v, -1, 255, "a GID index", &n) == NCCL_INT_INVALID)
		return 0;
	idx = (int)n;
	const struct nccl_var *hv = nccl_hca(inv, &hca);
	struct verdict vd = { .worst = STATUS_OK, .first_problem = STRBUF_INIT };
	struct strv lines = STRV_INIT;
	judge_ports(inv, hv ? &hca : NULL, idx, &vd, &lines);
	if (vd.suggest)
		vd.suggest_everywhere = suggestion_fits_all(inv, hv ? &hca : NULL, vd.suggest->index);
	nccl_list_free(&hca);

	if (vd.ports == 0) {
		check_add(c, STATUS_SKIP, "NCCL_IB_GID_INDEX", "no active RoCE port that NCCL would use");
	} else if (idx < 0) {
		if (vd.worst == STATUS_OK)
			f = check_add(c, STATUS_OK, "NCCL_IB_GID_INDEX",
				      "not set: NCCL >= 2.21 selects a RoCE v2 GID on %s %zu port%s; NCCL < 2.21 uses index 0",
				      vd.ports == 1 ? "its" : "each of its", vd.ports, vd.ports == 1 ? "" : "s");
		else
			f = check_add(c, vd.worst, "NCCL_IB_GID_INDEX", "not set, and on %zu of %zu port(s) NCCL would not get "
									"a routable RoCE v2 GID: %s",
				      vd.bad, vd.ports, vd.first_problem.buf);
		for (size_t i = 0; i < lines.n; i++)
			finding_detail(f, "%s", lines.v[i]);
		if (vd.worst != STATUS_OK)
			finding_hint(f, "give those interfaces an IPv4 address (the kernel then adds a RoCE v2 GID), or set "
					"NCCL_IB_ADDR_FAMILY=AF_INET6 if the RDMA network is IPv6");
	} else {
		if (vd.bad)
			f = check_add(c, vd.worst, "NCCL_IB_GID_INDEX", "=%d (%s) is wrong on %zu of %zu port(s): %s", idx,
				      v->source, vd.bad, vd.ports, vd.first_problem.buf);
		else
			f = check_add(c, vd.worst == STATUS_SKIP ? STATUS_OK : vd.worst, "NCCL_IB_GID_INDEX",
				      "=%d (%s) is a routable RoCE v2 GID on all %zu port(s) NCCL uses", idx, v->source,
				      vd.ports);
		for (size_t i = 0; i < lines.n; i++)
			finding_detail(f, "%s", lines.v[i]);
		if (vd.bad && vd.suggest && vd.suggest_everywhere)
			finding_hint(f, "set NCCL_IB_GID_INDEX=%u (RoCE v2 IPv4 on every port NCCL uses) in %s, or unset "
					"it on NCCL >= 2.21",
				     vd.suggest->index, nccl_var_place(v, place, sizeof(place)));
		else if (vd.bad && vd.suggest)
			finding_hint(f, "unset NCCL_IB_GID_INDEX in %s (NCCL >= 2.21 picks the RoCE v2 GID per port; no "
					"single index is right on every port here)",
				     nccl_var_place(v, place, sizeof(place)));
		else if (vd.bad)
			finding_hint(f, "give the RDMA interfaces IP addresses first (see rdma.roce_gid)");
	}
	strv_free(&lines);
	strbuf_release(&vd.first_problem);
	return 0;
}

const struct check_def check_rdma_nccl_gid_index = {
	.id = "rdma.nccl_gid_index",
	.section = "NCCL Configuration",
	.summary = "NCCL_IB_GID_INDEX is a RoCE v2 GID on every port NCCL uses",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
	.nccl_vars = true,
};
