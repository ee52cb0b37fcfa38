/* Unit tests for the fix planner's core (src/fix/): the unified diff
 * (checked by GNU patch(1), which must turn the old text into the new
 * one), the plan's last pass (files already right dropped, disruptive
 * remedies held, pending ones kept as pending, two remedies on one file
 * refused), applying inside a tree with backups and the audit log,
 * reverting byte for byte, refusing a file changed since, the backup
 * places, and the busy detection through /proc/PID/fd. */
#define _GNU_SOURCE
#include "testutil.h"
#include "fix/fix.h"
#include "fix/fix_int.h"
#include "core/root.h"
#include "core/spawn.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *diff_text(const char *a, bool a_exists, const char *b)
{
	struct strbuf sa = STRBUF_INIT, sb = STRBUF_INIT;
	strbuf_adds(&sa, a);
	strbuf_adds(&sb, b);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fix_diff("/etc/x.conf", &sa, a_exists, &sb, f);
	fclose(f);
	strbuf_release(&sa);
	strbuf_release(&sb);
	return buf;
}

/* patch(1) applied to a copy of a with our diff must give b. */
static void assert_patch_gives(const char *a, const char *b)
{
	char *dir = tu_mkdtemp(), *d = diff_text(a, true, b);
	tu_write(dir, "old", a);
	tu_write(dir, "p.diff", d);
	char *in = NULL, *out = NULL, *diff = NULL;
	assert_true(asprintf(&in, "%s/old", dir) > 0 && asprintf(&out, "%s/new", dir) > 0 &&
		    asprintf(&diff, "%s/p.diff", dir) > 0);
	struct spawn_result sr = { 0 };
	const char *const argv[] = { "patch", "-s", "-i", diff, "-o", out, in, NULL };
	assert_int_equal(spawn_run(argv, NULL, 30000, &sr), 0);
	assert_int_equal(sr.exit_code, 0);
	spawn_result_free(&sr);
	free(in);
	free(out);
	free(diff);
	char *path = NULL;
	assert_true(asprintf(&path, "%s/new", dir) > 0);
	size_t len = 0;
	char *got = tu_read_file(path, &len);
	assert_non_null(got);
	assert_int_equal(len, strlen(b));
	assert_memory_equal(got, b, len);
	free(got);
	free(path);
	free(d);
	tu_rmtree(dir);
	free(dir);
}

static void test_diff_exact(void **state)
{
	(void)state;
	char *d = diff_text("", false, "a\nb\n");
	assert_string_equal(d, "--- /dev/null\n+++ /etc/x.conf\n@@ -0,0 +1,2 @@\n+a\n+b\n");
	free(d);
	d = diff_text("a\nb\nc\n", true, "a\nB\nc\n");
	assert_string_equal(d, "--- /etc/x.conf\n+++ /etc/x.conf\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
	free(d);
	d = diff_text("same\n", true, "same\n");
	assert_string_equal(d, "");
	free(d);
	d = diff_text("x", true, "x\n");
	assert_string_equal(d, "--- /etc/x.conf\n+++ /etc/x.conf\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n");
	free(d);
}

static void test_diff_patch(void **state)
{
	(void)state;
	assert_patch_gives("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n",
			   "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\nY\n19\n20\n21\n");
	assert_patch_gives("a\nb\nc\n", "");
	assert_patch_gives("a\nb\n", "z\na\nb\nq\n");
	assert_patch_gives("# c\nnet.core.rmem_max = 1\nother = 2\n", "# c\nother = 2\nnet.core.rmem_max = 268435456\n");
	/* pseudo-random edits of a 60-line file */
	unsigned seed = 7;
	for (int round = 0; round < 25; round++) {
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		for (int i = 0; i < 60; i++) {
			seed = seed * 1103515245u + 12345u;
			int r = (int)((seed >> 16) % 10);
			strbuf_addf(&a, "line %d\n", i % 17);
			if (r == 0)
				continue;                       /* removed */
			if (r == 1)
				strbuf_addf(&b, "new %d\n", i); /* changed */
			else
				strbuf_addf(&b, "line %d\n", i % 17);
			if (r == 2)
				strbuf_addf(&b, "added %d\n", i);
		}
		assert_patch_gives(a.buf, b.buf);
		strbuf_release(&a);
		strbuf_release(&b);
	}
}

static void test_backup_path(void **state)
{
	(void)state;
	char *p = fix_backup_path("/etc/sysctl.d/90-gpuready.conf");
	assert_string_equal(p, "/etc/sysctl.d/90-gpuready.conf.gpuready-bak");
	free(p);
	p = fix_backup_path("/etc/network/interfaces.d/ens1");
	assert_string_equal(p, "/var/lib/gpuready/backup/etc/network/interfaces.d/ens1.gpuready-bak");
	free(p);
	p = fix_backup_path("/sys/class/net/ens1/mtu");
	assert_string_equal(p, "/var/lib/gpuready/backup/sys/class/net/ens1/mtu.gpuready-bak");
	free(p);
}

/* A plan of one remedy by hand: a new file, a changed file, a state file. */
static void make_plan(struct fix_plan *p, const struct root *root, bool disruptive)
{
	memset(p, 0, sizeof(*p));
	p->sysroot = true;
	p->n = 1;
	p->v = calloc(1, sizeof(*p->v));
	struct fix_remedy *r = &p->v[0];
	r->id = strdup("test");
	r->title = strdup("a test remedy");
	r->disruptive = disruptive;
	r->targets = calloc(1, sizeof(*r->targets));
	r->targets[0] = (struct fix_target){ strdup("rdma.sockbuf"), strdup("net.core.rmem_max") };
	r->n_targets = 1;
	r->files = calloc(2, sizeof(*r->files));
	r->n_files = 2;
	const char *paths[] = { "/etc/new.d/90-gpuready.conf", "/etc/old.conf" };
	for (int i = 0; i < 2; i++) {
		struct fix_file *f = &r->files[i];
		f->path = strdup(paths[i]);
		strbuf_init(&f->old);
		strbuf_init(&f->new);
		f->existed = root_read(root, f->path, 1 << 20, &f->old) == 0;
		f->old_mode = 0600;
		f->mode = 0644;
		strbuf_addf(&f->new, "new content %d\n", i);
	}
	r->cmds = calloc(1, sizeof(*r->cmds));
	r->n_cmds = 1;
	strv_add(&r->cmds[0].argv, "sysctl");
	r->cmds[0].sets_path = strdup("/proc/sys/net/core/rmem_max");
	r->cmds[0].sets_value = strdup("268435456\n");
	r->cmds[0].sets_len = strlen(r->cmds[0].sets_value);
}

static void test_apply_revert(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_write(dir, "etc/old.conf", "operator's\n");
	chmod(dir, 0755);
	char *old = NULL;
	assert_true(asprintf(&old, "%s/etc/old.conf", dir) > 0);
	chmod(old, 0600);
	tu_write(dir, "proc/sys/net/core/rmem_max", "212992\n");
	struct root *root;
	assert_int_equal(root_open(dir, &root), 0);
	struct fix_plan p;
	make_plan(&p, root, false);
	struct fix_result res = { 0 };
	assert_int_equal(fix_apply(root, &p, 1.7e9, &res), 0);
	assert_int_equal(res.applied, 1);
	assert_int_equal(res.failed, 0);
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(root_read(root, "/etc/old.conf", 1 << 20, &sb), 0);
	assert_string_equal(sb.buf, "new content 1\n");
	struct stat st;
	assert_int_equal(stat(old, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600); /* an existing file keeps its mode */
	assert_int_equal(root_read(root, "/etc/old.conf.gpuready-bak", 1 << 20, &sb), 0);
	assert_string_equal(sb.buf, "operator's\n");
	assert_int_equal(root_read(root, "/proc/sys/net/core/rmem_max", 1 << 20, &sb), 0);
	assert_string_equal(sb.buf, "268435456\n");
	assert_int_equal(root_read(root, FIX_LOG, 1 << 20, &sb), 0);
	assert_non_null(strstr(sb.buf, "\tapply\trdma.sockbuf\t/etc/old.conf\treplaced\tsha256:"));
	assert_non_null(strstr(sb.buf, "\t/etc/new.d/90-gpuready.conf\tcreated\t-\tsha256:"));
	fix_result_free(&res);

	/* a second apply of the same plan: the files changed since it was planned */
	assert_int_equal(fix_apply(root, &p, 1.7e9, &res), 0);
	assert_int_equal(res.failed, 1);
	fix_result_free(&res);
	fix_plan_free(&p);

	assert_int_equal(fix_revert(root, 1.7e9, &res), 0);
	assert_int_equal(res.failed, 0);
	fix_result_free(&res);
	assert_int_equal(root_read(root, "/etc/old.conf", 1 << 20, &sb), 0);
	assert_string_equal(sb.buf, "operator's\n");
	assert_false(root_exists(root, "/etc/old.conf.gpuready-bak"));
	assert_false(root_exists(root, "/etc/new.d")); /* the directory it made */
	assert_int_equal(root_read(root, "/proc/sys/net/core/rmem_max", 1 << 20, &sb), 0);
	assert_string_equal(sb.buf, "212992\n");
	assert_false(root_exists(root, "/var/lib/gpuready"));
	/* nothing left to revert */
	assert_int_equal(fix_revert(root, 1.7e9, &res), 0);
	assert_int_equal(res.applied, 0);
	fix_result_free(&res);
	strbuf_release(&sb);
	root_free(root);
	free(old);
	tu_rmtree(dir);
	free(dir);
}

static void test_revert_keeps_changed(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_mkdir(dir, "etc");
	struct root *root;
	assert_int_equal(root_open(dir, &root), 0);
	struct fix_plan p;
	make_plan(&p, root, false);
	struct fix_result res = { 0 };
	assert_int_equal(fix_apply(root, &p, 1.7e9, &res), 0);
	fix_result_free(&res);
	fix_plan_free(&p);
	tu_write(dir, "etc/new.d/90-gpuready.conf", "edited by the operator since\n");
	assert_int_equal(fix_revert(root, 1.7e9, &res), -EIO);
	assert_int_equal(res.failed, 1);
	fix_result_free(&res);
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(root_read(root, "/etc/new.d/90-gpuready.conf", 1 << 20, &sb), 0);
	assert_string_equal(sb.buf, "edited by the operator since\n");
	strbuf_release(&sb);
	root_free(root);
	tu_rmtree(dir);
	free(dir);
}

static void test_log_garbage(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_write(dir, "var/log/gpuready/fix.log", "garbage\n\t\t\t\n\n"
						  "t\tapply\tc\t/etc/a\tcreated\t-\tsha256:x\t-\n"
						  "t\trevert\t-\t-\tdone\t-\t-\t-\n"
						  "t\tapply\tc\t/etc/b\tcreated\t-\tsha256:y\t-\n");
	struct root *root;
	assert_int_equal(root_open(dir, &root), 0);
	struct fix_log_entry *v;
	size_t n;
	assert_int_equal(fix_log_read(root, &v, &n), 0);
	assert_int_equal(n, 1); /* only what came after the last revert */
	assert_string_equal(v[0].path, "/etc/b");
	fix_log_free(v, n);
	root_free(root);
	tu_rmtree(dir);
	free(dir);
}

static void test_busy(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_mkdir(dir, "proc/1/fd");
	tu_symlink(dir, "proc/1/fd/0", "/dev/null");
	tu_write(dir, "proc/1/comm", "init\n");
	struct root *root;
	assert_int_equal(root_open(dir, &root), 0);
	assert_null(fix_busy(root));
	tu_mkdir(dir, "proc/4242/fd");
	tu_symlink(dir, "proc/4242/fd/7", "/dev/nvidia3");
	tu_write(dir, "proc/4242/comm", "python3\n");
	root_free(root); /* a root caches what it listed */
	assert_int_equal(root_open(dir, &root), 0);
	char *b = fix_busy(root);
	assert_non_null(b);
	assert_string_equal(b, "pid 4242 (python3) holds /dev/nvidia3");
	free(b);
	root_free(root);
	tu_rmtree(dir);
	free(dir);
}

/* Reads dir/path into a string (NULL when absent). */
static char *slurp(const char *dir, const char *path)
{
	char *p = NULL;
	assert_true(asprintf(&p, "%s/%s", dir, path) > 0);
	char *s = tu_read_file(p, NULL);
	free(p);
	return s;
}

static void apply_once(const char *dir, struct fix_result *res)
{
	struct root *root;
	assert_int_equal(root_open(dir, &root), 0);
	struct fix_plan p;
	make_plan(&p, root, false);
	memset(res, 0, sizeof(*res));
	assert_int_equal(fix_apply(root, &p, 1.7e9, res), 0);
	fix_plan_free(&p);
	root_free(root);
}

static int revert_once(const char *dir, struct fix_result *res)
{
	struct root *root;
	assert_int_equal(root_open(dir, &root), 0);
	memset(res, 0, sizeof(*res));
	int r = fix_revert(root, 1.7e9, res);
	root_free(root);
	return r;
}

/* A backup gpuready did not write is never overwritten nor restored. */
static void test_foreign_backup(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_write(dir, "etc/old.conf", "operator's\n");
	tu_write(dir, "etc/old.conf.gpuready-bak", "STALE\n");
	tu_write(dir, "proc/sys/net/core/rmem_max", "212992\n");
	struct fix_result res;
	apply_once(dir, &res);
	assert_int_equal(res.failed, 1);
	char *s = slurp(dir, "etc/old.conf");
	assert_string_equal(s, "operator's\n");
	free(s);
	fix_result_free(&res);
	tu_rmtree(dir);
	free(dir);
}

/* Edited after --apply: revert keeps the operator's edit and says so; a
 * second revert, once the edit is undone, finishes the job. */
static void test_revert_edited_then_retry(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_write(dir, "etc/old.conf", "operator's\n");
	tu_write(dir, "proc/sys/net/core/rmem_max", "212992\n");
	struct fix_result res;
	apply_once(dir, &res);
	assert_int_equal(res.failed, 0);
	fix_result_free(&res);
	tu_write(dir, "etc/old.conf", "new content 1\nedited\n");
	assert_int_equal(revert_once(dir, &res), -EIO);
	fix_result_free(&res);
	char *s = slurp(dir, "etc/old.conf");
	assert_string_equal(s, "new content 1\nedited\n");
	free(s);
	tu_write(dir, "etc/old.conf", "new content 1\n");
	assert_int_equal(revert_once(dir, &res), 0); /* the incomplete revert runs again */
	assert_int_equal(res.failed, 0);
	fix_result_free(&res);
	s = slurp(dir, "etc/old.conf");
	assert_string_equal(s, "operator's\n");
	free(s);
	assert_null(slurp(dir, "etc/old.conf.gpuready-bak"));
	tu_rmtree(dir);
	free(dir);
}

/* Applied twice (a file created, then rewritten; another replaced twice),
 * reverted once: the tree as it was, no backup left. */
static void test_twice_then_revert(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_write(dir, "etc/old.conf", "operator's\n");
	tu_write(dir, "proc/sys/net/core/rmem_max", "212992\n");
	struct fix_result res;
	apply_once(dir, &res);
	assert_int_equal(res.failed, 0);
	fix_result_free(&res);
	struct root *root;
	assert_int_equal(root_open(dir, &root), 0);
	struct fix_plan p;
	make_plan(&p, root, false);
	for (size_t i = 0; i < p.v[0].n_files; i++) {
		strbuf_reset(&p.v[0].files[i].new);
		strbuf_addf(&p.v[0].files[i].new, "second version %zu\n", i);
	}
	memset(&res, 0, sizeof(res));
	assert_int_equal(fix_apply(root, &p, 1.7e9, &res), 0);
	assert_int_equal(res.failed, 0);
	fix_result_free(&res);
	fix_plan_free(&p);
	root_free(root);
	char *s = slurp(dir, "etc/new.d/90-gpuready.conf");
	assert_string_equal(s, "second version 0\n");
	free(s);
	assert_null(slurp(dir, "etc/new.d/90-gpuready.conf.gpuready-bak")); /* gpuready's own file: no backup */
	assert_int_equal(revert_once(dir, &res), 0);
	fix_result_free(&res);
	assert_null(slurp(dir, "etc/new.d/90-gpuready.conf"));
	assert_null(slurp(dir, "etc/old.conf.gpuready-bak"));
	s = slurp(dir, "etc/old.conf");
	assert_string_equal(s, "operator's\n");
	free(s);
	s = slurp(dir, "proc/sys/net/core/rmem_max");
	assert_string_equal(s, "212992\n");
	free(s);
	tu_rmtree(dir);
	free(dir);
}

/* A damaged or hostile log: revert acts on nothing outside what gpuready
 * writes, and never on a backup it does not name itself. */
static void test_hostile_log(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_write(dir, "bin/sh", "keep me\n");
	tu_write(dir, "etc/hostname", "host\n");
	tu_write(dir, "tmp/evil", "evil\n");
	tu_write(dir, "var/log/gpuready/fix.log",
		 "t\tapply\tx\t/bin/sh\tcreated\t-\tsha256:0\t-\n"
		 "t\tapply\tx\t/etc/hostname\treplaced\tsha256:0\tsha256:1\t/tmp/evil\n"
		 "t\tapply\tx\t/etc/../bin\tmkdir\t-\t-\t-\n");
	struct fix_result res;
	assert_int_equal(revert_once(dir, &res), -EIO);
	assert_int_equal(res.failed, 2);
	fix_result_free(&res);
	char *s = slurp(dir, "bin/sh");
	assert_string_equal(s, "keep me\n");
	free(s);
	s = slurp(dir, "etc/hostname");
	assert_string_equal(s, "host\n");
	free(s);
	s = slurp(dir, "tmp/evil");
	assert_string_equal(s, "evil\n");
	free(s);
	tu_rmtree(dir);
	free(dir);
}

/* A link planted where a directory was: nothing is written through it. */
static void test_no_escape(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *out = tu_mkdtemp();
	tu_write(dir, "proc/sys/net/core/rmem_max", "212992\n");
	struct root *root;
	assert_int_equal(root_open(dir, &root), 0);
	struct fix_plan p;
	make_plan(&p, root, false);
	tu_symlink(dir, "etc", out); /* absolute: outside the tree */
	struct fix_result res = { 0 };
	assert_int_equal(fix_apply(root, &p, 1.7e9, &res), 0);
	fix_result_free(&res);
	fix_plan_free(&p);
	root_free(root);
	char *s = slurp(out, "new.d/90-gpuready.conf");
	assert_null(s);
	s = slurp(out, "old.conf");
	assert_null(s);
	tu_rmtree(dir);
	tu_rmtree(out);
	free(dir);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_exact),     cmocka_unit_test(test_diff_patch),
		cmocka_unit_test(test_backup_path),    cmocka_unit_test(test_apply_revert),
		cmocka_unit_test(test_revert_keeps_changed), cmocka_unit_test(test_log_garbage),
		cmocka_unit_test(test_busy),		cmocka_unit_test(test_foreign_backup),
		cmocka_unit_test(test_revert_edited_then_retry), cmocka_unit_test(test_twice_then_revert),
		cmocka_unit_test(test_hostile_log),	cmocka_unit_test(test_no_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
