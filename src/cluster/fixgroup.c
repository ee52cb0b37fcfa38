/* cluster fix: plans, their digests, groups and the order of --apply; see
 * fixgroup.h. Rendering is fixrender.c. */
#include "cluster/fixgroup.h"
#include "cluster/cluster.h"
#include "cluster/node.h"
#include "core/cleanup.h"
#include "core/strv.h"

#include <errno.h>
#include <json-c/json.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

/* ---- the shape of a plan (docs/fix.schema.json) ---- */

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static bool is(struct json_object *o, const char *key, json_type t)
{
	struct json_object *v = member(o, key);
	return v && json_object_is_type(v, t);
}

/* A string or null: JSON null is a NULL object in json-c. */
static bool str_or_null(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key);
	return !v || json_object_is_type(v, json_type_string);
}

static bool strings(struct json_object *a)
{
	if (!a || !json_object_is_type(a, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(a); i++)
		if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_string))
			return false;
	return true;
}

/* Each element of o[key] an object passing ok; NULL, or what is wrong. */
static const char *each(struct json_object *o, const char *key, const char *(*ok)(struct json_object *))
{
	struct json_object *a = member(o, key);
	if (!a || !json_object_is_type(a, json_type_array))
		return key;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *x = json_object_array_get_idx(a, i);
		const char *bad = json_object_is_type(x, json_type_object) ? ok(x) : key;
		if (bad)
			return bad;
	}
	return NULL;
}

static const char *file_ok(struct json_object *f)
{
	return is(f, "path", json_type_string) && is(f, "action", json_type_string) &&
			       is(f, "state", json_type_boolean) && is(f, "content", json_type_string)
		       ? NULL
		       : "files";
}

static const char *cmd_ok(struct json_object *c)
{
	return strings(member(c, "argv")) && str_or_null(c, "sets_path") && str_or_null(c, "sets_value") ? NULL
													 : "commands";
}

static const char *remedy_ok(struct json_object *r)
{
	if (!is(r, "id", json_type_string) || !is(r, "pending", json_type_boolean) || !str_or_null(r, "held"))
		return "remedies";
	const char *bad = each(r, "files", file_ok);
	return bad ? bad : each(r, "commands", cmd_ok);
}

static const char *manual_ok(struct json_object *m)
{
	return is(m, "check", json_type_string) && is(m, "subject", json_type_string) &&
			       is(m, "status", json_type_string)
		       ? NULL
		       : "manual";
}

/* NULL when plan has fix --json's shape (as far as grouping and output
 * read it), else the member that is wrong. */
static const char *plan_shape(struct json_object *plan)
{
	if (!plan || !json_object_is_type(plan, json_type_object))
		return "not a JSON object";
	if (!is(plan, "changes", json_type_int) || json_object_get_int64(member(plan, "changes")) < 0)
		return "changes";
	const char *bad = each(plan, "remedies", remedy_ok);
	return bad ? bad : each(plan, "manual", manual_ok);
}

/* ---- the canonical text and the digest ---- */

static const char *sget(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* One field: its tag, its length (or "-" for none), its bytes: no two
 * different plans give one text. */
static void canon(struct strbuf *out, const char *tag, const char *v)
{
	if (v)
		strbuf_addf(out, "%s %zu:%s\n", tag, strlen(v), v);
	else
		strbuf_addf(out, "%s -\n", tag);
}

static void canon_bool(struct strbuf *out, const char *tag, bool v)
{
	canon(out, tag, v ? "true" : "false");
}

static void canon_remedy(struct json_object *r, struct strbuf *out)
{
	canon(out, "remedy", sget(r, "id"));
	canon_bool(out, "held", member(r, "held") != NULL);
	canon_bool(out, "pending", json_object_get_boolean(member(r, "pending")));
	struct json_object *a = member(r, "files");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *f = json_object_array_get_idx(a, i);
		canon(out, "file", sget(f, "path"));
		canon(out, "action", sget(f, "action"));
		canon_bool(out, "state", json_object_get_boolean(member(f, "state")));
		canon(out, "content", sget(f, "content"));
		/* the file as it is on the node too: nodes shown one diff have that diff */
		canon(out, "diff", sget(f, "diff"));
	}
	a = member(r, "commands");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *c = json_object_array_get_idx(a, i), *argv = member(c, "argv");
		strbuf_addf(out, "command %zu\n", json_object_array_length(argv));
		for (size_t k = 0; k < json_object_array_length(argv); k++)
			canon(out, "arg", json_object_get_string(json_object_array_get_idx(argv, k)));
		canon(out, "sets_path", sget(c, "sets_path"));
		canon(out, "sets_value", sget(c, "sets_value"));
	}
}

void fix_plan_canon(struct json_object *plan, struct strbuf *out)
{
	struct json_object *a = member(plan, "remedies");
	for (size_t i = 0; a && i < json_object_array_length(a); i++)
		canon_remedy(json_object_array_get_idx(a, i), out);
	a = member(plan, "manual");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *m = json_object_array_get_idx(a, i);
		canon(out, "manual", sget(m, "check"));
		canon(out, "subject", sget(m, "subject"));
		canon(out, "status", sget(m, "status"));
	}
}

void fix_plan_digest(struct json_object *plan, char out[FIX_DIGEST_HEX + 1])
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	unsigned char h[crypto_hash_sha256_BYTES];
	fix_plan_canon(plan, &sb);
	crypto_hash_sha256(h, (const unsigned char *)(sb.buf ? sb.buf : ""), sb.len);
	sodium_bin2hex(out, FIX_DIGEST_HEX + 1, h, sizeof(h));
}

/* ---- nodes ---- */

void fix_node_planned(struct fix_node *n, const char *name, struct json_object *plan, int exit)
{
	*n = (struct fix_node){ .name = xstrdup(name), .plan = plan, .exit = exit };
	n->changes = (size_t)json_object_get_int64(member(plan, "changes"));
	fix_plan_digest(plan, n->digest);
}

int fix_node_parse(struct fix_node *n, const char *name, const char *text, size_t len, int exit, char **err)
{
	if (len > RECORD_MAX_BYTES) {
		*err = xasprintf("its plan is %zu bytes, more than the %u a plan may have", len, RECORD_MAX_BYTES);
		return -EINVAL;
	}
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	size_t used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	while (o && used < len && (text[used] == ' ' || text[used] == '\t' || text[used] == '\r' || text[used] == '\n'))
		used++;
	const char *bad = !o ? json_tokener_error_desc(je) : used < len ? "text after the plan" : plan_shape(o);
	if (bad) {
		*err = xasprintf("no fix plan (`gpuready fix --json`): %s", bad);
		json_object_put(o);
		return -EINVAL;
	}
	fix_node_planned(n, name, o, exit);
	return 0;
}

void fix_node_unreachable(struct fix_node *n, const char *name, const char *why)
{
	*n = (struct fix_node){ .name = xstrdup(name), .why = xstrdup(why), .exit = -1 };
}

void fix_node_free(struct fix_node *n)
{
	free(n->name);
	free(n->why);
	free(n->apply_why);
	json_object_put(n->plan);
	*n = (struct fix_node){ 0 };
}

static int by_name(const void *a, const void *b)
{
	const struct fix_node *x = a, *y = b;
	return strcmp(x->name, y->name);
}

void fix_nodes_sort(struct fix_node *v, size_t n)
{
	if (n)
		qsort(v, n, sizeof(*v), by_name);
}

void fix_nodes_unique(struct fix_node *v, size_t n, const char *const *labels, struct strv *notes)
{
	char ***names = xcalloc(n + 1, sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = &v[i].name;
	node_names_unique((char **const *)names, n, labels, notes);
	free(names);
}

/* ---- groups and the order of --apply ---- */

struct gsort {
	const struct fix_node *v;
	size_t i;
};

static int by_digest(const void *a, const void *b)
{
	const struct gsort *x = a, *y = b;
	int c = strcmp(x->v[x->i].digest, y->v[y->i].digest);
	return c ? c : strcmp(x->v[x->i].name, y->v[y->i].name);
}

static const struct fix_node *group_nodes;

static int by_size(const void *a, const void *b)
{
	const struct fix_group *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(group_nodes[x->idx[0]].name, group_nodes[y->idx[0]].name);
}

size_t fix_nodes_group(const struct fix_node *v, size_t n, struct fix_group **ret)
{
	struct gsort *s = xcalloc(n + 1, sizeof(*s));
	size_t m = 0, ng = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].plan)
			s[m++] = (struct gsort){ v, i };
	if (m)
		qsort(s, m, sizeof(*s), by_digest);
	struct fix_group *g = xcalloc(m + 1, sizeof(*g));
	for (size_t i = 0, j; i < m; i = j) {
		for (j = i + 1; j < m && !strcmp(v[s[i].i].digest, v[s[j].i].digest); j++)
			;
		g[ng].idx = xcalloc(j - i, sizeof(size_t));
		for (size_t k = i; k < j; k++)
			g[ng].idx[g[ng].n++] = s[k].i;
		ng++;
	}
	group_nodes = v;
	if (ng)
		qsort(g, ng, sizeof(*g), by_size);
	group_nodes = NULL;
	free(s);
	*ret = g;
	return ng;
}

void fix_groups_free(struct fix_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].idx);
	free(g);
}

void fix_nodes_untouched(struct fix_node *v, const size_t *order, size_t from, size_t m)
{
	for (size_t k = from; k < m; k++)
		v[order[k]].apply = FIXA_UNTOUCHED;
}

size_t fix_apply_order(const struct fix_node *v, size_t n, size_t *order)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].plan && v[i].changes)
			order[m++] = i;
	return m;
}

bool fix_apply_failed(int exit, struct json_object *result, char **why)
{
	struct json_object *failed = member(result, "failed");
	int64_t nf = failed && json_object_is_type(failed, json_type_int) ? json_object_get_int64(failed) : -1;
	if (exit == 0 || (exit == 1 && nf == 0))
		return false;
	if (exit == 1 && nf > 0) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%lld remed%s failed", (long long)nf, nf == 1 ? "y" : "ies");
		struct json_object *lines = member(result, "applied");
		for (size_t i = 0; strings(lines) && i < json_object_array_length(lines); i++) {
			const char *l = json_object_get_string(json_object_array_get_idx(lines, i));
			size_t ll = strlen(l);
			bool ran_ok = !strncmp(l, "ran: ", 5) && ll >= 8 && !strcmp(l + ll - 8, ": exit 0");
			if (!strncmp(l, "FAILED ", 7) || !strncmp(l, "cannot ", 7) || (!strncmp(l, "ran: ", 5) && !ran_ok))
				strbuf_addf(&sb, "; %.300s", l);
		}
		*why = strbuf_detach(&sb);
	} else {
		*why = exit == 1 ? xstrdup("its `fix --apply` exited 1 without saying how many remedies failed")
				 : xasprintf("its `fix --apply` exited with %d (it could not run)", exit);
	}
	return true;
}
