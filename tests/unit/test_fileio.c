/* Unit tests for core/fileio: file_write_atomic() writes the target or
 * leaves it as it was, never leaves its temporary file behind (an error,
 * SIGINT, SIGTERM), and never renames something swapped in for the
 * temporary file over the target.
 *
 * The render callback runs while the temporary file exists: the tests use
 * it to act in the middle of a write, as another process or a signal
 * would. */
#define _GNU_SOURCE
#include "testutil.h"
#include "core/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* How many entries of dir are not "." and "..". */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	for (struct dirent *de; (de = readdir(d));)
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* The one entry of dir whose name contains ".tmp.", malloc'd, or NULL. */
static char *temp_in(const char *dir)
{
	DIR *d = opendir(dir);
	char *found = NULL;
	for (struct dirent *de; d && (de = readdir(d));)
		if (strstr(de->d_name, ".tmp.") && !found)
			assert_true(asprintf(&found, "%s/%s", dir, de->d_name) > 0);
	if (d)
		closedir(d);
	return found;
}

static char *path_in(const char *dir, const char *name)
{
	char *p;
	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static int render_text(FILE *f, void *ctx)
{
	return fputs(ctx, f) < 0 ? -EIO : 0;
}

static void test_writes_target(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *target = path_in(dir, "out.prom");
	assert_int_equal(file_write_atomic(target, render_text, "new\n"), 0);
	char *got = tu_read_file(target, NULL);
	assert_string_equal(got, "new\n");
	struct stat st;
	assert_int_equal(lstat(target, &st), 0);
	mode_t mask = umask(0);
	umask(mask);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0644 & ~mask);
	assert_int_equal(entries(dir), 1);
	free(got);
	free(target);
	tu_rmtree(dir);
	free(dir);
}

/* A path without a directory is in the working directory. */
static void test_relative_name(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), cwd[4096];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	int r = file_write_atomic("plain.json", render_text, "{}\n");
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(r, 0);
	char *target = path_in(dir, "plain.json"), *got = tu_read_file(target, NULL);
	assert_string_equal(got, "{}\n");
	assert_int_equal(entries(dir), 1);
	free(got);
	free(target);
	tu_rmtree(dir);
	free(dir);
}

static int render_fails(FILE *f, void *ctx)
{
	(void)ctx;
	fputs("half", f);
	return -EPROTO;
}

/* render's error comes back; the old target and nothing else stay. */
static void test_error_leaves_nothing(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *target = path_in(dir, "r.json");
	tu_write(dir, "r.json", "old\n");
	assert_int_equal(file_write_atomic(target, render_fails, NULL), -EPROTO);
	char *got = tu_read_file(target, NULL);
	assert_string_equal(got, "old\n");
	assert_int_equal(entries(dir), 1);
	char *missing = path_in(dir, "no/such/dir/r.json");
	assert_int_equal(file_write_atomic(missing, render_text, "x"), -ENOENT);
	free(missing);
	free(got);
	free(target);
	tu_rmtree(dir);
	free(dir);
}

/* What another user of the directory does during the write: replace the
 * temporary file with a link to a file of root's. */
static int render_swaps(FILE *f, void *ctx)
{
	const char *dir = ctx;
	char *tmp = temp_in(dir), *victim = path_in(dir, "victim");
	assert_non_null(tmp);
	assert_int_equal(unlink(tmp), 0);
	assert_int_equal(symlink(victim, tmp), 0);
	free(tmp);
	free(victim);
	return fputs("attacker's choice\n", f) < 0 ? -EIO : 0;
}

static void test_swapped_temp_not_renamed(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *target = path_in(dir, "m.prom"), *victim = path_in(dir, "victim");
	tu_write(dir, "victim", "precious\n");
	tu_write(dir, "m.prom", "old\n");
	assert_int_equal(file_write_atomic(target, render_swaps, dir), -ELOOP);
	char *v = tu_read_file(victim, NULL), *t = tu_read_file(target, NULL);
	assert_string_equal(v, "precious\n");
	assert_string_equal(t, "old\n");
	struct stat st;
	assert_int_equal(lstat(target, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(entries(dir), 2); /* victim, m.prom: the planted link is gone too */
	free(v);
	free(t);
	free(victim);
	free(target);
	tu_rmtree(dir);
	free(dir);
}

static int render_raises(FILE *f, void *ctx)
{
	fputs("interrupted", f);
	raise(*(const int *)ctx);
	return 0;
}

/* A child writes and gets sig in the middle: it dies by sig, and neither
 * the temporary file nor a target is left. */
static void interrupted(int sig)
{
	char *dir = tu_mkdtemp(), *target = path_in(dir, "b.json");
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r = file_write_atomic(target, render_raises, &sig);
		_exit(r == 0 ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), sig);
	assert_int_equal(entries(dir), 0);
	free(target);
	tu_rmtree(dir);
	free(dir);
}

static void test_sigterm_removes_temp(void **state)
{
	(void)state;
	interrupted(SIGTERM);
}

static void test_sigint_removes_temp(void **state)
{
	(void)state;
	interrupted(SIGINT);
}

static int render_checks_pending(FILE *f, void *ctx)
{
	const char *dir = ctx;
	char *before = temp_in(dir);
	file_pending_remove();
	char *after = temp_in(dir);
	int had = before != NULL, gone = after == NULL;
	free(before);
	free(after);
	return fputs("x", f) < 0 || !had || !gone ? -EIO : 0;
}

/* file_pending_remove() unlinks the file being written (the write itself
 * then fails at the rename). */
static void test_pending_remove(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *target = path_in(dir, "n.json");
	assert_int_equal(file_write_atomic(target, render_checks_pending, dir), -ENOENT);
	assert_int_equal(entries(dir), 0);
	free(target);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writes_target),
		cmocka_unit_test(test_relative_name),
		cmocka_unit_test(test_error_leaves_nothing),
		cmocka_unit_test(test_swapped_temp_not_renamed),
		cmocka_unit_test(test_sigterm_removes_temp),
		cmocka_unit_test(test_sigint_removes_temp),
		cmocka_unit_test(test_pending_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
