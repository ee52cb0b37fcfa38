/* Names, sizes and host arithmetic of the data types, reduction ops and
 * collectives the benchmark harness knows.
 *
 * Names are nccl-tests' (`-d float`, `-o sum`; src/common.cu test_typenames
 * and test_opnames), with its aliases. The half and bfloat16 conversions
 * round to nearest even (IEEE 754-2008 binary16; bfloat16 is the top half
 * of a binary32), so host-side reductions agree bit for bit with a GPU that
 * reduces in float and rounds once per step. */
#include "types.h"

#include <math.h>
#include <string.h>

static const struct {
	const char *name;
	size_t size;
	const char *alias;
} dtypes[DT__COUNT] = {
	[DT_INT8] = { "int8", 1, "char" },       [DT_UINT8] = { "uint8", 1, NULL },
	[DT_INT32] = { "int32", 4, "int" },      [DT_UINT32] = { "uint32", 4, NULL },
	[DT_INT64] = { "int64", 8, NULL },       [DT_UINT64] = { "uint64", 8, NULL },
	[DT_HALF] = { "half", 2, "float16" },    [DT_FLOAT] = { "float", 4, "float32" },
	[DT_DOUBLE] = { "double", 8, "float64" }, [DT_BFLOAT16] = { "bfloat16", 2, "bf16" },
};

static const char *const redops[OP__COUNT] = { "sum", "prod", "max", "min", "avg" };

static const char *const colls[COLL__COUNT] = {
	[COLL_ALL_REDUCE] = "all_reduce", [COLL_ALL_GATHER] = "all_gather", [COLL_REDUCE_SCATTER] = "reduce_scatter",
	[COLL_BROADCAST] = "broadcast",   [COLL_REDUCE] = "reduce",         [COLL_ALLTOALL] = "alltoall",
	[COLL_SENDRECV] = "sendrecv",
};

size_t dtype_size(enum dtype t)
{
	return (unsigned)t < DT__COUNT ? dtypes[t].size : 0;
}

const char *dtype_name(enum dtype t)
{
	return (unsigned)t < DT__COUNT ? dtypes[t].name : "?";
}

int dtype_parse(const char *s)
{
	for (int i = 0; i < DT__COUNT; i++)
		if (!strcmp(s, dtypes[i].name) || (dtypes[i].alias && !strcmp(s, dtypes[i].alias)))
			return i;
	return -1;
}

const char *redop_name(enum redop o)
{
	return (unsigned)o < OP__COUNT ? redops[o] : "?";
}

int redop_parse(const char *s)
{
	for (int i = 0; i < OP__COUNT; i++)
		if (!strcmp(s, redops[i]))
			return i;
	return -1;
}

const char *coll_name(enum coll c)
{
	return (unsigned)c < COLL__COUNT ? colls[c] : "?";
}

int coll_parse(const char *s)
{
	size_t n = strlen(s);
	/* nccl-tests' binary names: all_reduce_perf ... */
	if (n > 5 && !strcmp(s + n - 5, "_perf"))
		n -= 5;
	for (int i = 0; i < COLL__COUNT; i++)
		if (strlen(colls[i]) == n && !strncmp(s, colls[i], n))
			return i;
	return -1;
}

int coll_has_op(enum coll c)
{
	return c == COLL_ALL_REDUCE || c == COLL_REDUCE_SCATTER || c == COLL_REDUCE;
}

int coll_has_root(enum coll c)
{
	return c == COLL_BROADCAST || c == COLL_REDUCE;
}

static uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

static float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

uint16_t float_to_half(float f)
{
	uint32_t x = f2u(f);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t exp = (x >> 23) & 0xffu;
	uint32_t man = x & 0x7fffffu;

	if (exp == 0xff) /* inf, nan (keep a quiet nan) */
		return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00u);
	if (e <= 0) {
		/* subnormal half (or zero): shift the full mantissa into place */
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000u;
		unsigned shift = (unsigned)(14 - e);
		uint32_t h = man >> shift;
		uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = ((uint32_t)e << 10) | (man >> 13);
	uint32_t rem = man & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++; /* may carry into the exponent, up to inf: correct */
	return (uint16_t)(sign | h);
}

float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t man = h & 0x3ffu;

	if (exp == 0x1f)
		return u2f(sign | 0x7f800000u | (man << 13));
	if (exp == 0) {
		float v = ldexpf((float)man, -24);
		return sign ? -v : v;
	}
	return u2f(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

uint16_t float_to_bf16(float f)
{
	uint32_t x = f2u(f);
	if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))
		return (uint16_t)((x >> 16) | 0x40u); /* quiet nan */
	uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
	return (uint16_t)((x + rounding) >> 16);
}

float bf16_to_float(uint16_t b)
{
	return u2f((uint32_t)b << 16);
}

/* One element step for each storage class. Integers wrap: computed in
 * uint64_t and truncated, sign-extended back for comparisons. */
static int64_t load_s(enum dtype t, const void *p)
{
	switch (t) {
	case DT_INT8: return *(const int8_t *)p;
	case DT_INT32: return *(const int32_t *)p;
	default: return *(const int64_t *)p;
	}
}

static uint64_t load_u(enum dtype t, const void *p)
{
	switch (t) {
	case DT_UINT8: return *(const uint8_t *)p;
	case DT_UINT32: return *(const uint32_t *)p;
	default: return *(const uint64_t *)p;
	}
}

static void store_int(enum dtype t, void *p, uint64_t v)
{
	switch (dtype_size(t)) {
	case 1: *(uint8_t *)p = (uint8_t)v; break;
	case 4: *(uint32_t *)p = (uint32_t)v; break;
	default: *(uint64_t *)p = v; break;
	}
}

static bool is_signed_int(enum dtype t)
{
	return t == DT_INT8 || t == DT_INT32 || t == DT_INT64;
}

static uint64_t reduce_int(enum dtype t, enum redop op, const void *a, const void *b)
{
	if (op == OP_SUM || op == OP_AVG)
		return (is_signed_int(t) ? (uint64_t)load_s(t, a) + (uint64_t)load_s(t, b) : load_u(t, a) + load_u(t, b));
	if (op == OP_PROD)
		return (is_signed_int(t) ? (uint64_t)load_s(t, a) * (uint64_t)load_s(t, b) : load_u(t, a) * load_u(t, b));
	bool a_less;
	if (is_signed_int(t))
		a_less = load_s(t, a) < load_s(t, b);
	else
		a_less = load_u(t, a) < load_u(t, b);
	bool take_a = op == OP_MIN ? a_less : !a_less;
	return is_signed_int(t) ? (uint64_t)load_s(t, take_a ? a : b) : load_u(t, take_a ? a : b);
}

double dtype_load(enum dtype t, const void *p)
{
	switch (t) {
	case DT_HALF: return half_to_float(*(const uint16_t *)p);
	case DT_BFLOAT16: return bf16_to_float(*(const uint16_t *)p);
	case DT_FLOAT: return *(const float *)p;
	case DT_DOUBLE: return *(const double *)p;
	case DT_INT8: case DT_INT32: case DT_INT64: return (double)load_s(t, p);
	default: return (double)load_u(t, p);
	}
}

void dtype_store(enum dtype t, void *p, double v)
{
	switch (t) {
	case DT_HALF: *(uint16_t *)p = float_to_half((float)v); break;
	case DT_BFLOAT16: *(uint16_t *)p = float_to_bf16((float)v); break;
	case DT_FLOAT: *(float *)p = (float)v; break;
	case DT_DOUBLE: *(double *)p = v; break;
	case DT_INT8: case DT_INT32: case DT_INT64: store_int(t, p, (uint64_t)(int64_t)v); break;
	default: store_int(t, p, (uint64_t)v); break;
	}
}

bool dtype_is_float(enum dtype t)
{
	return t == DT_HALF || t == DT_BFLOAT16 || t == DT_FLOAT || t == DT_DOUBLE;
}

static double reduce_fp(enum redop op, double a, double b)
{
	switch (op) {
	case OP_PROD: return a * b;
	case OP_MAX: return a > b ? a : b;
	case OP_MIN: return a < b ? a : b;
	default: return a + b;
	}
}

void host_reduce(enum dtype t, enum redop op, void *acc, const void *in, size_t count)
{
	size_t sz = dtype_size(t);
	unsigned char *a = acc;
	const unsigned char *b = in;

	for (size_t i = 0; i < count; i++, a += sz, b += sz) {
		if (dtype_is_float(t)) {
			/* float steps in float, as a GPU does; double in double */
			double r = reduce_fp(op, dtype_load(t, a), dtype_load(t, b));
			if (t != DT_DOUBLE)
				r = (float)r;
			dtype_store(t, a, r);
		} else {
			store_int(t, a, reduce_int(t, op, a, b));
		}
	}
}

void host_avg_finish(enum dtype t, void *buf, size_t count, int n)
{
	size_t sz = dtype_size(t);
	unsigned char *p = buf;

	if (n <= 0)
		return;
	for (size_t i = 0; i < count; i++, p += sz) {
		if (dtype_is_float(t)) {
			double v = dtype_load(t, p) / n;
			dtype_store(t, p, t == DT_DOUBLE ? v : (float)v);
		} else if (is_signed_int(t)) {
			store_int(t, p, (uint64_t)(load_s(t, p) / n));
		} else {
			store_int(t, p, load_u(t, p) / (uint64_t)n);
		}
	}
}
