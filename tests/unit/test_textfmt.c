/* Unit tests for the config file format parsers (inventory/textfmt):
 * nccl.conf exactly as NCCL's setEnvFile() reads it, shell `export` lines
 * of /etc/profile.d scripts, /etc/environment (pam_env), limits.conf(5),
 * and what a snapshot keeps of the first three (only what the parsers read
 * of NCCL_* assignments). Every parser must survive garbage, truncation
 * and embedded NULs. */
#include "testutil.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "inventory/textfmt.h"

#include <stdlib.h>
#include <string.h>

/* Each call is recorded as "name=value@line". */
static void on_assign(void *ud, const char *name, const char *value, unsigned lineno)
{
	struct strv *sv = ud;
	assert_non_null(name);
	assert_non_null(value);
	strv_push(sv, xasprintf("%s=%s@%u", name, value, lineno));
}

static void on_limit(void *ud, const char *domain, const char *type, const char *item, const char *value,
		     unsigned lineno)
{
	struct strv *sv = ud;
	strv_push(sv, xasprintf("%s|%s|%s|%s@%u", domain, type, item, value, lineno));
}

/* Compares; on a difference prints both lists and fails. */
static void expect(struct strv *got, const char *const *want, size_t n)
{
	tu_expect_strv(got, want, n, "parsed assignments");
}
#define EXPECT(got, ...)                                                      \
	do {                                                                  \
		const char *const w_[] = { __VA_ARGS__ };                     \
		expect((got), w_, sizeof(w_) / sizeof(w_[0]));                \
	} while (0)

typedef void (*parser_fn)(const char *, size_t, assign_fn, void *);

static void run(parser_fn p, const char *text, struct strv *out)
{
	strv_free(out);
	p(text, strlen(text), on_assign, out);
}

/* ---- nccl.conf ---- */

static void test_nccl_conf(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	run(textfmt_nccl_conf,
	    "NCCL_IB_HCA=mlx5_0,mlx5_1\n"
	    "# NCCL_DEBUG=INFO\n"
	    " #NCCL_X=1\n"
	    "NCCL_A = b \n"
	    "NCCL_DOS=1\r\n"
	    "no equals on this line\n"
	    "=novalue\n"
	    "NCCL_EQ=a=b\n"
	    "NCCL_EMPTY=\n"
	    "\n"
	    "NCCL_SOCKET_IFNAME=^docker,lo # not a comment\n"
	    "\tNCCL_TAB=1\n"
	    "NCCL_LAST=x",
	    &a);
	EXPECT(&a, "NCCL_IB_HCA=mlx5_0,mlx5_1@1",
	       " #NCCL_X=1@3",          /* '#' is a comment only in column 0 */
	       "NCCL_A = b @4",         /* spaces are part of name and value */
	       "NCCL_DOS=1\r@5",        /* the CR of a DOS file is kept */
	       "NCCL_EQ=a=b@8",         /* name ends at the first '=' */
	       "NCCL_EMPTY=@9",
	       "NCCL_SOCKET_IFNAME=^docker,lo # not a comment@11",
	       "\tNCCL_TAB=1@12",
	       "NCCL_LAST=x@13");       /* no final newline */
	strv_free(&a);
}

static void test_nccl_conf_edges(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	run(textfmt_nccl_conf, "", &a);
	assert_int_equal(a.n, 0);
	run(textfmt_nccl_conf, "\n\n\n", &a);
	assert_int_equal(a.n, 0);
	run(textfmt_nccl_conf, "#only=comment", &a);
	assert_int_equal(a.n, 0);
	run(textfmt_nccl_conf, "=", &a);
	assert_int_equal(a.n, 0);
	run(textfmt_nccl_conf, "A=", &a);
	EXPECT(&a, "A=@1");
	run(textfmt_nccl_conf, "\r\nA=1\r\n\r\n", &a);
	EXPECT(&a, "A=1\r@2");

	/* len is honoured: a truncated buffer ends mid-line */
	strv_free(&a);
	const char *t = "A=123\nB=456\n";
	textfmt_nccl_conf(t, 9, on_assign, &a);
	EXPECT(&a, "A=123@1", "B=4@2");
	strv_free(&a);
	textfmt_nccl_conf(t, 0, on_assign, &a);
	assert_int_equal(a.n, 0);

	/* embedded NUL: no crash, later lines still read */
	strv_free(&a);
	const char bin[] = "A=1\0B=2\nC=3\n\0\n=\0=\nD\0=4\n";
	textfmt_nccl_conf(bin, sizeof(bin) - 1, on_assign, &a);
	assert_true(strv_contains(&a, "A=1@1"));
	assert_true(strv_contains(&a, "C=3@2"));
	strv_free(&a);

	/* a very long line */
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "NCCL_LONG=");
	for (int i = 0; i < 5000; i++)
		strbuf_adds(&sb, "mlx5_0,");
	textfmt_nccl_conf(sb.buf, sb.len, on_assign, &a);
	assert_int_equal(a.n, 1);
	assert_int_equal(strlen(a.v[0]), sb.len + 2);
	strbuf_release(&sb);
	strv_free(&a);
}

/* ---- shell exports ---- */

static void test_shell_exports(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	run(textfmt_shell_exports,
	    "#!/bin/sh\n"                           /* 1 */
	    "export A=1\n"                          /* 2 */
	    "export B=\"two words\"\n"              /* 3 */
	    "export C='single $HOME'\n"             /* 4 */
	    "D=4\n"                                 /* 5 */
	    "export D\n"                            /* 6 */
	    "declare -x E=5\n"                      /* 7 */
	    "# export F=6\n"                        /* 8 */
	    "export G=$HOME/bin:${PATH}\n"          /* 9 */
	    "export 1BAD=x\n"                       /* 10 */
	    "export BAD-NAME=x\n"                   /* 11 */
	    "export H=val # trailing comment\n"     /* 12 */
	    "export I=\"a;b\"\n"                    /* 13 */
	    "export J=x;y\n"                        /* 14 */
	    "export K=\"esc \\\"q\\\" \\\\ back\"\n" /* 15 */
	    "   export L=indented   \n"             /* 16 */
	    "export\tM=tab\n"                       /* 17 */
	    "N=plain_not_exported\n"                /* 18 */
	    "export O=\n"                           /* 19 */
	    "export P\n"                            /* 20: never assigned */
	    "Q=1\n"                                 /* 21 */
	    "Q=2\n"                                 /* 22 */
	    "export Q\n"                            /* 23 */
	    "export R=a\\ b\n"                      /* 24 */
	    "export S=\"unterminated\n"             /* 25 */
	    "export T=1\r\n"                        /* 26 */
	    "export U=x#y\n"                        /* 27 */
	    "export _V9=ok\n"                       /* 28 */
	    "export\n"                              /* 29 */
	    "exportW=1\n"                           /* 30: not export */
	    "export X='it'\"'\"'s'\n"               /* 31 */
	    "if [ -d /x ]; then\n"                 /* 32 */
	    "  export Y=in_if\n"                   /* 33: read, not evaluated */
	    "fi\n",                                /* 34 */
	    &a);
	EXPECT(&a, "A=1@2", "B=two words@3", "C=single $HOME@4",
	       "D=4@5", /* promoted by `export D`, with the line of the value */
	       "E=5@7", "G=$HOME/bin:${PATH}@9", "H=val@12", "I=a;b@13", "J=x@14", "K=esc \"q\" \\ back@15",
	       "L=indented@16", "M=tab@17", "O=@19", "Q=2@22", "R=a b@24", "S=unterminated@25", "T=1@26",
	       "U=x#y@27", "_V9=ok@28", "X=it's@31", "Y=in_if@33");
	assert_false(strv_contains(&a, "N=plain_not_exported@18"));
	strv_free(&a);
}

static void test_shell_exports_edges(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	run(textfmt_shell_exports, "", &a);
	assert_int_equal(a.n, 0);
	run(textfmt_shell_exports, "export", &a);
	assert_int_equal(a.n, 0);
	run(textfmt_shell_exports, "export =1\nexport '=1\nexport \"A\"=1\n=\n;\n", &a);
	assert_int_equal(a.n, 0);
	run(textfmt_shell_exports, "export A=\"\\", &a); /* backslash at the very end */
	EXPECT(&a, "A=\\@1");
	run(textfmt_shell_exports, "export A=\\", &a);
	EXPECT(&a, "A=\\@1");
	run(textfmt_shell_exports, "export A=''", &a);
	EXPECT(&a, "A=@1");
	/* truncated buffers */
	strv_free(&a);
	const char *t = "export NCCL_IB_HCA=\"mlx5_0 mlx5_1\"\n";
	for (size_t n = 0; n <= strlen(t); n++) {
		textfmt_shell_exports(t, n, on_assign, &a);
		strv_free(&a);
	}
	/* embedded NULs */
	const char bin[] = "export A=1\0junk\nB=2\0\nexport B\n\0export C=3\n";
	textfmt_shell_exports(bin, sizeof(bin) - 1, on_assign, &a);
	assert_true(strv_contains(&a, "A=1@1"));
	assert_true(strv_contains(&a, "B=2@2"));
	strv_free(&a);
}

static void test_shell_exports_assign_after_export(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	/* Regression (fixed): textfmt.c textfmt_shell_exports() treats a plain NAME=value as
	 * unexported even when NAME was exported earlier in the script. In
	 * sh, `export A=1` then `A=2` exports A=2 (the export attribute
	 * stays), and `export B` before `B=3` exports B=3; the parser reports
	 * A=1 only and nothing for B, so checks see a stale or missing value. */
	run(textfmt_shell_exports, "export A=1\nA=2\nexport B\nB=3\n", &a);
	EXPECT(&a, "A=1@1", "A=2@2", "B=3@4");
	strv_free(&a);
}

/* ---- /etc/environment ---- */

static void test_environment(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	run(textfmt_environment,
	    "PATH=\"/usr/local/sbin:/usr/local/bin:/usr/bin\"\n" /* 1 */
	    "NCCL_A=1\n"                                         /* 2 */
	    "export NCCL_B=2\n"                                  /* 3 */
	    "# C=3\n"                                            /* 4 */
	    "  D='quoted'\n"                                     /* 5 */
	    "bad-name=1\n"                                       /* 6 */
	    "=x\n"                                               /* 7 */
	    "no equals\n"                                        /* 8 */
	    "E=\n"                                               /* 9 */
	    "\n"                                                 /* 10 */
	    "F=1\r\n"                                            /* 11 */
	    "   # indented comment\n"                            /* 12 */
	    "G=$HOME\n"                                          /* 13 */
	    "9H=1\n"                                             /* 14 */
	    "NCCL_LAST=end",                                     /* 15 */
	    &a);
	EXPECT(&a, "PATH=/usr/local/sbin:/usr/local/bin:/usr/bin@1", "NCCL_A=1@2", "NCCL_B=2@3", "D=quoted@5",
	       "E=@9", "F=1@11", "G=$HOME@13", "NCCL_LAST=end@15");
	run(textfmt_environment, "", &a);
	assert_int_equal(a.n, 0);
	run(textfmt_environment, "=\n\"\n'\nA=\"\n", &a);
	EXPECT(&a, "A=@4");
	strv_free(&a);
	const char bin[] = "A=1\0B=2\nC=3\n";
	textfmt_environment(bin, sizeof(bin) - 1, on_assign, &a);
	EXPECT(&a, "A=1@1", "C=3@2");
	strv_free(&a);
}

static void test_environment_spaces(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	/* Regression (fixed): textfmt.c textfmt_environment() reuses the shell word parser,
	 * which stops at the first unquoted blank; pam_env (the reader of
	 * /etc/environment) keeps the rest of the line: "JAVA_OPTS=-Xmx1g
	 * -Xms1g" sets "-Xmx1g -Xms1g", not "-Xmx1g". */
	run(textfmt_environment, "NCCL_TOPO_DUMP=a b\nJAVA_OPTS=-Xmx1g -Xms1g\n", &a);
	EXPECT(&a, "NCCL_TOPO_DUMP=a b@1", "JAVA_OPTS=-Xmx1g -Xms1g@2");
	strv_free(&a);
}

/* ---- limits.conf ---- */

static void run_limits(const char *text, struct strv *out)
{
	strv_free(out);
	textfmt_limits(text, strlen(text), on_limit, out);
}

static void test_limits(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	run_limits("# /etc/security/limits.conf\n"                  /* 1 */
		   "*               soft    memlock         unlimited\n" /* 2 */
		   "*\thard\tmemlock\tunlimited\n"                    /* 3 */
		   "@rdma soft nofile 65536 # trailing comment\n"    /* 4 */
		   "root hard    # too short\n"                      /* 5 */
		   "short line\n"                                    /* 6 */
		   " \t \n"                                          /* 7 */
		   "\n"                                              /* 8 */
		   "   #   indented comment with four words\n"       /* 9 */
		   "*  -  core  0\r\n"                               /* 10 */
		   "1000:2000 hard nproc 100#glued comment\n"        /* 11 */
		   "%group - maxlogins 4",                           /* 12 */
		   &a);
	EXPECT(&a, "*|soft|memlock|unlimited@2", "*|hard|memlock|unlimited@3", "@rdma|soft|nofile|65536@4",
	       "*|-|core|0@10", "1000:2000|hard|nproc|100@11", "%group|-|maxlogins|4@12");

	run_limits("", &a);
	assert_int_equal(a.n, 0);
	run_limits("#", &a);
	assert_int_equal(a.n, 0);
	run_limits("a b c", &a);
	assert_int_equal(a.n, 0);
	run_limits("a b c #d", &a);
	assert_int_equal(a.n, 0);

	/* truncated buffers and NULs never crash */
	strv_free(&a);
	const char *t = "* soft memlock unlimited\n";
	for (size_t n = 0; n <= strlen(t); n++) {
		textfmt_limits(t, n, on_limit, &a);
		if (n < strlen("* soft memlock u"))
			assert_int_equal(a.n, 0);
		strv_free(&a);
	}
	const char bin[] = "* soft\0 memlock x\n* hard memlock 1\n";
	textfmt_limits(bin, sizeof(bin) - 1, on_limit, &a);
	EXPECT(&a, "*|hard|memlock|1@2");
	strv_free(&a);
}

/* ---- garbage for all parsers ---- */

static void noop_assign(void *ud, const char *name, const char *value, unsigned lineno)
{
	(void)name;
	(void)value;
	(void)lineno;
	(*(unsigned *)ud)++;
}

static void noop_limit(void *ud, const char *d, const char *t, const char *i, const char *v, unsigned lineno)
{
	(void)d;
	(void)t;
	(void)i;
	(void)v;
	(void)lineno;
	(*(unsigned *)ud)++;
}

static void test_garbage(void **state)
{
	(void)state;
	/* deterministic pseudo-random bytes, biased towards syntax chars */
	static const char alphabet[] = "=#'\"\\ \t\n\r;$export declare -xAB_1\0\xff";
	char buf[4096];
	unsigned seed = 12345;
	for (int round = 0; round < 200; round++) {
		size_t len = (size_t)(round * 37 % (int)sizeof(buf));
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		unsigned n = 0;
		textfmt_nccl_conf(buf, len, noop_assign, &n);
		textfmt_shell_exports(buf, len, noop_assign, &n);
		textfmt_environment(buf, len, noop_assign, &n);
		textfmt_limits(buf, len, noop_limit, &n);
	}
}

/* ---- what a snapshot keeps ---- */

static bool is_nccl(const char *name)
{
	return strncmp(name, "NCCL_", 5) == 0;
}

static void on_nccl_assign(void *ud, const char *name, const char *value, unsigned lineno)
{
	if (is_nccl(name))
		on_assign(ud, name, value, lineno);
}

typedef void (*keep_fn)(const char *, size_t, textfmt_keep_fn, struct strbuf *);

static size_t count_newlines(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += s[i] == '\n';
	return c;
}

/* The property a snapshot relies on: the kept text parses to the same
 * NCCL_* assignments (same values, same line numbers), has the same lines,
 * and keeping it again changes nothing. */
static void expect_keep_exact(parser_fn p, keep_fn k, const char *text, size_t len, struct strbuf *kept)
{
	struct strv a = STRV_INIT, b = STRV_INIT;
	struct strbuf again = STRBUF_INIT;
	k(text, len, is_nccl, kept);
	p(text, len, on_nccl_assign, &a);
	p(kept->buf, kept->len, on_nccl_assign, &b);
	tu_expect_strv(&b, (const char *const *)a.v, a.n, "assignments parsed from the kept text");
	assert_int_equal(count_newlines(kept->buf, kept->len), count_newlines(text, len));
	k(kept->buf, kept->len, is_nccl, &again);
	assert_int_equal(again.len, kept->len);
	assert_memory_equal(again.buf, kept->buf, kept->len);
	strv_free(&a);
	strv_free(&b);
	strbuf_release(&again);
}

static void test_keep(void **state)
{
	(void)state;
	struct strbuf kept = STRBUF_INIT;
	const char *conf = "NCCL_DEBUG=WARN # a comment NCCL reads as value\n"
			   "DB_PASSWORD=s3cr3t\n#NCCL_OFF=s3cr3t\nNCCL_DOS=1\r\n=NCCL_X\nNCCL_LAST=1";
	expect_keep_exact(textfmt_nccl_conf, textfmt_nccl_conf_keep, conf, strlen(conf), &kept);
	assert_string_equal(kept.buf, "NCCL_DEBUG=WARN # a comment NCCL reads as value\n\n\nNCCL_DOS=1\r\n\nNCCL_LAST=1");

	const char *sh = "# NCCL_ in a comment, s3cr3t\n"
			 "export TOKEN=s3cr3t\n"
			 "  export NCCL_A=\"x y\"; export TOKEN=s3cr3t # s3cr3t\n"
			 "NCCL_B=1 # s3cr3t\n"
			 "export NCCL_B\n"
			 "declare -x NCCL_C='c' TOKEN=s3cr3t\n"
			 "echo NCCL_D=s3cr3t\n"
			 "export NCCL_E\n"
			 "NCCL_E=e;s3cr3t\n";
	expect_keep_exact(textfmt_shell_exports, textfmt_shell_exports_keep, sh, strlen(sh), &kept);
	assert_string_equal(kept.buf, "\n\n  export NCCL_A=\"x y\"\nNCCL_B=1\nexport NCCL_B\ndeclare -x NCCL_C='c'\n"
				      "\nexport NCCL_E\nNCCL_E=e\n");

	const char *env = "http_proxy=http://u:s3cr3t@proxy\n  NCCL_A = 1\nNCCL_B=\"b c\"  \nexport NCCL_C=c\n";
	expect_keep_exact(textfmt_environment, textfmt_environment_keep, env, strlen(env), &kept);
	assert_string_equal(kept.buf, "\n\nNCCL_B=\"b c\"\nexport NCCL_C=c\n");
	assert_null(strstr(kept.buf, "s3cr3t"));
	strbuf_release(&kept);
}

/* Random texts made of the tokens the three formats care about. */
static void test_keep_garbage(void **state)
{
	(void)state;
	static const char *const tokens[] = {
		"NCCL_A", "NCCL_B", "TOKEN", "=", " ", "\t", ";", "\"", "'", "\\", "#", "export ", "export\t",
		"declare -x ", "\n", "\r", "x", "$", "NCCL_", "_",
	};
	struct strbuf text = STRBUF_INIT, kept = STRBUF_INIT;
	unsigned seed = 4242;
	for (int round = 0; round < 600; round++) {
		tu_random_tokens(&text, tokens, sizeof(tokens) / sizeof(tokens[0]), (size_t)(round % 97), &seed);
		expect_keep_exact(textfmt_nccl_conf, textfmt_nccl_conf_keep, text.buf, text.len, &kept);
		expect_keep_exact(textfmt_shell_exports, textfmt_shell_exports_keep, text.buf, text.len, &kept);
		expect_keep_exact(textfmt_environment, textfmt_environment_keep, text.buf, text.len, &kept);
	}
	strbuf_release(&text);
	strbuf_release(&kept);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nccl_conf),
		cmocka_unit_test(test_nccl_conf_edges),
		cmocka_unit_test(test_shell_exports),
		cmocka_unit_test(test_shell_exports_edges),
		cmocka_unit_test(test_shell_exports_assign_after_export),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_environment_spaces),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_keep),
		cmocka_unit_test(test_keep_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
