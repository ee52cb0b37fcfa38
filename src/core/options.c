/* Declarative option parsing, help and man page output; see options.h. */
#include "options.h"
#include "cleanup.h"
#include "parse.h"
#include "strbuf.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int fail(char **err, const char *fmt, const char *a, const char *b)
{
	*err = xasprintf(fmt, a, b);
	return -EINVAL;
}

static int parse_size(const char *v, uint64_t *ret)
{
	char buf[64];
	size_t n = strlen(v);
	uint64_t mul = 1;
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, v, n + 1);
	switch (buf[n - 1]) {
	case 'K': case 'k': mul = 1ull << 10; break;
	case 'M': case 'm': mul = 1ull << 20; break;
	case 'G': case 'g': mul = 1ull << 30; break;
	}
	if (mul != 1)
		buf[n - 1] = '\0';
	uint64_t x;
	int r = parse_u64(buf, 0, &x);
	if (r < 0)
		return r;
	if (x > UINT64_MAX / mul)
		return -ERANGE;
	*ret = x * mul;
	return 0;
}

int opt_assign(const struct opt *o, void *target, const char *value, char **err)
{
	char *p = (char *)target + o->offset;
	switch (o->type) {
	case OPT_FLAG: {
		bool b;
		if (!value || !strcmp(value, "1") || !strcasecmp(value, "yes") || !strcasecmp(value, "true") ||
		    !strcasecmp(value, "on"))
			b = true;
		else if (!strcmp(value, "0") || !strcasecmp(value, "no") || !strcasecmp(value, "false") ||
			 !strcasecmp(value, "off"))
			b = false;
		else
			return fail(err, "--%s: '%s' is not a boolean (yes/no)", o->name, value);
		*(bool *)p = b;
		return 0;
	}
	case OPT_STRING: {
		const char *form = o->valid ? o->valid(value) : NULL;
		if (form) {
			*err = xasprintf("--%s: '%s' is not %s", o->name, value, form);
			return -EINVAL;
		}
		free(*(char **)p);
		*(char **)p = xstrdup(value);
		return 0;
	}
	case OPT_INT: {
		/* decimal, or hex with 0x; never octal: "010" is ten */
		int v;
		bool hex = value[0] == '0' && (value[1] == 'x' || value[1] == 'X');
		if (parse_int(value, hex ? 16 : 10, &v) < 0)
			return fail(err, "--%s: '%s' is not an integer", o->name, value);
		if ((o->min || o->max) && (v < o->min || v > o->max)) {
			*err = xasprintf("--%s: %d is out of range %g..%g", o->name, v, o->min, o->max);
			return -EINVAL;
		}
		*(int *)p = v;
		return 0;
	}
	case OPT_U64: {
		uint64_t v;
		if (parse_size(value, &v) < 0)
			return fail(err, "--%s: '%s' is not a size (digits with optional K/M/G)", o->name, value);
		if (o->min > 0 && (double)v < o->min) {
			*err = xasprintf("--%s: %s is below the smallest allowed, %.0f", o->name, value, o->min);
			return -EINVAL;
		}
		*(uint64_t *)p = v;
		return 0;
	}
	case OPT_DOUBLE: {
		double v;
		char *end;
		if (!*value)
			return fail(err, "--%s: empty value%s", o->name, "");
		v = strtod(value, &end);
		if (*end || !isfinite(v))
			return fail(err, "--%s: '%s' is not a number", o->name, value);
		if ((o->min || o->max) && (v < o->min || v > o->max)) {
			*err = xasprintf("--%s: %g is out of range %g..%g", o->name, v, o->min, o->max);
			return -EINVAL;
		}
		*(double *)p = v;
		return 0;
	}
	case OPT_LIST: {
		struct strv *sv = (struct strv *)p;
		char *copy = xstrdup(value), *save = NULL;
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			t = str_trim(t);
			if (*t)
				strv_add(sv, t);
		}
		free(copy);
		return 0;
	}
	}
	return fail(err, "--%s: internal error%s", o->name, "");
}

bool opt_seen_has(const struct opt_seen *seen, const struct opt *o)
{
	for (size_t i = 0; seen && i < seen->n; i++)
		if (seen->v[i] == o)
			return true;
	return false;
}

const struct opt *opt_seen_name(const struct opt_seen *seen, const char *name)
{
	for (size_t i = 0; seen && i < seen->n; i++)
		if (!strcmp(seen->v[i]->name, name))
			return seen->v[i];
	return NULL;
}

static void seen_add(struct opt_seen *seen, const struct opt *o)
{
	if (seen && !opt_seen_has(seen, o) && seen->n < OPT_SEEN_MAX)
		seen->v[seen->n++] = o;
}

/* Walks each row of tables that is in scope, in table order. */
#define FOR_EACH_IN_SCOPE(tables_, scope_, o)                                            \
	for (const struct opt_table *const *t_ = (tables_); *t_; t_++)                   \
		for (const struct opt *o = (*t_)->rows; o < (*t_)->rows + (*t_)->n; o++) \
			if (o->scope & (scope_))

/* The lookups skip options of other scopes, so two commands may use one
 * name or letter differently (--json FLAG for checks, --json FILE for
 * benchmarks; -n). */
static const struct opt *find_long(const struct opt_table *const *tables, unsigned scope, const char *name,
				   size_t len)
{
	for (; *tables; tables++)
		for (size_t i = 0; i < (*tables)->n; i++) {
			const struct opt *o = &(*tables)->rows[i];
			if (!(o->scope & scope))
				continue;
			if (strlen(o->name) == len && !strncmp(o->name, name, len))
				return o;
			if (o->alias && strlen(o->alias) == len && !strncmp(o->alias, name, len))
				return o;
		}
	return NULL;
}

const struct opt *opt_find(const struct opt_table *const *tables, unsigned scope, const char *name)
{
	return find_long(tables, scope, name, strlen(name));
}

static const struct opt *find_short(const struct opt_table *const *tables, unsigned scope, char c)
{
	for (; *tables; tables++)
		for (size_t i = 0; i < (*tables)->n; i++) {
			const struct opt *o = &(*tables)->rows[i];
			if ((o->scope & scope) && o->short_name && o->short_name == c)
				return o;
		}
	return NULL;
}

/* An option that is not in scope: says whether it is another scope's
 * (seen->other) or which name in scope is nearest (seen->nearest).
 * name is the long name (len bytes) or NULL for the short letter c. */
static int refuse(const struct opt_table *const *tables, unsigned scope, const char *name, size_t len, char c,
		  const char *arg, struct opt_seen *seen, char **err)
{
	const struct opt *other = name ? find_long(tables, ~0u, name, len) : find_short(tables, ~0u, c);
	if (other) {
		if (seen)
			seen->other = other;
		return fail(err, "option '%s' does not apply to this command%s", arg, "");
	}
	if (seen && name) {
		_cleanup_free_ char *want = xstrndup(name, len);
		struct str_nearest n = STR_NEAREST_INIT(want);
		FOR_EACH_IN_SCOPE(tables, scope, o) {
			const char *was = n.best;
			str_nearest_offer(&n, o->name);
			if (n.best != was)
				seen->nearest = o;
		}
	}
	return fail(err, "unknown option '%s'%s", arg, "");
}

int opt_parse(const struct opt_table *const *tables, unsigned scope, int argc, char **argv, void *target,
	      struct opt_seen *seen, struct strv *pos, char **err)
{
	bool only_pos = false;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1]) {
			strv_add(pos, a);
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		const struct opt *o;
		const char *value = NULL;
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(tables, scope, name, len);
			if (!o)
				return refuse(tables, scope, name, len, 0, a, seen, err);
			if (eq)
				value = eq + 1;
		} else {
			o = find_short(tables, scope, a[1]);
			if (!o)
				return refuse(tables, scope, NULL, 0, a[1], a, seen, err);
			if (a[2]) {
				if (o->type == OPT_FLAG) {
					*err = xasprintf("option '-%c' takes no value ('%s')", a[1], a);
					return -EINVAL;
				}
				value = a + 2;
			}
		}
		if (o->type == OPT_FLAG) {
			if (value)
				return fail(err, "option '--%s' takes no value%s", o->name, "");
		} else if (!value) {
			if (i + 1 >= argc)
				return fail(err, "option '--%s' needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE");
			value = argv[++i];
		}
		int r = opt_assign(o, target, value, err);
		if (r < 0)
			return r;
		seen_add(seen, o);
	}
	return 0;
}

void opt_set_defaults(const struct opt_table *const *tables, void *target)
{
	for (; *tables; tables++)
		for (size_t i = 0; i < (*tables)->n; i++) {
			const struct opt *o = &(*tables)->rows[i];
			char *p = (char *)target + o->offset;
			if (!o->def.set)
				continue;
			switch (o->type) {
			case OPT_FLAG: *(bool *)p = o->def.i != 0; break;
			case OPT_INT: *(int *)p = o->def.i; break;
			case OPT_U64: *(uint64_t *)p = o->def.u; break;
			case OPT_DOUBLE: *(double *)p = o->def.d; break;
			case OPT_STRING:
				free(*(char **)p);
				*(char **)p = o->def.s ? xstrdup(o->def.s) : NULL;
				break;
			case OPT_LIST: break;
			}
		}
}

const char *opt_format_default(const struct opt *o, char *buf, size_t len)
{
	static const char suffix[] = "GMK";
	if (!o->def.set || o->def.hidden)
		return NULL;
	switch (o->type) {
	case OPT_INT:
		snprintf(buf, len, "%d", o->def.i);
		return buf;
	case OPT_DOUBLE:
		snprintf(buf, len, "%g", o->def.d);
		return buf;
	case OPT_STRING:
		return o->def.s;
	case OPT_U64:
		for (int k = 0; k < 3; k++) {
			uint64_t unit = 1ull << (10 * (3 - k));
			if (o->def.u && o->def.u % unit == 0) {
				snprintf(buf, len, "%llu%c", (unsigned long long)(o->def.u / unit), suffix[k]);
				return buf;
			}
		}
		snprintf(buf, len, "%llu", (unsigned long long)o->def.u);
		return buf;
	case OPT_FLAG:
	case OPT_LIST:
		break;
	}
	return NULL;
}

static void print_names(struct strbuf *sb, const struct opt *o)
{
	if (o->short_name)
		strbuf_addf(sb, "-%c, ", o->short_name);
	strbuf_addf(sb, "--%s", o->name);
	if (o->alias)
		strbuf_addf(sb, ", --%s", o->alias);
	if (o->type != OPT_FLAG)
		strbuf_addf(sb, " %s", o->metavar ? o->metavar : "VALUE");
}

void opt_print_help(FILE *out, const struct opt_table *const *tables, unsigned scope)
{
	FOR_EACH_IN_SCOPE(tables, scope, o) {
		struct strbuf sb = STRBUF_INIT;
		char dbuf[32];
		const char *def = opt_format_default(o, dbuf, sizeof(dbuf));
		print_names(&sb, o);
		fprintf(out, "  %-24s %s", sb.buf, o->help);
		if (def)
			fprintf(out, " (default: %s)", def);
		if (o->key)
			fprintf(out, " [config: %s]", o->key);
		fputc('\n', out);
		strbuf_release(&sb);
	}
}

/* roff needs '-' written as '\-', and a '.' or '\'' at the start of a
 * line (which roff reads as a request) guarded with the zero-width '\&'.
 * Every call starts a line or continues one; line_start says which. */
static void roff_at(FILE *out, const char *s, bool line_start)
{
	if (line_start && (*s == '.' || *s == '\''))
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '-' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
		if (*s == '\n' && (s[1] == '.' || s[1] == '\''))
			fputs("\\&", out);
	}
}

static void roff(FILE *out, const char *s)
{
	roff_at(out, s, false);
}

void opt_print_man(FILE *out, const struct opt_table *const *tables, unsigned scope)
{
	FOR_EACH_IN_SCOPE(tables, scope, o) {
		char dbuf[32];
		const char *def = opt_format_default(o, dbuf, sizeof(dbuf));
		fputs(".TP\n\\fB", out);
		if (o->short_name)
			fprintf(out, "\\-%c\\fR, \\fB", o->short_name);
		fputs("\\-\\-", out);
		roff(out, o->name);
		if (o->alias) {
			fputs("\\fR, \\fB\\-\\-", out);
			roff(out, o->alias);
		}
		fputs("\\fR", out);
		if (o->type != OPT_FLAG) {
			fputs(" \\fI", out);
			roff(out, o->metavar ? o->metavar : "VALUE");
			fputs("\\fR", out);
		}
		fputc('\n', out);
		roff_at(out, o->help, true);
		if (def) {
			fputs(" Default: ", out);
			roff(out, def);
			fputc('.', out);
		}
		if (o->key) {
			fputs(" Config key: \\fB", out);
			roff(out, o->key);
			fputs("\\fR.", out);
		}
		fputc('\n', out);
	}
}

void opt_free_values(const struct opt_table *const *tables, void *target)
{
	FOR_EACH_IN_SCOPE(tables, ~0u, o) {
		char *p = (char *)target + o->offset;
		if (o->type == OPT_STRING) {
			free(*(char **)p);
			*(char **)p = NULL;
		} else if (o->type == OPT_LIST) {
			strv_free((struct strv *)p);
		}
	}
}
