/* Unit tests for core/isolate: work in a forked child under a deadline per
 * step. The child's result comes back whole; a step that never ends is
 * abandoned within the deadline and named; a step that keeps moving is not
 * cut short however long the whole work takes; a child that dies is told
 * apart from one that overran; more than the caller allows is refused.
 * The work runs in the child: it reports through what it sends and how it
 * exits, never through cmocka's asserts (they belong to the parent). */
#include "testutil.h"
#include "core/clock.h"
#include "core/isolate.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sends 200 KiB (more than a pipe holds) of a known pattern. */
static void work_sends(struct isolate_ctx *ctx, void *arg)
{
	static unsigned char buf[200 << 10];
	(void)arg;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7);
	isolate_step(ctx, "sending");
	if (isolate_send(ctx, buf, 100 << 10) < 0 || isolate_send(ctx, buf + (100 << 10), sizeof(buf) - (100 << 10)) < 0)
		_exit(7);
}

static void test_result_comes_back(void **state)
{
	(void)state;
	struct isolate_result res;
	assert_int_equal(isolate_run(work_sends, NULL, 5, 1 << 20, &res), 0);
	assert_int_equal(res.end, ISOLATE_DONE);
	assert_true(res.reaped);
	assert_string_equal(res.step, "sending");
	assert_int_equal(res.out.len, 200 << 10);
	for (size_t i = 0; i < res.out.len; i++)
		if ((unsigned char)res.out.buf[i] != (unsigned char)(i * 7))
			fail_msg("byte %zu differs", i);
	isolate_result_free(&res);
}

/* A call that never returns, after a few that do. */
static void work_hangs(struct isolate_ctx *ctx, void *arg)
{
	(void)arg;
	isolate_step(ctx, "first(0)");
	isolate_step(ctx, "blocking(%d)", 3);
	for (;;)
		pause();
}

static void test_overrun_is_named(void **state)
{
	(void)state;
	struct isolate_result res;
	double t0 = clock_now();
	assert_int_equal(isolate_run(work_hangs, NULL, 0.5, 1024, &res), 0);
	double took = clock_now() - t0;
	print_message("abandoned after %.2f s\n", took);
	assert_int_equal(res.end, ISOLATE_TIMEOUT);
	assert_string_equal(res.step, "blocking(3)");
	assert_true(res.reaped);
	assert_true(took >= 0.5 && took < 2.5);
	assert_int_equal(res.out.len, 0);
	isolate_result_free(&res);
}

/* Six steps of 0.2 s: 1.2 s in all, each well inside a 0.6 s deadline. */
static void work_moves(struct isolate_ctx *ctx, void *arg)
{
	(void)arg;
	for (int i = 0; i < 6; i++) {
		isolate_step(ctx, "step %d", i);
		usleep(200 * 1000);
	}
	(void)isolate_send(ctx, "ok", 2);
}

static void test_deadline_is_per_step(void **state)
{
	(void)state;
	struct isolate_result res;
	assert_int_equal(isolate_run(work_moves, NULL, 0.6, 1024, &res), 0);
	assert_int_equal(res.end, ISOLATE_DONE);
	assert_int_equal(res.out.len, 2);
	assert_memory_equal(res.out.buf, "ok", 2);
	isolate_result_free(&res);
}

/* A step given 1 s beyond a 0.3 s deadline outlasts the deadline and
 * finishes; the ordinary step after it has 0.3 s again. */
static void work_longer(struct isolate_ctx *ctx, void *arg)
{
	(void)arg;
	isolate_step_longer(ctx, 1.0, "long %d", 1);
	usleep(700 * 1000);
	(void)isolate_send(ctx, "a", 1);
	isolate_step(ctx, "short");
	for (;;)
		pause();
}

static void work_longer_hangs(struct isolate_ctx *ctx, void *arg)
{
	(void)arg;
	isolate_step_longer(ctx, 0.5, "long");
	for (;;)
		pause();
}

static void test_longer_step(void **state)
{
	(void)state;
	struct isolate_result res;
	assert_int_equal(isolate_run(work_longer, NULL, 0.3, 1024, &res), 0);
	assert_int_equal(res.end, ISOLATE_TIMEOUT);
	assert_string_equal(res.step, "short");
	assert_true(res.step_timeout_s > 0.29 && res.step_timeout_s < 0.31);
	assert_int_equal(res.out.len, 1);
	isolate_result_free(&res);

	double t0 = clock_now();
	assert_int_equal(isolate_run(work_longer_hangs, NULL, 0.3, 1024, &res), 0);
	double took = clock_now() - t0;
	assert_int_equal(res.end, ISOLATE_TIMEOUT);
	assert_string_equal(res.step, "long");
	assert_true(res.step_timeout_s > 0.79 && res.step_timeout_s < 0.81);
	assert_true(took >= 0.8 && took < 3.0);
	isolate_result_free(&res);
}

static void work_crashes(struct isolate_ctx *ctx, void *arg)
{
	(void)arg;
	isolate_step(ctx, "crashing");
	raise(SIGKILL);
}

static void work_too_much(struct isolate_ctx *ctx, void *arg)
{
	static const char buf[64];
	(void)arg;
	isolate_step(ctx, "talking");
	if (isolate_send(ctx, buf, sizeof(buf)) != 0 || isolate_send(ctx, buf, sizeof(buf)) != -EMSGSIZE)
		_exit(7);
}

static void test_death_and_excess(void **state)
{
	(void)state;
	struct isolate_result res;
	assert_int_equal(isolate_run(work_crashes, NULL, 5, 1024, &res), 0);
	assert_int_equal(res.end, ISOLATE_CRASHED);
	assert_int_equal(res.signal, SIGKILL);
	assert_string_equal(res.step, "crashing");
	isolate_result_free(&res);

	/* the child refuses to send past max_out and exits non-zero */
	assert_int_equal(isolate_run(work_too_much, NULL, 5, 100, &res), 0);
	assert_int_equal(res.end, ISOLATE_CRASHED);
	assert_int_equal(res.exit_code, 3);
	assert_int_equal(res.out.len, 64);
	isolate_result_free(&res);

	/* in the calling process (no child) both calls do nothing */
	isolate_step(NULL, "nothing %d", 1);
	assert_int_equal(isolate_send(NULL, "x", 1), 0);
}

/* What stdio holds when the child is forked is written once, by the
 * parent: the child's own buffer copy is never flushed. */
static void work_prints(struct isolate_ctx *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	fflush(stdout);
}

static void test_stdio_not_doubled(void **state)
{
	(void)state;
	char path[] = "/tmp/gpuready-isolate-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDOUT_FILENO) >= 0);
	printf("once\n"); /* buffered: stdout is a file now */
	struct isolate_result res;
	int r = isolate_run(work_prints, NULL, 5, 16, &res);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	assert_int_equal(r, 0);
	isolate_result_free(&res);
	char *got = tu_read_file(path, NULL);
	unlink(path);
	assert_non_null(got);
	assert_string_equal(got, "once\n");
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_comes_back),
		cmocka_unit_test(test_overrun_is_named),
		cmocka_unit_test(test_deadline_is_per_step),
		cmocka_unit_test(test_longer_step),
		cmocka_unit_test(test_death_and_excess),
		cmocka_unit_test(test_stdio_not_doubled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
