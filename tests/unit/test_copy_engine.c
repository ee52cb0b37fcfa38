/* bench copy's engine (copy_engine_run) against the fake libcuda.so.1 of
 * tests/fakes, for what the command's output cannot show: the figures of
 * a test that errored part-way, and what a failure leaves behind for the
 * next test. Each test sets the FAKE_CUDA_* variables, which the child's
 * cuInit reads. */
#define _GNU_SOURCE
#include "testutil.h"

#include "bench/copy/engine.h"
#include "bench/copy/node.h"
#include "inventory/copy_bw.h"
#include "inventory/inventory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fake_env(const char *devices, const char *rates, const char *lost_device, const char *lost_after)
{
	const char *names[] = { "FAKE_CUDA_DEVICES", "FAKE_CUDA_COPY_GBPS", "FAKE_CUDA_LOST_DEVICE",
				"FAKE_CUDA_LOST_AFTER" };
	const char *values[] = { devices, rates, lost_device, lost_after };
	for (int i = 0; i < 4; i++) {
		if (values[i])
			setenv(names[i], values[i], 1);
		else
			unsetenv(names[i]);
	}
	unsetenv("FAKE_CUDA_PEER");
	unsetenv("FAKE_CUDA_OOM");
	unsetenv("FAKE_CUDA_CORRUPT");
	unsetenv("FAKE_CUDA_SHARED_HOST");
}

/* check --bench's measurement (copy_bw_measure) when the copies of GPUs 1
 * and 2 of three change the data: each of them fails with its own copy
 * named (not the test's first), GPU 0 keeps its figures. */
static void test_bench_bad_data_per_gpu(void **state)
{
	(void)state;
	struct inventory inv;
	struct copy_bw_info *bw = NULL;
	memset(&inv, 0, sizeof(inv));
	fake_env("3", "h2d=50,d2h=50", NULL, NULL);
	setenv("FAKE_CUDA_CORRUPT", "1,2", 1);
	copy_bw_measure(&inv, &bw);
	unsetenv("FAKE_CUDA_CORRUPT");
	assert_non_null(bw);
	assert_null(bw->error);
	assert_int_equal(bw->n, 3);
	assert_false(bw->v[0].bad_data);
	assert_true(fabs(bw->v[0].h2d - 50) < 0.05 && fabs(bw->v[0].d2h - 50) < 0.05);
	assert_true(bw->v[1].bad_data);
	if (!strstr(bw->v[1].err, "the data check failed: the copy from host memory to GPU 1 (0000:29:00.0)"))
		fail_msg("GPU 1: %s", bw->v[1].err);
	assert_true(bw->v[2].bad_data);
	if (!strstr(bw->v[2].err, "the data check failed: the copy from host memory to GPU 2 (0000:3a:00.0)"))
		fail_msg("GPU 2: %s", bw->v[2].err);
	free(bw->v);
	free(bw);
}

static struct copy_engine_out *engine_run(const char *a, const char *b, int samples, bool verify)
{
	struct copy_plan *p = calloc(1, sizeof(*p));
	struct copy_engine_out *o = calloc(1, sizeof(*o));
	assert_non_null(p);
	assert_non_null(o);
	p->tests[p->n_tests++] = copy_test_find(a);
	p->tests[p->n_tests++] = copy_test_find(b);
	assert_non_null(p->tests[0]);
	assert_non_null(p->tests[1]);
	p->size_mib = 4;
	p->loop_count = 16;
	p->samples = samples;
	p->numa = -1;
	p->verify = verify;
	p->step_timeout_s = 60;
	assert_int_equal(copy_engine_run(p, o), 0);
	free(p);
	return o;
}

/* GPU 1 is lost while host_to_all_memcpy_ce queues its first sample:
 * GPU 0's stream already holds the spin kernel and its warm-up copies.
 * Destroying that stream does not wait (the fake, like the driver, runs
 * its work later), so unless the engine releases and drains it, those
 * copies run inside the next test's timed window on the same link and
 * GPU 0's host_to_device figure (one sample, no median to hide it) drops
 * from 50 to 47 GB/s. Without the data check (-s): its cuCtxSynchronize
 * before the next measurement would wait for the stale work, 10 s on the
 * spin kernel's timeout, and hide the skew. */
static void test_failure_leaves_nothing_queued(void **state)
{
	(void)state;
	fake_env("2", "h2d=50,d2h=50", "1", "14");
	struct copy_engine_out *o = engine_run("host_to_all_memcpy_ce", "host_to_device_memcpy_ce", 1, false);
	assert_int_equal(o->n_tests, 2);
	assert_int_equal(o->tests[0].status, COPY_ERROR);
	/* the intended moment: a warm-up copy on GPU 1, after GPU 0's hold */
	if (!strstr(o->tests[0].message, "GPU 1 (0000:29:00.0): cuMemcpyAsync"))
		fail_msg("GPU 1 was lost elsewhere: %s", o->tests[0].message);
	assert_int_equal(o->tests[1].status, COPY_ERROR); /* GPU 1 is gone */
	double gpu0 = o->tests[1].value[0][0];
	print_message("GPU 0 after the failure: %.2f GB/s\n", gpu0);
	if (!(fabs(gpu0 - 50.0) < 0.05))
		fail_msg("GPU 0's host_to_device figure %.2f GB/s, want 50: the failed test's copies ran in it", gpu0);
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failure_leaves_nothing_queued),
		cmocka_unit_test(test_bench_bad_data_per_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
