/* rdma.nccl_ranges: numeric NCCL variables are numbers in their range.
 *
 * NCCL reads integers with strtoll(base 0) and checks no ranges
 * (docs/nccl-variables.md §1), so "08" silently becomes 0 and an
 * out-of-range value goes straight into a QP attribute. Ranges:
 *   NCCL_IB_TIMEOUT 0-31: the 5-bit Local ACK Timeout exponent,
 *     4.096 us x 2^v (IB spec vol. 1 12.7.34; NCCL documentation "Values can be
 *     0-31"); 0 means no timeout at all, so a dead peer hangs forever;
 *   NCCL_IB_RETRY_CNT 0-7: 3-bit retry count (NCCL documentation);
 *   NCCL_IB_SL 0-15: 4-bit IB service level; -1 = NCCL picks (2.25+);
 *   NCCL_IB_QPS_PER_CONNECTION 1-128 (NCCL documentation; NCCL_IB_MAX_QPS 128);
 *   NCCL_SOCKET_NTHREADS 1-16 and NCCL_NSOCKS_PERTHREAD with a product of
 *     at most 64 (NCCL documentation). */
#include "checks/check.h"
#include "common.h"

#include <errno.h>
#include <string.h>

static const struct {
	const char *name;
	long long min, max;
	const char *what;
} ranges[] = {
	{ "NCCL_IB_TIMEOUT", 0, 31, "ACK timeout exponent (4.096 us x 2^value)" },
	{ "NCCL_IB_RETRY_CNT", 0, 7, "QP retry count (3 bits)" },
	{ "NCCL_IB_SL", -1, 15, "InfiniBand service level (4 bits; -1 = automatic)" },
	{ "NCCL_IB_QPS_PER_CONNECTION", 1, 128, "queue pairs per connection" },
	{ "NCCL_SOCKET_NTHREADS", 1, 16, "socket helper threads" },
	{ "NCCL_NSOCKS_PERTHREAD", 1, 64, "sockets per helper thread" },
};

static int run(struct check_ctx *c)
{
	const struct nccl_config *nc = &c->inv->nccl;
	size_t seen = 0;
	for (size_t i = 0; i < ARRAY_SIZE(ranges); i++) {
		const struct nccl_var *v = nccl_get(nc, ranges[i].name);
		if (!v)
			continue;
		seen++;
		if (nccl_skip_computed(c, v))
			continue;
		long long n;
		struct finding *f;
		enum nccl_int_outcome r = nccl_int_var(c, v, ranges[i].min, ranges[i].max, ranges[i].what, &n);
		if (r == NCCL_INT_UNSET) {
			check_add(c, STATUS_OK, v->name, "empty (%s): NCCL uses its default", v->source);
			continue;
		}
		if (r != NCCL_INT_OK)
			continue; /* nccl_int_var reported it */
		if (!strcmp(v->name, "NCCL_IB_TIMEOUT") && n == 0) {
			f = check_add(c, STATUS_WARN, v->name, "=0 (%s): no ACK timeout, a dead peer or link hangs the "
							       "job forever instead of failing",
				      v->source);
			finding_hint(f, "use NCCL's default (20, about 30 s with 7 retries) or 22 for large fabrics");
			continue;
		}
		check_add(c, STATUS_OK, v->name, "=%lld (%s): %s", n, v->source, ranges[i].what);
	}
	const struct nccl_var *t = nccl_get(nc, "NCCL_SOCKET_NTHREADS"), *s = nccl_get(nc, "NCCL_NSOCKS_PERTHREAD");
	long long a, b;
	long long prod;
	if (t && s && nccl_param_int(t->value, &a, NULL) == 0 && nccl_param_int(s->value, &b, NULL) == 0 && a > 0 &&
	    b > 0 && (__builtin_mul_overflow(a, b, &prod) || prod > 64)) {
		struct finding *f = check_add(c, STATUS_WARN, "NCCL_NSOCKS_PERTHREAD",
					      "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD (%lld x %lld) is above 64: NCCL "
					      "reduces the sockets per thread",
					      a, b);
		finding_hint(f, "keep the product at most 64");
	}
	if (seen == 0)
		check_add(c, STATUS_OK, SUBJECT_NODE, "no numeric NCCL transport variables set: NCCL defaults apply");
	return 0;
}

const struct check_def check_rdma_nccl_ranges = {
	.id = "rdma.nccl_ranges",
	.section = "NCCL Configuration",
	.summary = "numeric NCCL variables (IB timeout, retry count, SL, QPs, socket threads) are in range",
	.run = run,
	.nccl_vars = true,
};
