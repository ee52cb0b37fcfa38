/* -I's statistics of a half-row's per-iteration times (harness.h), as
 * nccl-tests 2.19.6 util.cu computeIterStats: sorted, p50 the middle
 * element, p95 and p99 the ceil(n x p / 100)-th, the population standard
 * deviation. */
#include "harness.h"
#include "core/strbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void bench_iter_stats(struct bench_iter *it)
{
	int n = it->n - it->skipped;
	if (n <= 0)
		return;
	double *v = xcalloc((size_t)n, sizeof(double)), sum = 0, var = 0;
	memcpy(v, it->times + it->skipped, (size_t)n * sizeof(double));
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	int i95 = (n * 95 + 99) / 100 - 1, i99 = (n * 99 + 99) / 100 - 1;
	it->min = v[0];
	it->max = v[n - 1];
	it->p50 = v[n / 2];
	it->p95 = v[i95 < n - 1 ? i95 : n - 1];
	it->p99 = v[i99 < n - 1 ? i99 : n - 1];
	for (int i = 0; i < n; i++)
		sum += v[i];
	it->avg = sum / n;
	for (int i = 0; i < n; i++)
		var += (v[i] - it->avg) * (v[i] - it->avg);
	it->stdev = sqrt(var / n);
	free(v);
}

double bench_iter_cv(const struct bench_iter *it)
{
	return it->avg > 0 ? it->stdev / it->avg * 100.0 : 0.0;
}

void bench_iter_free(struct bench_iter *it)
{
	if (!it)
		return;
	free(it->times);
	free(it->procs);
	free(it);
}
