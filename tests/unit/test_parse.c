/* Unit tests for the pure text parsers of core/parse: numbers, sysfs
 * "<n>: <name>" values, line splitting, edit distance and PCI addresses.
 * Every parser must return a clear -errno on garbage and leave its output
 * untouched then. */
#include "testutil.h"
#include "core/parse.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U64_SENTINEL 0xdeadbeefcafef00dull
#define S64_SENTINEL ((int64_t)-424242424242)
#define INT_SENTINEL 0x5a5a5a

static void u64_ok(const char *s, int base, uint64_t want)
{
	uint64_t v = U64_SENTINEL;
	int r = parse_u64(s, base, &v);
	if (r != 0)
		fail_msg("parse_u64(\"%s\", %d) = %d, want 0", s, base, r);
	assert_int_equal(v, want);
}

static void u64_err(const char *s, int base, int err)
{
	uint64_t v = U64_SENTINEL;
	int r = parse_u64(s, base, &v);
	if (r != err)
		fail_msg("parse_u64(\"%s\", %d) = %d, want %d", s, base, r, err);
	assert_int_equal(v, U64_SENTINEL);
}

static void s64_ok(const char *s, int base, int64_t want)
{
	int64_t v = S64_SENTINEL;
	int r = parse_s64(s, base, &v);
	if (r != 0)
		fail_msg("parse_s64(\"%s\", %d) = %d, want 0", s, base, r);
	assert_true(v == want);
}

static void s64_err(const char *s, int base, int err)
{
	int64_t v = S64_SENTINEL;
	int r = parse_s64(s, base, &v);
	if (r != err)
		fail_msg("parse_s64(\"%s\", %d) = %d, want %d", s, base, r, err);
	assert_true(v == S64_SENTINEL);
}

static void int_ok(const char *s, int base, int want)
{
	int v = INT_SENTINEL;
	int r = parse_int(s, base, &v);
	if (r != 0)
		fail_msg("parse_int(\"%s\", %d) = %d, want 0", s, base, r);
	assert_int_equal(v, want);
}

static void int_err(const char *s, int base, int err)
{
	int v = INT_SENTINEL;
	int r = parse_int(s, base, &v);
	if (r != err)
		fail_msg("parse_int(\"%s\", %d) = %d, want %d", s, base, r, err);
	assert_int_equal(v, INT_SENTINEL);
}

static void test_parse_u64(void **state)
{
	(void)state;
	u64_ok("0", 10, 0);
	u64_ok("12", 10, 12);
	u64_ok(" 12\n", 10, 12);
	u64_ok("\t\t7 \r\n", 10, 7);
	u64_ok("18446744073709551615", 10, UINT64_MAX);
	u64_ok("ff", 16, 255);
	u64_ok("0xff", 16, 255);
	u64_ok("0x15b3\n", 16, 0x15b3);
	u64_ok("0x10", 0, 16);
	u64_ok("010", 0, 8);
	u64_ok("010", 10, 10);
	u64_ok("FFFFFFFFFFFFFFFF", 16, UINT64_MAX);

	u64_err("", 10, -ENODATA);
	u64_err("   \n\t", 10, -ENODATA);
	u64_err("\n", 10, -ENODATA);
	u64_err("-1", 10, -EINVAL);
	u64_err(" -1\n", 10, -EINVAL);
	u64_err("+3", 10, -EINVAL);
	u64_err("12abc", 10, -EINVAL);
	u64_err("abc", 10, -EINVAL);
	u64_err("1 2", 10, -EINVAL);
	u64_err("1.5", 10, -EINVAL);
	u64_err("0x", 16, -EINVAL);
	u64_err("0x", 0, -EINVAL);
	u64_err("0x10", 10, -EINVAL);
	u64_err("09", 0, -EINVAL);
	u64_err("g", 16, -EINVAL);
	u64_err("18446744073709551616", 10, -ERANGE); /* 2^64 */
	u64_err("99999999999999999999999", 10, -ERANGE);
	u64_err("10000000000000000", 16, -ERANGE);
	/* an absurdly long string is refused, not read in part */
	char long_num[300];
	memset(long_num, '1', sizeof(long_num) - 1);
	long_num[sizeof(long_num) - 1] = '\0';
	uint64_t v = U64_SENTINEL;
	assert_true(parse_u64(long_num, 10, &v) < 0);
	assert_int_equal(v, U64_SENTINEL);
}

static void test_parse_s64(void **state)
{
	(void)state;
	s64_ok("-1", 10, -1);
	s64_ok("-1\n", 10, -1);
	s64_ok("+3", 10, 3);
	s64_ok(" 12\n", 10, 12);
	s64_ok("0", 10, 0);
	s64_ok("9223372036854775807", 10, INT64_MAX);
	s64_ok("-9223372036854775808", 10, INT64_MIN);
	s64_ok("-0x10", 16, -16);
	s64_ok("0x7f", 0, 127);

	s64_err("", 10, -ENODATA);
	s64_err(" ", 10, -ENODATA);
	s64_err("-", 10, -EINVAL);
	s64_err("+", 10, -EINVAL);
	s64_err("--1", 10, -EINVAL);
	s64_err("12abc", 10, -EINVAL);
	s64_err("0x", 0, -EINVAL);
	s64_err("- 1", 10, -EINVAL);
	s64_err("9223372036854775808", 10, -ERANGE);
	s64_err("-9223372036854775809", 10, -ERANGE);
	s64_err("18446744073709551616", 10, -ERANGE);
}

static void test_parse_int(void **state)
{
	(void)state;
	int_ok("2147483647", 10, INT32_MAX);
	int_ok("-2147483648", 10, INT32_MIN);
	int_ok("-1", 10, -1);
	int_ok("+3", 10, 3);
	int_ok(" 12\n", 10, 12);
	int_ok("0x68", 0, 104);
	int_ok("68", 16, 104);
	int_err("2147483648", 10, -ERANGE);
	int_err("-2147483649", 10, -ERANGE);
	int_err("4294967296", 10, -ERANGE);
	int_err("9223372036854775808", 10, -ERANGE);
	int_err("", 10, -ENODATA);
	int_err("0x", 0, -EINVAL);
	int_err("12abc", 10, -EINVAL);
	int_err("1e3", 10, -EINVAL);
}

static void dbl_ok(const char *s, double want)
{
	double v = -12345;
	int r = parse_leading_double(s, &v);
	if (r != 0)
		fail_msg("parse_leading_double(\"%s\") = %d, want 0", s, r);
	double d = v - want;
	if (d < -1e-9 || d > 1e-9)
		fail_msg("parse_leading_double(\"%s\") = %.12g, want %.12g", s, v, want);
}

static void dbl_err(const char *s, int err)
{
	double v = -12345;
	int r = parse_leading_double(s, &v);
	if (r != err)
		fail_msg("parse_leading_double(\"%s\") = %d, want %d", s, r, err);
	assert_true(v == -12345);
}

static void test_parse_leading_double(void **state)
{
	(void)state;
	dbl_ok("8.0 GT/s PCIe", 8.0);
	dbl_ok("8 GT/s", 8.0);
	dbl_ok("16.0 GT/s PCIe\n", 16.0);
	dbl_ok("2.5 Gb/sec (1X SDR)", 2.5);
	dbl_ok("100 Gb/sec (4X EDR)", 100.0);
	dbl_ok("400 Gb/sec (4X NDR)\n", 400.0);
	dbl_ok("  53.125 Gb/sec", 53.125);
	dbl_ok("0", 0.0);
	dbl_ok("7.", 7.0);
	dbl_ok("1.2.3", 1.2);
	dbl_ok("1e9", 1.0); /* no exponents: the rest is not looked at */
	dbl_ok("0x10", 0.0); /* no hex either */
	dbl_err("Unknown", -EINVAL);
	dbl_err("Unknown speed", -EINVAL);
	dbl_err("", -ENODATA);
	dbl_err(" \n", -ENODATA);
	dbl_err("-1 GT/s", -EINVAL);
	dbl_err("+1", -EINVAL);
	dbl_err(".5 GT/s", -EINVAL);
	dbl_err("99999999999999999999 Gb/sec", -ERANGE);
}

static void ncn_ok(const char *s, int want_num, const char *want_name)
{
	int num = INT_SENTINEL;
	char *name = (char *)"untouched";
	int r = parse_num_colon_name(s, &num, &name);
	if (r != 0)
		fail_msg("parse_num_colon_name(\"%s\") = %d, want 0", s, r);
	assert_int_equal(num, want_num);
	assert_string_equal(name, want_name);
	free(name);
	/* name is optional */
	num = INT_SENTINEL;
	assert_int_equal(parse_num_colon_name(s, &num, NULL), 0);
	assert_int_equal(num, want_num);
}

static void ncn_err(const char *s, int err)
{
	int num = INT_SENTINEL;
	char *const untouched = (char *)"untouched";
	char *name = untouched;
	int r = parse_num_colon_name(s, &num, &name);
	if (r != err)
		fail_msg("parse_num_colon_name(\"%s\") = %d, want %d", s, r, err);
	assert_int_equal(num, INT_SENTINEL);
	assert_ptr_equal(name, untouched);
}

static void test_parse_num_colon_name(void **state)
{
	(void)state;
	ncn_ok("4: ACTIVE", 4, "ACTIVE");
	ncn_ok("4: ACTIVE\n", 4, "ACTIVE");
	ncn_ok("5: LinkUp\n", 5, "LinkUp");
	ncn_ok("1: CA", 1, "CA");
	ncn_ok("  3: Disabled  \n", 3, "Disabled");
	ncn_ok("2:INIT", 2, "INIT");
	ncn_ok("4:", 4, "");
	ncn_ok("4: two words\nsecond line", 4, "two words");
	ncn_ok("-1: x", -1, "x");
}

static void test_parse_num_colon_name_errors(void **state)
{
	(void)state;
	ncn_err("", -ENODATA);
	ncn_err("  \n", -ENODATA);
	ncn_err(": x", -EINVAL);
	ncn_err("x: y", -EINVAL);
	ncn_err("ACTIVE", -EINVAL);
	ncn_err("4", -EINVAL);
	ncn_err(" : ACTIVE", -EINVAL);
	ncn_err("4 4: x", -EINVAL);
	ncn_err("0x4: hex", -EINVAL); /* decimal only */
	ncn_err("99999999999: x", -ERANGE);
	ncn_err("1234567890123456789012345678901234567890: x", -EINVAL);
}

static void test_str_helpers(void **state)
{
	(void)state;
	char a[] = "  padded \t\n";
	assert_string_equal(str_trim(a), "padded");
	char b[] = "";
	assert_string_equal(str_trim(b), "");
	char c[] = " \n ";
	assert_string_equal(str_trim(c), "");
	assert_true(str_startswith("mlx5_0", "mlx5"));
	assert_true(str_startswith("x", ""));
	assert_false(str_startswith("mlx", "mlx5"));
	assert_true(str_endswith("file.conf", ".conf"));
	assert_true(str_endswith("x", ""));
	assert_false(str_endswith("conf", ".conf"));

	char *l = str_first_line("  first  \nsecond\n");
	assert_string_equal(l, "first");
	free(l);
	l = str_first_line("");
	assert_string_equal(l, "");
	free(l);
	l = str_first_line("\nsecond");
	assert_string_equal(l, "");
	free(l);
	l = str_first_line("no newline \t");
	assert_string_equal(l, "no newline");
	free(l);
	l = str_first_line("value\r\n");
	assert_string_equal(l, "value");
	free(l);
}

struct lines_seen {
	char text[16][32];
	unsigned no[16];
	unsigned n;
	unsigned stop_at;
};

static int collect_line(void *ud, char *line, unsigned lineno)
{
	struct lines_seen *s = ud;
	assert_true(s->n < 16);
	snprintf(s->text[s->n], sizeof(s->text[0]), "%s", line);
	s->no[s->n] = lineno;
	s->n++;
	/* the line is writable, the empty one too */
	char save = line[0];
	line[0] = 'Q';
	line[0] = save;
	if (s->stop_at && lineno == s->stop_at)
		return 7;
	return 0;
}

static void test_str_foreach_line(void **state)
{
	(void)state;
	struct lines_seen s = { .n = 0 };
	const char *t = "one\ntwo";
	assert_int_equal(str_foreach_line(t, strlen(t), collect_line, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.text[0], "one");
	assert_string_equal(s.text[1], "two");
	assert_int_equal(s.no[0], 1);
	assert_int_equal(s.no[1], 2);

	memset(&s, 0, sizeof(s));
	t = "a\n\n\nb\n";
	assert_int_equal(str_foreach_line(t, strlen(t), collect_line, &s), 0);
	assert_int_equal(s.n, 4); /* the final newline does not add an empty line */
	assert_string_equal(s.text[0], "a");
	assert_string_equal(s.text[1], "");
	assert_string_equal(s.text[2], "");
	assert_string_equal(s.text[3], "b");
	assert_int_equal(s.no[3], 4);

	memset(&s, 0, sizeof(s));
	assert_int_equal(str_foreach_line("", 0, collect_line, &s), 0);
	assert_int_equal(s.n, 0);

	memset(&s, 0, sizeof(s));
	assert_int_equal(str_foreach_line("\n", 1, collect_line, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.text[0], "");

	/* len is honoured: nothing past it is read */
	memset(&s, 0, sizeof(s));
	t = "abc\ndef\nghi";
	assert_int_equal(str_foreach_line(t, 6, collect_line, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.text[1], "de");

	/* a non-zero return stops the walk and is passed back */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	t = "1\n2\n3\n";
	assert_int_equal(str_foreach_line(t, strlen(t), collect_line, &s), 7);
	assert_int_equal(s.n, 2);

	/* CRLF: the CR stays, the caller decides */
	memset(&s, 0, sizeof(s));
	t = "x\r\ny";
	assert_int_equal(str_foreach_line(t, strlen(t), collect_line, &s), 0);
	assert_string_equal(s.text[0], "x\r");

	/* embedded NUL: no crash, line count follows the newlines */
	memset(&s, 0, sizeof(s));
	const char bin[] = "ab\0cd\nef";
	assert_int_equal(str_foreach_line(bin, sizeof(bin) - 1, collect_line, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.text[0], "ab");
	assert_string_equal(s.text[1], "ef");
}

static void test_str_distance(void **state)
{
	(void)state;
	assert_int_equal(str_distance("", "", 3), 0);
	assert_int_equal(str_distance("abc", "abc", 3), 0);
	assert_int_equal(str_distance("abc", "", 3), 3);
	assert_int_equal(str_distance("", "ab", 3), 2);
	assert_int_equal(str_distance("kitten", "sitting", 3), 3);
	assert_int_equal(str_distance("NCCL_SOKCET_IFNAME", "NCCL_SOCKET_IFNAME", 3), 2);
	assert_int_equal(str_distance("NCCL_IB_HCAS", "NCCL_IB_HCA", 3), 1);
	assert_int_equal(str_distance("NCCL_IB_HAC", "NCCL_IB_HCA", 3), 2);
	assert_int_equal(str_distance("nccl_ib_hca", "NCCL_IB_HCA", 3), 4); /* case counts; capped */
	/* symmetric */
	assert_int_equal(str_distance("NCCL_SOCKET_IFNAME", "NCCL_SOKCET_IFNAME", 3), 2);
	/* capped at cap+1 */
	assert_int_equal(str_distance("abcdef", "uvwxyz", 2), 3);
	assert_int_equal(str_distance("a", "abcdefgh", 2), 3);
	assert_int_equal(str_distance("abc", "xyz", 0), 1);
	assert_int_equal(str_distance("abc", "abc", 0), 0);
	assert_int_equal(str_distance("abcd", "abce", 1), 1);

	/* 64 characters is the most that is compared */
	char a[70], b[70];
	memset(a, 'x', 64);
	a[64] = '\0';
	memcpy(b, a, 65);
	b[63] = 'y';
	assert_int_equal(str_distance(a, b, 3), 1);
	assert_int_equal(str_distance(a, a, 3), 0);
	/* longer strings are never "close": cap+1, without reading past 64 */
	memset(a, 'x', 69);
	a[69] = '\0';
	memcpy(b, a, 70);
	assert_int_equal(str_distance(a, b, 3), 4);
	assert_int_equal(str_distance(a, "x", 3), 4);
}

/* "Did you mean": the nearest within 2, the first of equals, none beyond. */
static void test_str_nearest(void **state)
{
	(void)state;
	static const char *const cands[] = { "check", "rdma", "gpu", "gpudirect", "bench net" };
	static const struct {
		const char *want, *best;
	} cases[] = { { "chek", "check" }, { "rmda", "rdma" }, { "gpus", "gpu" }, { "bench nte", "bench net" },
		      { "gpudirect", "gpudirect" }, { "xyz", NULL }, { "", NULL } };
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct str_nearest n = STR_NEAREST_INIT(cases[c].want);
		for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
			str_nearest_offer(&n, cands[i]);
		if (cases[c].best)
			assert_string_equal(n.best, cases[c].best);
		else
			assert_null(n.best);
	}
	/* equals: the first offered wins */
	struct str_nearest n = STR_NEAREST_INIT("ab");
	str_nearest_offer(&n, "abc");
	str_nearest_offer(&n, "abd");
	assert_string_equal(n.best, "abc");
}

static void test_is_pci_bdf(void **state)
{
	(void)state;
	assert_true(is_pci_bdf("0000:17:00.0"));
	assert_true(is_pci_bdf("0000:00:1f.7"));
	assert_true(is_pci_bdf("0000:AF:1F.3"));
	assert_true(is_pci_bdf("10000:00:04.0"));
	assert_true(is_pci_bdf("ffffffff:ff:ff.7"));
	assert_false(is_pci_bdf("0000:17:00"));
	assert_false(is_pci_bdf("0000:17:00."));
	assert_false(is_pci_bdf("pci0000:00"));
	assert_false(is_pci_bdf("0000:17:00.8"));
	assert_false(is_pci_bdf("0000:17:00.a"));
	assert_false(is_pci_bdf("0000:17:00.0 "));
	assert_false(is_pci_bdf("0000:17:00.0\n"));
	assert_false(is_pci_bdf("0000:17:00.00"));
	assert_false(is_pci_bdf("000:17:00.0"));
	assert_false(is_pci_bdf("100000000:00:04.0"));
	assert_false(is_pci_bdf("0000:1:00.0"));
	assert_false(is_pci_bdf("0000:17:0.0"));
	assert_false(is_pci_bdf("0000:g7:00.0"));
	assert_false(is_pci_bdf("0000-17-00.0"));
	assert_false(is_pci_bdf(""));
	assert_false(is_pci_bdf("0000:"));
	assert_false(is_pci_bdf("0000:17:"));
	assert_false(is_pci_bdf("mlx5_0"));
	assert_false(is_pci_bdf("../../0000:17:00.0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_s64),
		cmocka_unit_test(test_parse_int),
		cmocka_unit_test(test_parse_leading_double),
		cmocka_unit_test(test_parse_num_colon_name),
		cmocka_unit_test(test_parse_num_colon_name_errors),
		cmocka_unit_test(test_str_helpers),
		cmocka_unit_test(test_str_foreach_line),
		cmocka_unit_test(test_str_distance),
		cmocka_unit_test(test_str_nearest),
		cmocka_unit_test(test_is_pci_bdf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
