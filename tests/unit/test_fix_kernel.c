/* The kernel-side remedies of `gpuready fix` (src/fix/remedy_tos.c,
 * remedy_modules.c, remedy_peermem.c, remedy_acs.c, remedy_iommu.c):
 * what each plans on the broken fixtures, how it takes effect, whether it
 * is disruptive, and when it declines (a manual step saying why).
 * Planning only reads the tree. */
#include "testutil.h"
#include "checks/check.h"
#include "core/report.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "fix/fix.h"
#include "opts/settings.h"

#include <stdlib.h>
#include <string.h>

struct run {
	struct root *root;
	struct report rep;
	struct settings set;
	struct site_expect expect;
	struct inventory *inv;
	struct fix_plan plan;
	char *dir;
};

static void load(struct run *r, const char *fixture)
{
	memset(r, 0, sizeof(*r));
	r->dir = tu_fixture(fixture);
	char *err = NULL;
	assert_int_equal(root_open(r->dir, &r->root), 0);
	settings_init(&r->set);
	assert_int_equal(settings_load_config(&r->set, NULL, r->root, &err), 0);
	assert_int_equal(inventory_load(r->root, &(struct load_opts){ .parts = INV_FILES }, &r->inv), 0);
}

/* The checks, then the plan (disruptive remedies allowed). */
static void plan(struct run *r)
{
	report_init(&r->rep, "test", "host", r->dir);
	r->expect = settings_expect(&r->set);
	struct check_select sel = { .only = &r->set.only, .skip = &r->set.skip };
	assert_int_equal(checks_run(NULL, r->inv, &r->expect, &sel, &r->rep), 0);
	struct fix_opts o = { .allow_disruptive = true };
	char *err = NULL;
	assert_int_equal(fix_plan_make(r->root, r->inv, &r->rep, &r->expect, &sel, &o, &r->plan, &err), 0);
}

static void done(struct run *r)
{
	fix_plan_free(&r->plan);
	report_free(&r->rep);
	inventory_free(r->inv);
	settings_free(&r->set);
	root_free(r->root);
	free(r->dir);
}

static const struct fix_remedy *remedy(const struct run *r, const char *id)
{
	for (size_t i = 0; i < r->plan.n; i++)
		if (!strcmp(r->plan.v[i].id, id))
			return &r->plan.v[i];
	return NULL;
}

static const struct fix_file *file(const struct fix_remedy *m, const char *path)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (!strcmp(m->files[i].path, path))
			return &m->files[i];
	fail_msg("no file %s", path);
	return NULL;
}

static bool answers(const struct fix_remedy *m, const char *check, const char *subject)
{
	for (size_t i = 0; i < m->n_targets; i++)
		if (!strcmp(m->targets[i].check_id, check) && !strcmp(m->targets[i].subject, subject))
			return true;
	return false;
}

/* The manual step of check about subject; fails when there is none. */
static const struct fix_manual *manual(const struct run *r, const char *check, const char *subject)
{
	for (size_t i = 0; i < r->plan.n_manual; i++)
		if (!strcmp(r->plan.manual[i].check_id, check) && !strcmp(r->plan.manual[i].subject, subject))
			return &r->plan.manual[i];
	fail_msg("no manual step for %s %s", check, subject);
	return NULL;
}

/* Every wrong RoCE port set now by the script, which the unit runs at
 * boot, enabled by a link; NCCL's warning about the ports answered too. */
static void test_tos(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-roce-broken");
	plan(&r);
	const struct fix_remedy *m = remedy(&r, "rdma-cm-tos");
	assert_non_null(m);
	assert_int_equal(m->effect, FIX_NOW);
	assert_false(m->disruptive);
	const struct fix_file *s = file(m, "/usr/local/sbin/gpuready-rdma-cm-tos");
	assert_int_equal(s->mode, 0755);
	assert_memory_equal(s->new.buf, "#!/bin/sh\n# Written by `gpuready fix`", 37);
	tu_assert_has(s->new.buf, "TOS=104\n");
	tu_assert_has(s->new.buf, "echo \"$TOS\" > \"$CM/$dev/ports/$port/default_roce_tos\"");
	const struct fix_file *u = file(m, "/etc/systemd/system/rdma-cm-tos.service");
	tu_assert_has(u->new.buf, "Type=oneshot\nExecStart=/usr/local/sbin/gpuready-rdma-cm-tos\n");
	tu_assert_has(u->new.buf, "WantedBy=multi-user.target rdma-hw.target\n");
	assert_non_null(file(m, "/etc/systemd/system/rdma-hw.target.wants/rdma-cm-tos.service"));
	tu_assert_has(u->new.buf, "WantedBy=multi-user.target");
	const struct fix_file *l = file(m, "/etc/systemd/system/multi-user.target.wants/rdma-cm-tos.service");
	assert_true(l->link);
	assert_string_equal(l->new.buf, "/etc/systemd/system/rdma-cm-tos.service");
	assert_int_equal(m->n_cmds, 4);
	for (size_t i = 0; i < m->n_cmds; i++) {
		char want[96];
		snprintf(want, sizeof(want), "/sys/kernel/config/rdma_cm/mlx5_%zu/ports/1/default_roce_tos", 4 + i);
		assert_string_equal(m->cmds[i].sets_path, want);
		assert_string_equal(m->cmds[i].sets_value, "104\n");
		assert_int_equal(m->cmds[i].argv.n, 3);
		assert_string_equal(m->cmds[i].argv.v[0], "/usr/local/sbin/gpuready-rdma-cm-tos");
	}
	assert_true(answers(m, "rdma.roce_tos", "mlx5_4/1"));
	assert_true(answers(m, "rdma.roce_tos", "mlx5_7/1"));
	assert_true(answers(m, "rdma.tos_persist", "rdma"));
	assert_true(answers(m, "rdma.nccl_ib_tc", "default_roce_tos"));
	done(&r);
}

/* Another site ToS: the script carries it. */
static void test_tos_site_value(void **state)
{
	(void)state;
	struct run r;
	load(&r, "v100-cx3pro");
	r.set.tos = 106;
	plan(&r);
	const struct fix_remedy *m = remedy(&r, "rdma-cm-tos");
	assert_non_null(m);
	tu_assert_has(file(m, "/usr/local/sbin/gpuready-rdma-cm-tos")->new.buf, "TOS=106\n");
	assert_true(answers(m, "rdma.roce_tos", "mlx4_0/2"));
	done(&r);
}

/* Modules installed for the kernel: modules-load.d and modprobe, pending
 * under a sysroot; one not installed is a manual step. */
static void test_modules(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-no-rdma-provider");
	plan(&r);
	const struct fix_remedy *m = remedy(&r, "rdma-modules");
	assert_non_null(m);
	assert_int_equal(m->effect, FIX_RELOAD);
	assert_false(m->disruptive);
	/* under a sysroot modprobe sets nothing: it is kept to be shown and
	 * scripted, and waits for the node */
	assert_int_equal(m->n_files, 1);
	assert_true(m->n_cmds >= 1);
	for (size_t i = 0; i < m->n_cmds; i++) {
		assert_null(m->cmds[i].sets_path);
		assert_string_equal(m->cmds[i].argv.v[0], "modprobe");
	}
	const struct fix_file *f = file(m, "/etc/modules-load.d/gpuready-rdma.conf");
	tu_assert_has(f->new.buf, "\nib_uverbs\nrdma_ucm\nmlx5_ib\n");
	assert_true(answers(m, "rdma.modules", "mlx5_ib"));
	done(&r);

	load(&r, "h100-no-rdma-provider");
	struct strv keep = { 0 };
	for (size_t i = 0; i < r.inv->modules.installed.n; i++)
		if (strcmp(r.inv->modules.installed.v[i], "mlx5_ib"))
			strv_add(&keep, r.inv->modules.installed.v[i]);
	strv_free(&r.inv->modules.installed);
	r.inv->modules.installed = keep;
	plan(&r);
	tu_assert_has(manual(&r, "rdma.modules", "mlx5_ib")->why, "mlx5_ib is not installed for kernel 6.8.0-52-generic");
	assert_true(answers(remedy(&r, "rdma-modules"), "rdma.modules", "ib_uverbs"));
	done(&r);
}

/* nvidia_peermem where DMA-BUF serves: blacklisted and unloaded,
 * disruptive; never when a finding says DMA-BUF is not possible. */
static void test_peermem(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-roce-broken");
	plan(&r);
	const struct fix_remedy *m = remedy(&r, "peermem");
	assert_non_null(m);
	assert_true(m->disruptive);
	assert_int_equal(m->effect, FIX_RELOAD);
	tu_assert_has(file(m, "/etc/modprobe.d/gpuready-peermem.conf")->new.buf, "\nblacklist nvidia_peermem\n");
	done(&r);

	/* a finding exporting dmabuf_possible=false contradicts the warning's requirement */
	load(&r, "h100-roce-broken");
	report_init(&r.rep, "test", "host", r.dir);
	r.expect = settings_expect(&r.set);
	struct check_select sel = { .only = &r.set.only, .skip = &r.set.skip };
	assert_int_equal(checks_run(NULL, r.inv, &r.expect, &sel, &r.rep), 0);
	struct finding *x = report_add(&r.rep, "gpudirect.dmabuf", "DMA-BUF", STATUS_INFO, "dmabuf", "stand-in");
	finding_fact_bool(x, "dmabuf_possible", false);
	char *err = NULL;
	assert_int_equal(fix_plan_make(r.root, r.inv, &r.rep, &r.expect, &sel, &(struct fix_opts){ .allow_disruptive = true },
				       &r.plan, &err),
			 0);
	assert_null(remedy(&r, "peermem"));
	tu_assert_has(manual(&r, "gpudirect.peermem", "nvidia_peermem")->why, "dmabuf_possible=false");
	done(&r);
}

/* ACS: one setpci per bridge, the config space with only the ACS Control
 * word cleared, a unit with the same lines; disruptive. */
static void test_acs(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-acs-iommu");
	plan(&r);
	const struct fix_remedy *m = remedy(&r, "acs");
	assert_non_null(m);
	assert_true(m->disruptive);
	assert_int_equal(m->effect, FIX_NOW);
	assert_int_equal(m->n_cmds, 2);
	const struct pci_dev *b = pci_find(&r.inv->pci, "0000:4a:00.0");
	assert_non_null(b);
	const struct fix_cmd *c = &m->cmds[0];
	assert_string_equal(c->argv.v[2], "0000:4a:00.0");
	assert_string_equal(c->argv.v[3], "ECAP_ACS+0x6.w=0000");
	struct strbuf cfg = STRBUF_INIT;
	assert_int_equal(root_read(r.root, c->sets_path, ROOT_READ_MAX, &cfg), 0);
	assert_int_equal(c->sets_len, cfg.len);
	for (size_t i = 0; i < cfg.len; i++)
		if (i == (size_t)b->acs_off + 6 || i == (size_t)b->acs_off + 7)
			assert_int_equal(c->sets_value[i], 0);
		else
			assert_int_equal(c->sets_value[i], cfg.buf[i]);
	strbuf_release(&cfg);
	const struct fix_file *u = file(m, "/etc/systemd/system/gpuready-acs-off.service");
	tu_assert_has(u->new.buf, "ExecStart=setpci -s 0000:4a:00.0 ECAP_ACS+0x6.w=0000\n"
				  "ExecStart=setpci -s 0000:b9:01.0 ECAP_ACS+0x6.w=0000\n");
	assert_true(file(m, "/etc/systemd/system/multi-user.target.wants/gpuready-acs-off.service")->link);
	done(&r);
}

/* IOMMU: a GRUB drop-in and update-grub on Ubuntu (reboot, disruptive);
 * grubby by hand on Rocky. */
static void test_iommu(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-acs-iommu");
	plan(&r);
	const struct fix_remedy *m = remedy(&r, "iommu");
	assert_non_null(m);
	assert_int_equal(m->effect, FIX_REBOOT);
	assert_true(m->disruptive);
	tu_assert_has(file(m, "/etc/default/grub.d/gpuready.cfg")->new.buf,
		      "\nGRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT iommu=pt\"\n");
	assert_int_equal(m->n_cmds, 0); /* update-grub: after the files, not under a sysroot */
	done(&r);

	load(&r, "h100-acs-iommu");
	free(r.inv->kernel.os_id);
	free(r.inv->kernel.os_id_like);
	r.inv->kernel.os_id = xstrdup("rocky");
	r.inv->kernel.os_id_like = xstrdup("rhel centos fedora");
	plan(&r);
	assert_null(remedy(&r, "iommu"));
	tu_assert_has(manual(&r, "gpudirect.iommu", "iommu")->why, "`grubby --update-kernel=ALL --args=iommu=pt`");
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tos),     cmocka_unit_test(test_tos_site_value), cmocka_unit_test(test_modules),
		cmocka_unit_test(test_peermem), cmocka_unit_test(test_acs),            cmocka_unit_test(test_iommu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
