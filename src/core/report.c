/* The report model and its three renderers (text, JSON, Prometheus). */
#define _GNU_SOURCE
#include "report.h"
#include "fileio.h"
#include "cleanup.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const status_names[STATUS__COUNT] = {
	[STATUS_OK] = "ok",
	[STATUS_WARN] = "warn",
	[STATUS_FAIL] = "fail",
	[STATUS_SKIP] = "skip",
	[STATUS_INFO] = "info",
};

const char *status_name(enum status s)
{
	return s < STATUS__COUNT ? status_names[s] : "?";
}

int status_rank(enum status s)
{
	static const int rank[STATUS__COUNT] = {
		[STATUS_INFO] = -1, [STATUS_OK] = 0, [STATUS_SKIP] = 1, [STATUS_WARN] = 2, [STATUS_FAIL] = 3,
	};
	return s < STATUS__COUNT ? rank[s] : 0;
}

void report_init(struct report *r, const char *version, const char *host, const char *sysroot)
{
	memset(r, 0, sizeof(*r));
	r->version = xstrdup(version);
	r->host = xstrdup(host);
	r->sysroot = xstrdup(sysroot);
	r->scope = xstrdup("check");
}

void report_set_run(struct report *r, const char *scope, double timestamp)
{
	free(r->scope);
	r->scope = xstrdup(scope);
	r->timestamp = timestamp;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct finding *f = r->v[i];
		free(f->id);
		free(f->section);
		free(f->subject);
		free(f->message);
		free(f->hint);
	free(f->pending);
		free(f->observed);
		free(f->expected);
		strv_free(&f->details);
		strv_free(&f->facts);
		strv_free(&f->requires);
		free(f);
	}
	free(r->v);
	free(r->version);
	free(r->host);
	free(r->sysroot);
	free(r->scope);
	memset(r, 0, sizeof(*r));
}

struct finding *report_vadd(struct report *r, const char *id, const char *section, enum status st,
			    const char *subject, const char *fmt, va_list ap)
{
	struct finding *f = xcalloc(1, sizeof(*f));
	struct strbuf sb = STRBUF_INIT;
	strbuf_vaddf(&sb, fmt, ap);
	f->id = xstrdup(id);
	f->section = xstrdup(section);
	f->subject = xstrdup(subject);
	f->message = strbuf_detach(&sb);
	f->status = st;
	r->v = xreallocarray(r->v, r->n + 1, sizeof(*r->v));
	r->v[r->n++] = f;
	r->counts[st]++;
	return f;
}

struct finding *report_add(struct report *r, const char *id, const char *section, enum status st,
			   const char *subject, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct finding *f = report_vadd(r, id, section, st, subject, fmt, ap);
	va_end(ap);
	return f;
}

void finding_pending(struct finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(f->pending);
	if (vasprintf(&f->pending, fmt, ap) < 0)
		abort();
	va_end(ap);
}

void finding_hint(struct finding *f, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	if (f->hint) {
		strbuf_adds(&sb, f->hint);
		strbuf_adds(&sb, "; ");
		free(f->hint);
	}
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	f->hint = strbuf_detach(&sb);
}

void finding_detail(struct finding *f, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strv_push(&f->details, strbuf_detach(&sb));
}

void finding_compare(struct finding *f, const char *observed, const char *expected)
{
	free(f->observed);
	free(f->expected);
	f->observed = observed ? xstrdup(observed) : NULL;
	f->expected = expected ? xstrdup(expected) : NULL;
}

void finding_compare_num(struct finding *f, double observed, double expected)
{
	char o[64], e[64];
	snprintf(o, sizeof(o), "%.15g", observed);
	snprintf(e, sizeof(e), "%.15g", expected);
	finding_compare(f, o, e);
}

/* The index of key's "key=value" entry in v, or v->n. */
static size_t fact_index(const struct strv *v, const char *key)
{
	size_t len = strlen(key);
	for (size_t i = 0; i < v->n; i++)
		if (!strncmp(v->v[i], key, len) && v->v[i][len] == '=')
			return i;
	return v->n;
}

void finding_fact(struct finding *f, const char *key, const char *value)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s=%s", key, value);
	size_t i = fact_index(&f->facts, key);
	if (i < f->facts.n) {
		free(f->facts.v[i]);
		f->facts.v[i] = strbuf_detach(&sb);
	} else {
		strv_push(&f->facts, strbuf_detach(&sb));
	}
}

void finding_fact_bool(struct finding *f, const char *key, bool value)
{
	finding_fact(f, key, value ? "true" : "false");
}

const char *finding_fact_get(const struct finding *f, const char *key)
{
	size_t i = fact_index(&f->facts, key);
	return i < f->facts.n ? f->facts.v[i] + strlen(key) + 1 : NULL;
}

void finding_requires(struct finding *f, const char *requirement)
{
	strv_add(&f->requires, requirement);
}

void report_set_status(struct report *r, struct finding *f, enum status st)
{
	r->counts[f->status]--;
	f->status = st;
	r->counts[st]++;
}

int report_exit_code(const struct report *r, bool strict)
{
	if (r->counts[STATUS_FAIL] > 0)
		return 1;
	if (strict && r->counts[STATUS_WARN] > 0)
		return 1;
	return 0;
}

/* ---- text ---- */

static const char *const tags[STATUS__COUNT] = {
	[STATUS_OK] = "OK", [STATUS_WARN] = "WARN", [STATUS_FAIL] = "FAIL", [STATUS_SKIP] = "SKIP", [STATUS_INFO] = "INFO",
};
static const char *const colors[STATUS__COUNT] = {
	[STATUS_OK] = "\033[32m", [STATUS_WARN] = "\033[33m", [STATUS_FAIL] = "\033[1;31m", [STATUS_SKIP] = "\033[36m",
	[STATUS_INFO] = "\033[2m",
};
#define RULE "=========================================="

/* Names and values come from the machine: a control character (a newline
 * that forges a line, an escape sequence) is shown as \xNN, never sent to
 * the terminal. */
static void text_field(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch < 0x20 || ch == 0x7f)
			fprintf(out, "\\x%02x", ch);
		else
			fputc(ch, out);
	}
}

static void section_title(FILE *out, const char *title, bool first)
{
	fprintf(out, "%s%s\n%s\n%s\n", first ? "" : "\n", RULE, title, RULE);
}

static void summary_line(const struct report *r, FILE *out)
{
	fprintf(out, "OK: %u  WARN: %u  FAIL: %u  SKIP: %u", r->counts[STATUS_OK], r->counts[STATUS_WARN],
		r->counts[STATUS_FAIL], r->counts[STATUS_SKIP]);
	if (r->counts[STATUS_INFO])
		fprintf(out, "  INFO: %u", r->counts[STATUS_INFO]);
	fputc('\n', out);
}

static void tag(FILE *out, enum status st, const struct render_opts *o)
{
	if (o->color)
		fprintf(out, "%s[%s]\033[0m", colors[st], tags[st]);
	else
		fprintf(out, "[%s]", tags[st]);
}

/* One check's findings: [first, end) of r->v, with the counts per status. */
struct check_run {
	size_t first, end;
	unsigned n[STATUS__COUNT];
};

static size_t next_check(const struct report *r, size_t i, struct check_run *c)
{
	memset(c, 0, sizeof(*c));
	c->first = i;
	while (i < r->n && !strcmp(r->v[i]->id, r->v[c->first]->id))
		c->n[r->v[i++]->status]++;
	c->end = i;
	return i;
}

static bool area_is(const char *id, const char *area, size_t len)
{
	return !strncmp(id, area, len) && (id[len] == '.' || id[len] == '\0');
}

static size_t area_len(const char *id)
{
	const char *dot = strchr(id, '.');
	return dot ? (size_t)(dot - id) : strlen(id);
}

/* What a skip is about, for putting skips with one cause on one line: the
 * message up to its explanation (" (...)", ": ..."). */
static size_t skip_cause_len(const char *m)
{
	size_t n = strlen(m);
	const char *p = strstr(m, " (");
	if (p && (size_t)(p - m) < n)
		n = (size_t)(p - m);
	p = strstr(m, ": ");
	if (p && (size_t)(p - m) < n)
		n = (size_t)(p - m);
	return n;
}

static void problem_lines(const struct report *r, FILE *out, const struct check_run *c, const struct render_opts *o)
{
	const char *last_hint = NULL;
	for (size_t i = c->first; i < c->end; i++) {
		const struct finding *f = r->v[i];
		if (f->status != STATUS_WARN && f->status != STATUS_FAIL)
			continue;
		tag(out, f->status, o);
		fputc(' ', out);
		text_field(out, f->id);
		fputs("  ", out);
		if (!area_is(f->id, f->subject, strlen(f->subject))) {
			text_field(out, f->subject);
			fputs(": ", out);
		}
		text_field(out, f->message);
		fputc('\n', out);
		if (f->pending) {
			fputs("       pending: ", out);
			text_field(out, f->pending);
			fputc('\n', out);
		}
		if (f->hint && (!last_hint || strcmp(last_hint, f->hint))) {
			fputs("       fix: ", out);
			text_field(out, f->hint);
			fputc('\n', out);
			last_hint = f->hint;
		}
		for (size_t k = 0; k < f->details.n; k++) {
			fputs("       ", out);
			text_field(out, f->details.v[k]);
			fputc('\n', out);
		}
	}
}

/* Skipped checks named on a line of skips with one cause; -v lists all. */
#define SKIP_IDS_SHOWN 4

/* Checks that only skipped, put together by cause. */
struct skip_groups {
	struct strv cause, ids, first; /* per group: the cause, the IDs shown, the first full message */
	unsigned *n;                   /* per group: how many checks */
};

static void skip_add(struct skip_groups *g, const struct report *r, const struct check_run *c)
{
	/* the check's first skip says why */
	const struct finding *f = NULL;
	for (size_t k = c->first; k < c->end && !f; k++)
		if (r->v[k]->status == STATUS_SKIP)
			f = r->v[k];
	_cleanup_free_ char *cause = xstrndup(f->message, skip_cause_len(f->message));
	size_t at = 0;
	while (at < g->cause.n && strcmp(g->cause.v[at], cause))
		at++;
	if (at == g->cause.n) {
		strv_add(&g->cause, cause);
		strv_push(&g->ids, xstrdup(f->id));
		strv_push(&g->first, area_is(f->id, f->subject, strlen(f->subject))
					     ? xstrdup(f->message)
					     : xasprintf("%s: %s", f->subject, f->message));
		g->n = xreallocarray(g->n, g->cause.n, sizeof(*g->n));
		g->n[at] = 0;
	}
	if (++g->n[at] > 1 && g->n[at] <= SKIP_IDS_SHOWN) {
		char *ids = xasprintf("%s, %s", g->ids.v[at], f->id);
		free(g->ids.v[at]);
		g->ids.v[at] = ids;
	}
}

static void skip_print(struct skip_groups *g, FILE *out, const struct render_opts *o)
{
	for (size_t i = 0; i < g->cause.n; i++) {
		tag(out, STATUS_SKIP, o);
		fputc(' ', out);
		if (g->n[i] == 1) {
			text_field(out, g->ids.v[i]);
			fputs("  ", out);
			text_field(out, g->first.v[i]);
		} else {
			fprintf(out, "%u checks  ", g->n[i]);
			text_field(out, g->cause.v[i]);
			fputs(": ", out);
			text_field(out, g->ids.v[i]);
			if (g->n[i] > SKIP_IDS_SHOWN)
				fprintf(out, " and %u more", g->n[i] - SKIP_IDS_SHOWN);
		}
		fputc('\n', out);
	}
}

static void skip_free(struct skip_groups *g)
{
	strv_free(&g->cause);
	strv_free(&g->ids);
	strv_free(&g->first);
	free(g->n);
}

/* The default report: per area, one line when every check passes; the
 * warn and fail findings one per line with their fix (each fix once);
 * checks that only skip, one line per cause at the end. */
static int write_compact(const struct report *r, FILE *out, const struct render_opts *o)
{
	struct skip_groups skips = { .cause = STRV_INIT, .ids = STRV_INIT, .first = STRV_INIT };
	for (size_t i = 0; i < r->n && !o->quiet; i++)
		if (r->v[i]->headline && r->v[i]->status != STATUS_WARN && r->v[i]->status != STATUS_FAIL) {
			tag(out, r->v[i]->status, o);
			fprintf(out, " %s  %s\n", r->v[i]->id, r->v[i]->message);
		}
	for (size_t a = 0; a < r->n;) {
		const char *area = r->v[a]->id;
		size_t alen = area_len(area);
		size_t end = a;
		while (end < r->n && area_is(r->v[end]->id, area, alen))
			end++;
		unsigned pass = 0, skipped = 0, problems = 0;
		struct check_run c;
		for (size_t i = a; i < end;) {
			i = next_check(r, i, &c);
			if (c.n[STATUS_WARN] || c.n[STATUS_FAIL]) {
				problems++;
				problem_lines(r, out, &c, o);
			} else if (c.n[STATUS_OK]) {
				pass++;
			} else if (c.n[STATUS_SKIP]) {
				skipped++;
				skip_add(&skips, r, &c);
			}
		}
		if (!o->quiet && pass) {
			tag(out, STATUS_OK, o);
			fprintf(out, " %.*s  %u%s check%s", (int)alen, area, pass, problems ? " other" : "",
				pass == 1 ? " passes" : "s pass");
			if (skipped)
				fprintf(out, ", %u skipped", skipped);
			fputc('\n', out);
		}
		a = end;
	}
	if (!o->quiet)
		skip_print(&skips, out, o);
	skip_free(&skips);
	summary_line(r, out);
	return ferror(out) ? -EIO : 0;
}

static int write_full(const struct report *r, FILE *out, const struct render_opts *o);

int report_write_text(const struct report *r, FILE *out, const struct render_opts *o)
{
	return o->verbose ? write_full(r, out, o) : write_compact(r, out, o);
}

void report_reason(const struct report *r, char *buf, size_t size)
{
	enum status worst = r->counts[STATUS_FAIL] ? STATUS_FAIL : r->counts[STATUS_WARN] ? STATUS_WARN : STATUS_OK;
	struct strbuf sb = STRBUF_INIT;
	if (worst == STATUS_OK) {
		strbuf_addf(&sb, "gpuready ok: %u ok, %u skip", r->counts[STATUS_OK], r->counts[STATUS_SKIP]);
	} else {
		strbuf_addf(&sb, "gpuready %u fail %u warn:", r->counts[STATUS_FAIL], r->counts[STATUS_WARN]);
		unsigned shown = 0, total = r->counts[worst];
		for (size_t i = 0; i < r->n; i++) {
			const struct finding *f = r->v[i];
			if (f->status != worst)
				continue;
			struct strbuf item = STRBUF_INIT;
			strbuf_addf(&item, "%s %s %s", shown ? "," : "", f->id, f->subject);
			char more[32];
			snprintf(more, sizeof(more), " (+%u more)", total - shown);
			/* room for this item and, if more follow, the "(+N more)" */
			size_t need = sb.len + item.len + (shown + 1 < total ? strlen(more) : 0);
			if (need >= size || need > REPORT_REASON_MAX) {
				strbuf_release(&item);
				strbuf_adds(&sb, more);
				break;
			}
			strbuf_adds(&sb, item.buf);
			strbuf_release(&item);
			shown++;
		}
	}
	/* printable ASCII, no quotes: safe inside Reason="..." */
	size_t k = 0;
	for (size_t i = 0; i < sb.len && k + 1 < size && k < REPORT_REASON_MAX; i++) {
		unsigned char ch = (unsigned char)sb.buf[i];
		buf[k++] = ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\'' || ch == '`' || ch == '\\' ? '_' : (char)ch;
	}
	if (size)
		buf[k] = '\0';
	strbuf_release(&sb);
}

/* The full report: every finding under its section title, the details of
 * passing ones too (-v). */
static int write_full(const struct report *r, FILE *out, const struct render_opts *o)
{
	const char *section = NULL;
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = r->v[i];
		if (!section || strcmp(section, f->section)) {
			section_title(out, f->section, section == NULL);
			section = f->section;
		}
		if (o->color)
			fprintf(out, "%s[%s]\033[0m ", colors[f->status], tags[f->status]);
		else
			fprintf(out, "[%s] ", tags[f->status]);
		text_field(out, f->subject);
		fputs(": ", out);
		text_field(out, f->message);
		fputc('\n', out);
		bool problem = f->status == STATUS_WARN || f->status == STATUS_FAIL;
		if (f->pending && problem) {
			fputs("       pending: ", out);
			text_field(out, f->pending);
			fputc('\n', out);
		}
		if (f->hint && problem) {
			fputs("       fix: ", out);
			text_field(out, f->hint);
			fputc('\n', out);
		}
		if (problem || o->verbose)
			for (size_t k = 0; k < f->details.n; k++) {
				fputs("       ", out);
				text_field(out, f->details.v[k]);
				fputc('\n', out);
			}
	}
	section_title(out, "Results", section == NULL);
	summary_line(r, out);
	return ferror(out) ? -EIO : 0;
}

/* ---- JSON ---- */

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	unsigned min, cp;
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0)
		n = 2, min = 0x80, cp = c & 0x1f;
	else if ((c & 0xf0) == 0xe0)
		n = 3, min = 0x800, cp = c & 0x0f;
	else if ((c & 0xf8) == 0xf0)
		n = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* s with every byte that is not part of valid UTF-8 replaced by U+FFFD:
 * JSON (RFC 8259) and the Prometheus format require UTF-8, and bytes from
 * files (a Latin-1 config, a corrupt attribute) end up in messages. */
char *utf8_clean(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		size_t n = utf8_seq(p);
		if (n) {
			strbuf_add(&sb, p, n);
			p += n;
		} else {
			strbuf_adds(&sb, "\xef\xbf\xbd");
			p++;
		}
	}
	return strbuf_detach(&sb);
}

json_object *utf8_json_string(const char *s)
{
	char *clean = utf8_clean(s);
	json_object *o = json_object_new_string(clean);
	free(clean);
	return o;
}

/* A compared value: a JSON number when the text is one, else a string. */
static json_object *json_value(const char *s)
{
	char *end = NULL;
	errno = 0;
	double d = strtod(s, &end);
	if (*s && end && !*end && errno == 0 && !strpbrk(s, "xXnN"))
		return d == (double)(long long)d && d > -1e15 && d < 1e15 ? json_object_new_int64((long long)d)
									    : json_object_new_double(d);
	return utf8_json_string(s);
}

/* key: an array of v's strings, left out when v is empty. */
static void json_add_strv(json_object *o, const char *key, const struct strv *v)
{
	if (!v->n)
		return;
	json_object *a = json_object_new_array();
	for (size_t k = 0; k < v->n; k++)
		json_object_array_add(a, utf8_json_string(v->v[k]));
	json_object_object_add(o, key, a);
}

/* RFC 3339 in UTC, whole seconds: "2026-11-25T10:00:00Z". */
static void rfc3339(double t, char *buf, size_t size)
{
	time_t s = (time_t)t;
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int report_write_json(const struct report *r, FILE *out)
{
	json_object *root = json_object_new_object();
	json_object_object_add(root, "schema_version", json_object_new_int(REPORT_SCHEMA_VERSION));
	json_object_object_add(root, "version", utf8_json_string(r->version));
	json_object_object_add(root, "scope", utf8_json_string(r->scope));
	if (r->timestamp > 0) {
		char ts[40];
		rfc3339(r->timestamp, ts, sizeof(ts));
		json_object_object_add(root, "timestamp", json_object_new_string(ts));
	}
	json_object_object_add(root, "host", utf8_json_string(r->host));
	json_object_object_add(root, "sysroot", utf8_json_string(r->sysroot));
	json_object *checks = json_object_new_array();
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = r->v[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "id", utf8_json_string(f->id));
		json_object_object_add(o, "section", utf8_json_string(f->section));
		json_object_object_add(o, "status", utf8_json_string(status_name(f->status)));
		json_object_object_add(o, "subject", utf8_json_string(f->subject));
		json_object_object_add(o, "message", utf8_json_string(f->message));
		if (f->hint)
			json_object_object_add(o, "hint", utf8_json_string(f->hint));
		if (f->pending)
			json_object_object_add(o, "pending", utf8_json_string(f->pending));
		if (f->observed)
			json_object_object_add(o, "observed", json_value(f->observed));
		if (f->expected)
			json_object_object_add(o, "expected", json_value(f->expected));
		json_add_strv(o, "details", &f->details);
		json_add_strv(o, "facts", &f->facts);
		json_add_strv(o, "requires", &f->requires);
		json_object_array_add(checks, o);
	}
	json_object_object_add(root, "checks", checks);
	json_object *sum = json_object_new_object();
	for (int s = 0; s < STATUS__COUNT; s++)
		json_object_object_add(sum, status_name(s), json_object_new_int((int)r->counts[s]));
	json_object_object_add(root, "summary", sum);
	const char *txt = json_object_to_json_string_ext(
		root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	fputs(txt, out);
	fputc('\n', out);
	json_object_put(root);
	return ferror(out) ? -EIO : 0;
}
