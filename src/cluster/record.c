/* A node's record: what rank 0 needs of a node's check results, and its
 * JSON form (docs/cluster.md).
 *
 * A record is built from a node's inventory and report: the counts per
 * status, the --reason line, the warn and fail findings (not the ok and
 * skip ones, nor details: the record is compact), and the facts that
 * should agree across nodes (facts.c). Its JSON is what `gpuready cluster
 * facts` prints and `--expect` reads, and what a node will send rank 0.
 * A record read back is untrusted: record_parse() refuses text that is
 * not strict JSON in valid UTF-8, text over RECORD_MAX_BYTES, nesting over RECORD_MAX_DEPTH, any unknown field,
 * wrong type, string over RECORD_MAX_STRING or with a NUL byte, more
 * findings or facts than the bounds, facts out of order or repeated, and
 * node names outside [A-Za-z0-9._-]. */
#include "cluster/cluster.h"
#include "core/cleanup.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *node_state_name(enum node_state s)
{
	static const char *const names[] = { "pass", "warn", "fail", "unreachable" };
	return s <= NODE_UNREACHABLE ? names[s] : "?";
}

enum node_state record_state(const struct node_record *r)
{
	if (!r->reachable)
		return NODE_UNREACHABLE;
	if (r->counts[STATUS_FAIL])
		return NODE_FAIL;
	return r->counts[STATUS_WARN] ? NODE_WARN : NODE_PASS;
}

void record_build(const struct inventory *inv, const struct report *rep, const char *node, struct node_record *ret)
{
	struct node_record r = { .node = xstrdup(node), .version = xstrdup(rep->version), .reachable = true };
	memcpy(r.counts, rep->counts, sizeof(r.counts));
	char line[REPORT_REASON_MAX + 1];
	report_reason(rep, line, sizeof(line));
	r.reason = xstrdup(line);
	for (size_t i = 0; i < rep->n; i++) {
		const struct finding *f = rep->v[i];
		if (f->status != STATUS_WARN && f->status != STATUS_FAIL)
			continue;
		r.findings = xreallocarray(r.findings, r.n_findings + 1, sizeof(*r.findings));
		r.findings[r.n_findings++] = (struct record_finding){
			.id = xstrdup(f->id), .subject = xstrdup(f->subject), .message = xstrdup(f->message),
			.hint = f->hint ? xstrdup(f->hint) : NULL, .status = f->status,
		};
	}
	facts_collect(inv, &r.facts);
	r.shape = facts_shape(&r.facts);
	*ret = r;
}

void record_unreachable(struct node_record *ret, const char *node, const char *why)
{
	*ret = (struct node_record){ .node = xstrdup(node), .why = xstrdup(why), .reachable = false };
}

void record_free(struct node_record *r)
{
	if (!r)
		return;
	free(r->node);
	free(r->version);
	free(r->shape);
	free(r->why);
	free(r->reason);
	for (size_t i = 0; i < r->n_findings; i++) {
		struct record_finding *f = &r->findings[i];
		free(f->id);
		free(f->subject);
		free(f->message);
		free(f->hint);
	}
	free(r->findings);
	strv_free(&r->facts);
	*r = (struct node_record){ 0 };
}

/* ---- writing ---- */

/* A record string as JSON: valid UTF-8, and every control byte (which the
 * parser refuses: one could forge a line of the text report) a '?'. */
static json_object *clean_string(const char *s)
{
	_cleanup_free_ char *c = xstrdup(s);
	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return utf8_json_string(c);
}

static void add_str(json_object *o, const char *key, const char *s)
{
	if (s)
		json_object_object_add(o, key, clean_string(s));
}

json_object *record_to_json(const struct node_record *r)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "schema_version", json_object_new_int(CLUSTER_SCHEMA_VERSION));
	add_str(o, "node", r->node);
	if (!r->reachable) {
		add_str(o, "unreachable", r->why);
		return o;
	}
	add_str(o, "version", r->version);
	add_str(o, "shape", r->shape);
	json_object *sum = json_object_new_object();
	for (int s = 0; s < STATUS__COUNT; s++)
		json_object_object_add(sum, status_name(s), json_object_new_int64(r->counts[s]));
	json_object_object_add(o, "summary", sum);
	add_str(o, "reason", r->reason);
	json_object *checks = json_object_new_array();
	for (size_t i = 0; i < r->n_findings; i++) {
		const struct record_finding *f = &r->findings[i];
		json_object *c = json_object_new_object();
		add_str(c, "id", f->id);
		add_str(c, "status", status_name(f->status));
		add_str(c, "subject", f->subject);
		add_str(c, "message", f->message);
		add_str(c, "hint", f->hint);
		json_object_array_add(checks, c);
	}
	json_object_object_add(o, "checks", checks);
	json_object *facts = json_object_new_array();
	for (size_t i = 0; i < r->facts.n; i++)
		json_object_array_add(facts, clean_string(r->facts.v[i]));
	json_object_object_add(o, "facts", facts);
	return o;
}

int cluster_json_print(struct json_object *o, FILE *out)
{
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							JSON_C_TO_STRING_NOSLASHESCAPE),
	      out);
	fputc('\n', out);
	json_object_put(o);
	return ferror(out) ? -EIO : 0;
}

int record_write_json(const struct node_record *r, FILE *out)
{
	return cluster_json_print(record_to_json(r), out);
}

/* ---- parsing ---- */

/* The string at o (named what, for messages), bounded, without NUL. */
static int get_string(json_object *o, const char *what, const char **ret, char **err)
{
	if (!json_object_is_type(o, json_type_string)) {
		*err = xasprintf("%s is not a string", what);
		return -EINVAL;
	}
	const char *s = json_object_get_string(o);
	size_t len = (size_t)json_object_get_string_len(o);
	if (len > RECORD_MAX_STRING) {
		*err = xasprintf("%s is longer than %u bytes", what, RECORD_MAX_STRING);
		return -E2BIG;
	}
	if (strlen(s) != len) {
		*err = xasprintf("%s holds a NUL byte", what);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			*err = xasprintf("%s holds a control byte (0x%02x)", what, (unsigned char)s[i]);
			return -EINVAL;
		}
	*ret = s;
	return 0;
}

static bool node_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '-' || *s == '_'))
			return false;
	return true;
}

static int parse_summary(json_object *o, struct node_record *r, char **err)
{
	if (!json_object_is_type(o, json_type_object)) {
		*err = xstrdup("summary is not an object");
		return -EINVAL;
	}
	unsigned seen = 0;
	json_object_object_foreach(o, key, val)
	{
		int s = 0;
		while (s < STATUS__COUNT && strcmp(status_name(s), key))
			s++;
		if (s == STATUS__COUNT) {
			*err = xasprintf("summary has an unknown status \"%.40s\"", key);
			return -EINVAL;
		}
		int64_t v = json_object_get_int64(val);
		if (!json_object_is_type(val, json_type_int) || v < 0 || v > (int64_t)RECORD_MAX_FINDINGS * 100) {
			*err = xasprintf("summary.%s is not a count", key);
			return -EINVAL;
		}
		r->counts[s] = (unsigned)v;
		seen |= 1u << s;
	}
	if (seen != (1u << STATUS__COUNT) - 1) {
		*err = xstrdup("summary lacks a status");
		return -EINVAL;
	}
	return 0;
}

/* One finding of "checks": id, status (warn or fail), subject, message, hint. */
static int parse_finding(json_object *o, size_t i, struct record_finding *f, char **err)
{
	static const char *const keys[] = { "id", "status", "subject", "message", "hint" };
	const char *v[5] = { 0 };
	if (!json_object_is_type(o, json_type_object)) {
		*err = xasprintf("checks[%zu] is not an object", i);
		return -EINVAL;
	}
	json_object_object_foreach(o, key, val)
	{
		size_t k = 0;
		while (k < 5 && strcmp(keys[k], key))
			k++;
		_cleanup_free_ char *what = xasprintf("checks[%zu].%.40s", i, key);
		if (k == 5) {
			*err = xasprintf("%s is not a field of a finding", what);
			return -EINVAL;
		}
		int r = get_string(val, what, &v[k], err);
		if (r < 0)
			return r;
	}
	for (size_t k = 0; k < 4; k++)
		if (!v[k]) {
			*err = xasprintf("checks[%zu] lacks %s", i, keys[k]);
			return -EINVAL;
		}
	if (strcmp(v[1], "warn") && strcmp(v[1], "fail")) {
		*err = xasprintf("checks[%zu].status is neither warn nor fail", i);
		return -EINVAL;
	}
	*f = (struct record_finding){ .id = xstrdup(v[0]), .subject = xstrdup(v[2]), .message = xstrdup(v[3]),
				      .hint = v[4] ? xstrdup(v[4]) : NULL,
				      .status = v[1][0] == 'w' ? STATUS_WARN : STATUS_FAIL };
	return 0;
}

static int parse_checks(json_object *o, struct node_record *r, char **err)
{
	if (!json_object_is_type(o, json_type_array)) {
		*err = xstrdup("checks is not an array");
		return -EINVAL;
	}
	size_t n = json_object_array_length(o);
	if (n > RECORD_MAX_FINDINGS) {
		*err = xasprintf("checks has %zu findings, more than %u", n, RECORD_MAX_FINDINGS);
		return -E2BIG;
	}
	r->findings = xcalloc(n + 1, sizeof(*r->findings));
	for (size_t i = 0; i < n; i++) {
		int ret = parse_finding(json_object_array_get_idx(o, i), i, &r->findings[i], err);
		if (ret < 0)
			return ret;
		r->n_findings++;
	}
	return 0;
}

/* A fact: "key=value", the key non-empty printable ASCII without blanks or
 * commas, the value without control bytes. */
static bool fact_ok(const char *s)
{
	const char *eq = strchr(s, '=');
	if (!eq || eq == s)
		return false;
	for (const char *p = s; p < eq; p++)
		if (*p <= ' ' || *p > '~' || *p == ',')
			return false;
	for (const char *p = eq + 1; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* Sorted (strcmp of the whole string) and no key twice. */
static bool fact_after(const char *prev, const char *s)
{
	if (strcmp(prev, s) >= 0)
		return false;
	size_t kp = strcspn(prev, "="), ks = strcspn(s, "=");
	return kp != ks || strncmp(prev, s, kp);
}

static int parse_facts(json_object *o, struct node_record *r, char **err)
{
	if (!json_object_is_type(o, json_type_array)) {
		*err = xstrdup("facts is not an array");
		return -EINVAL;
	}
	size_t n = json_object_array_length(o);
	if (n > RECORD_MAX_FACTS) {
		*err = xasprintf("facts has %zu entries, more than %u", n, RECORD_MAX_FACTS);
		return -E2BIG;
	}
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *what = xasprintf("facts[%zu]", i);
		const char *s;
		int ret = get_string(json_object_array_get_idx(o, i), what, &s, err);
		if (ret < 0)
			return ret;
		if (!fact_ok(s)) {
			*err = xasprintf("%s is not key=value", what);
			return -EINVAL;
		}
		if (i && !fact_after(r->facts.v[i - 1], s)) {
			*err = xasprintf("%s is out of order or repeats a key", what);
			return -EINVAL;
		}
		strv_add(&r->facts, s);
	}
	return 0;
}

/* The top-level string fields, by name; NULL when key is none of them. */
static char **string_field(struct node_record *r, const char *key)
{
	if (!strcmp(key, "node"))
		return &r->node;
	if (!strcmp(key, "version"))
		return &r->version;
	if (!strcmp(key, "shape"))
		return &r->shape;
	if (!strcmp(key, "reason"))
		return &r->reason;
	return NULL;
}

static int parse_field(struct node_record *r, const char *key, json_object *val, char **err)
{
	char **field = string_field(r, key);
	if (field) {
		const char *s;
		int ret = get_string(val, key, &s, err);
		if (ret < 0)
			return ret;
		*field = xstrdup(s);
		return 0;
	}
	if (!strcmp(key, "schema_version")) {
		if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) != CLUSTER_SCHEMA_VERSION) {
			*err = xasprintf("schema_version is not %d", CLUSTER_SCHEMA_VERSION);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "summary"))
		return parse_summary(val, r, err);
	if (!strcmp(key, "checks"))
		return parse_checks(val, r, err);
	if (!strcmp(key, "facts"))
		return parse_facts(val, r, err);
	*err = xasprintf("unknown field \"%.40s\"", key);
	return -EINVAL;
}

static int parse_object(json_object *o, struct node_record *r, char **err)
{
	if (!json_object_is_type(o, json_type_object)) {
		*err = xstrdup("a record is a JSON object");
		return -EINVAL;
	}
	json_object_object_foreach(o, key, val)
	{
		int ret = parse_field(r, key, val, err);
		if (ret < 0)
			return ret;
	}
	static const char *const required[] = { "schema_version", "node", "version", "summary", "reason", "checks",
						"facts" };
	for (size_t i = 0; i < sizeof(required) / sizeof(*required); i++)
		if (!json_object_object_get_ex(o, required[i], NULL)) {
			*err = xasprintf("the record lacks %s", required[i]);
			return -EINVAL;
		}
	if (!node_name_ok(r->node)) {
		*err = xstrdup("node is not a node name ([A-Za-z0-9._-])");
		return -EINVAL;
	}
	/* the verdict counts must be those of the findings it sends: a
	 * record that says "0 fail" beside a failing finding is refused */
	unsigned seen[STATUS__COUNT] = { 0 };
	for (size_t i = 0; i < r->n_findings; i++)
		seen[r->findings[i].status]++;
	if (seen[STATUS_WARN] != r->counts[STATUS_WARN] || seen[STATUS_FAIL] != r->counts[STATUS_FAIL]) {
		*err = xasprintf("the summary (%u fail, %u warn) disagrees with the findings (%u fail, %u warn)",
				 r->counts[STATUS_FAIL], r->counts[STATUS_WARN], seen[STATUS_FAIL], seen[STATUS_WARN]);
		return -EINVAL;
	}
	free(r->shape); /* what the facts say, never what the sender claims */
	r->shape = facts_shape(&r->facts);
	r->reachable = true;
	return 0;
}

/* The JSON values in text, counted without building them (a value is a
 * scalar, an array or an object; separators and opening brackets count
 * one each, outside strings): a record has at most a few per finding and
 * fact, so text with more is refused before json-c builds a tree of it
 * (4 MiB of "[0,0,..." would be two million objects). */
#define RECORD_MAX_VALUES (8u * (RECORD_MAX_FINDINGS + RECORD_MAX_FACTS) + 64u)

static size_t json_values(const char *text, size_t len)
{
	size_t n = 1;
	bool in_str = false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == ',' || c == '[' || c == '{') {
			n++;
		}
	}
	return n;
}

int record_parse(const char *text, size_t len, struct node_record *ret, char **err)
{
	if (len > RECORD_MAX_BYTES) {
		*err = xasprintf("the record is %zu bytes, more than %u", len, RECORD_MAX_BYTES);
		return -E2BIG;
	}
	if (len > INT_MAX || memchr(text, '\0', len)) {
		*err = xstrdup("the record holds a NUL byte");
		return -EINVAL;
	}
	if (json_values(text, len) > RECORD_MAX_VALUES) {
		*err = xasprintf("the record holds more than %u JSON values", RECORD_MAX_VALUES);
		return -E2BIG;
	}
	struct json_tokener *tok = json_tokener_new_ex(RECORD_MAX_DEPTH);
	if (!tok) {
		*err = xstrdup("out of memory");
		return -ENOMEM;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o || jerr != json_tokener_success) {
		*err = xasprintf("not JSON: %s", json_tokener_error_desc(jerr == json_tokener_success ?
										 json_tokener_continue : jerr));
		json_object_put(o);
		return -EINVAL;
	}
	for (; used < len; used++)
		if (!strchr(" \t\r\n", text[used])) {
			json_object_put(o);
			*err = xasprintf("text after the record at byte %zu", used);
			return -EINVAL;
		}
	struct node_record r = { 0 };
	int res = parse_object(o, &r, err);
	json_object_put(o);
	if (res < 0) {
		record_free(&r);
		return res;
	}
	*ret = r;
	return 0;
}
