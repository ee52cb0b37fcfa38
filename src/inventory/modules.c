/* Which kernel modules are loaded or built in.
 *
 * Sources (Linux kernel/module/procfs.c, Documentation/ABI/stable/sysfs-module): /proc/modules (loaded, with state), /sys/module
 * (a loadable module has `initstate`; a built-in appears only if it has
 * parameters or a version), /lib/modules/<release>/modules.builtin (every
 * built-in, by file name), and the drivers bound to PCI functions (a bound
 * mlx5_core proves the module is there even when procfs was not recorded). */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <string.h>

static int proc_modules_line(void *ud, char *line, unsigned no)
{
	(void)no;
	struct strv *loaded = ud;
	char name[128], state[32];
	/* name size refcount users state address [taint] */
	if (sscanf(line, "%127s %*s %*s %*s %31s", name, state) != 2)
		return 0;
	if (!strcmp(state, "Live") || !strcmp(state, "Loading"))
		strv_add(loaded, name);
	return 0;
}

/* "kernel/drivers/infiniband/core/ib_core.ko" -> "ib_core" (dashes become
 * underscores, as the kernel names modules). */
static int builtin_line(void *ud, char *line, unsigned no)
{
	(void)no;
	struct strv *b = ud;
	char *t = str_trim(line);
	char *base = strrchr(t, '/');
	base = base ? base + 1 : t;
	char *dot = strstr(base, ".ko");
	if (!dot || dot == base)
		return 0;
	*dot = '\0';
	for (char *c = base; *c; c++)
		if (*c == '-')
			*c = '_';
	strv_add(b, base);
	return 0;
}

/* "kernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko.zst: kernel/..." -> "mlx5_ib" */
static int dep_line(void *ud, char *line, unsigned no)
{
	char *colon = strchr(line, ':');
	if (!colon)
		return 0;
	*colon = '\0';
	return builtin_line(ud, line, no);
}

int modules_load(const struct root *r, const char *release, struct modules_info *m)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	m->proc_err = read_all(r, &sb, "/proc/modules");
	if (m->proc_err == 0)
		str_foreach_line(sb.buf, sb.len, proc_modules_line, &m->loaded);

	_cleanup_strv_ struct strv names = STRV_INIT;
	m->sys_err = root_list(r, "/sys/module", &names);
	for (size_t i = 0; i < names.n; i++) {
		_cleanup_free_ char *p = xasprintf("/sys/module/%s/initstate", names.v[i]);
		if (root_exists(r, p))
			strv_add(&m->sysmodule, names.v[i]);
		else
			strv_add(&m->sysmodule_builtin, names.v[i]);
	}

	m->builtin_err = m->dep_err = -ENOENT;
	if (release) {
		strbuf_reset(&sb);
		m->builtin_err = read_all(r, &sb, "/lib/modules/%s/modules.builtin", release);
		if (m->builtin_err == 0)
			str_foreach_line(sb.buf, sb.len, builtin_line, &m->builtin);
		strbuf_reset(&sb);
		m->dep_err = read_all(r, &sb, "/lib/modules/%s/modules.dep", release);
		if (m->dep_err == 0)
			str_foreach_line(sb.buf, sb.len, dep_line, &m->installed);
	}
	return 0;
}

enum module_state modules_state(const struct modules_info *m, const char *name)
{
	if (strv_contains(&m->loaded, name) || strv_contains(&m->sysmodule, name) ||
	    strv_contains(&m->bound_drivers, name))
		return MODULE_LOADED;
	if (strv_contains(&m->builtin, name) || strv_contains(&m->sysmodule_builtin, name))
		return MODULE_BUILTIN;
	if (m->proc_err == 0 || m->sys_err == 0)
		return MODULE_ABSENT;
	return MODULE_UNKNOWN;
}

const char *modules_source(const struct modules_info *m, const char *name)
{
	if (strv_contains(&m->loaded, name))
		return "/proc/modules";
	if (strv_contains(&m->sysmodule, name))
		return "/sys/module";
	if (strv_contains(&m->bound_drivers, name))
		return "a PCI function bound to it";
	if (strv_contains(&m->builtin, name))
		return "modules.builtin";
	if (strv_contains(&m->sysmodule_builtin, name))
		return "/sys/module (built in)";
	if (m->proc_err == 0)
		return "/proc/modules";
	if (m->sys_err == 0)
		return "/sys/module";
	return "no source";
}

void modules_free(struct modules_info *m)
{
	strv_free(&m->loaded);
	strv_free(&m->sysmodule);
	strv_free(&m->sysmodule_builtin);
	strv_free(&m->builtin);
	strv_free(&m->bound_drivers);
	strv_free(&m->installed);
}
