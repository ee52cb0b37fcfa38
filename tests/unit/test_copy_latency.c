/* bench copy's latency tests, host_device_latency_sm and
 * device_to_device_latency_sm, through the engine (copy_engine_run, whose
 * child loads the fake libcuda.so.1 of tests/fakes from LD_LIBRARY_PATH;
 * the fake follows the chain the engine writes, so a chain set up wrong
 * faults, and times it at FAKE_CUDA_LATENCY_NS per hop;
 * tests/unit/test_copy_cuda.c tests that kernel itself): the configured
 * latencies in ns, N/A pairs, one GPU, no peer pair, -b below 2 MiB, a
 * GPU lost part-way. Each test sets the FAKE_CUDA_* variables, which the
 * child's cuInit reads. */
#define _GNU_SOURCE
#include "testutil.h"

#include "bench/copy/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fake's environment for n GPUs (NULL unsets). */
static void fake_env(int n, const char *latency, const char *peer, const char *lost_after)
{
	char devs[8];
	const char *names[] = { "FAKE_CUDA_LATENCY_NS", "FAKE_CUDA_PEER", "FAKE_CUDA_LOST_AFTER" };
	const char *values[] = { latency, peer, lost_after };
	for (int i = 0; i < 3; i++) {
		if (values[i])
			setenv(names[i], values[i], 1);
		else
			unsetenv(names[i]);
	}
	unsetenv("FAKE_CUDA_COPY_GBPS");
	unsetenv("FAKE_CUDA_OOM");
	unsetenv("FAKE_CUDA_LOST_CODE");
	unsetenv("FAKE_CUDA_LOST_DEVICE");
	snprintf(devs, sizeof(devs), "%d", n);
	setenv("FAKE_CUDA_DEVICES", devs, 1);
}

static struct copy_engine_out *engine_run(const char *tests, int size_mib)
{
	struct copy_plan *p = calloc(1, sizeof(*p));
	struct copy_engine_out *o = calloc(1, sizeof(*o));
	assert_non_null(p);
	assert_non_null(o);
	char *copy = strdup(tests);
	for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		p->tests[p->n_tests] = copy_test_find(t);
		assert_non_null(p->tests[p->n_tests]);
		p->n_tests++;
	}
	free(copy);
	p->size_mib = (uint64_t)size_mib;
	p->loop_count = 16;
	p->samples = 3;
	p->numa = -1;
	p->step_timeout_s = 60;
	assert_int_equal(copy_engine_run(p, o), 0);
	free(p);
	return o;
}

static void assert_ns(double got, double want)
{
	if (!(got >= want * 0.999 && got <= want * 1.01))
		fail_msg("%.3f ns, want %.3f", got, want);
}

/* Three GPUs, peer access between 0 and 1 only: the host row with each
 * GPU's figure, the pairs 0-1 and 1-0 at the p2p figure, the rest N/A
 * with the note; the buffers freed. */
static void test_engine(void **state)
{
	(void)state;
	fake_env(3, "host=800,host@2=1500,p2p=600,p2p@1=640", "0-1,1-0", NULL);
	struct copy_engine_out *o = engine_run("host_device_latency_sm,device_to_device_latency_sm", 4);
	assert_int_equal(o->n_tests, 2);
	struct copy_engine_test *h = &o->tests[0], *d = &o->tests[1];
	assert_int_equal(h->index, 32);
	assert_int_equal(h->status, COPY_RAN);
	assert_int_equal(h->rows, 1);
	assert_int_equal(h->cols, 3);
	assert_ns(h->value[0][0], 800);
	assert_ns(h->value[0][1], 800);
	assert_ns(h->value[0][2], 1500);
	assert_string_equal(h->message, "");
	assert_int_equal(d->index, 33);
	assert_int_equal(d->status, COPY_RAN);
	assert_int_equal(d->rows, 3);
	assert_ns(d->value[0][0 * 3 + 1], 600); /* GPU 0 chases GPU 1's memory */
	assert_ns(d->value[0][1 * 3 + 0], 640); /* GPU 1 chases GPU 0's: p2p@1 */
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 3; c++)
			if (!((r == 0 && c == 1) || (r == 1 && c == 0)))
				assert_true(isnan(d->value[0][r * 3 + c]));
	tu_assert_has(d->message, "N/A: 2 GPU pairs without peer access");
	free(o);
}

/* One GPU: the host test runs, the device test is waived (no pair); -b 1
 * (below the 2 MiB the chase needs): the host buffer is allocated apart,
 * and the note says so. */
static void test_engine_one_gpu(void **state)
{
	(void)state;
	fake_env(1, "host=900", NULL, NULL);
	struct copy_engine_out *o = engine_run("32,33", 1);
	assert_int_equal(o->tests[0].status, COPY_RAN);
	assert_ns(o->tests[0].value[0][0], 900);
	tu_assert_has(o->tests[0].message, "allocated apart (-b is below 2 MiB)");
	assert_int_equal(o->tests[1].status, COPY_WAIVED);
	tu_assert_has(o->tests[1].message, "one GPU: there is no GPU pair");
	free(o);
	fake_env(2, NULL, "none", NULL);
	o = engine_run("33", 512);
	assert_int_equal(o->tests[0].status, COPY_WAIVED);
	tu_assert_has(o->tests[0].message, "no GPU pair with peer access");
	free(o);
}

/* GPU 0 falls off the bus during the chase: the test errors naming the
 * GPU and the call. */
static void test_engine_lost(void **state)
{
	(void)state;
	fake_env(2, NULL, NULL, "60");
	struct copy_engine_out *o = engine_run("32", 4);
	assert_int_equal(o->tests[0].status, COPY_ERROR);
	tu_assert_has(o->tests[0].message, "GPU 0 (");
	tu_assert_has(o->tests[0].message, "CUDA_ERROR_UNKNOWN (999)");
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine),
		cmocka_unit_test(test_engine_one_gpu),
		cmocka_unit_test(test_engine_lost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
