/* Unit tests for the declarative option parser (core/options) and the
 * settings table with its config-file reader (settings.c, inih).
 *
 * The parser tests use a small table of every option type; the config tests
 * use the real tables (settings_tables) and a temporary root holding /etc/gpuready.conf. */
#define _GNU_SOURCE
#include "testutil.h"
#include "core/options.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "opts/settings.h"
#include "bench/harness.h"
#include "bench/net/net.h"
#include "bench/types.h"
#include "inventory/gpu_live.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

struct tgt {
	bool flag;
	bool verbose;
	char *name;
	int num;
	int level;
	uint64_t size;
	double rate;
	struct strv list;
	bool other;
};

#define TOFF(f) offsetof(struct tgt, f)
enum { S_A = 1, S_B = 2 };

static const struct opt topts[] = {
	{ .name = "flag", .short_name = 'f', .type = OPT_FLAG, .offset = TOFF(flag), .help = "A flag.",
	  .scope = S_A },
	{ .name = "verbose", .short_name = 'v', .type = OPT_FLAG, .offset = TOFF(verbose), .help = "Talk more.",
	  .scope = S_A | S_B },
	{ .name = "name", .short_name = 'n', .type = OPT_STRING, .offset = TOFF(name), .metavar = "NAME",
	  .help = "A name.", .def = OPT_DEF_STR("none"), .key = "name_key", .scope = S_A },
	{ .name = "num", .short_name = 'N', .type = OPT_INT, .offset = TOFF(num), .help = "Any integer.",
	  .scope = S_A },
	{ .name = "level", .type = OPT_INT, .offset = TOFF(level), .metavar = "L", .help = "1 to 5.", .min = 1,
	  .max = 5, .scope = S_A },
	{ .name = "size", .type = OPT_U64, .offset = TOFF(size), .metavar = "BYTES", .help = "A size.",
	  .scope = S_A },
	{ .name = "rate", .type = OPT_DOUBLE, .offset = TOFF(rate), .metavar = "GBPS", .help = "A rate.",
	  .min = 0, .max = 100, .scope = S_A },
	{ .name = "list", .short_name = 'l', .type = OPT_LIST, .offset = TOFF(list), .metavar = "ITEM",
	  .help = "Items.", .scope = S_A },
	{ .name = "other-scope", .type = OPT_FLAG, .offset = TOFF(other), .help = "Only for B.", .scope = S_B },
};
#define NT (sizeof(topts) / sizeof(topts[0]))
static const struct opt_table ttable = OPT_TABLE("test", topts);
static const struct opt_table *const ttabs[] = { &ttable, NULL };

struct run {
	struct tgt t;
	struct opt_seen seen;
	struct strv pos;
	char *err;
	int ret;
};

/* Parses a NULL-terminated argument list in scope A. */
static void parse(struct run *rn, unsigned scope, const char *const *args)
{
	int argc = 0;
	while (args[argc])
		argc++;
	char **argv = xcalloc((size_t)argc + 1, sizeof(char *));
	for (int i = 0; i < argc; i++)
		argv[i] = xstrdup(args[i]);
	rn->ret = opt_parse(ttabs, scope, argc, argv, &rn->t, &rn->seen, &rn->pos, &rn->err);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

static void run_free(struct run *rn)
{
	opt_free_values(ttabs, &rn->t);
	strv_free(&rn->pos);
	free(rn->err);
	memset(rn, 0, sizeof(*rn));
}

#define PARSE(rn, ...) parse((rn), S_A, (const char *const[]){ __VA_ARGS__, NULL })

/* Expects failure with a message containing `needle`. */
static void expect_fail(const char *needle, const char *const *args)
{
	struct run rn = { .ret = 0 };
	parse(&rn, S_A, args);
	bool ok = rn.ret == -EINVAL && rn.err && strstr(rn.err, needle);
	if (!ok)
		print_error("opt_parse(%s ...) = %d, error \"%s\", want -EINVAL and \"%s\"\n", args[0], rn.ret,
			    rn.err ? rn.err : "", needle);
	run_free(&rn);
	assert_true(ok);
}
#define EXPECT_FAIL(needle, ...) expect_fail((needle), (const char *const[]){ __VA_ARGS__, NULL })

/* A refused option says, for the caller's hint, whether it is another
 * scope's (the commands that take it) or which name in scope is nearest. */
static void test_parse_refused_hint(void **state)
{
	(void)state;
	struct run rn = { .ret = 0 };
	PARSE(&rn, "--other-scope");
	assert_int_equal(rn.ret, -EINVAL);
	assert_non_null(strstr(rn.err, "'--other-scope' does not apply to this command"));
	assert_ptr_equal(rn.seen.other, &topts[NT - 1]);
	assert_null(rn.seen.nearest);
	run_free(&rn);
	PARSE(&rn, "--flg");
	assert_non_null(strstr(rn.err, "unknown option '--flg'"));
	assert_null(rn.seen.other);
	assert_non_null(rn.seen.nearest);
	assert_string_equal(rn.seen.nearest->name, "flag");
	run_free(&rn);
	/* never a name of another scope, nothing when none is near */
	PARSE(&rn, "--other-scop");
	assert_null(rn.seen.other);
	assert_null(rn.seen.nearest);
	run_free(&rn);
	PARSE(&rn, "--zzzzzz=1");
	assert_null(rn.seen.nearest);
	run_free(&rn);
}

static void test_parse_long_short(void **state)
{
	(void)state;
	struct run rn = { .ret = 0 };
	PARSE(&rn, "--flag", "-v", "--name", "alpha", "--num=-3", "-N", "7", "pos1", "--level", "5", "pos2");
	assert_int_equal(rn.ret, 0);
	assert_null(rn.err);
	assert_true(rn.t.flag);
	assert_true(rn.t.verbose);
	assert_string_equal(rn.t.name, "alpha");
	assert_int_equal(rn.t.num, 7); /* repeated: the last one wins */
	assert_int_equal(rn.t.level, 5);
	assert_int_equal(rn.pos.n, 2);
	assert_string_equal(rn.pos.v[0], "pos1");
	assert_string_equal(rn.pos.v[1], "pos2");
	assert_true(opt_seen_has(&rn.seen, &topts[0]) && opt_seen_has(&rn.seen, &topts[1]) && opt_seen_has(&rn.seen, &topts[2]) && opt_seen_has(&rn.seen, &topts[3]) && opt_seen_has(&rn.seen, &topts[4]));
	assert_false(opt_seen_has(&rn.seen, &topts[5]) || opt_seen_has(&rn.seen, &topts[6]) || opt_seen_has(&rn.seen, &topts[7]) || opt_seen_has(&rn.seen, &topts[8]));
	run_free(&rn);

	/* attached short values, --x=v, an empty value, string replaced */
	PARSE(&rn, "-nfirst", "--name=second", "-n", "", "--name=a=b");
	assert_int_equal(rn.ret, 0);
	assert_string_equal(rn.t.name, "a=b");
	run_free(&rn);
	PARSE(&rn, "--name=");
	assert_int_equal(rn.ret, 0);
	assert_string_equal(rn.t.name, "");
	run_free(&rn);
	/* a value that looks like an option is taken as the value */
	PARSE(&rn, "--name", "--flag");
	assert_int_equal(rn.ret, 0);
	assert_string_equal(rn.t.name, "--flag");
	assert_false(rn.t.flag);
	run_free(&rn);

	/* set may be NULL */
	struct tgt t = { .num = 0 };
	struct strv pos = STRV_INIT;
	char *err = NULL;
	char *argv[] = { (char *)"--num", (char *)"3", NULL };
	assert_int_equal(opt_parse(ttabs, S_A, 2, argv, &t, NULL, &pos, &err), 0);
	assert_int_equal(t.num, 3);
	/* nothing to parse */
	assert_int_equal(opt_parse(ttabs, S_A, 0, argv, &t, NULL, &pos, &err), 0);
	assert_int_equal(pos.n, 0);
	assert_null(err);
}

static void test_parse_positional(void **state)
{
	(void)state;
	struct run rn = { .ret = 0 };
	/* "--" ends options; "-" alone is positional */
	PARSE(&rn, "a", "-", "--flag", "--", "--name", "-v", "--", "b");
	assert_int_equal(rn.ret, 0);
	assert_true(rn.t.flag);
	assert_false(rn.t.verbose);
	assert_null(rn.t.name);
	assert_int_equal(rn.pos.n, 6);
	const char *want[] = { "a", "-", "--name", "-v", "--", "b" };
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(rn.pos.v[i], want[i]);
	run_free(&rn);
	PARSE(&rn, "--");
	assert_int_equal(rn.ret, 0);
	assert_int_equal(rn.pos.n, 0);
	run_free(&rn);
}

static void test_parse_errors(void **state)
{
	(void)state;
	EXPECT_FAIL("'--bogus'", "--bogus");
	EXPECT_FAIL("'--bogus=1'", "--bogus=1");
	EXPECT_FAIL("'-x'", "-x");
	EXPECT_FAIL("unknown option", "--fla"); /* no prefix abbreviations */
	EXPECT_FAIL("unknown option", "--flagg");
	EXPECT_FAIL("unknown option", "--=x");
	EXPECT_FAIL("unknown option", "---flag");
	/* an option of another command's scope is unknown here */
	EXPECT_FAIL("'--other-scope'", "--other-scope");
	/* missing values name the option and its metavar */
	EXPECT_FAIL("--name", "--name");
	EXPECT_FAIL("NAME", "--flag", "--name");
	EXPECT_FAIL("--level", "--level");
	EXPECT_FAIL("VALUE", "-N");
	/* flags take no value */
	EXPECT_FAIL("takes no value", "--flag=1");
	EXPECT_FAIL("--flag", "--flag=");
	/* bad numbers */
	EXPECT_FAIL("not an integer", "--num", "abc");
	EXPECT_FAIL("not an integer", "--num=");
	EXPECT_FAIL("not an integer", "--num", "1.5");
	EXPECT_FAIL("not an integer", "--num", "2147483648");
	EXPECT_FAIL("'12x'", "--num", "12x");
	EXPECT_FAIL("out of range", "--level", "0");
	EXPECT_FAIL("out of range", "--level=6");
	EXPECT_FAIL("out of range", "--level", "-1");
	EXPECT_FAIL("1..5", "--level", "100");
	EXPECT_FAIL("not a size", "--size", "-1");
	EXPECT_FAIL("not a size", "--size", "");
	EXPECT_FAIL("not a size", "--size", "K");
	EXPECT_FAIL("not a size", "--size", "1T");
	EXPECT_FAIL("not a size", "--size", "1.5G");
	EXPECT_FAIL("not a size", "--size", "18446744073709551616");
	EXPECT_FAIL("not a size", "--size", "17179869184G"); /* 2^64 */
	EXPECT_FAIL("not a number", "--rate", "fast");
	EXPECT_FAIL("not a number", "--rate", "1.5x");
	EXPECT_FAIL("empty value", "--rate=");
	EXPECT_FAIL("out of range", "--rate", "100.5");
	EXPECT_FAIL("out of range", "--rate", "-0.1");
	EXPECT_FAIL("not a number", "--rate", "inf"); /* not finite */
	EXPECT_FAIL("out of range", "--rate", "1e300");
}

static void test_short_flag_with_value_message(void **state)
{
	(void)state;
	/* Regression (fixed): options.c opt_parse passes a string to a "%c" conversion
	 * (fail(err, "option '-%c' takes no value ('%s')", (char[]){...}, a)),
	 * so the message shows a garbage byte (the low byte of a pointer)
	 * instead of the option letter: "option '-\x80' takes no value ('-fx')". */
	EXPECT_FAIL("option '-f' takes no value", "-fx");
	EXPECT_FAIL("'-vv'", "-vv");
}

static void test_rate_nan(void **state)
{
	(void)state;
	/* Regression (fixed): options.c opt_assign OPT_DOUBLE accepts "nan": strtod parses it
	 * and both range comparisons (v < min, v > max) are false for NaN, so
	 * --link-rate nan passes validation and every later comparison with it
	 * is false (the link-rate check can never fail). */
	EXPECT_FAIL("rate", "--rate", "nan");
}

static void test_sizes(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		uint64_t want;
	} cases[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "4K", 4096 },
		{ "4k", 4096 },
		{ "2M", 2ull << 20 },
		{ "512m", 512ull << 20 },
		{ "1G", 1ull << 30 },
		{ "16g", 16ull << 30 },
		{ "0x10K", 16ull << 10 },
		{ "268435456", 268435456ull },
		{ "18446744073709551615", UINT64_MAX },
		{ "17179869183G", 17179869183ull << 30 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run rn = { .ret = 0 };
		PARSE(&rn, "--size", cases[i].in);
		if (rn.ret != 0)
			fail_msg("--size %s: %s", cases[i].in, rn.err);
		assert_int_equal(rn.t.size, cases[i].want);
		run_free(&rn);
	}
}

static void test_lists(void **state)
{
	(void)state;
	struct run rn = { .ret = 0 };
	PARSE(&rn, "--list", "a,b", "-l", "c", "--list= d , ,e,,", "-lf", "--list=");
	assert_int_equal(rn.ret, 0);
	const char *want[] = { "a", "b", "c", "d", "e", "f" };
	assert_int_equal(rn.t.list.n, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(rn.t.list.v[i], want[i]);
	assert_true(opt_seen_has(&rn.seen, &topts[7]));
	run_free(&rn);
	PARSE(&rn, "--list", ",,,");
	assert_int_equal(rn.ret, 0);
	assert_int_equal(rn.t.list.n, 0);
	run_free(&rn);
}

static void test_numbers(void **state)
{
	(void)state;
	struct run rn = { .ret = 0 };
	PARSE(&rn, "--num", "0x10", "--level", "1", "--rate", "99.5");
	assert_int_equal(rn.ret, 0);
	assert_int_equal(rn.t.num, 16);
	assert_int_equal(rn.t.level, 1);
	assert_true(rn.t.rate == 99.5);
	run_free(&rn);
	PARSE(&rn, "--num", "-2147483648", "--rate", "0", "--level", "0x5");
	assert_int_equal(rn.ret, 0);
	assert_int_equal(rn.t.num, INT32_MIN);
	assert_true(rn.t.rate == 0);
	assert_int_equal(rn.t.level, 5);
	run_free(&rn);
	PARSE(&rn, "--num", " 12\n", "--rate=100");
	assert_int_equal(rn.ret, 0);
	assert_int_equal(rn.t.num, 12);
	assert_true(rn.t.rate == 100);
	run_free(&rn);
}

static void test_assign(void **state)
{
	(void)state;
	struct tgt t = { .flag = false };
	char *err = NULL;
	const struct opt *flag = &topts[0];
	static const char *yes[] = { "1", "yes", "YES", "true", "True", "on", "ON" };
	static const char *no[] = { "0", "no", "No", "false", "FALSE", "off", "Off" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		t.flag = false;
		assert_int_equal(opt_assign(flag, &t, yes[i], &err), 0);
		assert_true(t.flag);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		t.flag = true;
		assert_int_equal(opt_assign(flag, &t, no[i], &err), 0);
		assert_false(t.flag);
	}
	t.flag = false;
	assert_int_equal(opt_assign(flag, &t, NULL, &err), 0); /* bare flag */
	assert_true(t.flag);
	assert_null(err);
	/* invalid boolean: error, value untouched */
	assert_int_equal(opt_assign(flag, &t, "maybe", &err), -EINVAL);
	assert_non_null(strstr(err, "maybe"));
	assert_non_null(strstr(err, "--flag"));
	assert_true(t.flag);
	free(err);
	err = NULL;
	assert_int_equal(opt_assign(flag, &t, "", &err), -EINVAL);
	free(err);
	err = NULL;

	/* string */
	assert_int_equal(opt_assign(&topts[2], &t, "x y", &err), 0);
	assert_string_equal(t.name, "x y");
	assert_int_equal(opt_assign(&topts[2], &t, "z", &err), 0);
	assert_string_equal(t.name, "z");

	/* int / range: failures leave the value alone */
	t.level = 3;
	assert_int_equal(opt_assign(&topts[4], &t, "9", &err), -EINVAL);
	assert_int_equal(t.level, 3);
	free(err);
	err = NULL;
	assert_int_equal(opt_assign(&topts[4], &t, "x", &err), -EINVAL);
	assert_int_equal(t.level, 3);
	free(err);
	err = NULL;
	t.num = 1;
	assert_int_equal(opt_assign(&topts[3], &t, "-2147483649", &err), -EINVAL);
	assert_int_equal(t.num, 1);
	free(err);
	err = NULL;

	/* u64 */
	t.size = 5;
	assert_int_equal(opt_assign(&topts[5], &t, "3M", &err), 0);
	assert_int_equal(t.size, 3ull << 20);
	assert_int_equal(opt_assign(&topts[5], &t, "3Q", &err), -EINVAL);
	assert_int_equal(t.size, 3ull << 20);
	free(err);
	err = NULL;
	/* a very long value is refused, not read in part */
	char longv[200];
	memset(longv, '1', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	assert_int_equal(opt_assign(&topts[5], &t, longv, &err), -EINVAL);
	assert_int_equal(t.size, 3ull << 20);
	free(err);
	err = NULL;

	/* double */
	t.rate = 1;
	assert_int_equal(opt_assign(&topts[6], &t, "2.5", &err), 0);
	assert_true(t.rate == 2.5);
	assert_int_equal(opt_assign(&topts[6], &t, "2,5", &err), -EINVAL);
	assert_true(t.rate == 2.5);
	free(err);
	err = NULL;

	/* list appends */
	assert_int_equal(opt_assign(&topts[7], &t, "a,b", &err), 0);
	assert_int_equal(opt_assign(&topts[7], &t, "c", &err), 0);
	assert_int_equal(t.list.n, 3);
	assert_null(err);

	opt_free_values(ttabs, &t);
	assert_null(t.name);
	assert_int_equal(t.list.n, 0);
	assert_null(t.list.v);
	opt_free_values(ttabs, &t); /* twice is harmless */
}

static char *capture(void (*fn)(FILE *, const struct opt_table *const *, unsigned), const struct opt_table *const *t,
		     unsigned scope)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, t, scope);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Every row of every table, in order (filled by main). */
#define MAX_ROWS 256
static const struct opt *all[MAX_ROWS];
static size_t n_all;

static void collect_rows(void)
{
	for (const struct opt_table *const *t = settings_tables; *t; t++)
		for (size_t i = 0; i < (*t)->n; i++) {
			assert_true(n_all < MAX_ROWS);
			all[n_all++] = &(*t)->rows[i];
		}
}

static void test_print_help(void **state)
{
	(void)state;
	char *h = capture(opt_print_help, ttabs, S_A);
	assert_non_null(strstr(h, "-f, --flag"));
	assert_non_null(strstr(h, "-v, --verbose"));
	assert_non_null(strstr(h, "-n, --name NAME"));
	assert_non_null(strstr(h, "(default: none)"));
	assert_non_null(strstr(h, "[config: name_key]"));
	assert_non_null(strstr(h, "-N, --num VALUE"));
	assert_non_null(strstr(h, "--level L"));
	assert_non_null(strstr(h, "--size BYTES"));
	assert_non_null(strstr(h, "--rate GBPS"));
	assert_non_null(strstr(h, "-l, --list ITEM"));
	assert_null(strstr(h, "--other-scope"));
	assert_null(strstr(h, "--flag VALUE")); /* flags have no metavar */
	/* one line per option of the scope */
	size_t lines = 0;
	for (const char *c = h; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, NT - 1);
	free(h);

	h = capture(opt_print_help, ttabs, S_B);
	assert_non_null(strstr(h, "--other-scope"));
	assert_non_null(strstr(h, "--verbose"));
	assert_null(strstr(h, "--flag"));
	free(h);

	/* the real table: every option of a scope is shown, with its help */
	unsigned scopes[] = { SCOPE_CHECK, SCOPE_SNAPSHOT, SCOPE_OTHER, SCOPE_LIST, SCOPE_BENCH, SCOPE_NCCL, SCOPE_NET,
			      SCOPE_BENCH_COPY };
	for (size_t s = 0; s < sizeof(scopes) / sizeof(scopes[0]); s++) {
		h = capture(opt_print_help, settings_tables, scopes[s]);
		for (size_t i = 0; i < n_all; i++) {
			char *name = xasprintf("--%s", all[i]->name);
			/* the whole name: --mem is not shown by --memory */
			const char *at = h;
			size_t nl = strlen(name);
			while ((at = strstr(at, name)) && (isalnum((unsigned char)at[nl]) || at[nl] == '-' || at[nl] == '_'))
				at += nl;
			/* a name may serve two scopes with two meanings (--json) */
			bool in = false;
			for (size_t k = 0; k < n_all; k++)
				in |= !strcmp(all[k]->name, all[i]->name) && (all[k]->scope & scopes[s]);
			if (in != (at != NULL))
				fail_msg("help for scope %#x: %s %s", scopes[s], name, in ? "missing" : "shown");
			if (all[i]->scope & scopes[s])
				assert_non_null(strstr(h, all[i]->help));
			free(name);
		}
		free(h);
	}
}

static void test_print_man(void **state)
{
	(void)state;
	char *m = capture(opt_print_man, ttabs, S_A);
	assert_non_null(strstr(m, ".TP\n\\fB\\-f\\fR, \\fB\\-\\-flag\\fR\nA flag.\n"));
	assert_non_null(strstr(m, "\\-\\-name\\fR \\fINAME\\fR\n"));
	assert_non_null(strstr(m, "Default: none."));
	assert_non_null(strstr(m, "Config key: \\fBname_key\\fR."));
	assert_null(strstr(m, "other"));
	size_t tp = 0;
	for (const char *c = m; (c = strstr(c, ".TP\n")); c++)
		tp++;
	assert_int_equal(tp, NT - 1);
	free(m);

	/* the real table: names with '-' are escaped for roff */
	m = capture(opt_print_man, settings_tables, SCOPE_CHECK);
	assert_non_null(strstr(m, "\\-\\-no\\-color"));
	assert_non_null(strstr(m, "\\-\\-min\\-sockbuf\\fR \\fIBYTES\\fR"));
	assert_non_null(strstr(m, "\\-\\-link\\-rate"));
	assert_null(strstr(m, "--"));
	for (size_t i = 0; i < n_all; i++) {
		if (!(all[i]->scope & SCOPE_CHECK))
			continue;
		struct strbuf want = STRBUF_INIT;
		strbuf_adds(&want, "\\-\\-");
		for (const char *c = all[i]->name; *c; c++) {
			if (*c == '-')
				strbuf_addch(&want, '\\');
			strbuf_addch(&want, *c);
		}
		if (!strstr(m, want.buf))
			fail_msg("man: %s missing", want.buf);
		strbuf_release(&want);
	}
	free(m);
}

static void test_print_man_leading_dot(void **state)
{
	(void)state;
	static const struct opt dotted[] = {
		{ .name = "dot", .type = OPT_FLAG, .help = ".ig starts a roff request", .scope = 1 },
		{ .name = "quote", .type = OPT_FLAG, .help = "'br is one too", .scope = 1 },
	};
	static const struct opt_table dt = OPT_TABLE("dotted", dotted);
	static const struct opt_table *const dts[] = { &dt, NULL };
	char *m = capture(opt_print_man, dts, 1);
	/* Regression (fixed): options.c roff() says "a leading '.' or '\'' on a line
	 * escaped" but only escapes '-' and '\\'; a help text starting with
	 * '.' or '\'' is emitted at the start of a line and read by roff as a
	 * request (".ig" would swallow the rest of the page). Expected "\\&.ig". */
	bool dot = strstr(m, "\n.ig") != NULL, quote = strstr(m, "\n'br") != NULL;
	free(m);
	assert_false(dot);
	assert_false(quote);
}

/* ---- settings and the config file ---- */

/* The row of the check commands' option `name`. */
static const struct opt *check_row(const char *name)
{
	const struct opt *o = NULL;
	for (size_t i = 0; i < n_all && !o; i++)
		if (!strcmp(all[i]->name, name) && (all[i]->scope & SCOPE_CHECK))
			o = all[i];
	if (!o)
		fail_msg("no option %s", name);
	return o;
}

struct cfg {
	char *dir;
	struct root *r;
	struct settings s;
	struct opt_seen seen;
	char *err;
	bool tree; /* read /etc/gpuready.conf inside the root, as for a recorded tree */
};

static void cfg_open(struct cfg *c, const char *conf)
{
	memset(c, 0, sizeof(*c));
	c->dir = tu_mkdtemp();
	if (conf)
		tu_write(c->dir, "/etc/gpuready.conf", conf);
	else
		tu_mkdir(c->dir, "/etc");
	assert_int_equal(root_open(c->dir, &c->r), 0);
	settings_init(&c->s);
}

/* By default the file is given as --config (a host path): every key is
 * allowed. With c->tree it is read inside the recorded root, where only
 * site expectations are (test_config_tree_keys). */
static int cfg_load(struct cfg *c)
{
	if (!c->tree && !c->s.config)
		c->s.config = xasprintf("%s/etc/gpuready.conf", c->dir);
	return settings_load_config(&c->s, &c->seen, c->r, &c->err);
}

static void cfg_close(struct cfg *c)
{
	settings_free(&c->s);
	root_free(c->r);
	tu_rmtree(c->dir);
	free(c->dir);
	free(c->err);
}

static void cfg_expect_error(const char *conf, const char *needle1, const char *needle2)
{
	struct cfg c;
	cfg_open(&c, conf);
	int r = cfg_load(&c);
	bool ok = r == -EINVAL && c.err && strstr(c.err, needle1) && (!needle2 || strstr(c.err, needle2));
	if (!ok)
		print_error("config \"%s\": %d, error \"%s\", want -EINVAL and \"%s\" \"%s\"\n", conf, r,
			    c.err ? c.err : "", needle1, needle2 ? needle2 : "");
	cfg_close(&c);
	assert_true(ok);
}

static void test_settings_defaults(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	assert_int_equal(s.tos, DEFAULT_TOS);
	assert_int_equal(s.tos, 104);
	assert_int_equal(s.min_sockbuf, DEFAULT_MIN_SOCKBUF);
	assert_int_equal(s.mtu, 0);
	assert_true(s.link_rate == 0);
	assert_string_equal(s.sysroot, "/");
	assert_false(s.json);
	settings_free(&s);
	/* every option has a name, help, and only numbers have ranges */
	for (size_t i = 0; i < n_all; i++) {
		const struct opt *o = all[i];
		assert_non_null(o->name);
		assert_non_null(o->help);
		assert_true(o->scope != 0);
		for (size_t k = 0; k < i; k++) {
			/* names and letters are unique among the options one command takes */
			if (!(o->scope & all[k]->scope))
				continue;
			assert_string_not_equal(o->name, all[k]->name);
			if (o->short_name)
				assert_true(o->short_name != all[k]->short_name);
			if (o->key && all[k]->key)
				assert_string_not_equal(o->key, all[k]->key);
		}
	}
}

/* Whether row o holds the same value in a and b. */
static bool same_value(const struct opt *o, const struct settings *a, const struct settings *b)
{
	const char *pa = (const char *)a + o->offset, *pb = (const char *)b + o->offset;
	switch (o->type) {
	case OPT_FLAG: return *(const bool *)pa == *(const bool *)pb;
	case OPT_INT: return *(const int *)pa == *(const int *)pb;
	case OPT_U64: return *(const uint64_t *)pa == *(const uint64_t *)pb;
	case OPT_DOUBLE: return *(const double *)pa == *(const double *)pb;
	case OPT_STRING: {
		const char *sa = *(char *const *)pa, *sb = *(char *const *)pb;
		return sa == sb || (sa && sb && !strcmp(sa, sb));
	}
	case OPT_LIST: return ((const struct strv *)pa)->n == ((const struct strv *)pb)->n;
	}
	return false;
}

/* Every row of every table: --help shows a default exactly when the row
 * has a shown one, and that text, parsed as if given on the command line,
 * is the value the settings start with; a row without a default starts at
 * zero. */
static void test_table_defaults(void **state)
{
	(void)state;
	struct settings init, zero, given;
	settings_init(&init);
	memset(&zero, 0, sizeof(zero));
	for (size_t i = 0; i < n_all; i++) {
		const struct opt *o = all[i];
		const struct opt_table one = { .name = "one", .rows = o, .n = 1 };
		const struct opt_table *const tabs[] = { &one, NULL };
		char dbuf[32];
		const char *def = opt_format_default(o, dbuf, sizeof(dbuf));
		char *h = capture(opt_print_help, tabs, o->scope);
		const char *after = strstr(h, o->help); /* what follows the row's own text is derived */
		assert_non_null(after);
		after += strlen(o->help);
		char *want = def ? xasprintf(" (default: %s)", def) : NULL;
		bool ok = want ? !strncmp(after, want, strlen(want)) : !strstr(after, "(default:");
		if (!ok)
			fail_msg("--%s: help \"%s\", want %s", o->name, h, want ? want : "no default");
		free(want);
		free(h);
		if (!o->def.set) {
			if (!same_value(o, &init, &zero))
				fail_msg("--%s: no default stated, but the settings do not start at zero", o->name);
			continue;
		}
		if (!def)
			continue; /* hidden: the help text says what the initial value means */
		settings_init(&given);
		char *err = NULL;
		if (opt_assign(o, &given, def, &err) < 0 || !same_value(o, &init, &given))
			fail_msg("--%s: the documented default '%s' is not the initial value (%s)", o->name, def,
				 err ? err : "differs");
		free(err);
		settings_free(&given);
	}
	settings_free(&init);
}

/* The defaults the tables state through the benchmarks' constants are
 * the ones the engines use when nobody passes an option. */
static void test_table_defaults_match_engines(void **state)
{
	(void)state;
	struct settings s;
	struct bench_params bp;
	struct net_params np;
	settings_init(&s);
	bench_params_default(&bp, COLL_ALL_REDUCE);
	assert_int_equal(s.bench.min_bytes, bp.min_bytes);
	assert_int_equal(s.bench.max_bytes, bp.max_bytes);
	assert_int_equal(s.bench.step_bytes, bp.step_bytes);
	assert_int_equal(s.bench.step_factor, bp.step_factor);
	assert_int_equal(s.bench.iters, bp.iters);
	assert_int_equal(s.bench.warmup, bp.warmup);
	assert_int_equal(s.bench.agg, bp.agg);
	assert_int_equal(s.bench.check, bp.check);
	assert_int_equal(s.bench.average, bp.average);
	assert_int_equal(s.bench.blocking, bp.blocking);
	assert_int_equal(s.bench.root, bp.root);
	assert_int_equal(s.bench.ngpus, bp.ngpus);
	assert_int_equal(s.bench.graph, bp.graph);
	assert_true(s.bench.timeout == bp.timeout);
	assert_int_equal(bp.n_ops, 1);
	assert_int_equal(redop_parse(s.bench.op), bp.ops[0]);
	assert_int_equal(bp.n_dtypes, 1);
	assert_int_equal(dtype_parse(s.bench.dtype), bp.dtypes[0]);
	net_params_default(&np);
	assert_int_equal(net_test_parse(s.net.test), np.test);
	assert_int_equal(s.net.qps, np.qps);
	assert_int_equal(s.net.tclass, np.tclass);
	settings_free(&s);
}

static void test_settings_cli(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	struct opt_seen seen = { .n = 0 };
	struct strv pos = STRV_INIT;
	char *err = NULL;
	char *argv[] = { (char *)"--sysroot", (char *)"/snap", (char *)"--json", (char *)"--only", (char *)"rdma.*,nccl.*",
			 (char *)"--skip=rdma.mtu", (char *)"-v", (char *)"--tos", (char *)"96", (char *)"--link-rate=200",
			 (char *)"--min-sockbuf", (char *)"1G", (char *)"--mtu", (char *)"4200", (char *)"rdma" };
	int argc = (int)(sizeof(argv) / sizeof(argv[0]));
	assert_int_equal(opt_parse(settings_tables, SCOPE_CHECK, argc, argv, &s, &seen, &pos, &err), 0);
	assert_string_equal(s.sysroot, "/snap");
	assert_true(s.json);
	assert_int_equal(s.only.n, 2);
	assert_string_equal(s.skip.v[0], "rdma.mtu");
	assert_true(s.verbose);
	assert_int_equal(s.tos, 96);
	assert_true(s.link_rate == 200);
	assert_int_equal(s.min_sockbuf, 1ull << 30);
	assert_int_equal(s.mtu, 4200);
	assert_int_equal(pos.n, 1);
	assert_true(opt_seen_has(&seen, check_row("tos")));
	assert_false(opt_seen_has(&seen, check_row("strict")));
	strv_free(&pos);
	settings_free(&s);
	assert_null(s.sysroot);

	/* range limits of the real table */
	settings_init(&s);
	static const struct {
		const char *a0, *a1;
	} bad[] = {
		{ "--tos", "256" },
		{ "--tos", "-1" },
		{ "--mtu", "65537" },
		{ "--link-rate", "-5" },
		{ "--json=x", NULL },
		{ "--strict", NULL }, /* fine */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *a[3] = { (char *)bad[i].a0, (char *)bad[i].a1, NULL };
		int n = bad[i].a1 ? 2 : 1;
		int want = strcmp(bad[i].a0, "--strict") ? -EINVAL : 0;
		err = NULL;
		assert_int_equal(opt_parse(settings_tables, SCOPE_CHECK, n, a, &s, &seen, &pos, &err),
				 want);
		assert_true((err != NULL) == (want != 0));
		free(err);
	}
	/* snapshot does not take --json */
	char *snap[] = { (char *)"--json" };
	err = NULL;
	assert_int_equal(opt_parse(settings_tables, SCOPE_SNAPSHOT, 1, snap, &s, &seen, &pos, &err),
			 -EINVAL);
	free(err);
	strv_free(&pos);
	settings_free(&s);
}

/* bench copy's table: nvbandwidth's defaults and letters, its long names
 * as aliases, the forms of --numa and -d, and test names checked against
 * the catalog. */
static void copy_parse(struct settings *s, const char *const *args, int want, const char *needle)
{
	int argc = 0;
	while (args[argc])
		argc++;
	struct opt_seen seen = { .n = 0 };
	struct strv pos = STRV_INIT;
	char *err = NULL;
	int r = opt_parse(settings_tables, SCOPE_BENCH_COPY, argc, (char **)args, s, &seen, &pos, &err);
	if (r != want || (needle && (!err || !strstr(err, needle))))
		fail_msg("bench copy %s ...: %d \"%s\", want %d \"%s\"", args[0], r, err ? err : "", want,
			 needle ? needle : "");
	free(err);
	strv_free(&pos);
}
#define COPY_OK(s, ...) copy_parse((s), (const char *const[]){ __VA_ARGS__, NULL }, 0, NULL)
#define COPY_BAD(s, needle, ...) copy_parse((s), (const char *const[]){ __VA_ARGS__, NULL }, -EINVAL, (needle))

static void test_copy_options(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	assert_int_equal(s.copy.size_mib, 512);
	assert_int_equal(s.copy.samples, 3);
	assert_int_equal(s.copy.loop_count, 16);
	assert_string_equal(s.copy.numa, "auto");
	assert_string_equal(s.copy.devices, "all");
	assert_int_equal(s.copy.tests.n, 0);
	assert_true(s.copy.expect_h2d == 0 && s.copy.pcie_eff == 0 && s.copy.nvlink_eff == 0);
	COPY_OK(&s, "-t", "0", "--testcase", "device_local_copy,host_to_device_memcpy_sm", "-b", "64", "-i", "5",
		"--loopCount", "8", "--numa", "1", "-d", "0,2", "--expect-h2d", "50.5", "--expect-p2p=300", "--json",
		"--pcie-efficiency", "0.9");
	assert_int_equal(s.copy.tests.n, 3);
	assert_string_equal(s.copy.tests.v[2], "host_to_device_memcpy_sm");
	assert_int_equal(s.copy.size_mib, 64);
	assert_int_equal(s.copy.samples, 5);
	assert_int_equal(s.copy.loop_count, 8);
	assert_string_equal(s.copy.numa, "1");
	assert_string_equal(s.copy.devices, "0,2");
	assert_true(s.copy.expect_h2d == 50.5 && s.copy.expect_p2p == 300 && s.copy.expect_d2h == 0);
	assert_true(s.copy.pcie_eff == 0.9);
	assert_true(s.json);
	assert_null(copy_opts_check(&s));
	/* nvbandwidth's spellings */
	COPY_OK(&s, "--bufferSize", "1024", "--testSamples", "7", "--loop-count", "4");
	assert_int_equal(s.copy.size_mib, 1024);
	assert_int_equal(s.copy.samples, 7);
	assert_int_equal(s.copy.loop_count, 4);
	COPY_BAD(&s, "--numa", "--numa", "node1");
	COPY_BAD(&s, "--numa", "--numa", "-1");
	COPY_BAD(&s, "-d", "-d", "0,0");
	COPY_BAD(&s, "-d", "-d", "1024");
	COPY_BAD(&s, "-d", "-d", "0,");
	COPY_BAD(&s, "-d", "-d", "-t");
	COPY_BAD(&s, "--size", "--bufferSize", "0");
	COPY_BAD(&s, "--samples", "-i", "0");
	COPY_BAD(&s, "--pcie-efficiency", "--pcie-efficiency", "1.5");
	COPY_BAD(&s, "--expect-h2d", "--expect-h2d", "fast");
	COPY_BAD(&s, "does not apply", "--prom", "/x"); /* a live benchmark, no check report */
	/* --sysroot: where the PCIe links of the limits are read (the GPUs are the live ones) */
	COPY_OK(&s, "--sysroot", "/x");
	settings_free(&s);

	/* test names: the catalog's, or an index */
	settings_init(&s);
	COPY_OK(&s, "-t", "host_to_device_memcpy_cee");
	char *e = copy_opts_check(&s);
	assert_non_null(e);
	assert_non_null(strstr(e, "did you mean host_to_device_memcpy_ce?"));
	free(e);
	settings_free(&s);
	settings_init(&s);
	COPY_OK(&s, "-t", "35");
	e = copy_opts_check(&s);
	assert_non_null(e);
	assert_non_null(strstr(e, "no such test index (0-34)"));
	free(e);
	settings_free(&s);
	settings_init(&s);
	COPY_OK(&s, "-t", "multinode_device_to_device_memcpy_read_ce");
	e = copy_opts_check(&s);
	assert_non_null(e);
	free(e);
	settings_free(&s);
	/* the check commands do not take bench copy's options */
	settings_init(&s);
	struct opt_seen seen = { .n = 0 };
	struct strv pos = STRV_INIT;
	char *err = NULL;
	char *a[] = { (char *)"--expect-h2d", (char *)"50" };
	assert_int_equal(opt_parse(settings_tables, SCOPE_CHECK, 2, a, &s, &seen, &pos, &err), -EINVAL);
	free(err);
	strv_free(&pos);
	settings_free(&s);
}

/* The expectations are config keys too. */
static void test_copy_config_keys(void **state)
{
	(void)state;
	struct cfg c;
	cfg_open(&c, "expect_h2d = 50\nexpect_d2h = 48.5\nexpect_p2p = 350\npcie_efficiency = 0.85\n"
		     "nvlink_efficiency = 0.75\n");
	assert_int_equal(cfg_load(&c), 0);
	assert_true(c.s.copy.expect_h2d == 50 && c.s.copy.expect_d2h == 48.5 && c.s.copy.expect_p2p == 350);
	assert_true(c.s.copy.pcie_eff == 0.85 && c.s.copy.nvlink_eff == 0.75);
	cfg_close(&c);
	cfg_expect_error("pcie_efficiency = 2\n", "pcie_efficiency", "out of range");
}

static void test_config_keys(void **state)
{
	(void)state;
	struct cfg c;
	cfg_open(&c, "# site expectations\n"
		     "; another comment\n"
		     "\n"
		     "tos = 106\n"
		     "mtu=9000\n"
		     "link_rate = 200\n"
		     "min_sockbuf = 512M\n"
		     "only = rdma.*, nccl.*\n"
		     "only = sys.*\n"
		     "skip = rdma.mtu\n"
		     "strict = yes\n"
		     "prom = /var/lib/node_exporter/gpuready.prom\n");
	assert_int_equal(cfg_load(&c), 0);
	assert_null(c.err);
	assert_int_equal(c.s.tos, 106);
	assert_int_equal(c.s.mtu, 9000);
	assert_true(c.s.link_rate == 200);
	assert_int_equal(c.s.min_sockbuf, 512ull << 20);
	assert_int_equal(c.s.only.n, 3);
	assert_string_equal(c.s.only.v[0], "rdma.*");
	assert_string_equal(c.s.only.v[1], "nccl.*");
	assert_string_equal(c.s.only.v[2], "sys.*");
	assert_int_equal(c.s.skip.n, 1);
	assert_true(c.s.strict);
	assert_string_equal(c.s.prom, "/var/lib/node_exporter/gpuready.prom");
	cfg_close(&c);

	/* the [gpuready] section, CRLF line ends */
	cfg_open(&c, "[gpuready]\r\ntos = 96\r\nstrict = off\r\n");
	c.s.strict = true;
	assert_int_equal(cfg_load(&c), 0);
	assert_int_equal(c.s.tos, 96);
	assert_false(c.s.strict);
	cfg_close(&c);

	/* a UTF-8 byte order mark, an inline comment */
	cfg_open(&c, "\xef\xbb\xbftos = 96 ; the lossless class\nprom = /x;y\n");
	assert_int_equal(cfg_load(&c), 0);
	assert_int_equal(c.s.tos, 96);
	assert_string_equal(c.s.prom, "/x;y");
	cfg_close(&c);

	/* keys at the top, then the section */
	cfg_open(&c, "mtu = 4200\n[gpuready]\ntos = 0\n");
	assert_int_equal(cfg_load(&c), 0);
	assert_int_equal(c.s.mtu, 4200);
	assert_int_equal(c.s.tos, 0);
	cfg_close(&c);

	/* empty file and absent file: nothing changes */
	cfg_open(&c, "");
	assert_int_equal(cfg_load(&c), 0);
	assert_int_equal(c.s.tos, 104);
	cfg_close(&c);
	cfg_open(&c, NULL);
	c.tree = true; /* an absent /etc/gpuready.conf in the root is fine */
	assert_int_equal(cfg_load(&c), 0);
	assert_null(c.err);
	assert_int_equal(c.s.tos, 104);
	cfg_close(&c);
}

static void test_config_tree_keys(void **state)
{
	(void)state;
	struct cfg c;
	/* a recorded tree states expectations, but cannot choose where this run
	 * writes (prom), which checks it hides (only, skip) or exit rules */
	cfg_open(&c, "tos = 96\nprom = /tmp/pwned\nonly = rdma.mtu\nskip = gpu.*\nstrict = yes\nmtu = 9000\n");
	c.tree = true;
	assert_int_equal(cfg_load(&c), 0);
	assert_int_equal(c.s.tos, 96);
	assert_int_equal(c.s.mtu, 9000);
	assert_null(c.s.prom);
	assert_int_equal(c.s.only.n, 0);
	assert_int_equal(c.s.skip.n, 0);
	assert_false(c.s.strict);
	assert_non_null(c.s.config_note);
	assert_non_null(strstr(c.s.config_note, "prom, only, skip, strict"));
	cfg_close(&c);
	/* expectation keys only: no note */
	cfg_open(&c, "tos = 104\nexpect_gpus = 8\nmin_cuda = 12.8\n");
	c.tree = true;
	assert_int_equal(cfg_load(&c), 0);
	assert_int_equal(c.s.expect_gpus, 8);
	assert_null(c.s.config_note);
	cfg_close(&c);
}

static void test_config_errors(void **state)
{
	(void)state;
	cfg_expect_error("tos = 100\n# c\nbogus = 1\n", "/etc/gpuready.conf:3:", "unknown key 'bogus'");
	cfg_expect_error("[other]\ntos = 1\n", "/etc/gpuready.conf:2:", "unknown section [other]");
	cfg_expect_error("[GPUREADY]\ntos = 1\n", "unknown section", NULL);
	cfg_expect_error("tos = 300\n", ":1:", "key 'tos'");
	cfg_expect_error("tos = 300\n", "out of range", NULL);
	cfg_expect_error("tos =\n", "key 'tos'", "not an integer");
	cfg_expect_error("mtu = lots\n", "key 'mtu'", NULL);
	cfg_expect_error("strict = maybe\n", "key 'strict'", "maybe");
	cfg_expect_error("min_sockbuf = 1T\n", "key 'min_sockbuf'", NULL);
	cfg_expect_error("link_rate = fast\n", "key 'link_rate'", NULL);
	cfg_expect_error("\n\njust some words\n", ":3:", "syntax error");
	cfg_expect_error("[gpuready\ntos = 1\n", ":1:", NULL);
	/* CLI-only options have no config key */
	cfg_expect_error("sysroot = /\n", "unknown key 'sysroot'", NULL);
	cfg_expect_error("json = yes\n", "unknown key 'json'", NULL);
	cfg_expect_error("config = /x\n", "unknown key 'config'", NULL);
	/* option names are not keys */
	cfg_expect_error("link-rate = 1\n", "unknown key 'link-rate'", NULL);
}

/* --min-cuda and min_cuda take MAJOR.MINOR only: anything else is a usage
 * error naming the option and the form, never a check silently turned off
 * (cuda_version_parse reads "12" and nothing of "12.8.1"). */
static void test_min_cuda_form(void **state)
{
	(void)state;
	const char *good[] = { "12.8", "13.0", "9.2", "12.10", "0.0", "999.99" };
	const char *bad[] = { "12.8.1", "abc", "12", "", "12.x", "12.", ".8", "1234.1", "12.100", " 12.8", "12.8 ",
			      "+12.8", "-1.0", "v12.8", "12,8" };
	struct settings s;
	struct opt_seen seen = { .n = 0 };
	struct strv pos = STRV_INIT;

	settings_init(&s);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *a[] = { (char *)"--min-cuda", (char *)good[i] };
		char *err = NULL;
		if (opt_parse(settings_tables, SCOPE_CHECK, 2, a, &s, &seen, &pos, &err) != 0)
			fail_msg("--min-cuda %s refused: %s", good[i], err ? err : "");
		assert_string_equal(s.min_cuda, good[i]);
		/* what the option takes, the check reads */
		assert_true(cuda_version_parse(good[i]) >= 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *a[] = { (char *)"--min-cuda", (char *)bad[i] };
		char *err = NULL;
		assert_int_equal(opt_parse(settings_tables, SCOPE_CHECK, 2, a, &s, &seen, &pos, &err), -EINVAL);
		if (!err || !strstr(err, "--min-cuda") || !strstr(err, "MAJOR.MINOR") || !strstr(err, bad[i]))
			fail_msg("--min-cuda '%s': message \"%s\"", bad[i], err ? err : "");
		assert_string_equal(s.min_cuda, "999.99"); /* left as it was */
		free(err);
	}
	strv_free(&pos);
	settings_free(&s);

	cfg_expect_error("min_cuda = 12.8.1\n", "/etc/gpuready.conf:1: key 'min_cuda'", "MAJOR.MINOR");
	cfg_expect_error("min_cuda = abc\n", "key 'min_cuda'", "'abc' is not");
	cfg_expect_error("tos = 96\nmin_cuda = 12\n", ":2:", "MAJOR.MINOR");
	cfg_expect_error("min_cuda =\n", "key 'min_cuda'", "MAJOR.MINOR");
	cfg_expect_error("min_cuda = 12.x\n", "key 'min_cuda'", "MAJOR.MINOR");
	struct cfg c;
	cfg_open(&c, "min_cuda = 12.8\n");
	assert_int_equal(cfg_load(&c), 0);
	assert_string_equal(c.s.min_cuda, "12.8");
	cfg_close(&c);
}

static void test_config_two_errors(void **state)
{
	(void)state;
	/* Regression (fixed): settings.c on_key() overwrites k->err on every failing line
	 * (inih keeps parsing after an error and returns the FIRST error's
	 * line), so a file with two bad lines reports line 1 with the message
	 * of line 2 ("/etc/gpuready.conf:1: unknown key 'second'") and leaks
	 * the first message (LeakSanitizer reports it). */
	cfg_expect_error("first = 1\nsecond = 2\n", ":1: unknown key 'first'", NULL);
}

static void test_config_embedded_nul(void **state)
{
	(void)state;
	struct cfg c;
	cfg_open(&c, NULL);
	/* a corrupt file: a NUL in the middle, keys after it */
	static const char conf[] = "tos = 96\n\0bogus = 1\nmtu = 9000\n";
	tu_write_bytes(c.dir, "/etc/gpuready.conf", conf, sizeof(conf) - 1);
	int r = cfg_load(&c);
	int mtu = c.s.mtu;
	cfg_close(&c);
	/* Regression (fixed): settings.c settings_load_config() hands the buffer to
	 * ini_parse_string(), which stops at the first NUL: everything after
	 * it (here an unknown key and mtu = 9000) is silently ignored and the
	 * load returns 0. A file of NULs (a config torn by a crash) loads as
	 * empty. The typed readers refuse embedded NULs with -EINVAL; the
	 * config reader should too (or at least not drop the rest). */
	if (r == 0)
		assert_int_equal(mtu, 9000);
	else
		assert_int_equal(r, -EINVAL);
}

static void test_config_cli_wins(void **state)
{
	(void)state;
	struct cfg c;
	cfg_open(&c, "tos = 106\nmtu = 9000\nonly = from.file\nprom = /file.prom\n");
	char *argv[] = { (char *)"--tos", (char *)"96", (char *)"--only", (char *)"from.cli" };
	struct strv pos = STRV_INIT;
	assert_int_equal(opt_parse(settings_tables, SCOPE_CHECK, 4, argv, &c.s, &c.seen, &pos, &c.err),
			 0);
	assert_int_equal(cfg_load(&c), 0);
	assert_int_equal(c.s.tos, 96);
	assert_int_equal(c.s.mtu, 9000); /* not on the command line: from the file */
	assert_int_equal(c.s.only.n, 1);
	assert_string_equal(c.s.only.v[0], "from.cli");
	assert_string_equal(c.s.prom, "/file.prom");
	strv_free(&pos);
	cfg_close(&c);

	/* a CLI-set key with an invalid value in the file is not even parsed */
	cfg_open(&c, "tos = garbage\n");
	c.seen.v[c.seen.n++] = check_row("tos");
	c.s.tos = 5;
	assert_int_equal(cfg_load(&c), 0);
	assert_int_equal(c.s.tos, 5);
	cfg_close(&c);

	/* cli may be NULL */
	cfg_open(&c, "tos = 7\n");
	assert_int_equal(settings_load_config(&c.s, NULL, c.r, &c.err), 0);
	assert_int_equal(c.s.tos, 7);
	cfg_close(&c);
}

static void test_config_host_path(void **state)
{
	(void)state;
	struct cfg c;
	cfg_open(&c, "tos = 1\n");
	/* --config is a host path, the root's file is not read */
	char *host = tu_mkdtemp();
	tu_write(host, "/site.conf", "tos = 2\n");
	c.s.config = xasprintf("%s/site.conf", host);
	assert_int_equal(cfg_load(&c), 0);
	assert_int_equal(c.s.tos, 2);
	free(c.s.config);

	/* missing --config file: an error naming it */
	c.s.config = xasprintf("%s/missing.conf", host);
	assert_int_equal(cfg_load(&c), -ENOENT);
	assert_non_null(c.err);
	assert_non_null(strstr(c.err, "missing.conf"));
	assert_non_null(strstr(c.err, strerror(ENOENT)));
	free(c.err);
	c.err = NULL;

	/* errors name the --config file */
	tu_write(host, "/bad.conf", "tos = 1\nnope = 2\n");
	free(c.s.config);
	c.s.config = xasprintf("%s/bad.conf", host);
	assert_int_equal(cfg_load(&c), -EINVAL);
	assert_non_null(strstr(c.err, "bad.conf:2:"));
	cfg_close(&c);
	tu_rmtree(host);
	free(host);
}

static void test_config_host_path_directory(void **state)
{
	(void)state;
	struct cfg c;
	cfg_open(&c, NULL);
	char *host = tu_mkdtemp();
	c.s.config = xstrdup(host);
	c.s.tos = 1;
	/* Regression (fixed): settings.c settings_load_config() never checks ferror(): fopen()
	 * of a directory succeeds on Linux, fread() fails with EISDIR, and the
	 * "file" is taken as an empty config (returns 0, no message). Expected
	 * -EISDIR with "cannot read config file DIR: Is a directory". */
	int r = cfg_load(&c);
	bool has_err = c.err != NULL;
	cfg_close(&c);
	tu_rmtree(host);
	free(host);
	assert_int_equal(r, -EISDIR);
	assert_true(has_err);
}

static void test_config_unreadable_in_root(void **state)
{
	(void)state;
	struct cfg c;
	/* a directory in place of the file: a clear error */
	cfg_open(&c, NULL);
	c.tree = true;
	tu_mkdir(c.dir, "/etc/gpuready.conf");
	assert_int_equal(cfg_load(&c), -EISDIR);
	assert_non_null(strstr(c.err, "/etc/gpuready.conf"));
	cfg_close(&c);
	/* a link to the host's file is clamped into the root: absent */
	cfg_open(&c, NULL);
	c.tree = true;
	char *host = tu_mkdtemp();
	tu_write(host, "/evil.conf", "bogus = 1\n");
	char *target = xasprintf("%s/evil.conf", host);
	tu_symlink(c.dir, "/etc/gpuready.conf", target);
	assert_int_equal(cfg_load(&c), 0);
	free(target);
	tu_rmtree(host);
	free(host);
	cfg_close(&c);
}

/* Loads conf; it must either succeed with prom == want_prom (if given) or
 * fail with an error naming line 1. */
static bool long_line_case(const char *conf, const char *want_prom, size_t want_only)
{
	struct cfg c;
	cfg_open(&c, conf);
	int r = cfg_load(&c);
	bool ok;
	if (r == 0)
		ok = (!want_prom || (c.s.prom && !strcmp(c.s.prom, want_prom))) && c.s.only.n == want_only;
	else
		ok = c.err && strstr(c.err, "gpuready.conf:1:");
	if (!ok)
		print_error("config line of %zu bytes: ret %d, err \"%s\", prom %zu bytes, %zu patterns\n",
			    strcspn(conf, "\n"), r, c.err ? c.err : "", c.s.prom ? strlen(c.s.prom) : 0, c.s.only.n);
	cfg_close(&c);
	return ok;
}

static void test_config_long_line(void **state)
{
	(void)state;
	/* Regression (fixed): settings.c parses with inih's ini_parse_string(), whose line
	 * buffer is INI_MAX_LINE (200) bytes: a longer line is split into
	 * pieces parsed as separate lines. A one-line config with a 20-pattern
	 * `only` list (~300 bytes) fails with "/etc/gpuready.conf:2: syntax
	 * error" (there is no line 2), and when the piece after byte 199
	 * starts with '#' or ';' it is taken as a comment: `prom` is silently
	 * cut to its first 192 bytes and the load returns 0. Expected: the
	 * whole value, or an error naming line 1 ("line too long"). */
	struct strbuf conf = STRBUF_INIT;
	strbuf_adds(&conf, "only = ");
	for (int i = 0; i < 20; i++)
		strbuf_addf(&conf, "%srdma.check_%03d", i ? "," : "", i);
	strbuf_addch(&conf, '\n');
	bool list_ok = long_line_case(conf.buf, NULL, 20);

	struct strbuf path = STRBUF_INIT;
	strbuf_addch(&path, '/');
	while (path.len < 192)
		strbuf_addch(&path, 'a');
	strbuf_adds(&path, "#x.prom");
	strbuf_reset(&conf);
	strbuf_addf(&conf, "prom = %s\n", path.buf);
	bool prom_ok = long_line_case(conf.buf, path.buf, 0);
	strbuf_release(&path);
	strbuf_release(&conf);
	assert_true(list_ok);
	assert_true(prom_ok);
}

int main(void)
{
	collect_rows();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_long_short),
		cmocka_unit_test(test_parse_positional),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_refused_hint),
		cmocka_unit_test(test_short_flag_with_value_message),
		cmocka_unit_test(test_rate_nan),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_assign),
		cmocka_unit_test(test_print_help),
		cmocka_unit_test(test_print_man),
		cmocka_unit_test(test_print_man_leading_dot),
		cmocka_unit_test(test_settings_defaults),
		cmocka_unit_test(test_table_defaults),
		cmocka_unit_test(test_table_defaults_match_engines),
		cmocka_unit_test(test_settings_cli),
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_copy_options),
		cmocka_unit_test(test_copy_config_keys),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_tree_keys),
		cmocka_unit_test(test_config_two_errors),
		cmocka_unit_test(test_min_cuda_form),
		cmocka_unit_test(test_config_embedded_nul),
		cmocka_unit_test(test_config_cli_wins),
		cmocka_unit_test(test_config_host_path),
		cmocka_unit_test(test_config_host_path_directory),
		cmocka_unit_test(test_config_unreadable_in_root),
		cmocka_unit_test(test_config_long_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
