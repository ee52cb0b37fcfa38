/* A unified diff of two small texts (configuration files), as `diff -u`
 * prints it: hunks with three lines of context. The edit script is the
 * longest common subsequence of lines (dynamic programming, O(n·m));
 * configuration files are short, and past FIX_DIFF_MAX_CELLS the whole
 * old text is shown removed and the new one added. */
#include "fix/fix.h"

#include "core/cleanup.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FIX_DIFF_MAX_CELLS (4u << 20)
#define CONTEXT 3

struct lines {
	const char **s;
	size_t *len;
	size_t n;
	bool no_eol; /* the last line has no newline */
};

static void split(const struct strbuf *b, struct lines *l)
{
	memset(l, 0, sizeof(*l));
	const char *p = b->buf, *end = b->buf + b->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		l->s = xreallocarray(l->s, l->n + 1, sizeof(*l->s));
		l->len = xreallocarray(l->len, l->n + 1, sizeof(*l->len));
		l->s[l->n] = p;
		l->len[l->n++] = n;
		if (!nl)
			l->no_eol = true;
		p += n + 1;
	}
}

static bool same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->s[i], b->s[j], a->len[i]) &&
	       ((i + 1 == a->n && a->no_eol) == (j + 1 == b->n && b->no_eol));
}

/* ops: ' ' kept, '-' removed, '+' added, in order; with the index in a or b. */
struct op {
	char kind;
	size_t i; /* in a for ' ' and '-', in b for '+' */
	size_t j; /* in b for ' ' */
};

static size_t edit_script(const struct lines *a, const struct lines *b, struct op *ops)
{
	size_t n = a->n, m = b->n, k = 0;
	if ((uint64_t)(n + 1) * (m + 1) > FIX_DIFF_MAX_CELLS) {
		for (size_t i = 0; i < n; i++)
			ops[k++] = (struct op){ '-', i, 0 };
		for (size_t j = 0; j < m; j++)
			ops[k++] = (struct op){ '+', j, 0 };
		return k;
	}
	/* L[i][j]: LCS length of a[i..] and b[j..] */
	uint32_t *L = xcalloc((n + 1) * (m + 1), sizeof(*L));
#define AT(i, j) L[(size_t)(i) * (m + 1) + (j)]
	for (size_t i = n; i-- > 0;)
		for (size_t j = m; j-- > 0;)
			AT(i, j) = same(a, i, b, j) ? AT(i + 1, j + 1) + 1
						    : (AT(i + 1, j) >= AT(i, j + 1) ? AT(i + 1, j) : AT(i, j + 1));
	size_t i = 0, j = 0;
	while (i < n || j < m) {
		if (i < n && j < m && same(a, i, b, j)) {
			ops[k++] = (struct op){ ' ', i++, j++ };
		} else if (i < n && (j == m || AT(i + 1, j) >= AT(i, j + 1))) {
			ops[k++] = (struct op){ '-', i++, 0 }; /* removals first, as diff -u */
		} else {
			ops[k++] = (struct op){ '+', j++, 0 };
		}
	}
#undef AT
	free(L);
	return k;
}

static void line_out(FILE *out, char kind, const struct lines *l, size_t i)
{
	fprintf(out, "%c%.*s\n", kind, (int)l->len[i], l->s[i]);
	if (i + 1 == l->n && l->no_eol)
		fputs("\\ No newline at end of file\n", out);
}

/* "start,count" as diff -u writes it (start 0 for an empty range). */
static void range(FILE *out, char sign, size_t start, size_t count)
{
	if (count == 1)
		fprintf(out, "%c%zu", sign, start + 1);
	else
		fprintf(out, "%c%zu,%zu", sign, count ? start + 1 : start, count);
}

static void hunk(FILE *out, const struct op *ops, size_t from, size_t to, const struct lines *a,
		 const struct lines *b)
{
	size_t a0 = SIZE_MAX, b0 = SIZE_MAX, na = 0, nb = 0, ai = 0, bj = 0;
	/* positions before the hunk: count the ops before it */
	for (size_t k = 0; k < from; k++) {
		ai += ops[k].kind != '+';
		bj += ops[k].kind != '-';
	}
	a0 = ai;
	b0 = bj;
	for (size_t k = from; k < to; k++) {
		na += ops[k].kind != '+';
		nb += ops[k].kind != '-';
	}
	fputs("@@ ", out);
	range(out, '-', a0, na);
	fputc(' ', out);
	range(out, '+', b0, nb);
	fputs(" @@\n", out);
	for (size_t k = from; k < to; k++) {
		if (ops[k].kind == '+')
			line_out(out, '+', b, ops[k].i);
		else
			line_out(out, ops[k].kind, a, ops[k].i);
	}
}

void fix_diff(const char *path, const struct strbuf *a, bool a_exists, const struct strbuf *b, FILE *out)
{
	struct lines la, lb;
	split(a, &la);
	split(b, &lb);
	struct op *ops = xcalloc(la.n + lb.n + 1, sizeof(*ops));
	size_t n = edit_script(&la, &lb, ops);
	bool changed = false;
	for (size_t k = 0; k < n; k++)
		changed |= ops[k].kind != ' ';
	if (changed || a_exists != true) {
		fprintf(out, "--- %s%s\n+++ %s\n", a_exists ? "" : "/dev/null", a_exists ? path : "", path);
		size_t k = 0;
		while (k < n) {
			while (k < n && ops[k].kind == ' ')
				k++;
			if (k == n)
				break;
			size_t from = k > CONTEXT ? k - CONTEXT : 0, end = k;
			/* extend while the next change is within 2*CONTEXT kept lines */
			for (;;) {
				while (end < n && ops[end].kind != ' ')
					end++;
				size_t kept = 0;
				while (end + kept < n && ops[end + kept].kind == ' ')
					kept++;
				if (end + kept < n && kept <= 2 * CONTEXT) {
					end += kept;
					continue;
				}
				end += kept < CONTEXT ? kept : CONTEXT;
				break;
			}
			hunk(out, ops, from, end, &la, &lb);
			k = end;
		}
	}
	free(ops);
	free(la.s);
	free(la.len);
	free(lb.s);
	free(lb.len);
}
