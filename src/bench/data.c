/* Verifiable benchmark data (see data.h for the value ranges and why). */
#include "data.h"

#include <math.h>
#include <string.h>

int64_t data_exact_limit(enum dtype t)
{
	switch (t) {
	case DT_INT8: return 127;
	case DT_UINT8: return 255;
	case DT_BFLOAT16: return 256;   /* 8 significant bits */
	case DT_HALF: return 2048;      /* 11 significant bits */
	default: return 1 << 20;        /* well inside 24-bit float and 32-bit ints */
	}
}

int data_pow2_limit(enum dtype t)
{
	switch (t) {
	case DT_INT8: return 6;
	case DT_UINT8: return 7;
	case DT_HALF: return 15;        /* 2^15 < 65504 */
	case DT_INT32: return 30;
	case DT_UINT32: return 31;
	case DT_INT64: return 62;
	case DT_UINT64: return 63;
	default: return 100;            /* float, double, bfloat16: 2^100 is exact */
	}
}

static bool is_signed(enum dtype t)
{
	return t != DT_UINT8 && t != DT_UINT32 && t != DT_UINT64;
}

/* A 32-bit mix of (seed, rank, index): cheap enough to recompute every
 * rank's input for every element when validating. */
static uint32_t mix(uint64_t seed, int rank, size_t idx)
{
	uint32_t x = (uint32_t)idx * 2654435761u ^ (uint32_t)(rank + 1) * 0x85ebca6bu ^ (uint32_t)seed * 0xc2b2ae35u ^
		     (uint32_t)(idx >> 32);
	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	x *= 0x297a2d39u;
	x ^= x >> 15;
	return x;
}

/* An integer in [-k, k] (signed types) or [0, k]. */
static int64_t ranged(enum dtype t, uint32_t h, int64_t k)
{
	if (k <= 0)
		return 0;
	if (is_signed(t))
		return (int64_t)(h % (uint32_t)(2 * k + 1)) - k;
	return (int64_t)(h % (uint32_t)(k + 1));
}

static int64_t nonneg(uint32_t h, int64_t k)
{
	return k > 0 ? (int64_t)(h % (uint32_t)(k + 1)) : 0;
}

/* Reduced data is built as v(r, i) = c(i) + d(r, i mod CLASSES): an
 * element's base plus a rank's offset for the element's class. Every rank
 * contributes to every element and the ranks differ, yet the reduction has
 * a closed form — n·c + Σ d, c + max d, c + min d — so expected values
 * cost O(count + CLASSES·n), not O(count·n), however many ranks there are. */
#define CLASSES 8
#define RANK_SALT 0x5bd1e995u

static int64_t base_of(const struct data_spec *s, size_t idx, int64_t k, bool same_sign)
{
	uint32_t h = mix(s->seed, -1, idx);
	return same_sign ? nonneg(h, k) : ranged(s->t, h, k);
}

static int64_t offset_of(const struct data_spec *s, int r, size_t cls, int64_t k, bool same_sign)
{
	uint32_t h = mix(s->seed, r, cls ^ RANK_SALT);
	return same_sign ? nonneg(h, k) : ranged(s->t, h, k);
}

/* The ranges: sums of n bases and n offsets stay within L; max/min and
 * copies use the whole range; the two averaged ranks are of one sign, so
 * the library's pre-multiplied sum x/n + y/n rounds twice at most (as
 * nccl-tests' same-sign average data). */
static int64_t base_k(const struct data_spec *s, int n)
{
	int64_t L = data_exact_limit(s->t);
	switch (s->op) {
	case OP_SUM: return L / (2 * n) > 0 ? L / (2 * n) : 1;
	case OP_AVG: return L / 4;
	default: return L / 2;
	}
}

/* Rank r's value at index idx, exactly. */
static int64_t value(const struct data_spec *s, int r, size_t idx)
{
	int n = s->nranks > 0 ? s->nranks : 1;
	int64_t k = base_k(s, n);
	size_t cls = idx % CLASSES;

	switch (s->op) {
	case OP_PROD: {
		/* element idx has m twos, spread over the ranks by the data seed */
		int B = data_pow2_limit(s->t);
		int m = (int)(idx % (size_t)(B + 1));
		if (m > n)
			m = n;
		return (int)((r + idx + s->seed) % (size_t)n) < m ? 2 : 1;
	}
	case OP_AVG:
		return r < 2 ? base_of(s, idx, k, true) + offset_of(s, r, cls, k, true) : 0;
	case OP_SUM: case OP_MAX: case OP_MIN:
		return base_of(s, idx, k, false) + offset_of(s, r, cls, k, false);
	default: /* copy */
		return ranged(s->t, mix(s->seed, r, idx), data_exact_limit(s->t));
	}
}

static void store_exact(enum dtype t, void *p, int64_t v)
{
	switch (t) {
	case DT_INT8: case DT_UINT8: *(uint8_t *)p = (uint8_t)v; break;
	case DT_INT32: case DT_UINT32: *(uint32_t *)p = (uint32_t)v; break;
	case DT_INT64: case DT_UINT64: *(uint64_t *)p = (uint64_t)v; break;
	default: dtype_store(t, p, (double)v); break;
	}
}

void data_fill(const struct data_spec *s, int rank, size_t first, void *buf, size_t count)
{
	size_t sz = dtype_size(s->t);
	unsigned char *p = buf;
	for (size_t i = 0; i < count; i++, p += sz)
		store_exact(s->t, p, value(s, rank, first + i));
}

/* The per-class sums, maxima and minima of the ranks' offsets. */
struct offsets {
	int64_t sum[CLASSES], max[CLASSES], min[CLASSES];
};

static void offsets_of(const struct data_spec *s, int n, struct offsets *o)
{
	int64_t k = base_k(s, n);
	for (size_t c = 0; c < CLASSES; c++) {
		o->sum[c] = 0;
		for (int r = 0; r < n; r++) {
			int64_t d = offset_of(s, r, c, k, s->op == OP_AVG);
			if (s->op == OP_AVG && r >= 2)
				d = 0;
			o->sum[c] += d;
			o->max[c] = r == 0 || d > o->max[c] ? d : o->max[c];
			o->min[c] = r == 0 || d < o->min[c] ? d : o->min[c];
		}
	}
}

void data_expect_reduce(const struct data_spec *s, size_t first, void *buf, size_t count)
{
	size_t sz = dtype_size(s->t);
	unsigned char *p = buf;
	int n = s->nranks > 0 ? s->nranks : 1;
	int64_t k = base_k(s, n);
	struct offsets o;

	if (s->op != OP_PROD)
		offsets_of(s, n, &o);
	for (size_t i = 0; i < count; i++, p += sz) {
		size_t idx = first + i, cls = idx % CLASSES;
		int64_t acc;
		switch (s->op) {
		case OP_PROD: {
			int B = data_pow2_limit(s->t), m = (int)(idx % (size_t)(B + 1));
			acc = (int64_t)1 << (m < n ? m : n);
			break;
		}
		case OP_MAX: acc = base_of(s, idx, k, false) + o.max[cls]; break;
		case OP_MIN: acc = base_of(s, idx, k, false) + o.min[cls]; break;
		case OP_AVG: acc = base_of(s, idx, k, true) * (n < 2 ? 1 : 2) + o.sum[cls]; break;
		default: acc = base_of(s, idx, k, false) * n + o.sum[cls]; break;
		}
		if (s->op == OP_AVG && dtype_is_float(s->t)) {
			double a = (double)acc / n;
			dtype_store(s->t, p, s->t == DT_DOUBLE ? a : (double)(float)a);
		} else {
			/* integer average truncates toward zero, as NCCL's does */
			store_exact(s->t, p, s->op == OP_AVG ? acc / n : acc);
		}
	}
}

/* Floating-point bit patterns as integers that order like the values, so
 * their difference counts units in the last place. */
static int64_t ordered(enum dtype t, const void *p)
{
	int64_t v, signbit;
	switch (t) {
	case DT_HALF: case DT_BFLOAT16: {
		uint16_t u;
		memcpy(&u, p, 2);
		v = u & 0x7fff;
		signbit = u >> 15;
		break;
	}
	case DT_FLOAT: {
		uint32_t u;
		memcpy(&u, p, 4);
		v = u & 0x7fffffff;
		signbit = u >> 31;
		break;
	}
	default: {
		uint64_t u;
		memcpy(&u, p, 8);
		v = (int64_t)(u & 0x7fffffffffffffffull);
		signbit = (int64_t)(u >> 63);
		break;
	}
	}
	return signbit ? -v : v;
}

size_t data_compare(enum dtype t, int op, const void *got, const void *exp, size_t count)
{
	size_t sz = dtype_size(t), wrong = 0;
	const unsigned char *g = got, *e = exp;
	bool ulp = op == OP_AVG && dtype_is_float(t);

	if (!ulp) {
		for (size_t i = 0; i < count; i++, g += sz, e += sz)
			wrong += memcmp(g, e, sz) != 0;
		return wrong;
	}
	for (size_t i = 0; i < count; i++, g += sz, e += sz) {
		int64_t d = ordered(t, g) - ordered(t, e);
		wrong += d > 2 || d < -2;
	}
	return wrong;
}
