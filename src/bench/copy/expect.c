/* Link limits for copy bandwidth (expect.h states the figures and their
 * sources). */
#include "bench/copy/expect.h"
#include "core/parse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per generation: GT/s per lane and the share of the raw bits that is
 * data (line code, or Gen6's flit TLP bytes). */
static const struct {
	double gts, coded;
} pcie_gens[] = {
	{ 2.5, 8.0 / 10.0 }, { 5.0, 8.0 / 10.0 }, { 8.0, 128.0 / 130.0 },
	{ 16.0, 128.0 / 130.0 }, { 32.0, 128.0 / 130.0 }, { 64.0, 236.0 / 256.0 },
};
#define N_GENS ((int)(sizeof(pcie_gens) / sizeof(pcie_gens[0])))

/* NVLink per-link GB/s per direction, by generation (index 0: none). */
static const double nvlink_link_gbps[] = { 0, 0, 25.0, 25.0, 25.0, 50.0 };
#define NVLINK_MAX_GEN 5
#define NVLINK_MAX_LINKS 18

__attribute__((format(printf, 2, 3))) static int unknown(struct copy_limit *out, const char *fmt, ...)
{
	va_list ap;
	memset(out, 0, sizeof(*out));
	va_start(ap, fmt);
	vsnprintf(out->label, sizeof(out->label), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int copy_pcie_gen(double gts)
{
	for (int g = 0; g < N_GENS && isfinite(gts); g++)
		if (fabs(gts - pcie_gens[g].gts) < 0.1)
			return g + 1;
	return 0;
}

static bool pcie_width_ok(int width)
{
	static const int widths[] = { 1, 2, 4, 8, 12, 16, 32 };
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++)
		if (width == widths[i])
			return true;
	return false;
}

static bool efficiency_ok(double e)
{
	return isfinite(e) && e <= 1.0;
}

int copy_expect_pcie(double gts, int width, double efficiency, struct copy_limit *out)
{
	int gen = copy_pcie_gen(gts);
	if (!gen)
		return unknown(out, "PCIe link speed %g GT/s is no PCIe generation", gts);
	if (!pcie_width_ok(width))
		return unknown(out, "PCIe link width x%d is no PCIe link width", width);
	if (!efficiency_ok(efficiency))
		return unknown(out, "PCIe efficiency %g is not in (0, 1]", efficiency);
	memset(out, 0, sizeof(*out));
	out->known = true;
	out->kind = COPY_LINK_PCIE;
	out->gen = gen;
	out->width = width;
	/* GT/s per lane x data share / 8 bits = GB/s per lane and direction */
	out->encoded_gbps = pcie_gens[gen - 1].gts * pcie_gens[gen - 1].coded / 8.0 * width;
	out->efficiency = efficiency > 0 ? efficiency : gen == 6 ? COPY_PCIE_FLIT_EFFICIENCY : COPY_PCIE_EFFICIENCY;
	out->expected_gbps = out->encoded_gbps * out->efficiency;
	snprintf(out->label, sizeof(out->label), "PCIe Gen%d x%d", gen, width);
	return 0;
}

/* "32.0 GT/s PCIe", "8 GT/s", "2.5 GT/s PCIe\n": the number before the
 * unit; anything else (Unknown, a bare number, other units) fails. */
static int parse_speed(const char *s, double *gts)
{
	char *end;
	if (!s || !*s || !(*s >= '0' && *s <= '9'))
		return -EINVAL;
	*gts = strtod(s, &end);
	if (end == s || strncmp(end, " GT/s", 5))
		return -EINVAL;
	end += 5;
	if (!strncmp(end, " PCIe", 5))
		end += 5;
	while (*end == '\n' || *end == ' ')
		end++;
	return *end ? -EINVAL : 0;
}

static int parse_width(const char *s, int *width)
{
	char buf[16];
	size_t n = s ? strcspn(s, "\n") : 0;
	if (!n || n >= sizeof(buf) || s[n + (s[n] == '\n')] != '\0')
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return parse_int(buf, 10, width);
}

int copy_expect_pcie_text(const char *speed, const char *width, double efficiency, struct copy_limit *out)
{
	double gts;
	int w;
	if (parse_speed(speed, &gts) < 0)
		return unknown(out, "PCIe link speed '%.24s' is not a speed in GT/s", speed ? speed : "");
	if (parse_width(width, &w) < 0)
		return unknown(out, "PCIe link width '%.16s' is not a lane count", width ? width : "");
	return copy_expect_pcie(gts, w, efficiency, out);
}

int copy_expect_nvlink(int gen, int links, double efficiency, struct copy_limit *out)
{
	if (gen < 2 || gen > NVLINK_MAX_GEN)
		return unknown(out, "NVLink generation %d is not one of 2-5", gen);
	if (links < 1 || links > NVLINK_MAX_LINKS)
		return unknown(out, "%d NVLinks is not 1-%d", links, NVLINK_MAX_LINKS);
	if (!efficiency_ok(efficiency))
		return unknown(out, "NVLink efficiency %g is not in (0, 1]", efficiency);
	memset(out, 0, sizeof(*out));
	out->known = true;
	out->kind = COPY_LINK_NVLINK;
	out->gen = gen;
	out->width = links;
	out->encoded_gbps = nvlink_link_gbps[gen] * links;
	out->efficiency = efficiency > 0 ? efficiency : COPY_NVLINK_EFFICIENCY;
	out->expected_gbps = out->encoded_gbps * out->efficiency;
	snprintf(out->label, sizeof(out->label), "NVLink %d x%d", gen, links);
	return 0;
}

void copy_limit_fixed(double gbps, const char *label, struct copy_limit *out)
{
	if (!isfinite(gbps) || gbps <= 0) {
		unknown(out, "%s: %g GB/s is no limit", label ? label : "limit", gbps);
		return;
	}
	memset(out, 0, sizeof(*out));
	out->known = true;
	out->kind = COPY_LINK_OTHER;
	out->encoded_gbps = gbps;
	out->efficiency = 1.0;
	out->expected_gbps = gbps;
	snprintf(out->label, sizeof(out->label), "%s", label ? label : "limit");
}

void copy_limit_both(const struct copy_limit *one, struct copy_limit *out)
{
	struct copy_limit tmp = *one;
	if (tmp.known) {
		tmp.encoded_gbps *= 2;
		tmp.expected_gbps *= 2;
		size_t len = strnlen(tmp.label, sizeof(tmp.label));
		snprintf(tmp.label + len, sizeof(tmp.label) - len, ", both directions");
	}
	*out = tmp;
}

void copy_limit_slower(const struct copy_limit *a, const struct copy_limit *b, struct copy_limit *out)
{
	if (!a->known || !b->known) {
		struct copy_limit tmp = a->known ? *b : *a; /* the unknown end, with its reason */
		*out = tmp;
		return;
	}
	struct copy_limit tmp = b->expected_gbps < a->expected_gbps ? *b : *a;
	*out = tmp;
}
