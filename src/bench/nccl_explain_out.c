/* What an explained NCCL log says: the labels (network, HCAs, GDR,
 * DMA-BUF, signatures), the one-screen text, the JSON
 * (docs/nccl-explain.schema.json) and --require; see nccl_explain.h. */
#include "bench/nccl_explain.h"
#include "bench/nccl_sig.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 24   /* process groups printed */
#define MAX_UNMATCHED_SHOWN 10

/* ---- labels ---- */

char *nccl_explain_network(const struct nccl_explain *x)
{
	return x->all.net_name ? xstrdup(x->all.net_name) : NULL;
}

void nccl_explain_hcas(const struct nccl_explain *x, struct strv *out)
{
	for (size_t i = 0; i < x->all.n_hcas; i++) {
		const struct nccl_hca *h = &x->all.hcas[i];
		if (h->port < 0)
			continue;
		char *s = xasprintf("%s:%d", h->name, h->port);
		if (strv_contains(out, s))
			free(s);
		else
			strv_push(out, s);
	}
	strv_sort(out);
}

const char *nccl_explain_link(const struct nccl_explain *x)
{
	for (size_t i = 0; i < x->all.n_hcas; i++)
		if (x->all.hcas[i].link)
			return x->all.hcas[i].link;
	return NULL;
}

char *nccl_explain_socket_if(const struct nccl_explain *x)
{
	const char *s = x->all.socket_if;
	return s ? xstrndup(s, strcspn(s, ":")) : NULL;
}

int nccl_explain_gdr(const struct nccl_explain *x)
{
	int g = -1;
	for (size_t i = 0; i < x->n_procs; i++) {
		int v = x->procs[i].gdr_any;
		if (v == 1 || (v == 0 && g == -1))
			g = v;
	}
	return g;
}

bool nccl_explain_dmabuf(const struct nccl_explain *x)
{
	return x->all.dmabuf > 0;
}

static enum nccl_sig_kind kind_of(const char *id)
{
	const struct nccl_sig *s = nccl_sig_find(id);
	return s ? s->kind : NCCL_SIG_FAIL;
}

void nccl_explain_ids(const struct nccl_explain *x, bool harmless, struct strv *out)
{
	for (size_t i = 0; i < x->n_sigs; i++)
		if ((kind_of(x->sigs[i].id) == NCCL_SIG_HARMLESS) == harmless && !strv_contains(out, x->sigs[i].id))
			strv_add(out, x->sigs[i].id);
	strv_sort(out);
}

bool nccl_explain_failed(const struct nccl_explain *x)
{
	for (size_t i = 0; i < x->n_sigs; i++)
		if (kind_of(x->sigs[i].id) == NCCL_SIG_FAIL &&
		    !(x->stopped_weak && !strcmp(x->sigs[i].id, "stopped-after-init")))
			return true;
	return false;
}

bool nccl_explain_meets(const struct nccl_explain *x, const char *require, struct strv *why)
{
	return nccl_log_meets(&x->all, require, why);
}

/* ---- text ---- */

static bool proc_has_nccl(const struct nccl_proc *p)
{
	return p->host != NULL;
}

/* One process in a line, without its name. */
static void describe_proc(const struct nccl_proc *p, struct strbuf *sb)
{
	const struct nccl_log *l = &p->log;
	if (l->version)
		strbuf_addf(sb, "NCCL %s", l->version);
	if (l->net_name)
		strbuf_addf(sb, "%s%s", sb->len ? ", " : "", l->net_name);
	for (size_t i = 0; i < l->n_hcas; i++)
		if (l->hcas[i].port >= 0)
			strbuf_addf(sb, " %s:%d%s%s", l->hcas[i].name, l->hcas[i].port, l->hcas[i].link ? "/" : "",
				    l->hcas[i].link ? l->hcas[i].link : "");
	if (l->net == NCCL_NET_SOCKET && l->socket_if)
		strbuf_addf(sb, " over %s", l->socket_if);
	bool on = false, off = false;
	for (size_t i = 0; i < l->n_hcas; i++)
		on = on || l->hcas[i].gdr == 1, off = off || l->hcas[i].gdr == 0;
	if (on || off)
		strbuf_addf(sb, "%sGDR %s", sb->len ? ", " : "", on && off ? "mixed" : on ? "on" : "off");
	if (l->dmabuf)
		strbuf_addf(sb, "%sDMA-BUF", sb->len ? ", " : "");
	for (size_t i = 0; i < l->transports.n; i++)
		strbuf_addf(sb, "%s%s", i ? " " : sb->len ? ", " : "", l->transports.v[i]);
	if (p->coll_channels >= 0)
		strbuf_addf(sb, "%s%d coll channels", sb->len ? ", " : "", p->coll_channels);
	if (p->rings >= 0)
		strbuf_addf(sb, ", %d rings", p->rings);
	if (p->trees >= 0)
		strbuf_addf(sb, ", %d trees", p->trees);
	if (!sb->len && !p->sigs.n)
		strbuf_adds(sb, "nothing logged about the network");
	if (p->sigs.n) {
		strbuf_adds(sb, sb->len ? "; " : "");
		for (size_t i = 0; i < p->sigs.n; i++)
			strbuf_addf(sb, "%s%s", i ? " " : "", p->sigs.v[i]);
	}
}

/* Processes with identical descriptions on one line each. */
static void text_procs(const struct nccl_explain *x, struct strbuf *out)
{
	size_t n = x->n_procs, groups = 0;
	char **desc = xcalloc(n ? n : 1, sizeof(*desc));
	bool *done = xcalloc(n ? n : 1, sizeof(*done));
	for (size_t i = 0; i < n; i++) {
		struct strbuf sb = STRBUF_INIT;
		describe_proc(&x->procs[i], &sb);
		desc[i] = strbuf_detach(&sb);
	}
	for (size_t i = 0; i < n; i++) {
		if (done[i] || !proc_has_nccl(&x->procs[i]))
			continue;
		size_t members = 0;
		struct strbuf names = STRBUF_INIT;
		for (size_t k = i; k < n; k++) {
			if (done[k] || !proc_has_nccl(&x->procs[k]) || strcmp(desc[i], desc[k]))
				continue;
			done[k] = true;
			if (members++ < 4)
				strbuf_addf(&names, "%s%s", members > 1 ? ", " : "", x->procs[k].key);
		}
		if (members > 4)
			strbuf_addf(&names, ", ... (%zu processes)", members);
		else if (members > 1)
			strbuf_addf(&names, " (%zu processes)", members);
		if (groups++ < MAX_GROUPS)
			strbuf_addf(out, "  %s: %s\n", names.buf, desc[i]);
		strbuf_release(&names);
	}
	if (groups > MAX_GROUPS)
		strbuf_addf(out, "  ... and %zu more groups\n", groups - MAX_GROUPS);
	if (groups == 0)
		strbuf_adds(out, "  no line carries NCCL's host:pid:tid prefix: the processes cannot be told apart\n");
	for (size_t i = 0; i < n; i++)
		free(desc[i]);
	free(desc);
	free(done);
}

/* Why the network is what it is, when the log says. */
static void text_why_net(const struct nccl_explain *x, struct strbuf *out)
{
	const char *why[] = { "NCCL_IB_DISABLE", "NCCL_IB_HCA", "NCCL_NET", "NCCL_SOCKET_IFNAME", "NCCL_NET_GDR_LEVEL",
			      "NCCL_NET_PLUGIN", "NCCL_DMABUF_ENABLE" };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (x->all.ib_no_device)
		strbuf_adds(&sb, "NET/IB : No device found");
	for (size_t k = 0; k < sizeof(why) / sizeof(why[0]); k++) {
		size_t n = strlen(why[k]);
		const char *hit = NULL;
		for (size_t i = 0; i < x->n_procs && !hit; i++)
			for (size_t j = 0; j < x->procs[i].env.n && !hit; j++)
				if (!strncmp(x->procs[i].env.v[j], why[k], n) && x->procs[i].env.v[j][n] == '=')
					hit = x->procs[i].env.v[j];
		if (hit)
			strbuf_addf(&sb, "%s%s", sb.len ? "; " : "", hit);
	}
	if (sb.len)
		strbuf_addf(out, "  why: %s\n", sb.buf);
}

/* The NCCL_* variables the log reports, each once (the first value). */
static void text_env(const struct nccl_explain *x, struct strbuf *out)
{
	_cleanup_strv_ struct strv seen = STRV_INIT;
	size_t len0 = out->len;
	for (size_t i = 0; i < x->n_procs; i++)
		for (size_t k = 0; k < x->procs[i].env.n; k++) {
			const char *kv = x->procs[i].env.v[k];
			char *name = xstrndup(kv, strcspn(kv, "="));
			if (strv_contains(&seen, name) || seen.n >= 32) {
				free(name);
				continue;
			}
			strv_push(&seen, name);
			strbuf_addf(out, "%s%s", out->len == len0 ? "  environment: " : ", ", kv);
		}
	if (out->len != len0)
		strbuf_addch(out, '\n');
}

static void text_summary(const struct nccl_explain *x, struct strbuf *out)
{
	_cleanup_strv_ struct strv hcas = STRV_INIT;
	_cleanup_free_ char *sock = nccl_explain_socket_if(x);
	strbuf_adds(out, "Summary:\n  versions: ");
	for (size_t i = 0; i < x->versions.n; i++)
		strbuf_addf(out, "%s%s", i ? ", " : "", x->versions.v[i]);
	strbuf_adds(out, x->versions.n ? (x->versions.n > 1 ? " (processes disagree)\n" : "\n") : "not logged\n");
	nccl_explain_hcas(x, &hcas);
	strbuf_addf(out, "  network: %s", x->all.net_name ? x->all.net_name : "not logged (no \"Using network\" line)");
	for (size_t i = 0; i < hcas.n; i++)
		strbuf_addf(out, "%s%s", i ? ", " : " over ", hcas.v[i]);
	if (nccl_explain_link(x))
		strbuf_addf(out, " (%s)", nccl_explain_link(x));
	if (x->all.net == NCCL_NET_SOCKET && sock)
		strbuf_addf(out, " over %s", sock);
	strbuf_addch(out, '\n');
	text_why_net(x, out);
	_cleanup_strv_ struct strv sum = STRV_INIT;
	nccl_log_summary(&x->all, &sum);
	for (size_t i = 1; i < sum.n && i < 4; i++) /* GDR, DMA-BUF, intra-node */
		strbuf_addf(out, "  %s\n", sum.v[i]);
	size_t on = 0, off = 0;
	for (size_t i = 0; i < x->n_procs; i++)
		on += x->procs[i].gdr_path == 1, off += x->procs[i].gdr_path == 0;
	if (on || off)
		strbuf_addf(out, "  GPUDirect RDMA by GPU-NIC distance (NCCL_NET_GDR_LEVEL): enabled in %zu process%s, "
			    "disabled in %zu\n", on, on == 1 ? "" : "es", off);
	const char *plugin = NULL, *boot = NULL;
	for (size_t i = 0; i < x->n_procs; i++) {
		plugin = plugin ? plugin : x->procs[i].net_plugin;
		boot = boot ? boot : x->procs[i].bootstrap_if;
	}
	if (plugin)
		strbuf_addf(out, "  net plugin: %s\n", plugin);
	text_env(x, out);
	if (boot)
		strbuf_addf(out, "  bootstrap: %s\n", boot);
}

/* Who stopped first, its last line, and how many stopped. */
static void text_stopped(const struct nccl_explain *x, struct strbuf *out)
{
	if (x->stopped_weak)
		strbuf_adds(out, "    every process's last line is its Init COMPLETE and no WARN follows: the job hung after "
				 "init, or the log was cut there (not counted as a failure)\n");
	strbuf_addf(out, "    stopped first: %s", x->stopped_first);
	if (x->n_stopped > 1 && x->n_stopped < x->n_procs)
		strbuf_addf(out, " (%zu processes stopped while others went on)", x->n_stopped);
	else if (x->n_stopped > 1)
		strbuf_addf(out, " (all %zu processes stopped)", x->n_stopped);
	strbuf_addch(out, '\n');
	for (size_t i = 0; i < x->n_procs; i++)
		if (!strcmp(x->procs[i].key, x->stopped_first) && x->procs[i].last_text)
			strbuf_addf(out, "    its last line (%zu): %s\n", x->procs[i].last_line, x->procs[i].last_text);
}

/* Which process stated which version (the first 8). */
static void text_versions(const struct nccl_explain *x, struct strbuf *out)
{
	size_t shown = 0;
	for (size_t i = 0; i < x->n_procs && shown < 8; i++)
		if (x->procs[i].log.version && x->procs[i].key[0]) {
			strbuf_addf(out, "    %s: NCCL %s\n", x->procs[i].key, x->procs[i].log.version);
			shown++;
		}
}

static void text_sig(const struct nccl_explain *x, const struct nccl_seen_sig *s, struct strbuf *out)
{
	const struct nccl_sig *d = s->row;
	const char *label = !d || d->kind == NCCL_SIG_FAIL ? "FAIL" : d->kind == NCCL_SIG_FALLBACK ? "fallback" : "harmless";
	if (!strcmp(s->id, "stopped-after-init") && x->stopped_weak)
		label = "possible";
	strbuf_addf(out, "  %s %s", label, s->id);
	if (s->num >= 0 && nccl_wc_status_name(s->num))
		strbuf_addf(out, " (%s, \"%s\")", nccl_wc_status_name(s->num), nccl_wc_status_str(s->num));
	bool derived = !strcmp(s->id, "version-mismatch") || !strcmp(s->id, "stopped-after-init");
	if (!derived)
		strbuf_addf(out, ", %zu line%s", s->count, s->count == 1 ? "" : "s");
	for (size_t i = 0; i < s->procs.n && i < 3; i++)
		strbuf_addf(out, "%s%s", i ? ", " : " from ", s->procs.v[i]);
	if (s->procs.n > 3)
		strbuf_adds(out, ", ...");
	strbuf_addch(out, '\n');
	if (!d)
		return;
	if (s->num >= 0 && nccl_wc_status_meaning(s->num))
		strbuf_addf(out, "    %s: %s\n", nccl_wc_status_str(s->num), nccl_wc_status_meaning(s->num));
	if (strcmp(s->id, "stopped-after-init") && strcmp(s->id, "version-mismatch"))
		strbuf_addf(out, "    line: %s\n", s->example);
	else if (!strcmp(s->id, "stopped-after-init"))
		text_stopped(x, out);
	else
		text_versions(x, out);
	strbuf_addf(out, "    meaning: %s\n", d->meaning);
	if (d->kind == NCCL_SIG_HARMLESS)
		return;
	strbuf_addf(out, "    causes: %s\n    next: %s\n", d->causes, d->next);
}

void nccl_explain_text(const struct nccl_explain *x, const struct strv *notes, struct strbuf *out)
{
	size_t hosts = 0, procs = 0;
	for (size_t i = 0; i < x->n_procs; i++) {
		if (!proc_has_nccl(&x->procs[i]))
			continue;
		procs++;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = x->procs[k].host && !strcmp(x->procs[k].host, x->procs[i].host);
		hosts += !seen;
	}
	strbuf_addf(out, "NCCL log: %zu line%s, %zu process%s on %zu host%s, %zu warning line%s\n", x->lines,
		    x->lines == 1 ? "" : "s", procs, procs == 1 ? "" : "es", hosts, hosts == 1 ? "" : "s", x->warn_lines,
		    x->warn_lines == 1 ? "" : "s");
	if (x->cut_lines)
		strbuf_addf(out, "  (cut: only the first %zu lines were read)\n", x->max_lines);
	if (x->cut_procs)
		strbuf_addf(out, "  (more than %d processes: the rest are counted with the last)\n", NCCL_EXPLAIN_MAX_PROCS);
	text_procs(x, out);
	text_summary(x, out);
	strbuf_adds(out, "Signatures:\n");
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < x->n_sigs; i++)
			if ((int)kind_of(x->sigs[i].id) == pass)
				text_sig(x, &x->sigs[i], out);
	if (!x->n_sigs)
		strbuf_adds(out, "  none\n");
	if (x->unmatched_total) {
		strbuf_addf(out, "Unmatched warnings: %zu line%s, %zu different\n", x->unmatched_total,
			    x->unmatched_total == 1 ? "" : "s", x->n_unmatched);
		for (size_t i = 0; i < x->n_unmatched && i < MAX_UNMATCHED_SHOWN; i++)
			strbuf_addf(out, "  %zux %.200s%s\n", x->unmatched[i].count, x->unmatched[i].text,
				    strlen(x->unmatched[i].text) > 200 ? "..." : "");
		if (x->n_unmatched > MAX_UNMATCHED_SHOWN)
			strbuf_addf(out, "  ... %zu more (see --json)\n", x->n_unmatched - MAX_UNMATCHED_SHOWN);
	}
	if (notes && notes->n) {
		strbuf_adds(out, "This node:\n");
		for (size_t i = 0; i < notes->n; i++)
			strbuf_addf(out, "  %s\n", notes->v[i]);
	}
}

/* ---- JSON ---- */

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *strv_json(const struct strv *v)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < v->n; i++)
		json_object_array_add(a, json_object_new_string(v->v[i]));
	return a;
}

static json_object *int_or_null(int v)
{
	return v >= 0 ? json_object_new_int(v) : NULL;
}

static json_object *proc_json(const struct nccl_proc *p)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "key", json_object_new_string(p->key));
	json_object_object_add(o, "host", str_or_null(p->host));
	json_object_object_add(o, "pid", int_or_null(p->pid));
	json_object_object_add(o, "tag", str_or_null(p->tag));
	json_object_object_add(o, "nccl_version", str_or_null(p->log.version));
	json_object_object_add(o, "network", str_or_null(p->log.net_name));
	nccl_log_facts_json(o, &p->log);
	json_object_object_add(o, "bootstrap_if", str_or_null(p->bootstrap_if));
	json_object_object_add(o, "net_plugin", str_or_null(p->net_plugin));
	json_object_object_add(o, "coll_channels", int_or_null(p->coll_channels));
	json_object_object_add(o, "nvls_channels", int_or_null(p->nvls_channels));
	json_object_object_add(o, "p2p_channels", int_or_null(p->p2p_channels));
	json_object_object_add(o, "rings", int_or_null(p->rings));
	json_object_object_add(o, "trees", int_or_null(p->trees));
	json_object_object_add(o, "gdr_path", p->gdr_path >= 0 ? json_object_new_boolean(p->gdr_path) : NULL);
	json_object_object_add(o, "init_complete", json_object_new_boolean(p->init_complete));
	json_object_object_add(o, "lines", json_object_new_int64((int64_t)p->lines));
	json_object_object_add(o, "first_line", json_object_new_int64((int64_t)p->first_line));
	json_object_object_add(o, "last_line", json_object_new_int64((int64_t)p->last_line));
	json_object_object_add(o, "last_text", str_or_null(p->last_text));
	json_object_object_add(o, "signatures", strv_json(&p->sigs));
	json_object_object_add(o, "env", strv_json(&p->env));
	return o;
}

static json_object *sig_json(const struct nccl_seen_sig *s)
{
	const struct nccl_sig *d = s->row;
	enum nccl_sig_kind k = d ? d->kind : NCCL_SIG_FAIL;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(s->id));
	json_object_object_add(o, "kind", json_object_new_string(k == NCCL_SIG_FAIL ? "fail" : k == NCCL_SIG_FALLBACK
										   ? "fallback" : "harmless"));
	json_object_object_add(o, "count", json_object_new_int64((int64_t)s->count));
	json_object_object_add(o, "processes", strv_json(&s->procs));
	json_object_object_add(o, "example", json_object_new_string(s->example));
	json_object_object_add(o, "wc_status", s->num >= 0 ? json_object_new_int(s->num) : NULL);
	json_object_object_add(o, "wc_status_name", str_or_null(nccl_wc_status_name(s->num)));
	json_object_object_add(o, "meaning", str_or_null(d ? d->meaning : NULL));
	json_object_object_add(o, "causes", str_or_null(d ? d->causes : NULL));
	json_object_object_add(o, "next", str_or_null(d ? d->next : NULL));
	json_object_object_add(o, "source", str_or_null(d ? d->source : NULL));
	return o;
}

/* Every "NCCL_X=value" any process reported, the first value of each. */
static json_object *env_json(const struct nccl_explain *x)
{
	json_object *o = json_object_new_object();
	for (size_t i = 0; i < x->n_procs; i++)
		for (size_t k = 0; k < x->procs[i].env.n; k++) {
			const char *kv = x->procs[i].env.v[k], *eq = strchr(kv, '=');
			_cleanup_free_ char *name = xstrndup(kv, (size_t)(eq - kv));
			if (!json_object_object_get_ex(o, name, NULL))
				json_object_object_add(o, name, json_object_new_string(eq + 1));
		}
	return o;
}

static void labels_json(json_object *o, const struct nccl_explain *x)
{
	_cleanup_strv_ struct strv hcas = STRV_INIT, fail = STRV_INIT, harmless = STRV_INIT;
	int gdr = nccl_explain_gdr(x);
	nccl_explain_hcas(x, &hcas);
	nccl_explain_ids(x, false, &fail);
	nccl_explain_ids(x, true, &harmless);
	json_object_object_add(o, "versions", strv_json(&x->versions));
	json_object_object_add(o, "network", str_or_null(x->all.net_name));
	json_object_object_add(o, "hcas", strv_json(&hcas));
	json_object_object_add(o, "link", str_or_null(nccl_explain_link(x)));
	char *sock = nccl_explain_socket_if(x);
	json_object_object_add(o, "socket_if", str_or_null(sock));
	free(sock);
	json_object_object_add(o, "gdr", gdr >= 0 ? json_object_new_boolean(gdr) : NULL);
	json_object_object_add(o, "dmabuf", nccl_explain_dmabuf(x) ? json_object_new_boolean(true) : NULL);
	json_object_object_add(o, "signatures", strv_json(&fail));
	json_object_object_add(o, "harmless", strv_json(&harmless));
}

json_object *nccl_explain_json(const struct nccl_explain *x, const struct strv *notes)
{
	json_object *o = json_object_new_object(), *procs = json_object_new_array(), *sigs = json_object_new_array(),
		    *un = json_object_new_array();
	labels_json(o, x);
	for (size_t i = 0; i < x->n_procs; i++)
		json_object_array_add(procs, proc_json(&x->procs[i]));
	for (size_t i = 0; i < x->n_sigs; i++)
		json_object_array_add(sigs, sig_json(&x->sigs[i]));
	for (size_t i = 0; i < x->n_unmatched; i++) {
		json_object *u = json_object_new_object();
		json_object_object_add(u, "text", json_object_new_string(x->unmatched[i].text));
		json_object_object_add(u, "count", json_object_new_int64((int64_t)x->unmatched[i].count));
		json_object_object_add(u, "first_process", json_object_new_string(x->unmatched[i].first_proc));
		json_object_array_add(un, u);
	}
	json_object_object_add(o, "matches", sigs);
	json_object_object_add(o, "unmatched", un);
	json_object_object_add(o, "unmatched_count", json_object_new_int64((int64_t)x->unmatched_total));
	json_object_object_add(o, "env", env_json(x));
	json_object_object_add(o, "stopped_first", str_or_null(x->stopped_first));
	json_object_object_add(o, "stopped_weak", json_object_new_boolean(x->stopped_weak));
	json_object_object_add(o, "processes", procs);
	json_object_object_add(o, "lines", json_object_new_int64((int64_t)x->lines));
	json_object_object_add(o, "truncated", json_object_new_boolean(x->cut_lines));
	json_object_object_add(o, "node", notes ? strv_json(notes) : json_object_new_array());
	return o;
}
