/* The fake NCCL's arithmetic: every ncclDataType_t up to bfloat16 and
 * every built-in ncclRedOp_t. Integers are combined in the unsigned type of
 * their width, so sums and products wrap as on the GPU; floating types in
 * double, each step rounded back to the element type (half and bfloat16
 * with round-to-nearest-even, subnormals included). */
#include "fake_nccl.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

size_t fake_type_size(ncclDataType_t t)
{
	static const size_t s[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2 };
	return (unsigned)t < sizeof(s) / sizeof(s[0]) ? s[t] : 0;
}

static float half_to_f(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, x;
	if (exp == 0) {
		float v = ldexpf((float)mant, -24);
		return sign ? -v : v;
	}
	x = exp == 31 ? sign | 0x7f800000 | (mant << 13) : sign | ((exp - 15 + 127) << 23) | (mant << 13);
	float f;
	memcpy(&f, &x, sizeof(f));
	return f;
}

/* Round to nearest even, subnormals included. */
static uint16_t f_to_half(float f)
{
	uint32_t x, sign, exp, mant, h, rem, mid;
	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	exp = (x >> 23) & 0xff;
	mant = x & 0x7fffff;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		if (e < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		unsigned shift = (unsigned)(14 - e);
		h = mant >> shift;
		rem = mant & ((1u << shift) - 1);
		mid = 1u << (shift - 1);
	} else {
		h = ((uint32_t)e << 10) | (mant >> 13);
		rem = mant & 0x1fff;
		mid = 0x1000;
	}
	if (rem > mid || (rem == mid && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

static float bf16_to_f(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;
	memcpy(&f, &x, sizeof(f));
	return f;
}

static uint16_t f_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

static double apply(ncclRedOp_t op, double a, double b)
{
	switch (op) {
	case ncclProd: return a * b;
	case ncclMax: return a > b ? a : b;
	case ncclMin: return a < b ? a : b;
	default: return a + b; /* sum, avg */
	}
}

/* Integers in the unsigned type of their width, so that sums and products
 * wrap as on the GPU; comparisons in the signed type where it is signed. */
#define REDUCE_INT(T, U)                                                                                       \
	do {                                                                                                   \
		T *a = acc;                                                                                    \
		const T *b = in;                                                                               \
		for (size_t i = 0; i < count; i++)                                                             \
			a[i] = op == ncclProd ? (T)((U)a[i] * (U)b[i])                                         \
			     : op == ncclMax  ? (a[i] > b[i] ? a[i] : b[i])                                    \
			     : op == ncclMin  ? (a[i] < b[i] ? a[i] : b[i])                                    \
					      : (T)((U)a[i] + (U)b[i]);                                        \
	} while (0)

#define REDUCE_FLOAT(T, LOAD, STORE)                                                                           \
	do {                                                                                                   \
		T *a = acc;                                                                                    \
		const T *b = in;                                                                               \
		for (size_t i = 0; i < count; i++)                                                             \
			a[i] = STORE(apply(op, LOAD(a[i]), LOAD(b[i])));                                       \
	} while (0)

#define AS_IS(x) (x)
#define TO_FLOAT(x) ((float)(x))

void fake_reduce(ncclDataType_t t, ncclRedOp_t op, void *acc, const void *in, size_t count)
{
	switch (t) {
	case ncclInt8: REDUCE_INT(int8_t, uint8_t); break;
	case ncclUint8: REDUCE_INT(uint8_t, uint8_t); break;
	case ncclInt32: REDUCE_INT(int32_t, uint32_t); break;
	case ncclUint32: REDUCE_INT(uint32_t, uint32_t); break;
	case ncclInt64: REDUCE_INT(int64_t, uint64_t); break;
	case ncclUint64: REDUCE_INT(uint64_t, uint64_t); break;
	case ncclFloat16: REDUCE_FLOAT(uint16_t, half_to_f, f_to_half); break;
	case ncclFloat32: REDUCE_FLOAT(float, AS_IS, TO_FLOAT); break;
	case ncclFloat64: REDUCE_FLOAT(double, AS_IS, AS_IS); break;
	case ncclBfloat16: REDUCE_FLOAT(uint16_t, bf16_to_f, f_to_bf16); break;
	}
}

#define DIV_INT(T)                                                                                             \
	do {                                                                                                   \
		T *a = buf;                                                                                    \
		for (size_t i = 0; i < count; i++)                                                             \
			a[i] = (T)(a[i] / (T)n);                                                               \
	} while (0)
#define DIV_FLOAT(T, LOAD, STORE)                                                                              \
	do {                                                                                                   \
		T *a = buf;                                                                                    \
		for (size_t i = 0; i < count; i++)                                                             \
			a[i] = STORE(LOAD(a[i]) / n);                                                          \
	} while (0)

#define PRESCALE(T, LOAD, STORE)                                                                               \
	do {                                                                                                   \
		T *a = buf;                                                                                    \
		const T k = STORE(1.0 / n);                                                                    \
		for (size_t i = 0; i < count; i++)                                                             \
			a[i] = STORE(LOAD(a[i]) * LOAD(k));                                                    \
	} while (0)

bool fake_avg_prescales(ncclDataType_t t)
{
	return t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16;
}

/* Floating-point ncclAvg as NCCL computes it: every input multiplied by
 * 1/n in the element type (a pre-multiplied sum), each product rounded. */
void fake_avg_prescale(ncclDataType_t t, void *buf, size_t count, int n)
{
	switch (t) {
	case ncclFloat16: PRESCALE(uint16_t, half_to_f, f_to_half); break;
	case ncclFloat32: PRESCALE(float, AS_IS, TO_FLOAT); break;
	case ncclFloat64: PRESCALE(double, AS_IS, AS_IS); break;
	case ncclBfloat16: PRESCALE(uint16_t, bf16_to_f, f_to_bf16); break;
	default: break;
	}
}

/* ncclAvg on integers: the sum divided by the rank count (truncating). */
void fake_avg_finish(ncclDataType_t t, void *buf, size_t count, int n)
{
	switch (t) {
	case ncclInt8: DIV_INT(int8_t); break;
	case ncclUint8: DIV_INT(uint8_t); break;
	case ncclInt32: DIV_INT(int32_t); break;
	case ncclUint32: DIV_INT(uint32_t); break;
	case ncclInt64: DIV_INT(int64_t); break;
	case ncclUint64: DIV_INT(uint64_t); break;
	case ncclFloat16: DIV_FLOAT(uint16_t, half_to_f, f_to_half); break;
	case ncclFloat32: DIV_FLOAT(float, AS_IS, TO_FLOAT); break;
	case ncclFloat64: DIV_FLOAT(double, AS_IS, AS_IS); break;
	case ncclBfloat16: DIV_FLOAT(uint16_t, bf16_to_f, f_to_bf16); break;
	}
}
