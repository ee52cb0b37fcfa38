/* The registry lists every check file, IDs are unique and follow the
 * naming rule (checks/<area>/<name>.c -> "<area>.<name>"), and every check
 * has a section and a summary (STYLE.md practices 3 and 17). */
#define _GNU_SOURCE
#include "testutil.h"
#include "checks/check.h"
#include "core/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool registered(const char *id)
{
	for (size_t i = 0; i < check_registry_n; i++)
		if (!strcmp(check_registry[i]->id, id))
			return true;
	return false;
}

static void test_every_file_registered(void **state)
{
	(void)state;
	char *dir = xasprintf("%s/src/checks", tu_source_dir());
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *area;
	size_t files = 0;
	while ((area = readdir(d))) {
		if (area->d_name[0] == '.' || area->d_type != DT_DIR)
			continue;
		char *sub = xasprintf("%s/%s", dir, area->d_name);
		DIR *s = opendir(sub);
		assert_non_null(s);
		struct dirent *f;
		while ((f = readdir(s))) {
			size_t n = strlen(f->d_name);
			if (n < 3 || strcmp(f->d_name + n - 2, ".c") || !strcmp(f->d_name, "common.c"))
				continue;
			char *id = xasprintf("%s.%.*s", area->d_name, (int)(n - 2), f->d_name);
			if (!registered(id))
				fail_msg("check file %s/%s is not in src/checks/registry.c (id %s)", area->d_name,
					 f->d_name, id);
			files++;
			free(id);
		}
		closedir(s);
		free(sub);
	}
	closedir(d);
	free(dir);
	assert_int_equal(files, check_registry_n);
}

static void test_ids(void **state)
{
	(void)state;
	for (size_t i = 0; i < check_registry_n; i++) {
		const struct check_def *c = check_registry[i];
		assert_non_null(c->run);
		assert_true(c->section && *c->section);
		assert_true(c->summary && *c->summary);
		assert_non_null(strchr(c->id, '.'));
		for (size_t k = i + 1; k < check_registry_n; k++)
			if (!strcmp(c->id, check_registry[k]->id))
				fail_msg("duplicate check id %s", c->id);
	}
}

/* --only/--skip patterns: an area name is all its checks; a pattern that
 * selects nothing (in the area, when one is given) is refused with where
 * to look. */
static void test_patterns(void **state)
{
	(void)state;
	struct strv only = STRV_INIT;
	strv_add(&only, "rdma");
	struct check_select sel = { .only = &only };
	size_t n = 0;
	for (size_t i = 0; i < check_registry_n; i++) {
		bool rdma = !strncmp(check_registry[i]->id, "rdma.", 5);
		assert_int_equal(check_selected(&sel, check_registry[i]->id), rdma);
		n += rdma;
	}
	assert_true(n > 0);
	assert_false(check_selected(&sel, "rdmax.y"));
	char *err = NULL;
	assert_int_equal(check_patterns_validate(&only, "--only", NULL, &err), 0);
	assert_int_equal(check_patterns_validate(&only, "--only", "rdma", &err), 0);
	assert_int_equal(check_patterns_validate(&only, "--only", "gpu", &err), -EINVAL);
	assert_non_null(strstr(err, "--only 'rdma' matches no check of `gpuready gpu` (its checks are gpu.*)"));
	free(err);
	strv_free(&only);
	strv_add(&only, "gpu.pci");
	strv_add(&only, "rdma.mtuu");
	assert_int_equal(check_patterns_validate(&only, "--skip", NULL, &err), -EINVAL);
	assert_non_null(strstr(err, "--skip 'rdma.mtuu' matches no check (did you mean 'rdma.mtu'?)"));
	free(err);
	strv_free(&only);
	strv_add(&only, "xyz*");
	assert_int_equal(check_patterns_validate(&only, "--only", NULL, &err), -EINVAL);
	assert_non_null(strstr(err, "--only 'xyz*' matches no check; the areas are "));
	free(err);
	strv_free(&only);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_file_registered),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_patterns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
