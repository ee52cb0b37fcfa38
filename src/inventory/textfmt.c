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

/* The '=' of an nccl.conf assignment line, or NULL for a line NCCL skips. */
static char *nccl_conf_eq(char *s)
{
	if (s[0] == '#')
		return NULL;
	char *eq = strchr(s, '=');
	return eq && eq != s ? eq : NULL;
}

void textfmt_nccl_conf(const char *text, size_t len, assign_fn fn, void *ud)
{
	struct lines l = { .text = text, .len = len, .line = STRBUF_INIT };
	while (next_line(&l)) {
		char *s = l.line.buf;
		/* NCCL strips only the newline; a CR from a DOS file stays in
		 * the value, which is worth seeing, so keep it too. */
		char *eq = nccl_conf_eq(s);
		if (!eq)
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
 * a '#' after a blank starts a comment. Returns the bytes it read. */
static size_t shell_value(const char *s, struct strbuf *out)
{
	const char *start = s;
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
	return (size_t)(s - start);
}

/* The name a shell line assigns or exports: it starts at the returned
 * pointer (NULL for a line that does neither) and is *n bytes long; the
 * line is trimmed in place. */
static char *shell_line(char *line, bool *export_kw, size_t *n)
{
	char *s = str_trim(line);
	*export_kw = false;
	if (s[0] == '#' || !*s)
		return NULL;
	if (str_startswith(s, "export ") || str_startswith(s, "export\t")) {
		s = str_trim(s + 7);
		*export_kw = true;
	} else if (str_startswith(s, "declare -x ")) {
		s = str_trim(s + 11);
		*export_kw = true;
	}
	*n = strcspn(s, "= \t;");
	return valid_name(s, *n) ? s : NULL;
}

void textfmt_shell_exports(const char *text, size_t len, assign_fn fn, void *ud)
{
	struct lines l = { .text = text, .len = len, .line = STRBUF_INIT };
	struct strbuf val = STRBUF_INIT;
	/* assignments not (yet) exported, and names carrying the export
	 * attribute: in sh, `export A` before or after `A=v` exports v */
	struct strv pn = STRV_INIT, pv = STRV_INIT, pl = STRV_INIT, exported = STRV_INIT;
	while (next_line(&l)) {
		bool export_kw;
		size_t n;
		char *s = shell_line(l.line.buf, &export_kw, &n);
		if (!s)
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
/* The name of an /etc/environment assignment line (ended by its '='), or
 * NULL; the line is trimmed in place. */
static char *environment_line(char *line)
{
	char *s = str_trim(line);
	if (s[0] == '#' || !*s)
		return NULL;
	if (str_startswith(s, "export "))
		s = str_trim(s + 7);
	size_t n = strcspn(s, "=");
	return s[n] == '=' && valid_name(s, n) ? s : NULL;
}

void textfmt_environment(const char *text, size_t len, assign_fn fn, void *ud)
{
	struct lines l = { .text = text, .len = len, .line = STRBUF_INIT };
	while (next_line(&l)) {
		char *s = environment_line(l.line.buf);
		if (!s)
			continue;
		size_t n = strcspn(s, "=");
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

/* ---- what a snapshot keeps ----
 * Each *_keep_len() returns how many bytes of a line (a C string, which it
 * may change) the parser reads for an assignment of a kept name, 0 for a
 * line it keeps nothing of. The name is always at the line's start or
 * after blanks and a keyword, so the kept part is a prefix of the line. */

static size_t nccl_conf_keep_len(char *line, textfmt_keep_fn keep)
{
	char *eq = nccl_conf_eq(line);
	if (!eq)
		return 0;
	*eq = '\0';
	bool k = keep(line);
	*eq = '=';
	return k ? strlen(line) : 0;
}

static size_t shell_keep_len(char *line, textfmt_keep_fn keep)
{
	bool export_kw;
	size_t n;
	char *s = shell_line(line, &export_kw, &n);
	if (!s || (s[n] != '=' && !export_kw))
		return 0;
	char save = s[n];
	s[n] = '\0';
	bool k = keep(s);
	s[n] = save;
	if (!k)
		return 0;
	size_t end = (size_t)(s - line) + n;
	if (save == '=') {
		struct strbuf val = STRBUF_INIT;
		end += 1 + shell_value(s + n + 1, &val);
		strbuf_release(&val);
	}
	return end;
}

static size_t environment_keep_len(char *line, textfmt_keep_fn keep)
{
	char *s = environment_line(line);
	if (!s)
		return 0;
	size_t n = strcspn(s, "=");
	s[n] = '\0';
	bool k = keep(s);
	s[n] = '=';
	return k ? (size_t)(s - line) + strlen(s) : 0;
}

static void keep_lines(const char *text, size_t len, size_t (*keep_len)(char *, textfmt_keep_fn),
		       textfmt_keep_fn keep, struct strbuf *out)
{
	struct lines l = { .text = text, .len = len, .line = STRBUF_INIT };
	strbuf_reset(out);
	for (size_t start = 0; next_line(&l); start = l.pos) {
		size_t raw = l.line.len;
		strbuf_add(out, text + start, keep_len(l.line.buf, keep));
		if (start + raw < len)
			strbuf_addch(out, '\n');
	}
	strbuf_release(&l.line);
}

void textfmt_nccl_conf_keep(const char *text, size_t len, textfmt_keep_fn keep, struct strbuf *out)
{
	keep_lines(text, len, nccl_conf_keep_len, keep, out);
}

void textfmt_shell_exports_keep(const char *text, size_t len, textfmt_keep_fn keep, struct strbuf *out)
{
	keep_lines(text, len, shell_keep_len, keep, out);
}

void textfmt_environment_keep(const char *text, size_t len, textfmt_keep_fn keep, struct strbuf *out)
{
	keep_lines(text, len, environment_keep_len, keep, out);
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
