/* Config file format parsers; see textfmt.h. */
#include "textfmt.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct lines {
	const char *text;
	size_t len, pos;
	unsigned no;
	struct strbuf line;
};

/* Next line into l->line (without newline). false at the end. */
static bool next_line(struct lines *l)
{
	if (l->pos >= l->len)
		return false;
	size_t j = l->pos;
	while (j < l->len && l->text[j] != '\n')
		j++;
	strbuf_reset(&l->line);
	strbuf_add(&l->line, l->text + l->pos, j - l->pos);
	strbuf_grow(&l->line, 1);
	l->pos = j + 1;
	l->no++;
	return true;
}

void textfmt_nccl_conf(const char *text, size_t len, assign_fn fn, void *ud)
{
	struct lines l = { .text = text, .len = len, .line = STRBUF_INIT };
	while (next_line(&l)) {
		char *s = l.line.buf;
		if (s[0] == '#')
			continue;
		/* NCCL strips only the newline; a CR from a DOS file stays in
		 * the value, which is worth seeing, so keep it too. */
		char *eq = strchr(s, '=');
		if (!eq || eq == s)
			continue;
		*eq = '\0';
		fn(ud, s, eq + 1, l.no);
	}
	strbuf_release(&l.line);
}

static bool valid_name(const char *s, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

/* Shell word after '=': quotes removed, stops at unquoted blank or ';',
 * a '#' after a blank starts a comment. */
static void shell_value(const char *s, struct strbuf *out)
{
	char q = 0;
	strbuf_reset(out);
	for (; *s; s++) {
		if (q) {
			if (*s == q)
				q = 0;
			else if (q == '"' && *s == '\\' && s[1])
				strbuf_addch(out, *++s);
			else
				strbuf_addch(out, *s);
			continue;
		}
		if (*s == '"' || *s == '\'') {
			q = *s;
			continue;
		}
		if (isspace((unsigned char)*s) || *s == ';')
			break;
		if (*s == '\\' && s[1]) {
			strbuf_addch(out, *++s);
			continue;
		}
		strbuf_addch(out, *s);
	}
}

void textfmt_shell_exports(const char *text, size_t len, assign_fn fn, void *ud)
{
	struct lines l = { .text = text, .len = len, .line = STRBUF_INIT };
	struct strbuf val = STRBUF_INIT;
	/* assignments not (yet) exported, and names carrying the export
	 * attribute: in sh, `export A` before or after `A=v` exports v */
	struct strv pn = STRV_INIT, pv = STRV_INIT, pl = STRV_INIT, exported = STRV_INIT;
	while (next_line(&l)) {
		char *s = str_trim(l.line.buf);
		bool export_kw = false;
		if (s[0] == '#' || !*s)
			continue;
		if (str_startswith(s, "export ") || str_startswith(s, "export\t")) {
			s = str_trim(s + 7);
			export_kw = true;
		} else if (str_startswith(s, "declare -x ")) {
			s = str_trim(s + 11);
			export_kw = true;
		}
		size_t n = strcspn(s, "= \t;");
		if (!valid_name(s, n))
			continue;
		_cleanup_free_ char *name = xstrndup(s, n);
		if (s[n] != '=') {
			if (!export_kw)
				continue;
			/* `export NAME` exports an earlier plain assignment */
			for (size_t i = pn.n; i-- > 0;)
				if (!strcmp(pn.v[i], name)) {
					fn(ud, name, pv.v[i], (unsigned)strtoul(pl.v[i], NULL, 10));
					break;
				}
			if (!strv_contains(&exported, name))
				strv_add(&exported, name);
			continue;
		}
		shell_value(s + n + 1, &val);
		if (export_kw || strv_contains(&exported, name)) {
			fn(ud, name, val.buf, l.no);
			if (!strv_contains(&exported, name))
				strv_add(&exported, name);
		} else {
			strv_add(&pn, name);
			strv_add(&pv, val.buf);
			strv_push(&pl, xasprintf("%u", l.no));
		}
	}
	strv_free(&pn);
	strv_free(&pv);
	strv_free(&pl);
	strv_free(&exported);
	strbuf_release(&val);
	strbuf_release(&l.line);
}

/* pam_env's reading of /etc/environment: the value is the rest of the line
 * (spaces included), trailing blanks and CR dropped, one pair of
 * surrounding quotes removed; nothing is expanded. */
void textfmt_environment(const char *text, size_t len, assign_fn fn, void *ud)
{
	struct lines l = { .text = text, .len = len, .line = STRBUF_INIT };
	while (next_line(&l)) {
		char *s = str_trim(l.line.buf);
		if (s[0] == '#' || !*s)
			continue;
		if (str_startswith(s, "export "))
			s = str_trim(s + 7);
		size_t n = strcspn(s, "=");
		if (s[n] != '=' || !valid_name(s, n))
			continue;
		s[n] = '\0';
		char *v = s + n + 1;
		size_t vl = strlen(v);
		while (vl > 0 && isspace((unsigned char)v[vl - 1]))
			vl--;
		if (vl > 0 && (v[0] == '"' || v[0] == '\'')) {
			bool closed = vl >= 2 && v[vl - 1] == v[0];
			v++;
			vl -= closed ? 2 : 1;
		}
		v[vl] = '\0';
		fn(ud, s, v, l.no);
	}
	strbuf_release(&l.line);
}

void textfmt_limits(const char *text, size_t len, limit_fn fn, void *ud)
{
	struct lines l = { .text = text, .len = len, .line = STRBUF_INIT };
	while (next_line(&l)) {
		char *hash = strchr(l.line.buf, '#');
		if (hash)
			*hash = '\0';
		char *f[4];
		int nf = 0;
		char *save = NULL;
		for (char *t = strtok_r(l.line.buf, " \t\r", &save); t && nf < 4; t = strtok_r(NULL, " \t\r", &save))
			f[nf++] = t;
		if (nf == 4)
			fn(ud, f[0], f[1], f[2], f[3], l.no);
	}
	strbuf_release(&l.line);
}
