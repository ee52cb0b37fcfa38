/* Tests, parameters and statistics of `gpuready bench net` (see net.h).
 *
 * The rows are perftest's (perftest src/perftest_parameters.c): bandwidth in MiB/s (2^20 B/s)
 * or Gb/s (10^9 bit/s) with --report-gbits, the message rate in millions
 * per second; latency as min, max, typical (the median), average, standard
 * deviation and the 99th and 99.9th percentiles of the per-iteration
 * samples, with perftest's rules (net_lat_row_from).
 * The peak bandwidth is the best of NET_WINDOWS equal slices of the run
 * (perftest searches every interval between two completions; slices give
 * the same figure for steady runs at a fixed cost). */
#include "net.h"
#include "core/strbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[NET__COUNT] = {
	[NET_WRITE_BW] = "write_bw", [NET_WRITE_LAT] = "write_lat", [NET_READ_BW] = "read_bw",
	[NET_READ_LAT] = "read_lat", [NET_SEND_BW] = "send_bw",     [NET_SEND_LAT] = "send_lat",
	[NET_TCP_BW] = "tcp_bw",     [NET_TCP_LAT] = "tcp_lat",
};

const char *net_test_name(enum net_test t)
{
	return (unsigned)t < NET__COUNT ? names[t] : "?";
}

int net_test_parse(const char *s)
{
	for (int i = 0; i < NET__COUNT; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

bool net_test_is_rdma(enum net_test t)
{
	return t != NET_TCP_BW && t != NET_TCP_LAT;
}

bool net_test_is_lat(enum net_test t)
{
	return t == NET_WRITE_LAT || t == NET_READ_LAT || t == NET_SEND_LAT || t == NET_TCP_LAT;
}

bool net_lat_by_duration(const struct net_params *p)
{
	return net_test_is_lat(p->test) && p->duration > 0;
}

/* perftest's print_report_lat_duration: round trips per second, where
 * t_avg is half a round trip (a whole one for read_lat) */
double net_lat_tps(const struct net_params *p, const struct net_lat_row *r)
{
	double rtt = p->test == NET_READ_LAT ? 1 : 2;
	return r->avg > 0 ? 1e6 / (r->avg * rtt) : 0;
}

void net_params_default(struct net_params *p)
{
	*p = (struct net_params){ .test = NET_TCP_BW, .qps = 1, .tclass = -1 };
}

char *net_params_check(struct net_params *p)
{
	bool lat = net_test_is_lat(p->test);
	if ((unsigned)p->test >= NET__COUNT)
		return xstrdup("unknown test");
	if (p->all && p->size)
		return xstrdup("-a and -s exclude each other");
	if (!p->all && !p->size)
		p->size = lat ? NET_LAT_SIZE : NET_BW_SIZE;
	if (!p->iters && p->duration <= 0)
		p->iters = lat ? NET_LAT_ITERS : NET_BW_ITERS;
	if (p->size > (1ull << 30))
		return xasprintf("-s %llu: at most 1 GiB per message", (unsigned long long)p->size);
	if (p->qps < 1 || p->qps > 64)
		return xasprintf("-q %d: between 1 and 64", p->qps);
	if (lat && p->duration <= 0 && p->iters > NET_LAT_MAX_SAMPLES)
		return xasprintf("-n %llu: a latency test keeps every sample, at most %u (use -D for longer runs)",
				 (unsigned long long)p->iters, NET_LAT_MAX_SAMPLES);
	if (lat && (p->qps != 1 || p->bidir))
		return xstrdup("latency tests run one QP or stream, one way (-q 1, no -b)");
	if (p->duration < 0 || p->duration > 3600)
		return xstrdup("-D: between 0 and 3600 seconds");
	if (p->mtu && p->mtu != 256 && p->mtu != 512 && p->mtu != 1024 && p->mtu != 2048 && p->mtu != 4096)
		return xasprintf("--mtu %d: one of 256, 512, 1024, 2048, 4096 (verbs MTUs)", p->mtu);
	if (!net_test_is_rdma(p->test) && (p->mtu || p->sl))
		return xstrdup("--mtu and --sl are for RDMA tests");
	if (p->tclass < -1 || p->tclass > 255)
		return xasprintf("-T %d: a ToS byte, 0 to 255", p->tclass);
	/* perftest_parameters.c: "valid in Atomic, Read and Write BW tests" */
	if (p->warm_up && p->test != NET_WRITE_BW && p->test != NET_READ_BW)
		return xasprintf("--perform_warm_up: perftest warms up write_bw and read_bw only, not %s",
				 net_test_name(p->test));
	return NULL;
}

void net_samples_free(struct net_samples *s)
{
	if (!s)
		return;
	free(s->lat_us);
	s->lat_us = NULL;
	s->n_lat = 0;
}

void net_bw_row_from(const struct net_samples *s, uint64_t size, double link_gbps, struct net_bw_row *out)
{
	double per_window = s->n_windows > 0 ? (double)s->bytes / s->n_windows : 0, best = 0;
	*out = (struct net_bw_row){ .bytes = size, .iters = s->msgs, .link_share = -1, .errors = s->errors };
	if (s->seconds > 0) {
		out->avg_mibs = (double)s->bytes / s->seconds / 1048576.0;
		out->avg_gbps = (double)s->bytes * 8.0 / s->seconds / 1e9;
		out->msg_rate_mpps = (double)s->msgs / s->seconds / 1e6;
	}
	for (int i = 0; i < s->n_windows; i++)
		if (s->window_s[i] > 0 && per_window / s->window_s[i] > best)
			best = per_window / s->window_s[i];
	/* a single window, or none: the peak is the average */
	out->peak_mibs = s->n_windows > 1 ? best / 1048576.0 : out->avg_mibs;
	if (out->peak_mibs < out->avg_mibs)
		out->peak_mibs = out->avg_mibs;
	if (link_gbps > 0)
		out->link_share = out->avg_gbps / link_gbps;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* perftest's rule (print_report_lat): sort, set aside the two largest
 * samples (LAT_MEASURE_TAIL), and over the m = n - 2 that remain take the
 * median (the mean of the middle pair when m is even), the mean and the
 * standard deviation; t_max is sorted[m] and the percentiles sorted[ceil(m * q)]. */
#define LAT_MEASURE_TAIL 2

static double median_of(const double *v, size_t m)
{
	return (m - 1) % 2 ? (v[m / 2] + v[m / 2 - 1]) / 2 : v[m / 2];
}

void net_lat_row_from(const struct net_samples *s, uint64_t size, struct net_lat_row *out)
{
	size_t n = s->n_lat;
	*out = (struct net_lat_row){ .bytes = size, .iters = n, .errors = s->errors, .capped = s->capped };
	if (!n)
		return;
	double *v = malloc(n * sizeof(*v)), sum = 0, sq = 0;
	if (!v)
		return;
	memcpy(v, s->lat_us, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double);
	size_t m = n > LAT_MEASURE_TAIL ? n - LAT_MEASURE_TAIL : n;
	for (size_t i = 0; i < m; i++)
		sum += v[i];
	out->avg = sum / (double)m;
	for (size_t i = 0; i < m; i++)
		sq += (v[i] - out->avg) * (v[i] - out->avg);
	out->min = v[0];
	out->max = v[m < n ? m : n - 1];
	out->typical = median_of(v, m);
	out->stdev = sqrt(sq / (double)m);
	size_t i99 = (size_t)ceil((double)m * 0.99), i999 = (size_t)ceil((double)m * 0.999);
	out->p99 = v[i99 < n ? i99 : n - 1];
	out->p999 = v[i999 < n ? i999 : n - 1];
	free(v);
}
