/* The nccl-conf and memlock remedies (src/fix/remedy_nccl.c,
 * remedy_memlock.c): small trees written in a temporary directory, the
 * inventory read from them, the NCCL checks run on it (the findings of
 * checks that need RDMA hardware added by hand with their messages), and
 * the plan inspected: which files change how, and which findings stay
 * manual with what reason. */
#include "testutil.h"
#include "checks/check.h"
#include "checks/expect.h"
#include "core/report.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "fix/fix.h"

#include <stdlib.h>
#include <string.h>

extern const struct fix_def fix_memlock;

struct run {
	char *dir;
	struct root *root;
	struct inventory *inv;
	struct report rep;
	struct fix_plan plan;
};

static const char *const nccl_checks[] = { "rdma.nccl_debug", "rdma.nccl_names", "rdma.nccl_ranges",
					   "rdma.nccl_ib_disable" };

/* Reads the tree, runs the NCCL checks that need no RDMA hardware. */
static void load(struct run *r)
{
	assert_int_equal(root_open(r->dir, &r->root), 0);
	assert_int_equal(inventory_load(r->root, &(struct load_opts){ .parts = INV_FILES }, &r->inv), 0);
	report_init(&r->rep, "test", "host", r->dir);
	struct strv only = STRV_INIT, skip = STRV_INIT;
	for (size_t i = 0; i < sizeof(nccl_checks) / sizeof(*nccl_checks); i++)
		strv_add(&only, nccl_checks[i]);
	struct site_expect e = { .tos = 106 };
	struct check_select sel = { .only = &only, .skip = &skip };
	assert_int_equal(checks_run(NULL, r->inv, &e, &sel, &r->rep), 0);
	strv_free(&only);
}

static void plan(struct run *r)
{
	struct site_expect e = { .tos = 106 };
	struct strv none = STRV_INIT;
	struct check_select sel = { .only = &none, .skip = &none };
	struct fix_opts o = { 0 };
	char *err = NULL;
	assert_int_equal(fix_plan_make(r->root, r->inv, &r->rep, &e, &sel, &o, &r->plan, &err), 0);
	free(err);
}

static void done(struct run *r)
{
	fix_plan_free(&r->plan);
	report_free(&r->rep);
	inventory_free(r->inv);
	root_free(r->root);
	tu_rmtree(r->dir);
	free(r->dir);
}

static const struct fix_remedy *remedy(const struct run *r, const char *id)
{
	for (size_t i = 0; i < r->plan.n; i++)
		if (!strcmp(r->plan.v[i].id, id))
			return &r->plan.v[i];
	return NULL;
}

/* The new content of path in remedy id; fails when it does not change it. */
static const char *new_of(const struct run *r, const char *id, const char *path)
{
	const struct fix_remedy *m = remedy(r, id);
	if (!m)
		fail_msg("no remedy %s", id);
	for (size_t i = 0; i < m->n_files; i++)
		if (!strcmp(m->files[i].path, path))
			return m->files[i].new.buf;
	fail_msg("remedy %s does not change %s", id, path);
	return NULL;
}

static bool changes(const struct run *r, const char *path)
{
	for (size_t i = 0; i < r->plan.n; i++)
		for (size_t k = 0; k < r->plan.v[i].n_files; k++)
			if (!strcmp(r->plan.v[i].files[k].path, path))
				return true;
	return false;
}

static bool answers(const struct run *r, const char *id, const char *check, const char *subject)
{
	const struct fix_remedy *m = remedy(r, id);
	for (size_t t = 0; m && t < m->n_targets; t++)
		if (!strcmp(m->targets[t].check_id, check) && !strcmp(m->targets[t].subject, subject))
			return true;
	return false;
}

/* The reason the finding stays manual (fails when it is not manual). */
static const char *manual_why(const struct run *r, const char *check, const char *subject)
{
	for (size_t i = 0; i < r->plan.n_manual; i++)
		if (!strcmp(r->plan.manual[i].check_id, check) && !strcmp(r->plan.manual[i].subject, subject))
			return r->plan.manual[i].why ? r->plan.manual[i].why : "";
	fail_msg("%s %s is not a manual step", check, subject);
	return NULL;
}

static void add(struct run *r, const char *id, enum status st, const char *subject, const char *msg)
{
	report_add(&r->rep, id, "test", st, subject, "%s", msg);
}

static struct run *tree(void)
{
	struct run *r = calloc(1, sizeof(*r));
	r->dir = tu_mkdtemp();
	return r;
}

static void finish(struct run *r)
{
	done(r);
	free(r);
}

/* ---- nccl-conf ---- */

static void test_debug_and_names(void **state)
{
	(void)state;
	struct run *r = tree();
	tu_write(r->dir, "etc/profile.d/nccl.sh", "# NCCL\nif [ -d /opt/x ]; then\n  X=1\nfi\ncase \"$A\" in\n  a) B=1 ;;\nesac\n"
						  "f() {\n  echo done\n}\nexport NCCL_DEBUG=INFO\nexport NCCL_IB_GDR_LEVEL=PXB\n"
						  "NCCL_SOKCET_IFNAME=eth0\nexport NCCL_SOKCET_IFNAME\n"
						  "export NCCL_DEBUG_SUBSYS=INIT\n");
	tu_write(r->dir, "etc/nccl.conf", "# site\nNCCL_DEBUG=TRACE\nNCCL_IB_SL=3\n");
	load(r);
	plan(r);
	const char *sh = new_of(r, "nccl-conf", "/etc/profile.d/nccl.sh");
	/* after closed compound commands a line stands alone again */
	assert_string_equal(sh, "# NCCL\nif [ -d /opt/x ]; then\n  X=1\nfi\ncase \"$A\" in\n  a) B=1 ;;\nesac\n"
				"f() {\n  echo done\n}\n"
				"# disabled by gpuready fix (rdma.nccl_debug): export NCCL_DEBUG=INFO\n"
				"# disabled by gpuready fix (rdma.nccl_names): export NCCL_IB_GDR_LEVEL=PXB\n"
				"# disabled by gpuready fix (rdma.nccl_names): NCCL_SOKCET_IFNAME=eth0\n"
				"export NCCL_SOKCET_IFNAME\n"
				"export NCCL_DEBUG_SUBSYS=INIT\n");
	/* the shadowed TRACE goes too, the other lines stay; the rename lands in /etc/nccl.conf */
	assert_string_equal(new_of(r, "nccl-conf", "/etc/nccl.conf"), "# site\nNCCL_IB_SL=3\nNCCL_NET_GDR_LEVEL=PXB\n");
	assert_true(answers(r, "nccl-conf", "rdma.nccl_debug", "NCCL_DEBUG"));
	assert_true(answers(r, "nccl-conf", "rdma.nccl_names", "NCCL_IB_GDR_LEVEL"));
	assert_true(answers(r, "nccl-conf", "rdma.nccl_names", "NCCL_SOKCET_IFNAME"));
	/* one remedy writes both files, once each */
	assert_int_equal(remedy(r, "nccl-conf")->n_files, 2);
	const struct strv *notes = &remedy(r, "nccl-conf")->notes;
	bool said = false;
	for (size_t i = 0; i < notes->n; i++)
		said |= strstr(notes->v[i], "NCCL_SOCKET_IFNAME=eth0") != NULL;
	assert_true(said);
	finish(r);
}

static void test_not_plain(void **state)
{
	(void)state;
	struct run *r = tree();
	tu_write(r->dir, "etc/profile.d/a.sh", "if [ -d /opt ]; then\n  export NCCL_DEBUG=INFO\nfi\n");
	tu_write(r->dir, "etc/profile.d/b.sh", "export NCCL_IB_DISABLE=1; export X=1\n");
	tu_write(r->dir, "etc/profile.d/c.sh", "export NCCL_IB_TIMEOUT=\"$T\"\n");
	tu_write(r->dir, "etc/environment", "NCCL_IB_RETRY_CNT=9\n");
	load(r);
	plan(r);
	tu_assert_has(manual_why(r, "rdma.nccl_debug", "NCCL_DEBUG"), "/etc/profile.d/a.sh:2 is inside a compound");
	tu_assert_has(manual_why(r, "rdma.nccl_ib_disable", "NCCL_IB_DISABLE"), "/etc/profile.d/b.sh:1 is not a plain");
	tu_assert_has(manual_why(r, "rdma.nccl_ranges", "NCCL_IB_RETRY_CNT"), "/etc/environment:1");
	assert_null(remedy(r, "nccl-conf"));
	assert_false(changes(r, "/etc/profile.d/a.sh"));
	finish(r);
}

static void test_environment(void **state)
{
	(void)state;
	struct run *r = tree();
	tu_write(r->dir, ".gpuready/environ", "NCCL_DEBUG=INFO\nNCCL_IB_TIMEOUT=0\n");
	tu_write(r->dir, "etc/profile.d/nccl.sh", "export NCCL_DEBUG=INFO\n");
	load(r);
	plan(r);
	const char *why = manual_why(r, "rdma.nccl_debug", "NCCL_DEBUG");
	tu_assert_has(why, "recorded environment");
	tu_assert_has(why, "/etc/profile.d/nccl.sh:1");
	tu_assert_has(manual_why(r, "rdma.nccl_ranges", "NCCL_IB_TIMEOUT"), "recorded environment");
	assert_null(remedy(r, "nccl-conf"));
	finish(r);
}

/* What NCCL reads cannot all be read: nothing is changed */
static void test_unknown_files(void **state)
{
	(void)state;
	struct run *r = tree();
	tu_write(r->dir, "etc/profile.d/nccl.sh", "export NCCL_DEBUG=INFO\n");
	tu_write(r->dir, "etc/nccl.conf", "NCCL_IB_SL=3\n");
	tu_write(r->dir, ".gpuready/unreadable", "EACCES /etc/nccl.conf\n");
	load(r);
	plan(r);
	tu_assert_has(manual_why(r, "rdma.nccl_debug", "NCCL_DEBUG"), "/etc/nccl.conf (");
	assert_false(changes(r, "/etc/profile.d/nccl.sh"));
	finish(r);

	r = tree();
	tu_write(r->dir, "etc/profile.d/nccl.sh", "export NCCL_DEBUG=INFO\nexport NCCL_CONF_FILE=site.conf\n");
	load(r);
	plan(r);
	tu_assert_has(manual_why(r, "rdma.nccl_debug", "NCCL_DEBUG"), "NCCL_CONF_FILE=site.conf is relative");
	assert_null(remedy(r, "nccl-conf"));
	finish(r);
}

static void test_user_conf_and_ranges(void **state)
{
	(void)state;
	struct run *r = tree();
	tu_write(r->dir, "root/.nccl.conf", "# mine\nNCCL_IB_RETRY_CNT=9\nNCCL_IB_SL=3\n");
	tu_write(r->dir, "etc/nccl.conf", "NCCL_IB_TIMEOUT=0\nNCCL_IB_RETRY_CNT=7\nNCCL_IB_DISABLE=1");
	load(r);
	plan(r);
	assert_string_equal(new_of(r, "nccl-conf", "/root/.nccl.conf"), "# mine\nNCCL_IB_SL=3\n");
	/* every definition goes, so NCCL's default applies; a missing final newline stays missing */
	assert_string_equal(new_of(r, "nccl-conf", "/etc/nccl.conf"), "");
	assert_true(answers(r, "nccl-conf", "rdma.nccl_ranges", "NCCL_IB_RETRY_CNT"));
	assert_true(answers(r, "nccl-conf", "rdma.nccl_ranges", "NCCL_IB_TIMEOUT"));
	assert_true(answers(r, "nccl-conf", "rdma.nccl_ib_disable", "NCCL_IB_DISABLE"));
	finish(r);
}

static void test_rename_declined(void **state)
{
	(void)state;
	struct run *r = tree();
	tu_write(r->dir, "etc/nccl.conf", "NCCL_IB_GDR_LEVEL=PXB\nNCCL_NET_GDR_LEVEL=SYS\n");
	load(r);
	plan(r);
	tu_assert_has(manual_why(r, "rdma.nccl_names", "NCCL_IB_GDR_LEVEL"), "NCCL_NET_GDR_LEVEL is already set");
	done(r);
	free(r);
	r = tree();
	tu_write(r->dir, "etc/nccl.conf", "NCCL_IB_GDR_LEVEL=pxb\n");
	load(r);
	plan(r);
	tu_assert_has(manual_why(r, "rdma.nccl_names", "NCCL_IB_GDR_LEVEL"), "not a path type");
	finish(r);
}

#define TC_FAIL "not set (NCCL default 0): ToS 0, expected DSCP 26: NCCL traffic is not in the lossless class"

static void test_ib_tc(void **state)
{
	(void)state;
	struct run *r = tree();
	load(r);
	add(r, "rdma.nccl_ib_tc", STATUS_FAIL, "NCCL_IB_TC", TC_FAIL);
	plan(r);
	const char *conf = new_of(r, "nccl-conf", "/etc/nccl.conf");
	tu_assert_has(conf, "# Written by `gpuready fix` for rdma.nccl_ib_tc");
	tu_assert_has(conf, "\nNCCL_IB_TC=106\n");
	finish(r);

	/* the first definition in /etc/nccl.conf is the one NCCL reads: replaced there */
	r = tree();
	tu_write(r->dir, "etc/nccl.conf", "NCCL_IB_SL=3\nNCCL_IB_TC=0\nNCCL_IB_TC=5\n");
	load(r);
	add(r, "rdma.nccl_ib_tc", STATUS_FAIL, "NCCL_IB_TC", TC_FAIL);
	plan(r);
	assert_string_equal(new_of(r, "nccl-conf", "/etc/nccl.conf"), "NCCL_IB_SL=3\nNCCL_IB_TC=106\nNCCL_IB_TC=5\n");
	finish(r);

	/* a login script's export would override /etc/nccl.conf */
	r = tree();
	tu_write(r->dir, "etc/profile.d/x.sh", "export NCCL_IB_TC=0\n");
	load(r);
	add(r, "rdma.nccl_ib_tc", STATUS_FAIL, "NCCL_IB_TC", TC_FAIL);
	plan(r);
	tu_assert_has(manual_why(r, "rdma.nccl_ib_tc", "NCCL_IB_TC"), "/etc/profile.d/x.sh:1, which NCCL reads before");
	assert_false(changes(r, "/etc/nccl.conf"));
	finish(r);
}

/* ---- memlock ---- */

#define MEMLOCK_WARN "no memlock line for all users in limits.conf: non-root jobs get the kernel default"

static void test_memlock(void **state)
{
	(void)state;
	struct run *r = tree();
	tu_write(r->dir, "etc/security/limits.conf", "# nothing\n");
	tu_write(r->dir, "lib/systemd/system/slurmd.service", "[Service]\nExecStart=/usr/sbin/slurmd\n");
	tu_symlink(r->dir, "etc/systemd/system/multi-user.target.wants/slurmd.service", "/lib/systemd/system/slurmd.service");
	load(r);
	add(r, "rdma.memlock", STATUS_WARN, "memlock", MEMLOCK_WARN);
	plan(r);
	const char *l = new_of(r, "memlock", "/etc/security/limits.d/90-gpuready.conf");
	tu_assert_has(l, "# Written by `gpuready fix` for rdma.memlock");
	tu_assert_has(l, "\n* soft memlock unlimited\n* hard memlock unlimited\n");
	tu_assert_has(new_of(r, "memlock", "/etc/systemd/system/slurmd.service.d/90-gpuready-memlock.conf"),
		      "[Service]\nLimitMEMLOCK=infinity\n");
	const struct fix_remedy *m = remedy(r, "memlock");
	assert_int_equal(m->effect, FIX_LOGIN);
	/* under a sysroot nothing runs: daemon-reload sets no file */
	assert_int_equal(m->n_cmds, 0);
	tu_assert_has(m->notes.v[1], "restart it when no job runs");

	/* the remedy itself, as planned live: daemon-reload after the files */
	struct fix_plan p = { 0 };
	struct strv none = STRV_INIT;
	struct check_select sel = { .only = &none, .skip = &none };
	struct site_expect e = { .tos = 106 };
	bool taken[8] = { 0 };
	char *declined[8] = { 0 };
	struct fix_ctx c = { .root = r->root, .inv = r->inv, .rep = &r->rep, .expect = &e, .sel = &sel, .plan = &p,
			     .taken = taken, .declined = declined };
	assert_int_equal(fix_memlock.plan(&c), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.v[0].n_cmds, 1);
	assert_string_equal(p.v[0].cmds[0].argv.v[0], "systemctl");
	assert_string_equal(p.v[0].cmds[0].argv.v[1], "daemon-reload");
	assert_true(p.v[0].cmds[0].after_files);
	assert_null(p.v[0].cmds[0].sets_path);
	fix_plan_free(&p);
	finish(r);
}

static void test_memlock_slurmd_has_it(void **state)
{
	(void)state;
	struct run *r = tree();
	tu_write(r->dir, "lib/systemd/system/slurmd.service", "[Service]\nLimitMEMLOCK=infinity\n");
	tu_write(r->dir, "etc/security/limits.d/90-gpuready.conf", "# site line\n@gpu - nofile 65536\n* soft memlock 64\n");
	load(r);
	add(r, "rdma.memlock", STATUS_WARN, "memlock", "limits for all users: soft 64, hard not set (need unlimited)");
	plan(r);
	/* our file: its other lines kept, its memlock lines replaced */
	assert_string_equal(new_of(r, "memlock", "/etc/security/limits.d/90-gpuready.conf"),
			    "# site line\n@gpu - nofile 65536\n* soft memlock unlimited\n* hard memlock unlimited\n");
	assert_false(changes(r, "/etc/systemd/system/slurmd.service.d/90-gpuready-memlock.conf"));
	assert_int_equal(remedy(r, "memlock")->n_cmds, 0);
	finish(r);

	/* a later drop-in with a finite limit: a note, not a drop-in that loses */
	r = tree();
	tu_write(r->dir, "lib/systemd/system/slurmd.service", "[Service]\n");
	tu_write(r->dir, "etc/systemd/system/slurmd.service.d/99-site.conf", "[Service]\nLimitMEMLOCK=8M\n");
	load(r);
	add(r, "rdma.memlock", STATUS_WARN, "memlock", MEMLOCK_WARN);
	plan(r);
	assert_false(changes(r, "/etc/systemd/system/slurmd.service.d/90-gpuready-memlock.conf"));
	tu_assert_has(remedy(r, "memlock")->notes.v[1], "99-site.conf:2");
	finish(r);
}

static void test_memlock_declined(void **state)
{
	(void)state;
	struct run *r = tree();
	tu_write(r->dir, "etc/security/limits.d/95-hpc.conf", "*  hard  memlock  65536\n");
	load(r);
	add(r, "rdma.memlock", STATUS_WARN, "memlock", "limits for all users: soft not set, hard 65536 (need unlimited)");
	plan(r);
	tu_assert_has(manual_why(r, "rdma.memlock", "memlock"), "/etc/security/limits.d/95-hpc.conf:1 sets `* hard memlock 65536`");
	assert_null(remedy(r, "memlock"));
	finish(r);

	/* a file sorted before ours is overridden by it */
	r = tree();
	tu_write(r->dir, "etc/security/limits.d/10-hpc.conf", "* hard memlock 65536\n");
	load(r);
	add(r, "rdma.memlock", STATUS_WARN, "memlock", "limits for all users: soft not set, hard 65536 (need unlimited)");
	plan(r);
	assert_true(answers(r, "memlock", "rdma.memlock", "memlock"));
	finish(r);

	/* in a container limits.d does not apply */
	r = tree();
	tu_write(r->dir, ".dockerenv", "");
	load(r);
	add(r, "rdma.memlock", STATUS_FAIL, "RLIMIT_MEMLOCK", "64 KiB (hard 64 KiB, /proc/self/limits) in this container");
	plan(r);
	tu_assert_has(manual_why(r, "rdma.memlock", "RLIMIT_MEMLOCK"), "limits.d does not apply");
	assert_null(remedy(r, "memlock"));
	finish(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debug_and_names),
		cmocka_unit_test(test_not_plain),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_unknown_files),
		cmocka_unit_test(test_user_conf_and_ranges),
		cmocka_unit_test(test_rename_declined),
		cmocka_unit_test(test_ib_tc),
		cmocka_unit_test(test_memlock),
		cmocka_unit_test(test_memlock_slurmd_has_it),
		cmocka_unit_test(test_memlock_declined),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
