/* Unit tests for the SVG plots (bench/plot).
 *
 * A small checker parses the output as XML far enough to prove it is one
 * well-formed <svg> document: balanced tags, quoted attributes without '<'
 * or stray '&', only the elements the writer emits, every coordinate a
 * "%.2f"-style number inside the 900 x 640 viewBox. It also counts the
 * polylines per panel group and collects the text of <text> elements so the
 * tests can look for tick labels and escaped titles. */
#define _GNU_SOURCE
#include "testutil.h"
#include "bench/plot.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VB_W 900.0
#define VB_H 640.0

static char *render(const char *title, const char *subtitle, const struct plot_series *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(plot_write_svg(f, title, subtitle, s, n), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(strlen(buf), len);
	return buf;
}

/* ---- the checker ---- */

struct svgcheck {
	int polylines[3];      /* in g#busbw, g#time, elsewhere */
	int polyline_points[3];
	int legend_texts;
	int elements;
	struct strv texts;     /* content of every <text>, entities decoded */
	struct strv strokes;   /* stroke colour of every polyline, each once */
};

static bool one_of(const char *s, size_t n, const char *const *set)
{
	for (; *set; set++)
		if (strlen(*set) == n && !strncmp(s, *set, n))
			return true;
	return false;
}

/* "123.45": digits, a dot, exactly two digits. */
static double coord(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	if (!(i > 0 && i + 3 == n && s[i] == '.' && isdigit((unsigned char)s[i + 1]) &&
	      isdigit((unsigned char)s[i + 2])))
		fail_msg("coordinate \"%.*s\" is not %%.2f >= 0", (int)n, s);
	return strtod(s, NULL);
}

static void check_points(struct svgcheck *c, const char *v, size_t n, int group)
{
	const char *end = v + n;
	while (v < end) {
		const char *sp = memchr(v, ' ', (size_t)(end - v));
		const char *pe = sp ? sp : end;
		const char *comma = memchr(v, ',', (size_t)(pe - v));
		assert_non_null(comma);
		double x = coord(v, (size_t)(comma - v)), y = coord(comma + 1, (size_t)(pe - comma - 1));
		assert_true(x >= 0 && x <= VB_W && y >= 0 && y <= VB_H);
		if (group >= 0)
			c->polyline_points[group]++;
		v = sp ? sp + 1 : end;
	}
}

/* Attribute value rules, and the coordinate attributes inside the box. */
static void check_attr(struct svgcheck *c, const char *el, size_t el_n, const char *name, size_t nn,
		       const char *v, size_t vn, int group)
{
	static const char *const xs[] = { "x", "x1", "x2", "cx", NULL }, *const ys[] = { "y", "y1", "y2", "cy", NULL };
	for (size_t i = 0; i < vn; i++) {
		assert_true(v[i] != '<');
		if (v[i] == '&')
			assert_true(!strncmp(v + i, "&amp;", 5) || !strncmp(v + i, "&lt;", 4) ||
				    !strncmp(v + i, "&gt;", 4) || !strncmp(v + i, "&quot;", 6));
	}
	bool is_svg = el_n == 3 && !strncmp(el, "svg", 3);
	bool is_bg_rect = vn == 1 && v[0] == '0'; /* the background <rect x="0" y="0"> */
	if (one_of(name, nn, xs) && !is_bg_rect)
		assert_true(coord(v, vn) <= VB_W);
	else if (one_of(name, nn, ys) && !is_bg_rect)
		assert_true(coord(v, vn) <= VB_H);
	else if (nn == 6 && !strncmp(name, "points", 6))
		check_points(c, v, vn, (el_n == 8 && !strncmp(el, "polyline", 8)) ? group : -1);
	else if (nn == 7 && !strncmp(name, "viewBox", 7))
		assert_true(vn == 11 && !strncmp(v, "0 0 900 640", 11));
	else if (is_svg && nn == 5 && !strncmp(name, "xmlns", 5))
		assert_true(vn == 26 && !strncmp(v, "http://www.w3.org/2000/svg", 26));
	else if (nn == 6 && !strncmp(name, "stroke", 6) && el_n == 8 && !strncmp(el, "polyline", 8)) {
		char *s = xstrndup(v, vn);
		if (strv_contains(&c->strokes, s))
			free(s);
		else
			strv_push(&c->strokes, s);
	}
}

/* Decodes the five entities of text content into out; fails on others. */
static void text_content(const char *s, size_t n, struct strbuf *out)
{
	static const char *const ent[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	static const char dec[] = "&<>\"'";
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '&') {
			strbuf_addch(out, s[i]);
			continue;
		}
		size_t k = 0;
		while (k < 5 && strncmp(s + i, ent[k], strlen(ent[k])))
			k++;
		if (k == 5)
			fail_msg("stray '&' in text: %.20s", s + i);
		strbuf_addch(out, dec[k]);
		i += strlen(ent[k]) - 1;
	}
}

struct open_el {
	char name[16];
	int group; /* 0 busbw, 1 time, 2 legend, -1 none */
};

/* Parses one start tag at *p (after '<'); returns whether self-closing. */
static bool start_tag(struct svgcheck *c, const char **p, struct open_el *el, int parent_group)
{
	static const char *const known[] = { "svg", "title", "rect", "text", "g", "line", "polyline",
					      "circle", "polygon", NULL };
	const char *s = *p, *name = s;
	while (isalnum((unsigned char)*s))
		s++;
	size_t nl = (size_t)(s - name);
	if (!one_of(name, nl, known))
		fail_msg("unexpected element <%.*s>", (int)nl, name);
	snprintf(el->name, sizeof(el->name), "%.*s", (int)nl, name);
	el->group = parent_group;
	struct strv seen = STRV_INIT;
	for (;;) {
		while (*s == ' ' || *s == '\n')
			s++;
		if (*s == '>' || (s[0] == '/' && s[1] == '>'))
			break;
		const char *an = s;
		while (isalnum((unsigned char)*s) || *s == '-' || *s == ':')
			s++;
		size_t anl = (size_t)(s - an);
		assert_true(anl > 0 && s[0] == '=' && s[1] == '"');
		char *key = xstrndup(an, anl);
		assert_false(strv_contains(&seen, key)); /* no duplicate attribute */
		strv_push(&seen, key);
		const char *v = s + 2, *q = strchr(v, '"');
		assert_non_null(q);
		if (!strcmp(el->name, "g") && anl == 2 && !strncmp(an, "id", 2))
			el->group = (q - v == 5 && !strncmp(v, "busbw", 5)) ? 0
				    : (q - v == 4 && !strncmp(v, "time", 4)) ? 1 : 2;
		check_attr(c, name, nl, an, anl, v, (size_t)(q - v), parent_group);
		s = q + 1;
	}
	strv_free(&seen);
	bool self = *s == '/';
	*p = s + (self ? 2 : 1);
	return self;
}

static void check_svg(const char *doc, struct svgcheck *c)
{
	*c = (struct svgcheck){ .texts = STRV_INIT, .strokes = STRV_INIT };
	const char *p = doc;
	assert_true(!strncmp(p, "<?xml version=\"1.0\" encoding=\"UTF-8\"", 36));
	p = strstr(p, "?>") + 2;
	struct open_el stack[16];
	int depth = 0, roots = 0;
	const char *text_start = NULL;
	while (*p) {
		if (*p != '<') {
			if (depth == 0)
				assert_true(isspace((unsigned char)*p)); /* nothing outside the root */
			p++;
			continue;
		}
		if (p[1] == '/') {
			assert_true(depth > 0);
			size_t n = strlen(stack[depth - 1].name);
			assert_true(!strncmp(p + 2, stack[depth - 1].name, n) && p[2 + n] == '>');
			if (!strcmp(stack[depth - 1].name, "text")) {
				struct strbuf t = STRBUF_INIT;
				text_content(text_start, (size_t)(p - text_start), &t);
				strv_push(&c->texts, strbuf_detach(&t));
				c->legend_texts += stack[depth - 1].group == 2;
			}
			depth--;
			p += 3 + n;
			continue;
		}
		assert_true(depth < 16);
		if (depth == 0)
			roots++;
		p++;
		struct open_el *el = &stack[depth];
		int group = depth ? stack[depth - 1].group : -1;
		bool self = start_tag(c, &p, el, group);
		c->elements++;
		if (!strcmp(el->name, "polyline"))
			c->polylines[group >= 0 && group < 2 ? group : 2]++;
		if (depth == 0)
			assert_string_equal(el->name, "svg");
		if (!strcmp(el->name, "text") || !strcmp(el->name, "title")) {
			assert_false(self);
			text_start = p;
			assert_null(memchr(p, '<', (size_t)(strchr(p, '<') - p))); /* no child elements */
		}
		if (!self)
			depth++;
	}
	assert_int_equal(depth, 0);
	assert_int_equal(roots, 1);
}

static void check_free(struct svgcheck *c)
{
	strv_free(&c->texts);
	strv_free(&c->strokes);
}

static bool has_text(const struct svgcheck *c, const char *s)
{
	return strv_contains(&c->texts, s);
}

static void expect_texts(const struct svgcheck *c, const char *const *want)
{
	for (; *want; want++)
		if (!has_text(c, *want)) {
			for (size_t i = 0; i < c->texts.n; i++)
				print_message("  text \"%s\"\n", c->texts.v[i]);
			fail_msg("no <text> \"%s\"", *want);
		}
}

/* ---- data ---- */

/* An all_reduce sweep 8 B .. 8 GiB as nccl-tests prints it on two 8-GPU
 * nodes: busbw 0.00 for the smallest sizes, time from ~25 us. */
static void sweep(struct plot_point *v, size_t *n, double scale)
{
	*n = 0;
	for (int e = 3; e <= 33; e++) {
		double bytes = ldexp(1.0, e);
		double t = 25.0 + bytes / 3.0e4 * scale;
		double algbw = bytes / 1e9 / (t * 1e-6);
		double busbw = round(algbw * 2 * 15 / 16 * 100) / 100; /* "%.2f" as printed */
		v[(*n)++] = (struct plot_point){ .bytes = bytes, .busbw = busbw, .time_us = t };
	}
}

static void test_two_series(void **state)
{
	(void)state;
	struct plot_point a[40], b[40];
	size_t na, nb;
	sweep(a, &na, 1.0);
	sweep(b, &nb, 1.1);
	struct plot_series s[2] = { { .label = "out-of-place", .v = a, .n = na },
				    { .label = "in-place", .v = b, .n = nb } };
	char *doc = render("all_reduce_perf, 16 x H100", "2 nodes, NCCL 2.21.5, IB", s, 2);
	struct svgcheck c;
	check_svg(doc, &c);
	assert_int_equal(c.polylines[0], 2);
	assert_int_equal(c.polylines[1], 2);
	assert_int_equal(c.polylines[2], 0);
	/* busbw 0.00 at 8..32 B is skipped in the upper panel only */
	int zero = 0;
	for (size_t i = 0; i < na; i++)
		zero += a[i].busbw <= 0;
	assert_true(zero > 0);
	assert_int_equal(c.polyline_points[0], (int)(2 * na) - 2 * zero);
	assert_int_equal(c.polyline_points[1], (int)(2 * na));
	assert_int_equal(c.legend_texts, 2);
	assert_int_equal(c.strokes.n, 2);
	static const char *const want[] = { "all_reduce_perf, 16 x H100", "2 nodes, NCCL 2.21.5, IB", "out-of-place",
					    "in-place", "1 KiB", "32 KiB", "1 MiB", "1 GiB", "32 B",
					    "0.01 GB/s", "1 GB/s", "100 GB/s", "10 us", "100 us", "1 ms", "100 ms",
					    "1 s", "Bus bandwidth (GB/s)", "Message size", NULL };
	expect_texts(&c, want);
	assert_false(has_text(&c, "no data"));
	assert_non_null(strstr(doc, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"900\" "
				    "height=\"640\" viewBox=\"0 0 900 640\""));
	check_free(&c);
	free(doc);
}

static void test_escaping(void **state)
{
	(void)state;
	struct plot_point v[2] = { { 1024, 1.5, 10 }, { 2048, 2.5, 12 } };
	struct plot_series s = { .label = "run <1> & 'two'", .v = v, .n = 2 };
	char *doc = render("A & B <c> \"d\" 'e'", "ctl\x01\ttab \xff bad, \xc2\xb5s ok", &s, 1);
	struct svgcheck c;
	check_svg(doc, &c);
	assert_non_null(strstr(doc, "<title>A &amp; B &lt;c&gt; &quot;d&quot; &apos;e&apos;</title>"));
	assert_null(strstr(doc, "<c>"));
	static const char *const want[] = { "A & B <c> \"d\" 'e'", "ctl  tab ? bad, \xc2\xb5s ok",
					    "run <1> & 'two'", NULL };
	expect_texts(&c, want);
	check_free(&c);
	free(doc);

	/* very long texts are cut, whole characters only */
	struct strbuf t = STRBUF_INIT;
	for (int i = 0; i < 200; i++)
		strbuf_adds(&t, "\xc3\xa9");
	s.label = t.buf;
	doc = render(t.buf, NULL, &s, 1);
	check_svg(doc, &c);
	assert_int_equal(c.legend_texts, 1);
	bool cut = false;
	for (size_t i = 0; i < c.texts.n; i++)
		cut = cut || (strlen(c.texts.v[i]) == 2 * 110 + 3 && strstr(c.texts.v[i], "...") != NULL);
	assert_true(cut);
	check_free(&c);
	free(doc);
	strbuf_release(&t);
}

static void test_one_point(void **state)
{
	(void)state;
	struct plot_point v = { .bytes = 1048576, .busbw = 42.0, .time_us = 50.0 };
	struct plot_series s = { .label = "single", .v = &v, .n = 1 };
	char *doc = render("one", NULL, &s, 1);
	struct svgcheck c;
	check_svg(doc, &c);
	assert_int_equal(c.polylines[0], 1);
	assert_int_equal(c.polylines[1], 1);
	assert_int_equal(c.polyline_points[0], 1);
	assert_int_equal(c.polyline_points[1], 1);
	/* a single value sits in the middle of a padded range: 512 KiB .. 2 MiB */
	assert_non_null(strstr(doc, "points=\"398.00,"));
	static const char *const want[] = { "512 KiB", "1 MiB", "2 MiB", "10 GB/s", "20 GB/s", "50 GB/s",
					    "100 GB/s", "10 us", "20 us", "50 us", "100 us", NULL };
	expect_texts(&c, want);
	check_free(&c);
	free(doc);
}

static void test_no_values(void **state)
{
	(void)state;
	struct plot_point zeros[3] = { { 8, 0, 0 }, { 16, 0, 0 }, { 32, -1, -5 } };
	struct plot_point bad[5] = { { NAN, 1, 1 }, { 64, NAN, INFINITY }, { INFINITY, 2, 2 }, { -8, 3, 3 },
				     { 0, 4, 4 } };
	struct plot_series s[3] = { { .label = "zeros", .v = zeros, .n = 3 },
				    { .label = "bad", .v = bad, .n = 5 },
				    { .label = "empty", .v = NULL, .n = 0 } };
	char *doc = render(NULL, NULL, s, 3);
	struct svgcheck c;
	check_svg(doc, &c);
	assert_int_equal(c.polylines[0] + c.polylines[1] + c.polylines[2], 0);
	assert_int_equal(c.legend_texts, 0);
	int nodata = 0;
	for (size_t i = 0; i < c.texts.n; i++)
		nodata += !strcmp(c.texts.v[i], "no data");
	assert_int_equal(nodata, 2);
	assert_non_null(strstr(doc, "<title>Benchmark results</title>"));
	check_free(&c);
	free(doc);

	doc = render("nothing", NULL, NULL, 0);
	check_svg(doc, &c);
	assert_true(has_text(&c, "no data"));
	check_free(&c);
	free(doc);
}

static void test_nan_inf_mixed(void **state)
{
	(void)state;
	struct plot_point v[6] = { { 8, NAN, 20 },	{ 16, 0.01, INFINITY }, { 32, 0.02, 21 },
				   { 64, -INFINITY, 22 }, { 128, 1e308 * 10, -1 },  { 256, 0.08, 23 } };
	struct plot_series s = { .label = "mixed", .v = v, .n = 6 };
	char *doc = render("mixed", NULL, &s, 1);
	struct svgcheck c;
	check_svg(doc, &c);
	assert_int_equal(c.polylines[0], 1);
	assert_int_equal(c.polylines[1], 1);
	assert_int_equal(c.polyline_points[0], 3); /* 0.01, 0.02, 0.08 */
	assert_int_equal(c.polyline_points[1], 4); /* 20, 21, 22, 23 */
	check_free(&c);
	free(doc);
}

static void test_eight_series(void **state)
{
	(void)state;
	struct plot_point v[8][12];
	struct plot_series s[9];
	char labels[9][16];
	for (int k = 0; k < 8; k++) {
		for (int i = 0; i < 12; i++)
			v[k][i] = (struct plot_point){ .bytes = ldexp(1.0, 10 + i), .busbw = (k + 1) * (i + 1) * 0.5,
						       .time_us = 10 + k + i * i };
		snprintf(labels[k], sizeof(labels[k]), "run %d", k + 1);
		s[k] = (struct plot_series){ .label = labels[k], .v = v[k], .n = 12 };
	}
	snprintf(labels[8], sizeof(labels[8]), "empty");
	s[8] = (struct plot_series){ .label = labels[8], .v = v[0], .n = 0 };
	char *doc = render("eight", NULL, s, 9);
	struct svgcheck c;
	check_svg(doc, &c);
	assert_int_equal(c.polylines[0], 8);
	assert_int_equal(c.polylines[1], 8);
	assert_int_equal(c.strokes.n, 8); /* a colour of its own for each */
	assert_int_equal(c.legend_texts, 8);
	assert_false(has_text(&c, "empty"));
	/* x: 1 KiB .. 2 MiB, one label per power of two; y: 1-2-5 steps */
	static const char *const want[] = { "1 KiB", "2 KiB", "4 KiB", "512 KiB", "1 MiB", "2 MiB", "0.5 GB/s",
					    "1 GB/s", "2 GB/s", "5 GB/s", "20 GB/s", "50 GB/s", "100 GB/s", "10 us",
					    "20 us", "50 us", "100 us", "200 us", "1 ms", "run 8", NULL };
	expect_texts(&c, want);
	check_free(&c);
	free(doc);
}

static void test_deterministic(void **state)
{
	(void)state;
	struct plot_point a[40];
	size_t n;
	sweep(a, &n, 1.0);
	struct plot_series s = { .label = "out-of-place", .v = a, .n = n };
	char *d1 = render("det", "sub", &s, 1);
	char *d2 = render("det", "sub", &s, 1);
	assert_string_equal(d1, d2);
	/* a locale with a decimal comma must not change a byte */
	if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
		char *d3 = render("det", "sub", &s, 1);
		setlocale(LC_NUMERIC, "C");
		assert_string_equal(d1, d3);
		free(d3);
	}
	free(d1);
	free(d2);
}

static void test_write_error(void **state)
{
	(void)state;
	struct plot_point v = { 8, 1, 1 };
	struct plot_series s = { .label = "x", .v = &v, .n = 1 };
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		skip();
	int r = plot_write_svg(f, "t", NULL, &s, 1);
	fclose(f);
	assert_int_equal(r, -ENOSPC);
}

/* Points given largest first are drawn left to right. */
static void test_sorted_by_size(void **state)
{
	(void)state;
	struct plot_point v[4] = { { 4096, 4, 40 }, { 1024, 1, 10 }, { 2048, NAN, 20 }, { 512, 0.5, 5 } };
	struct plot_series s = { .label = "reversed", .v = v, .n = 4 };
	char *doc = render("order", NULL, &s, 1);
	struct svgcheck c;
	check_svg(doc, &c);
	const char *p = strstr(doc, "<polyline");
	for (int panel = 0; panel < 2; panel++, p = strstr(p + 1, "<polyline")) {
		assert_non_null(p);
		const char *q = strstr(p, "points=\"") + 8;
		double last = -1;
		int n = 0;
		while (*q != '"') {
			double x = strtod(q, (char **)&q);
			assert_true(x > last);
			last = x;
			n++;
			q = strpbrk(q, " \"");
			q += *q == ' ';
		}
		assert_int_equal(n, panel == 0 ? 3 : 4);
	}
	check_free(&c);
	free(doc);
}

static void test_extreme_ranges(void **state)
{
	(void)state;
	struct plot_point v[4] = { { 1e-3, 1e-250, 1e-200 }, { 1e250, 1e250, 1e200 }, { 1, 1, 1 }, { 2, 1e299, 1e-299 } };
	struct plot_series s = { .label = "wide", .v = v, .n = 4 };
	char *doc = render("wide", NULL, &s, 1);
	struct svgcheck c;
	check_svg(doc, &c);
	assert_int_equal(c.polyline_points[0], 4);
	assert_int_equal(c.polyline_points[1], 4);
	assert_true(c.elements < 2000); /* thinned grid, not one line per power */
	check_free(&c);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_series),   cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_one_point),    cmocka_unit_test(test_no_values),
		cmocka_unit_test(test_nan_inf_mixed), cmocka_unit_test(test_eight_series),
		cmocka_unit_test(test_deterministic), cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_sorted_by_size), cmocka_unit_test(test_extreme_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
