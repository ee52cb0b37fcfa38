/* Unit tests for core/stdout_guard: what is written to stdout between
 * begin and end (through stdio and straight to fd 1) is captured, bounded
 * and handed back, and fd 1 is the real stdout again afterwards.
 *
 * Nothing may be asserted while a guard is active: cmocka reports on
 * stdout, and a failure message would land in the capture. Each test
 * records what it saw and asserts after stdout_guard_end. */
#include "testutil.h"
#include "core/stdout_guard.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void stdout_id(dev_t *dev, ino_t *ino)
{
	struct stat st;
	assert_int_equal(fstat(STDOUT_FILENO, &st), 0);
	*dev = st.st_dev;
	*ino = st.st_ino;
}

static void say(const char *s)
{
	ssize_t n = write(STDOUT_FILENO, s, strlen(s));
	(void)n;
}

static void test_captures_and_restores(void **state)
{
	(void)state;
	struct stdout_guard g;
	struct strbuf said = STRBUF_INIT;
	dev_t d0, d1;
	ino_t i0, i1;

	stdout_id(&d0, &i0);
	printf("before the guard, unflushed\n"); /* begin flushes it to the real stdout */
	int rb = stdout_guard_begin(&g);
	bool active = stdout_guard_active(&g);
	printf("buffered ");
	say("direct ");
	int re = stdout_guard_end(&g, &said);
	stdout_id(&d1, &i1);

	assert_int_equal(rb, 0);
	assert_true(active);
	assert_int_equal(re, 0);
	assert_false(stdout_guard_active(&g));
	/* write(2) lands at once, stdio's buffer when end flushes it */
	assert_string_equal(said.buf, "direct buffered ");
	assert_true(d0 == d1 && i0 == i1);
	strbuf_release(&said);
}

/* Only the first STDOUT_GUARD_KEEP bytes come back; NUL bytes show as '?'. */
static void test_bounded(void **state)
{
	(void)state;
	struct stdout_guard g;
	struct strbuf said = STRBUF_INIT;
	char chunk[1000];

	memset(chunk, 'x', sizeof(chunk));
	chunk[1] = '\0';
	int rb = stdout_guard_begin(&g);
	for (int i = 0; i < 10; i++)
		fwrite(chunk, 1, sizeof(chunk), stdout);
	int re = stdout_guard_end(&g, &said);

	assert_int_equal(rb, 0);
	assert_int_equal(re, 0);
	assert_int_equal(said.len, STDOUT_GUARD_KEEP);
	assert_int_equal(said.buf[1], '?');
	assert_int_equal(said.buf[1001], '?');
	assert_int_equal(said.buf[STDOUT_GUARD_KEEP], '\0');
	strbuf_release(&said);
}

/* An inner guard captures what is written while it lasts and gives the
 * outer one back its capture; said may be NULL. */
static void test_nested(void **state)
{
	(void)state;
	struct stdout_guard outer, inner;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	int r1 = stdout_guard_begin(&outer);
	say("A");
	int r2 = stdout_guard_begin(&inner);
	say("B");
	int r3 = stdout_guard_end(&inner, &b);
	say("C");
	int r4 = stdout_guard_end(&outer, &a);

	assert_true(r1 == 0 && r2 == 0 && r3 == 0 && r4 == 0);
	assert_string_equal(a.buf, "AC");
	assert_string_equal(b.buf, "B");
	strbuf_release(&a);
	strbuf_release(&b);

	assert_int_equal(stdout_guard_begin(&outer), 0);
	say("dropped");
	assert_int_equal(stdout_guard_end(&outer, NULL), 0);
}

/* end without a begin (or a second end) does nothing; a begin with fd 1
 * closed fails and leaves the guard inactive. */
static void test_inactive(void **state)
{
	(void)state;
	struct stdout_guard g = STDOUT_GUARD_INIT;
	struct strbuf said = STRBUF_INIT;

	strbuf_adds(&said, "kept");
	assert_false(stdout_guard_active(&g));
	assert_int_equal(stdout_guard_end(&g, &said), 0);
	assert_string_equal(said.buf, "kept");

	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	close(STDOUT_FILENO);
	int r = stdout_guard_begin(&g);
	bool active = stdout_guard_active(&g);
	int re = stdout_guard_end(&g, &said);
	assert_int_equal(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
	clearerr(stdout);

	assert_int_equal(r, -EBADF);
	assert_false(active);
	assert_int_equal(re, 0);
	assert_string_equal(said.buf, "kept");
	strbuf_release(&said);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captures_and_restores),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_inactive),
	};
	return cmocka_run_group_tests_name("stdout_guard", tests, NULL, NULL);
}
