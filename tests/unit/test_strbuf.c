/* Unit tests for the growable string buffer (core/strbuf) and the owned
 * string vector (core/strv): the invariants written in their headers. */
#include "testutil.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The invariant of strbuf.h, checked after every operation. */
static void assert_sb_ok(const struct strbuf *sb)
{
	assert_non_null(sb->buf);
	assert_int_equal(sb->buf[sb->len], '\0');
	if (sb->alloc == 0) {
		assert_ptr_equal(sb->buf, strbuf_empty);
		assert_int_equal(sb->len, 0);
	} else {
		assert_true(sb->len < sb->alloc);
	}
}

static void test_init_is_empty_static(void **state)
{
	(void)state;
	struct strbuf a = STRBUF_INIT, b;
	strbuf_init(&b);
	assert_sb_ok(&a);
	assert_sb_ok(&b);
	assert_ptr_equal(a.buf, strbuf_empty);
	assert_ptr_equal(b.buf, strbuf_empty);
	assert_string_equal(a.buf, "");
	/* releasing a never-grown buffer is fine and keeps it usable */
	strbuf_release(&a);
	assert_sb_ok(&a);
	strbuf_adds(&a, "x");
	assert_string_equal(a.buf, "x");
	strbuf_release(&a);
	assert_sb_ok(&a);
	/* the shared empty string was never written to */
	assert_int_equal(strbuf_empty[0], '\0');
}

static void test_add_and_addch(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_add(&sb, "", 0); /* adding nothing keeps the static buffer */
	assert_int_equal(sb.alloc, 0);
	assert_sb_ok(&sb);
	strbuf_adds(&sb, "hello");
	strbuf_addch(&sb, ' ');
	strbuf_add(&sb, "worldXXX", 5);
	assert_sb_ok(&sb);
	assert_string_equal(sb.buf, "hello world");
	assert_int_equal(sb.len, 11);
	/* binary data with an embedded NUL is kept byte for byte */
	strbuf_add(&sb, "a\0b", 3);
	assert_int_equal(sb.len, 14);
	assert_memory_equal(sb.buf + 11, "a\0b", 3);
	assert_sb_ok(&sb);
	strbuf_release(&sb);
	assert_sb_ok(&sb);
}

static void test_grow_many(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 10000; i++) {
		strbuf_addch(&sb, (char)('a' + i % 26));
		if (i % 997 == 0)
			assert_sb_ok(&sb);
	}
	assert_int_equal(sb.len, 10000);
	assert_sb_ok(&sb);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(sb.buf[i], 'a' + i % 26);
	strbuf_grow(&sb, 0);
	assert_sb_ok(&sb);
	size_t before = sb.alloc;
	strbuf_grow(&sb, 100000);
	assert_true(sb.alloc >= sb.len + 100000 + 1);
	assert_true(sb.alloc >= before);
	assert_sb_ok(&sb);
	strbuf_release(&sb);
}

static void test_addf_growth(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%d-%s", 42, "x");
	assert_string_equal(sb.buf, "42-x");
	assert_sb_ok(&sb);
	/* a string much longer than the first allocation */
	char *big = malloc(100001);
	assert_non_null(big);
	memset(big, 'z', 100000);
	big[100000] = '\0';
	strbuf_addf(&sb, "[%s]", big);
	assert_int_equal(sb.len, 4 + 100002);
	assert_sb_ok(&sb);
	assert_int_equal(sb.buf[4], '[');
	assert_int_equal(sb.buf[sb.len - 1], ']');
	assert_int_equal(strlen(sb.buf), sb.len);
	/* formats exactly at power-of-two boundaries */
	strbuf_reset(&sb);
	for (size_t n = 60; n < 70; n++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%.*s", (int)n, big);
		assert_int_equal(sb.len, n);
		assert_sb_ok(&sb);
	}
	/* empty format adds nothing */
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s", "");
	assert_int_equal(sb.len, 0);
	assert_sb_ok(&sb);
	free(big);
	strbuf_release(&sb);
}

static void test_addf_on_static_empty(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s", "");
	assert_sb_ok(&sb);
	assert_int_equal(strbuf_empty[0], '\0');
	strbuf_addf(&sb, "%05u", 7u);
	assert_string_equal(sb.buf, "00007");
	strbuf_release(&sb);
}

static void test_detach(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	/* detaching an empty static buffer still gives a malloc'd "" */
	char *s = strbuf_detach(&sb);
	assert_non_null(s);
	assert_string_equal(s, "");
	assert_ptr_not_equal(s, strbuf_empty);
	free(s);
	assert_sb_ok(&sb);

	strbuf_adds(&sb, "abc");
	char *old = sb.buf;
	s = strbuf_detach(&sb);
	assert_ptr_equal(s, old);
	assert_string_equal(s, "abc");
	free(s);
	/* the buffer is back in its initial state and reusable */
	assert_sb_ok(&sb);
	assert_int_equal(sb.alloc, 0);
	strbuf_adds(&sb, "def");
	assert_string_equal(sb.buf, "def");
	strbuf_release(&sb);
}

static void test_setlen_reset(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	/* setlen/reset on the shared empty buffer must not write to it */
	strbuf_setlen(&sb, 0);
	strbuf_reset(&sb);
	strbuf_setlen(&sb, 5);
	assert_sb_ok(&sb);
	assert_int_equal(strbuf_empty[0], '\0');

	strbuf_adds(&sb, "abcdef");
	strbuf_setlen(&sb, 3);
	assert_string_equal(sb.buf, "abc");
	assert_int_equal(sb.len, 3);
	assert_sb_ok(&sb);
	/* growing through setlen is refused: never exposes stale bytes */
	strbuf_setlen(&sb, 6);
	assert_int_equal(sb.len, 3);
	assert_sb_ok(&sb);
	size_t alloc = sb.alloc;
	strbuf_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.alloc, alloc); /* reset keeps the memory */
	assert_sb_ok(&sb);
	strbuf_release(&sb);
}

static void test_rtrim(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_rtrim(&sb);
	assert_sb_ok(&sb);
	strbuf_adds(&sb, "  value \t\r\n\n");
	strbuf_rtrim(&sb);
	assert_string_equal(sb.buf, "  value");
	assert_int_equal(sb.len, 7);
	strbuf_reset(&sb);
	strbuf_adds(&sb, " \n\t ");
	strbuf_rtrim(&sb);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	assert_sb_ok(&sb);
	strbuf_reset(&sb);
	strbuf_adds(&sb, "x");
	strbuf_rtrim(&sb);
	assert_string_equal(sb.buf, "x");
	/* high-bit bytes are not whitespace (isspace on unsigned char) */
	strbuf_reset(&sb);
	strbuf_adds(&sb, "\xc3\xa9\xa0");
	strbuf_rtrim(&sb);
	assert_int_equal(sb.len, 3);
	strbuf_release(&sb);
}

static void test_cleanup_attribute(void **state)
{
	(void)state;
	/* runs under ASan: a leak here would fail the test */
	for (int i = 0; i < 3; i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "iteration %d", i);
		assert_sb_ok(&sb);
	}
}

static void test_xhelpers(void **state)
{
	(void)state;
	char *s = xasprintf("%s=%d", "a", 1);
	assert_string_equal(s, "a=1");
	free(s);
	s = xasprintf("%s", "");
	assert_string_equal(s, "");
	free(s);
	s = xstrdup(NULL);
	assert_string_equal(s, "");
	free(s);
	s = xstrndup("abcdef", 3);
	assert_string_equal(s, "abc");
	free(s);
	s = xstrndup("ab", 10);
	assert_string_equal(s, "ab");
	free(s);
	int *v = xcalloc(0, 0); /* never NULL, even for zero */
	assert_non_null(v);
	free(v);
	v = xcalloc(4, sizeof(int));
	for (int i = 0; i < 4; i++)
		assert_int_equal(v[i], 0);
	v = xreallocarray(v, 8, sizeof(int));
	v[7] = 7;
	free(v);
}

/* ---- strv ---- */

static void test_strv_push_add(void **state)
{
	(void)state;
	struct strv sv = STRV_INIT;
	assert_false(strv_contains(&sv, "a"));
	strv_add(&sv, "b");
	strv_push(&sv, xstrdup("a"));
	char tmp[] = "c";
	strv_add(&sv, tmp);
	tmp[0] = 'X'; /* strv_add copied it */
	assert_int_equal(sv.n, 3);
	assert_null(sv.v[3]);
	assert_string_equal(sv.v[0], "b");
	assert_string_equal(sv.v[1], "a");
	assert_string_equal(sv.v[2], "c");
	assert_true(strv_contains(&sv, "a"));
	assert_true(strv_contains(&sv, "c"));
	assert_false(strv_contains(&sv, "X"));
	assert_false(strv_contains(&sv, ""));
	assert_false(strv_contains(&sv, "aa"));
	strv_free(&sv);
	assert_null(sv.v);
	assert_int_equal(sv.n, 0);
	/* free twice and free of empty are harmless */
	strv_free(&sv);
	struct strv empty = STRV_INIT;
	strv_free(&empty);
}

static void test_strv_sort(void **state)
{
	(void)state;
	struct strv sv = STRV_INIT;
	strv_sort(&sv); /* empty */
	strv_add(&sv, "only");
	strv_sort(&sv);
	assert_string_equal(sv.v[0], "only");
	strv_free(&sv);

	const char *in[] = { "mlx5_10", "mlx5_2", "", "Zeta", "alpha", "mlx5_2", "mlx5_1" };
	const char *want[] = { "", "Zeta", "alpha", "mlx5_1", "mlx5_10", "mlx5_2", "mlx5_2" };
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		strv_add(&sv, in[i]);
	strv_sort(&sv);
	assert_int_equal(sv.n, 7);
	for (size_t i = 0; i < 7; i++)
		assert_string_equal(sv.v[i], want[i]);
	assert_null(sv.v[7]);
	assert_true(strv_contains(&sv, ""));
	strv_free(&sv);
}

static void test_strv_many(void **state)
{
	(void)state;
	_cleanup_strv_ struct strv sv = STRV_INIT;
	for (int i = 999; i >= 0; i--)
		strv_push(&sv, xasprintf("%04d", i));
	assert_int_equal(sv.n, 1000);
	assert_null(sv.v[1000]);
	strv_sort(&sv);
	for (int i = 0; i < 1000; i++) {
		char want[8];
		snprintf(want, sizeof(want), "%04d", i);
		assert_string_equal(sv.v[i], want);
	}
	assert_true(strv_contains(&sv, "0999"));
	assert_false(strv_contains(&sv, "1000"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_is_empty_static),
		cmocka_unit_test(test_add_and_addch),
		cmocka_unit_test(test_grow_many),
		cmocka_unit_test(test_addf_growth),
		cmocka_unit_test(test_addf_on_static_empty),
		cmocka_unit_test(test_detach),
		cmocka_unit_test(test_setlen_reset),
		cmocka_unit_test(test_rtrim),
		cmocka_unit_test(test_cleanup_attribute),
		cmocka_unit_test(test_xhelpers),
		cmocka_unit_test(test_strv_push_add),
		cmocka_unit_test(test_strv_sort),
		cmocka_unit_test(test_strv_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
