/* SVG plots of benchmark results; see plot.h.
 *
 * The document is built in memory and written with one fwrite, so a write
 * error is reported once and nothing half-formatted depends on it. Output is
 * byte-for-byte deterministic: coordinates go through fmt_fixed2 (integer
 * arithmetic, no locale, no "%g"), ranges and ticks are pure functions of the
 * data, and series keep their order.
 *
 * Geometry (fixed, 900 x 640): title and subtitle on top, the busbw panel
 * above the time panel, both sharing the x axis (log2 of bytes), the legend
 * on the right. Each panel is a <g id="busbw"> / <g id="time"> that holds
 * one <polyline> per series with at least one plottable value there. */
#include "bench/plot.h"
#include "core/strbuf.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SVG_W 900
#define SVG_H 640
#define PLOT_L 96.0    /* plot area, both panels */
#define PLOT_R 700.0
#define LEGEND_X 716.0
#define TITLE_CHARS 110  /* what fits in 900 px at 18 px */
#define LABEL_CHARS 22   /* what fits in the 170 px legend */
/* Values beyond these are no benchmark result, and 2^ceil(log2 v) must stay
 * finite. */
#define VMIN 1e-300
#define VMAX 1e300

enum metric { M_BUSBW, M_TIME };

struct panel {
	const char *id;
	const char *ytitle;
	enum metric metric;
	double top, bottom;  /* pixels */
	int lo, hi;          /* log10 range, whole decades */
	bool any;            /* at least one plottable value */
};

struct plot {
	struct strbuf *sb;
	const struct plot_series *series;
	size_t n;
	int xlo, xhi;        /* log2 range, whole powers of two */
	struct panel p[2];
};

/* Okabe-Ito colours without yellow, plus black and brown: distinguishable
 * with the common colour-vision deficiencies. Series 9+ repeat. */
static const char *const colours[8] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7",
					"#E69F00", "#56B4E9", "#000000", "#8C564B" };

/* ---- numbers and text ---- */

static bool plottable(double v)
{
	return isfinite(v) && v >= VMIN && v <= VMAX;
}

/* Points of a series; a NULL vector counts as empty. */
static size_t npoints(const struct plot_series *se)
{
	return se->v ? se->n : 0;
}

static double metric_of(const struct plot_point *pt, enum metric m)
{
	return m == M_BUSBW ? pt->busbw : pt->time_us;
}

/* "%.2f" without locale or libc formatting: the SVG must use '.' and the
 * same bytes everywhere. |v| is at most a few thousand pixels here. */
static void fmt_fixed2(struct strbuf *sb, double v)
{
	long long c = llround(v * 100.0);
	if (c < 0) {
		strbuf_addch(sb, '-');
		c = -c;
	}
	strbuf_addf(sb, "%lld.%02lld", c / 100, c % 100);
}

/* m x 10^k for m in {1, 2, 5} as plain decimal text: "0.05", "200". */
static void fmt_125(struct strbuf *sb, int m, int k)
{
	if (k > 15 || k < -15) {
		strbuf_addf(sb, "%de%d", m, k);
	} else if (k >= 0) {
		strbuf_addf(sb, "%d", m);
		for (int i = 0; i < k; i++)
			strbuf_addch(sb, '0');
	} else {
		strbuf_adds(sb, "0.");
		for (int i = 0; i < -k - 1; i++)
			strbuf_addch(sb, '0');
		strbuf_addf(sb, "%d", m);
	}
}

/* 2^e bytes: "8 B", "1 KiB", "512 MiB". */
static void fmt_bytes(struct strbuf *sb, int e)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	if (e < 0 || e >= 60)
		strbuf_addf(sb, "2^%d B", e);
	else
		strbuf_addf(sb, "%llu %s", 1ULL << (e % 10), units[e / 10]);
}

/* m x 10^k microseconds: "100 us", "2 ms", "5 s". */
static void fmt_time(struct strbuf *sb, int m, int k)
{
	if (k >= 6 && k < 21) {
		fmt_125(sb, m, k - 6);
		strbuf_adds(sb, " s");
	} else if (k >= 3 && k < 6) {
		fmt_125(sb, m, k - 3);
		strbuf_adds(sb, " ms");
	} else {
		fmt_125(sb, m, k);
		strbuf_adds(sb, " us");
	}
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 when invalid. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
	    (c == 0xf4 && s[1] > 0x8f))
		return 0; /* overlong, surrogate, beyond U+10FFFF */
	return n;
}

/* XML text: & < > " ' escaped, control characters blanked, invalid UTF-8
 * as '?', at most max characters (then "..."). */
static void add_text(struct strbuf *sb, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t chars = 0; *p; chars++) {
		if (chars == max) {
			strbuf_adds(sb, "...");
			return;
		}
		size_t n = utf8_len(p);
		if (n == 0) {
			strbuf_addch(sb, '?');
			p++;
		} else if (n > 1) {
			strbuf_add(sb, p, n);
			p += n;
		} else {
			switch (*p) {
			case '&': strbuf_adds(sb, "&amp;"); break;
			case '<': strbuf_adds(sb, "&lt;"); break;
			case '>': strbuf_adds(sb, "&gt;"); break;
			case '"': strbuf_adds(sb, "&quot;"); break;
			case '\'': strbuf_adds(sb, "&apos;"); break;
			default: strbuf_addch(sb, *p < 0x20 || *p == 0x7f ? ' ' : (char)*p);
			}
			p++;
		}
	}
}

/* ---- scales ---- */

/* Whole-unit log range [*lo, *hi] around the plottable values (log base 2
 * or 10); a single value gets one unit of room on either side. */
static bool log_range(const struct plot *pl, int which, double base, int *lo, int *hi)
{
	double mn = INFINITY, mx = -INFINITY;
	for (size_t s = 0; s < pl->n; s++)
		for (size_t i = 0; i < npoints(&pl->series[s]); i++) {
			const struct plot_point *pt = &pl->series[s].v[i];
			bool ok = which < 0 ? plottable(pt->busbw) || plottable(pt->time_us)
					    : plottable(metric_of(pt, (enum metric)which));
			if (!ok || !plottable(pt->bytes))
				continue;
			double v = which < 0 ? pt->bytes : metric_of(pt, (enum metric)which);
			mn = fmin(mn, v);
			mx = fmax(mx, v);
		}
	if (mn > mx)
		return false;
	double l = log(mn) / log(base), h = log(mx) / log(base);
	*lo = (int)floor(l + 1e-9);
	*hi = (int)ceil(h - 1e-9);
	if (*hi <= *lo) {
		*lo -= 1;
		*hi += 1;
	}
	return true;
}

static double x_px(const struct plot *pl, double bytes)
{
	return PLOT_L + (log2(bytes) - pl->xlo) / (pl->xhi - pl->xlo) * (PLOT_R - PLOT_L);
}

static double y_px(const struct panel *p, double v)
{
	return p->bottom - (log10(v) - p->lo) / (p->hi - p->lo) * (p->bottom - p->top);
}

static void setup(struct plot *pl)
{
	static const struct panel init[2] = {
		{ .id = "busbw", .ytitle = "Bus bandwidth (GB/s)", .metric = M_BUSBW, .top = 72, .bottom = 316,
		  .lo = -1, .hi = 2 },
		{ .id = "time", .ytitle = "Time per operation", .metric = M_TIME, .top = 344, .bottom = 588,
		  .lo = 0, .hi = 3 },
	};
	if (!log_range(pl, -1, 2.0, &pl->xlo, &pl->xhi)) {
		pl->xlo = 3; /* 8 B .. 1 KiB when nothing is plottable */
		pl->xhi = 10;
	}
	for (int i = 0; i < 2; i++) {
		pl->p[i] = init[i];
		pl->p[i].any = log_range(pl, (int)init[i].metric, 10.0, &pl->p[i].lo, &pl->p[i].hi);
	}
}

/* ---- drawing ---- */

static void line(struct strbuf *sb, double x1, double y1, double x2, double y2, const char *stroke)
{
	strbuf_adds(sb, "<line x1=\"");
	fmt_fixed2(sb, x1);
	strbuf_adds(sb, "\" y1=\"");
	fmt_fixed2(sb, y1);
	strbuf_adds(sb, "\" x2=\"");
	fmt_fixed2(sb, x2);
	strbuf_adds(sb, "\" y2=\"");
	fmt_fixed2(sb, y2);
	strbuf_addf(sb, "\" stroke=\"%s\" stroke-width=\"1\"/>\n", stroke);
}

/* <text x= y= ...attrs>; the caller adds the content and "</text>". */
static void text_open(struct strbuf *sb, double x, double y, const char *attrs)
{
	strbuf_adds(sb, "<text x=\"");
	fmt_fixed2(sb, x);
	strbuf_adds(sb, "\" y=\"");
	fmt_fixed2(sb, y);
	strbuf_addf(sb, "\" %s>", attrs);
}

/* Label step for powers of two: the smallest of 1, 2, 5, 10, 20 ... that
 * leaves at most 12 labels. Steps that divide 10 put labels on 1 KiB,
 * 1 MiB, 1 GiB. */
static int x_label_step(int span)
{
	static const int steps[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000 };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (span / steps[i] <= 11)
			return steps[i];
	return 2000;
}

static bool x_labelled(int e, int step)
{
	return ((e % step) + step) % step == 0;
}

/* Vertical grid of one panel; under the lower panel also the labels. */
static void x_grid(struct plot *pl, const struct panel *p, bool labels)
{
	int span = pl->xhi - pl->xlo, step = x_label_step(span);
	for (int e = pl->xlo; e <= pl->xhi; e++) {
		bool major = x_labelled(e, step);
		if (!major && span > 64)
			continue;
		double x = PLOT_L + (double)(e - pl->xlo) / span * (PLOT_R - PLOT_L);
		line(pl->sb, x, p->top, x, p->bottom, major ? "#d0d0d0" : "#ececec");
		if (labels && major) {
			text_open(pl->sb, x, p->bottom + 16, "text-anchor=\"middle\" font-size=\"11\" fill=\"#333333\"");
			fmt_bytes(pl->sb, e);
			strbuf_adds(pl->sb, "</text>\n");
		}
	}
}

static void y_label(struct strbuf *sb, enum metric m, int mant, int k)
{
	if (m == M_TIME) {
		fmt_time(sb, mant, k);
	} else {
		fmt_125(sb, mant, k);
		strbuf_adds(sb, " GB/s");
	}
}

/* Horizontal grid and labels at 1-2-5 steps per decade; with more than 3
 * decades only decades are labelled, with more than 12 only every few. */
static void y_grid(struct plot *pl, const struct panel *p)
{
	static const int mants[] = { 1, 2, 5 };
	int span = p->hi - p->lo, every = span > 12 ? (span + 7) / 8 : 1;
	for (int k = p->lo; k <= p->hi; k++) {
		for (int j = 0; j < 3; j++) {
			double lv = k + log10(mants[j]);
			if (lv > p->hi + 1e-9 || (j > 0 && span > 12))
				break;
			double y = p->bottom - (lv - p->lo) / span * (p->bottom - p->top);
			line(pl->sb, PLOT_L, y, PLOT_R, y, j == 0 ? "#d0d0d0" : "#ececec");
			bool label = j == 0 ? ((k - p->lo) % every == 0) : span <= 3;
			if (!label)
				continue;
			text_open(pl->sb, PLOT_L - 6, y + 4, "text-anchor=\"end\" font-size=\"11\" fill=\"#333333\"");
			y_label(pl->sb, p->metric, mants[j], k);
			strbuf_adds(pl->sb, "</text>\n");
		}
	}
}

static void marker(struct strbuf *sb, size_t s, double x, double y)
{
	const char *c = colours[s % 8];
	switch (s % 4) {
	case 0:
		strbuf_adds(sb, "<circle cx=\"");
		fmt_fixed2(sb, x);
		strbuf_adds(sb, "\" cy=\"");
		fmt_fixed2(sb, y);
		strbuf_addf(sb, "\" r=\"3.50\" fill=\"%s\"/>\n", c);
		return;
	case 1:
		strbuf_adds(sb, "<rect x=\"");
		fmt_fixed2(sb, x - 3.2);
		strbuf_adds(sb, "\" y=\"");
		fmt_fixed2(sb, y - 3.2);
		strbuf_addf(sb, "\" width=\"6.40\" height=\"6.40\" fill=\"%s\"/>\n", c);
		return;
	default: {
		/* 2: triangle, 3: diamond */
		double dx[4] = { 0, 4.2, -4.2, 0 }, dy[4] = { -4.5, 3.2, 3.2, 0 };
		double ex[4] = { 0, 4.2, 0, -4.2 }, ey[4] = { -4.5, 0, 4.5, 0 };
		int k = s % 4 == 2 ? 3 : 4;
		strbuf_adds(sb, "<polygon points=\"");
		for (int i = 0; i < k; i++) {
			if (i)
				strbuf_addch(sb, ' ');
			fmt_fixed2(sb, x + (k == 3 ? dx[i] : ex[i]));
			strbuf_addch(sb, ',');
			fmt_fixed2(sb, y + (k == 3 ? dy[i] : ey[i]));
		}
		strbuf_addf(sb, "\" fill=\"%s\"/>\n", c);
	}
	}
}

struct xy {
	double x, y;
	size_t i;
};

static int cmp_xy(const void *a, const void *b)
{
	const struct xy *p = a, *q = b;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

/* One series in one panel: a polyline through its plottable points in
 * order of size, and a marker on each. Nothing when it has none. */
static void series_in_panel(struct plot *pl, const struct panel *p, size_t s)
{
	const struct plot_series *se = &pl->series[s];
	struct xy *pts = xreallocarray(NULL, npoints(se) + 1, sizeof(*pts));
	size_t n = 0;
	for (size_t i = 0; i < npoints(se); i++) {
		double v = metric_of(&se->v[i], p->metric);
		if (plottable(se->v[i].bytes) && plottable(v))
			pts[n++] = (struct xy){ .x = x_px(pl, se->v[i].bytes), .y = y_px(p, v), .i = i };
	}
	qsort(pts, n, sizeof(*pts), cmp_xy);
	if (n > 0) {
		strbuf_addf(pl->sb, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
			    colours[s % 8]);
		for (size_t i = 0; i < n; i++) {
			if (i)
				strbuf_addch(pl->sb, ' ');
			fmt_fixed2(pl->sb, pts[i].x);
			strbuf_addch(pl->sb, ',');
			fmt_fixed2(pl->sb, pts[i].y);
		}
		strbuf_adds(pl->sb, "\"/>\n");
	}
	for (size_t i = 0; i < n; i++)
		marker(pl->sb, s, pts[i].x, pts[i].y);
	free(pts);
}

static void panel(struct plot *pl, const struct panel *p, bool x_labels)
{
	struct strbuf *sb = pl->sb;
	strbuf_addf(sb, "<g id=\"%s\">\n", p->id);
	x_grid(pl, p, x_labels);
	y_grid(pl, p);
	strbuf_adds(sb, "<rect x=\"");
	fmt_fixed2(sb, PLOT_L);
	strbuf_adds(sb, "\" y=\"");
	fmt_fixed2(sb, p->top);
	strbuf_adds(sb, "\" width=\"");
	fmt_fixed2(sb, PLOT_R - PLOT_L);
	strbuf_adds(sb, "\" height=\"");
	fmt_fixed2(sb, p->bottom - p->top);
	strbuf_adds(sb, "\" fill=\"none\" stroke=\"#444444\" stroke-width=\"1\"/>\n");
	double cy = (p->top + p->bottom) / 2;
	strbuf_adds(sb, "<text x=\"20.00\" y=\"");
	fmt_fixed2(sb, cy);
	strbuf_adds(sb, "\" transform=\"rotate(-90 20.00 ");
	fmt_fixed2(sb, cy);
	strbuf_addf(sb, ")\" text-anchor=\"middle\" font-size=\"13\" fill=\"#222222\">%s</text>\n", p->ytitle);
	if (!p->any) {
		text_open(sb, (PLOT_L + PLOT_R) / 2, cy, "text-anchor=\"middle\" font-size=\"14\" fill=\"#888888\"");
		strbuf_adds(sb, "no data</text>\n");
	}
	for (size_t s = 0; s < pl->n; s++)
		series_in_panel(pl, p, s);
	strbuf_adds(sb, "</g>\n");
}

static bool series_has_data(const struct plot_series *se)
{
	for (size_t i = 0; i < npoints(se); i++)
		if (plottable(se->v[i].bytes) && (plottable(se->v[i].busbw) || plottable(se->v[i].time_us)))
			return true;
	return false;
}

/* The legend lists the series that appear in a panel, in their order. */
static void legend(struct plot *pl)
{
	struct strbuf *sb = pl->sb;
	double y = pl->p[0].top + 14;
	strbuf_adds(sb, "<g id=\"legend\">\n");
	for (size_t s = 0; s < pl->n; s++) {
		const struct plot_series *se = &pl->series[s];
		if (!series_has_data(se) || y > SVG_H - 20)
			continue;
		strbuf_adds(sb, "<line x1=\"");
		fmt_fixed2(sb, LEGEND_X);
		strbuf_adds(sb, "\" y1=\"");
		fmt_fixed2(sb, y);
		strbuf_adds(sb, "\" x2=\"");
		fmt_fixed2(sb, LEGEND_X + 28);
		strbuf_adds(sb, "\" y2=\"");
		fmt_fixed2(sb, y);
		strbuf_addf(sb, "\" stroke=\"%s\" stroke-width=\"2\"/>\n", colours[s % 8]);
		marker(sb, s, LEGEND_X + 14, y);
		text_open(sb, LEGEND_X + 36, y + 4, "font-size=\"12\" fill=\"#222222\"");
		add_text(sb, se->label ? se->label : "(unnamed)", LABEL_CHARS);
		strbuf_adds(sb, "</text>\n");
		y += 22;
	}
	strbuf_adds(sb, "</g>\n");
}

static void header(struct strbuf *sb, const char *title, const char *subtitle)
{
	strbuf_addf(sb,
		    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\">\n",
		    SVG_W, SVG_H, SVG_W, SVG_H);
	strbuf_adds(sb, "<title>");
	add_text(sb, title ? title : "Benchmark results", TITLE_CHARS);
	strbuf_addf(sb, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", SVG_W,
		    SVG_H);
	if (title) {
		text_open(sb, SVG_W / 2.0, 28, "text-anchor=\"middle\" font-size=\"18\" font-weight=\"bold\" "
					       "fill=\"#111111\"");
		add_text(sb, title, TITLE_CHARS);
		strbuf_adds(sb, "</text>\n");
	}
	if (subtitle) {
		text_open(sb, SVG_W / 2.0, 50, "text-anchor=\"middle\" font-size=\"12\" fill=\"#555555\"");
		add_text(sb, subtitle, TITLE_CHARS + 30);
		strbuf_adds(sb, "</text>\n");
	}
}

int plot_write_svg(FILE *out, const char *title, const char *subtitle, const struct plot_series *series,
		   size_t n_series)
{
	struct strbuf sb = STRBUF_INIT;
	struct plot pl = { .sb = &sb, .series = series, .n = series ? n_series : 0 };
	setup(&pl);
	header(&sb, title, subtitle);
	panel(&pl, &pl.p[0], false);
	panel(&pl, &pl.p[1], true);
	text_open(&sb, (PLOT_L + PLOT_R) / 2, SVG_H - 12, "text-anchor=\"middle\" font-size=\"13\" fill=\"#222222\"");
	strbuf_adds(&sb, "Message size</text>\n");
	legend(&pl);
	strbuf_adds(&sb, "</svg>\n");
	errno = 0;
	bool ok = fwrite(sb.buf, 1, sb.len, out) == sb.len;
	ok = fflush(out) == 0 && ok && !ferror(out);
	int err = errno ? errno : EIO;
	strbuf_release(&sb);
	return ok ? 0 : -err;
}
