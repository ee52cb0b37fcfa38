/* Unit tests for loading the MPI backend module (bench/backend_mpi_load.c)
 * without mpirun and without MPI: a missing module, a file that is not a
 * library, a module without the entry point, one built for another ABI,
 * a good stand-in (tests/mpi/fake_module.c) found through
 * $GPUREADY_MPI_MODULE and next to the executable, and the default search
 * failing with the build hint. Failures must be messages, never crashes.
 * When Meson found MPI, the real gpuready-mpi.so is loaded too (libmpi
 * comes in, MPI is not started): name, version and device, then fini.
 *
 * Environment (tests/meson.build): FAKE_MPI_OK, FAKE_MPI_ABI,
 * FAKE_MPI_NOSYM (the stand-ins), REAL_MPI_MODULE (optional),
 * GPUREADY_SOURCE_DIR. backend_set_error is defined here and host_reduce
 * comes from src/bench/types.c, compiled in: the module
 * takes them from the program that loads it. */
#include "config.h"
#include "../unit/testutil.h"
#include "bench/backend.h"
#include "core/spawn.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void backend_set_error(struct backend *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->error, sizeof(b->error), fmt, ap);
	va_end(ap);
}

/* backend_mpi_create() with $GPUREADY_MPI_MODULE = module (NULL: unset);
 * returns its result, *err the message (caller frees). */
static int create_with(const char *module, struct backend **b, char **err)
{
	if (module)
		setenv("GPUREADY_MPI_MODULE", module, 1);
	else
		unsetenv("GPUREADY_MPI_MODULE");
	*b = NULL;
	*err = NULL;
	return backend_mpi_create(b, err);
}

static void assert_contains(const char *s, const char *part)
{
	if (!s || !strstr(s, part))
		fail_msg("\"%s\" does not contain \"%s\"", s ? s : "(null)", part);
}

static void test_missing_module(void **state)
{
	(void)state;
	struct backend *b;
	char *err;
	int r = create_with("/nonexistent/gpuready-mpi.so", &b, &err);
	assert_int_equal(r, -ENOENT);
	assert_null(b);
	assert_contains(err, "/nonexistent/gpuready-mpi.so");
	assert_contains(err, "No such file");
	assert_contains(err, "GPUREADY_MPI_MODULE");
	free(err);
}

static void test_not_a_library(void **state)
{
	(void)state;
	struct backend *b;
	char *err;
	char *path = xasprintf("%s/tests/mpi/run.sh", tu_source_dir());
	int r = create_with(path, &b, &err);
	assert_true(r < 0);
	assert_null(b);
	assert_contains(err, path);
	assert_contains(err, "built together with this gpuready");
	free(err);
	free(path);
}

static void test_no_entry_point(void **state)
{
	(void)state;
	struct backend *b;
	char *err;
	int r = create_with(getenv("FAKE_MPI_NOSYM"), &b, &err);
	assert_int_equal(r, -ENOSYS);
	assert_null(b);
	assert_contains(err, BACKEND_MPI_SYMBOL);
	assert_contains(err, "not a gpuready MPI module");
	free(err);
}

static void test_wrong_abi(void **state)
{
	(void)state;
	struct backend *b;
	char *err;
	int r = create_with(getenv("FAKE_MPI_ABI"), &b, &err);
	assert_int_equal(r, -EPROTO);
	assert_null(b);
	assert_contains(err, "ABI 999");
	free(err);
}

static void test_good_module(void **state)
{
	(void)state;
	struct backend *b;
	char *err;
	int r = create_with(getenv("FAKE_MPI_OK"), &b, &err);
	assert_int_equal(r, 0);
	assert_null(err);
	assert_non_null(b);
	assert_string_equal(b->ops->name, "fake-mpi");
	b->ops->fini(b);
}

/* The default search, run in a copy of this program (its own directory is
 * what counts): "ok" wants the stand-in found next to the executable,
 * "none" wants a failure naming that place and the build hint (or success,
 * where a real module is installed in the install directory). */
static int probe(const char *mode)
{
	struct backend *b;
	char *err;
	int r = create_with(NULL, &b, &err);
	if (r == 0) {
		int bad = !strcmp(mode, "ok") && strcmp(b->ops->name, "fake-mpi");
		b->ops->fini(b);
		return bad;
	}
	if (!strcmp(mode, "ok")) {
		fprintf(stderr, "probe: %s\n", err);
		free(err);
		return 1;
	}
	fprintf(stderr, "probe: %s\n", err);
	/* a build with MPI says its module is missing, not that MPI is */
	int bad = !strstr(err, "/gpuready-mpi.so") ||
		  !strstr(err, GPUREADY_HAVE_MPI_MODULE ? "built with MPI, but its module" : "libopenmpi-dev") ||
		  (GPUREADY_HAVE_MPI_MODULE && strstr(err, "built without MPI"));
	free(err);
	return bad;
}

/* Copies this executable into a fresh directory and runs it there. */
static void run_copy(const char *dir, const char *mode)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	struct strbuf img = STRBUF_INIT;
	char chunk[65536];
	size_t n;
	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		strbuf_add(&img, chunk, n);
	fclose(f);
	assert_true(img.len > 0);
	tu_write_bytes(dir, "probe", img.buf, img.len);
	strbuf_release(&img);
	char *exe = xasprintf("%s/probe", dir);
	assert_int_equal(chmod(exe, 0755), 0);
	const char *argv[] = { exe, "--probe", mode, NULL };
	struct spawn_result res;
	assert_int_equal(spawn_run(argv, NULL, 60000, &res), 0);
	if (res.exit_code != 0)
		fail_msg("%s --probe %s: exit %d, signal %d: %s", exe, mode, res.exit_code, res.signal,
			 res.err.len ? res.err.buf : "");
	spawn_result_free(&res);
	free(exe);
}

static void test_next_to_executable(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	run_copy(dir, "none");
	tu_symlink(dir, "gpuready-mpi.so", getenv("FAKE_MPI_OK"));
	run_copy(dir, "ok");
	tu_rmtree(dir);
	free(dir);
}

static void test_real_module(void **state)
{
	(void)state;
	const char *real = getenv("REAL_MPI_MODULE");
	struct backend_device d;
	struct backend *b;
	char *err;
	if (!real || !*real)
		skip();
	int r = create_with(real, &b, &err);
	if (r < 0)
		fail_msg("%s", err);
	assert_string_equal(b->ops->name, "mpi");
	const char *v = b->ops->version(b);
	assert_non_null(v);
	assert_null(strchr(v, '\n'));
	assert_true(strlen(v) > 0);
	if (!strncmp(v, "Open MPI", 8))
		assert_true(v[8] == ' ' && v[9] >= '1' && v[9] <= '9');
	b->ops->device(b, 0, &d);
	assert_int_equal(d.ordinal, -1);
	assert_string_equal(d.name, "host");
	assert_string_equal(d.bus_id, "");
	b->ops->abort(b);
	b->ops->fini(b); /* never started: no MPI call */
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--probe"))
		return probe(argv[2]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_module),
		cmocka_unit_test(test_not_a_library),
		cmocka_unit_test(test_no_entry_point),
		cmocka_unit_test(test_wrong_abi),
		cmocka_unit_test(test_good_module),
		cmocka_unit_test(test_next_to_executable),
		cmocka_unit_test(test_real_module),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
