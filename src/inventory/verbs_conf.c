/* libibverbs' provider configuration as its files show it.
 *
 * libibverbs reads every file of /etc/libibverbs.d (IBV_CONFIG_DIR) for
 * lines "driver <name>", then dlopen()s lib<name>-rdmav<ABI>.so, found in
 * its provider directory <libdir>/libibverbs (rdma-core
 * libibverbs/dynamic.c load_driver(); the ABI number is rdma-core's
 * private one, so any rdmav<N> counts here). Debian and Ubuntu ship both in
 * ibverbs-providers, RPM systems in rdma-core/libibverbs. A device whose
 * provider is missing is left out of ibv_get_device_list(): NCCL then
 * finds no IB device and uses sockets (NVIDIA/k8s-test-infra#558). */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <string.h>

#define CONF_DIR "/etc/libibverbs.d"

/* <libdir>/libibverbs of the common multiarch and RPM layouts */
static const char *const provider_dirs[] = {
	"/usr/lib/x86_64-linux-gnu/libibverbs", "/usr/lib/aarch64-linux-gnu/libibverbs",
	"/usr/lib/powerpc64le-linux-gnu/libibverbs", "/usr/lib64/libibverbs", "/usr/lib/libibverbs",
};

struct parse_ctx {
	void (*fn)(void *ud, const char *name);
	void *ud;
};

static int driver_line(void *ud, char *line, unsigned no)
{
	(void)no;
	const struct parse_ctx *a = ud;
	char *t = str_trim(line);
	if (strncmp(t, "driver", 6) || (t[6] != ' ' && t[6] != '\t'))
		return 0;
	char *name = str_trim(t + 7);
	if (*name && !strpbrk(name, " \t"))
		a->fn(a->ud, name);
	return 0;
}

void verbs_driver_parse(const char *text, size_t len, void (*fn)(void *ud, const char *name), void *ud)
{
	struct parse_ctx a = { fn, ud };
	str_foreach_line(text, len, driver_line, &a);
}

struct add_ctx {
	struct verbs_conf *vc;
	const char *file;
};

static void add_provider(void *ud, const char *name)
{
	struct add_ctx *a = ud;
	struct verbs_conf *vc = a->vc;
	if (verbs_provider_find(vc, name))
		return;
	vc->v = xreallocarray(vc->v, vc->n + 1, sizeof(*vc->v));
	vc->v[vc->n++] = (struct verbs_provider){ .name = xstrdup(name), .file = xstrdup(a->file) };
}

/* The plug-in of prefix "libmlx5" among names: "libmlx5-rdmav<digits>.so". */
static const char *find_plugin(const struct strv *names, const char *prefix)
{
	size_t k = strlen(prefix);
	for (size_t i = 0; i < names->n; i++) {
		const char *s = names->v[i];
		if (strncmp(s, prefix, k) || strncmp(s + k, "-rdmav", 6))
			continue;
		const char *d = s + k + 6;
		size_t nd = strspn(d, "0123456789");
		if (nd > 0 && !strcmp(d + nd, ".so"))
			return s;
	}
	return NULL;
}

static void list_dir(const struct root *r, struct verbs_conf *vc, const char *dir, struct strv *out)
{
	int e = root_list(r, dir, out);
	if (e == 0)
		strv_add(&vc->dirs, dir);
	else if (e != -ENOENT && e != -ENOTDIR)
		strv_push(&vc->unreadable, xasprintf("%s (%s)", dir, read_strerror(e)));
}

static void find_libs(const struct root *r, struct verbs_conf *vc)
{
	for (size_t d = 0; d < ARRAY_SIZE(provider_dirs); d++) {
		_cleanup_strv_ struct strv names = STRV_INIT;
		list_dir(r, vc, provider_dirs[d], &names);
		for (size_t i = 0; i < vc->n; i++) {
			_cleanup_free_ char *prefix = xasprintf("lib%s", vc->v[i].name);
			const char *lib = vc->v[i].name[0] == '/' ? NULL : find_plugin(&names, prefix);
			if (lib && !vc->v[i].lib) {
				vc->v[i].lib = xasprintf("%s/%s", provider_dirs[d], lib);
				/* a listing records only the directory: test the
				 * plug-in, so that a snapshot keeps its name */
				root_exists(r, vc->v[i].lib);
			}
		}
	}
	/* "driver /opt/x/libfoo": /opt/x/libfoo-rdmav<N>.so */
	for (size_t i = 0; i < vc->n; i++) {
		char *slash = vc->v[i].name[0] == '/' ? strrchr(vc->v[i].name, '/') : NULL;
		if (!slash)
			continue;
		_cleanup_free_ char *dir = xstrndup(vc->v[i].name, (size_t)(slash - vc->v[i].name));
		_cleanup_strv_ struct strv names = STRV_INIT;
		list_dir(r, vc, *dir ? dir : "/", &names);
		const char *lib = find_plugin(&names, slash + 1);
		if (lib) {
			vc->v[i].lib = xasprintf("%s/%s", dir, lib);
			root_exists(r, vc->v[i].lib);
		}
	}
}

int verbs_conf_load(const struct root *r, struct verbs_conf *vc)
{
	_cleanup_strv_ struct strv files = STRV_INIT;
	vc->conf_err = root_list(r, CONF_DIR, &files);
	for (size_t i = 0; i < files.n; i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		_cleanup_free_ char *path = xasprintf(CONF_DIR "/%s", files.v[i]);
		int e = read_all(r, &sb, "%s", path);
		if (e < 0) {
			strv_push(&vc->unreadable, xasprintf("%s (%s)", path, read_strerror(e)));
			continue;
		}
		struct add_ctx a = { vc, path };
		verbs_driver_parse(sb.buf, sb.len, add_provider, &a);
	}
	find_libs(r, vc);
	return 0;
}

const struct verbs_provider *verbs_provider_find(const struct verbs_conf *vc, const char *name)
{
	for (size_t i = 0; i < vc->n; i++)
		if (!strcmp(vc->v[i].name, name))
			return &vc->v[i];
	return NULL;
}

void verbs_conf_free(struct verbs_conf *vc)
{
	for (size_t i = 0; i < vc->n; i++) {
		free(vc->v[i].name);
		free(vc->v[i].file);
		free(vc->v[i].lib);
	}
	free(vc->v);
	strv_free(&vc->dirs);
	strv_free(&vc->unreadable);
	memset(vc, 0, sizeof(*vc));
}
