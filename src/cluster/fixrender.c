/* cluster fix's output: the groups of identical plans, the nodes that
 * could not be planned, the batches of --apply; text and JSON
 * (docs/cluster-fix.schema.json). Every string from a node is made safe
 * for a terminal (str_printable) or valid UTF-8 for JSON. */
#include "cluster/cluster.h"
#include "cluster/fixgroup.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/report.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* o[key] as text safe for a terminal (malloc'd); "" when it is no string. */
static char *safe(struct json_object *o, const char *key)
{
	struct json_object *v = o && key ? member(o, key) : o;
	const char *s = v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
	_cleanup_free_ char *u = utf8_clean(s);
	return str_printable(xstrdup(u), true);
}

static size_t alen(struct json_object *o, const char *key)
{
	struct json_object *a = member(o, key);
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static struct json_object *at(struct json_object *o, const char *key, size_t i)
{
	return json_object_array_get_idx(member(o, key), i);
}

/* Each line of text, indented. */
static void indented(const char *text, const char *indent, FILE *out)
{
	for (const char *p = text; *p;) {
		size_t l = strcspn(p, "\n");
		fprintf(out, "%s%.*s\n", indent, (int)l, p);
		p += l + (p[l] == '\n');
	}
}

static void remedy_text(struct json_object *r, size_t no, FILE *out)
{
	_cleanup_free_ char *title = safe(r, "title"), *held = safe(r, "held");
	fprintf(out, "    [%zu] %s%s%s\n      answers:", no, title,
		json_object_get_boolean(member(r, "disruptive")) ? " (disruptive)" : "",
		json_object_get_boolean(member(r, "pending")) ? " (pending: written, waiting for a reload or reboot)" : "");
	for (size_t t = 0; t < alen(r, "targets"); t++) {
		_cleanup_free_ char *c = safe(at(r, "targets", t), "check"), *s = safe(at(r, "targets", t), "subject");
		fprintf(out, "%s %s %s", t ? "," : "", c, s);
	}
	fputc('\n', out);
	if (*held)
		fprintf(out, "      held: %s\n", held);
	for (size_t i = 0; i < alen(r, "files"); i++) {
		struct json_object *f = at(r, "files", i);
		if (json_object_get_boolean(member(f, "state")))
			continue;
		_cleanup_free_ char *diff = safe(f, "diff");
		indented(diff, "      ", out);
	}
	for (size_t i = 0; i < alen(r, "commands"); i++) {
		struct json_object *argv = member(at(r, "commands", i), "argv");
		fputs("      run:", out);
		for (size_t k = 0; k < json_object_array_length(argv); k++) {
			_cleanup_free_ char *w = safe(json_object_array_get_idx(argv, k), NULL);
			fprintf(out, " %s", w);
		}
		fputc('\n', out);
	}
	for (size_t i = 0; i < alen(r, "notes"); i++) {
		_cleanup_free_ char *n = safe(at(r, "notes", i), NULL);
		fprintf(out, "      note: %s\n", n);
	}
}

static void plan_text(struct json_object *plan, FILE *out)
{
	for (size_t i = 0; i < alen(plan, "remedies"); i++)
		remedy_text(at(plan, "remedies", i), i + 1, out);
	if (alen(plan, "manual"))
		fputs("    manual steps (no safe mechanical change):\n", out);
	for (size_t i = 0; i < alen(plan, "manual"); i++) {
		struct json_object *m = at(plan, "manual", i);
		_cleanup_free_ char *st = safe(m, "status"), *c = safe(m, "check"), *s = safe(m, "subject"),
				    *msg = safe(m, "message"), *why = safe(m, "why");
		fprintf(out, "      [%s] %s %s: %s\n", !strcmp(st, "fail") ? "FAIL" : "WARN", c, s, msg);
		if (*why)
			fprintf(out, "        not automatic: %s\n", why);
	}
}

static char *group_names(const struct fix_node *v, const struct fix_group *g)
{
	const char **names = xcalloc(g->n + 1, sizeof(*names));
	for (size_t i = 0; i < g->n; i++)
		names[i] = v[g->idx[i]].name;
	char *r = hostlist_compress_names(names, g->n);
	free(names);
	return r;
}

/* The names of the nodes whose apply state is st, compressed; NULL when none. */
static char *names_in(const struct fix_node *v, size_t n, enum fix_node_apply st)
{
	const char **names = xcalloc(n + 1, sizeof(*names));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].apply == st)
			names[m++] = v[i].name;
	char *r = m ? hostlist_compress_names(names, m) : NULL;
	free(names);
	return r;
}

static void group_text(const struct fix_node *v, const struct fix_group *g, size_t gi, FILE *out)
{
	const struct fix_node *first = &v[g->idx[0]];
	_cleanup_free_ char *names = group_names(v, g);
	size_t manual = alen(first->plan, "manual");
	fprintf(out, "%s %s: %s%zu change%s", g->n == 1 ? "node" : "nodes", names,
		gi == 0 ? (g->n == 1 ? "" : "same ") : "other plan: ", first->changes, first->changes == 1 ? "" : "s");
	if (manual)
		fprintf(out, ", %zu manual step%s", manual, manual == 1 ? "" : "s");
	fprintf(out, " (plan %.*s)\n", FIX_DIGEST_SHOW, first->digest);
	plan_text(first->plan, out);
	fputc('\n', out);
}

static void rollout_text(const struct fix_node *v, size_t n, const struct fix_rollout *ro, FILE *out)
{
	fprintf(out, "--apply in batches of %zu: %zu of %zu batch%s done", ro->batch, ro->done, ro->batches,
		ro->batches == 1 ? "" : "es");
	fputs(ro->stopped ? ", stopped at the first batch with a failure\n" : "\n", out);
	for (size_t b = 1; b <= ro->done + ro->stopped; b++) {
		fprintf(out, "  batch %zu:", b);
		for (size_t i = 0; i < n; i++)
			if (v[i].batch == b)
				fprintf(out, " %s %s%s", v[i].name, v[i].apply == FIXA_FAILED ? "FAILED" : "applied",
					v[i].apply == FIXA_APPLIED && v[i].apply_exit ? " (a check still fails)" : "");
		fputc('\n', out);
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].apply == FIXA_FAILED) {
			_cleanup_free_ char *why = str_printable(utf8_clean(v[i].apply_why ? v[i].apply_why : ""), false);
			fprintf(out, "failed %s: %s\n", v[i].name, why);
		}
	_cleanup_free_ char *untouched = names_in(v, n, FIXA_UNTOUCHED);
	if (untouched)
		fprintf(out, "not touched: %s\n", untouched);
}

int fix_cluster_text(const struct fix_node *v, size_t n, const struct fix_rollout *ro, FILE *out)
{
	struct fix_group *g = NULL;
	size_t ng = fix_nodes_group(v, n, &g), planned = 0;
	for (size_t i = 0; i < ng; i++)
		planned += g[i].n;
	fprintf(out, "%zu node%s: %zu planned (%zu distinct plan%s), %zu could not be planned\n\n", n,
		n == 1 ? "" : "s", planned, ng, ng == 1 ? "" : "s", n - planned);
	for (size_t i = 0; i < ng; i++)
		group_text(v, &g[i], i, out);
	if (planned < n)
		fputs("could not be planned:\n", out);
	for (size_t i = 0; i < n; i++)
		if (!v[i].plan) {
			_cleanup_free_ char *why = str_printable(utf8_clean(v[i].why ? v[i].why : ""), false);
			fprintf(out, "  %s: %s\n", v[i].name, why);
		}
	if (ro->asked) {
		if (planned < n)
			fputc('\n', out);
		rollout_text(v, n, ro, out);
	}
	fix_groups_free(g, ng);
	return ferror(out) ? -EIO : 0;
}

/* ---- JSON ---- */

static struct json_object *names_json(const struct fix_node *v, const size_t *idx, size_t n)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, utf8_json_string(v[idx[i]].name));
	return a;
}

static struct json_object *groups_json(const struct fix_node *v, size_t n)
{
	struct fix_group *g = NULL;
	size_t ng = fix_nodes_group(v, n, &g);
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < ng; i++) {
		const struct fix_node *first = &v[g[i].idx[0]];
		struct json_object *o = json_object_new_object(), *plan = NULL;
		_cleanup_free_ char *names = group_names(v, &g[i]);
		json_object_object_add(o, "hostlist", utf8_json_string(names));
		json_object_object_add(o, "nodes", names_json(v, g[i].idx, g[i].n));
		json_object_object_add(o, "digest", json_object_new_string(first->digest));
		json_object_object_add(o, "changes", json_object_new_int64((int64_t)first->changes));
		/* the first node's plan less what is its own (host, time) */
		json_object_deep_copy(first->plan, &plan, NULL);
		json_object_object_del(plan, "host");
		json_object_object_del(plan, "timestamp");
		json_object_object_add(o, "plan", plan);
		json_object_array_add(a, o);
	}
	fix_groups_free(g, ng);
	return a;
}

static struct json_object *rollout_json(const struct fix_node *v, size_t n, const struct fix_rollout *ro)
{
	struct json_object *o = json_object_new_object(), *nodes = json_object_new_array();
	static const char *const state[] = { [FIXA_NONE] = NULL, [FIXA_APPLIED] = "applied",
					     [FIXA_FAILED] = "failed", [FIXA_UNTOUCHED] = "untouched" };
	json_object_object_add(o, "batch_size", json_object_new_int64((int64_t)ro->batch));
	json_object_object_add(o, "batches", json_object_new_int64((int64_t)ro->batches));
	json_object_object_add(o, "done", json_object_new_int64((int64_t)ro->done));
	json_object_object_add(o, "stopped", json_object_new_boolean(ro->stopped));
	for (size_t i = 0; i < n; i++) {
		if (v[i].apply == FIXA_NONE)
			continue;
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "node", utf8_json_string(v[i].name));
		json_object_object_add(x, "batch", json_object_new_int64((int64_t)v[i].batch));
		json_object_object_add(x, "state", json_object_new_string(state[v[i].apply]));
		if (v[i].apply == FIXA_APPLIED)
			json_object_object_add(x, "exit", json_object_new_int(v[i].apply_exit));
		json_object_object_add(x, "why", v[i].apply_why ? utf8_json_string(v[i].apply_why) : NULL);
		json_object_array_add(nodes, x);
	}
	json_object_object_add(o, "nodes", nodes);
	return o;
}

int fix_cluster_json(const struct fix_node *v, size_t n, const struct fix_rollout *ro, FILE *out)
{
	struct json_object *o = json_object_new_object(), *un = json_object_new_array();
	size_t planned = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].plan) {
			planned++;
			continue;
		}
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "node", utf8_json_string(v[i].name));
		json_object_object_add(x, "why", utf8_json_string(v[i].why ? v[i].why : ""));
		json_object_array_add(un, x);
	}
	json_object_object_add(o, "schema_version", json_object_new_int(1));
	json_object_object_add(o, "nodes", json_object_new_int64((int64_t)n));
	json_object_object_add(o, "planned", json_object_new_int64((int64_t)planned));
	json_object_object_add(o, "groups", groups_json(v, n));
	json_object_object_add(o, "unplanned", un);
	json_object_object_add(o, "apply", ro->asked ? rollout_json(v, n, ro) : NULL);
	json_object_object_add(o, "exit", json_object_new_int(fix_cluster_exit(v, n, ro)));
	int r = fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), out);
	json_object_put(o);
	return r < 0 || fputc('\n', out) < 0 ? -EIO : 0;
}

int fix_cluster_exit(const struct fix_node *v, size_t n, const struct fix_rollout *ro)
{
	if (ro->asked && ro->stopped)
		return 1;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].plan || v[i].apply == FIXA_FAILED || v[i].apply == FIXA_UNTOUCHED)
			return 1;
		int e = v[i].apply == FIXA_APPLIED ? v[i].apply_exit : v[i].exit;
		if (e)
			return 1;
	}
	return 0;
}
