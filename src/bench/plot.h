/* SVG plots of benchmark results: bus bandwidth and latency against
 * message size, both axes log-scaled, readable without the table.
 *
 * Hand-written SVG (no dependency): two stacked panels sharing the x axis
 * (message size, bytes, labelled 8 B ... 1 KiB ... 1 GiB), left panel
 * busbw in GB/s, lower panel time in microseconds; one polyline with markers
 * per series (out-of-place and in-place, or several runs), a legend, axis
 * ticks at powers of 2 (x) and 1-2-5 decades (y), a title, and grid lines.
 * Text is XML-escaped. */
#ifndef GPUREADY_PLOT_H
#define GPUREADY_PLOT_H

#include <stddef.h>
#include <stdio.h>

struct plot_point {
	double bytes;     /* x */
	double busbw;     /* GB/s; <= 0 means no value */
	double time_us;   /* microseconds; <= 0 means no value */
};

struct plot_series {
	const char *label;           /* "out-of-place", "in-place" */
	const struct plot_point *v;
	size_t n;
};

/* Writes a complete SVG document. title and subtitle are plain text (may be
 * NULL). Returns 0 or -errno (a write error on out). Series with no points,
 * or values that are not finite or not positive, are skipped. */
int plot_write_svg(FILE *out, const char *title, const char *subtitle, const struct plot_series *series,
		   size_t n_series);

#endif
