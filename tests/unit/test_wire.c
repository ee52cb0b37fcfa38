/* Unit tests for the little-endian cursor (core/wire.h): every width on
 * the wire byte by byte and back, fixed string fields, and the sticky
 * flags: a writer out of room and a reader out of bytes stop, give zeros
 * and never touch a byte past the end. */
#include "testutil.h"
#include "core/wire.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_round_trip(void **state)
{
	(void)state;
	uint8_t b[64];
	memset(b, 0xee, sizeof(b));
	struct wire_w w = WIRE_W(b, sizeof(b));
	wire_put_u8(&w, 0x81);
	wire_put_u16(&w, 0x0102);
	wire_put_u32(&w, 0x03040506u);
	wire_put_u64(&w, 0x0708090a0b0c0d0eull);
	wire_put_f64(&w, -1.5);
	wire_put_bytes(&w, "xyz", 3);
	wire_put_zeros(&w, 2);
	wire_put_u64(&w, UINT64_MAX);
	assert_false(w.overflow);
	assert_int_equal(w.off, 1 + 2 + 4 + 8 + 8 + 3 + 2 + 8);
	/* least significant byte first; -1.5 is 0xbff8000000000000 in IEEE 754 */
	static const uint8_t want[] = { 0x81, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a,
					0x09, 0x08, 0x07, 0, 0, 0, 0, 0, 0, 0xf8, 0xbf, 'x', 'y', 'z', 0, 0,
					0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	assert_memory_equal(b, want, sizeof(want));
	assert_int_equal(b[sizeof(want)], 0xee);

	struct wire_r r = WIRE_R(b, w.off);
	assert_int_equal(wire_get_u8(&r), 0x81);
	assert_int_equal(wire_get_u16(&r), 0x0102);
	assert_int_equal(wire_get_u32(&r), 0x03040506u);
	assert_true(wire_get_u64(&r) == 0x0708090a0b0c0d0eull);
	assert_true(wire_get_f64(&r) == -1.5);
	char three[3];
	wire_get_bytes(&r, three, 3);
	assert_memory_equal(three, "xyz", 3);
	wire_skip(&r, 2);
	assert_int_equal(wire_r_left(&r), 8);
	assert_true(wire_get_u64(&r) == UINT64_MAX);
	assert_false(r.short_read);
	assert_int_equal(wire_r_left(&r), 0);
}

/* Doubles travel as their bits: NaN, infinities and -0 come back as
 * they were. */
static void test_doubles(void **state)
{
	(void)state;
	const double v[] = { 0.0, -0.0, 1e-310, 3.141592653589793, INFINITY, -INFINITY, NAN };
	uint8_t b[8 * 7];
	struct wire_w w = WIRE_W(b, sizeof(b));
	for (size_t i = 0; i < 7; i++)
		wire_put_f64(&w, v[i]);
	struct wire_r r = WIRE_R(b, sizeof(b));
	for (size_t i = 0; i < 7; i++) {
		double d = wire_get_f64(&r);
		assert_memory_equal(&d, &v[i], sizeof(d));
	}
	assert_false(w.overflow || r.short_read);
}

static void test_strings(void **state)
{
	(void)state;
	uint8_t b[12];
	memset(b, 0xee, sizeof(b));
	struct wire_w w = WIRE_W(b, sizeof(b));
	wire_put_str(&w, "ab", 4);          /* "ab" and two NULs */
	wire_put_str(&w, "longer text", 4); /* cut to 3 bytes, terminated */
	wire_put_str(&w, NULL, 4);          /* zeros */
	assert_false(w.overflow);
	assert_memory_equal(b, "ab\0\0lon\0\0\0\0\0", 12);

	struct wire_r r = WIRE_R(b, sizeof(b));
	char s[4];
	assert_true(wire_get_str(&r, s, 4));
	assert_string_equal(s, "ab");
	assert_true(wire_get_str(&r, s, 4));
	assert_string_equal(s, "lon");
	/* a field without its own NUL: false, and still terminated here */
	uint8_t full[4] = { 'w', 'x', 'y', 'z' };
	r = WIRE_R(full, sizeof(full));
	assert_false(wire_get_str(&r, s, 4));
	assert_string_equal(s, "wxy");
	assert_false(r.short_read);
}

/* A writer out of room writes nothing more, even what would fit. */
static void test_overflow_is_sticky(void **state)
{
	(void)state;
	uint8_t b[8];
	memset(b, 0xee, sizeof(b));
	struct wire_w w = WIRE_W(b, 6);
	wire_put_u32(&w, 0x11111111u);
	wire_put_u32(&w, 0x22222222u); /* 4 bytes where 2 are left */
	assert_true(w.overflow);
	assert_int_equal(w.off, 4);
	wire_put_u8(&w, 0x33);
	wire_put_u16(&w, 0x4444);
	wire_put_bytes(&w, "z", 1);
	wire_put_zeros(&w, 1);
	wire_put_str(&w, "q", 2);
	assert_true(w.overflow);
	assert_int_equal(w.off, 4);
	static const uint8_t want[] = { 0x11, 0x11, 0x11, 0x11, 0xee, 0xee, 0xee, 0xee };
	assert_memory_equal(b, want, sizeof(want));

	/* an empty buffer: the first byte overflows */
	w = WIRE_W(b, 0);
	wire_put_u8(&w, 1);
	assert_true(w.overflow);
	assert_int_equal(b[0], 0x11);
}

/* A reader out of bytes reads nothing more, even what is left, and every
 * get gives zeros. The input is a heap block of exactly its size, so a
 * read past it is caught by AddressSanitizer. */
static void test_short_read_is_sticky(void **state)
{
	(void)state;
	uint8_t *b = malloc(6);
	assert_non_null(b);
	memcpy(b, "\1\2\3\4\5\6", 6);
	struct wire_r r = WIRE_R(b, 6);
	assert_int_equal(wire_get_u32(&r), 0x04030201u);
	assert_true(wire_get_u64(&r) == 0); /* 8 bytes where 2 are left */
	assert_true(r.short_read);
	assert_int_equal(r.off, 4);
	assert_int_equal(wire_r_left(&r), 0);
	assert_int_equal(wire_get_u8(&r), 0); /* would fit: still refused */
	assert_int_equal(wire_get_u16(&r), 0);
	assert_true(wire_get_f64(&r) == 0.0);
	char s[4] = "abc";
	assert_false(wire_get_str(&r, s, sizeof(s)));
	assert_string_equal(s, "");
	uint8_t out[3] = { 9, 9, 9 };
	wire_get_bytes(&r, out, sizeof(out));
	assert_memory_equal(out, "\0\0\0", 3);
	wire_skip(&r, 1);
	assert_int_equal(r.off, 4);
	assert_true(r.short_read);

	/* every width against every shorter length */
	for (size_t len = 0; len < 8; len++) {
		for (size_t width = len + 1; width <= 8; width *= 2) {
			uint8_t *p = malloc(len ? len : 1);
			assert_non_null(p);
			memset(p, 0xff, len ? len : 1);
			r = WIRE_R(p, len);
			assert_true(wire_get_le(&r, width) == 0);
			assert_true(r.short_read);
			free(p);
		}
	}
	free(b);
}

/* NULL input with a length of 0 is a valid, empty buffer. */
static void test_empty(void **state)
{
	(void)state;
	struct wire_r r = WIRE_R(NULL, 0);
	assert_int_equal(wire_r_left(&r), 0);
	wire_skip(&r, 0);
	assert_false(r.short_read);
	assert_int_equal(wire_get_u8(&r), 0);
	assert_true(r.short_read);
	struct wire_w w = WIRE_W(NULL, 0);
	wire_put_bytes(&w, "", 0);
	assert_false(w.overflow);
	wire_put_u8(&w, 1);
	assert_true(w.overflow);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_overflow_is_sticky),
		cmocka_unit_test(test_short_read_is_sticky),
		cmocka_unit_test(test_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
