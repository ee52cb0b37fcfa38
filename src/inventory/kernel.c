/* Kernel release, command line, host name, architecture; the user whose
 * home holds ~/.nccl.conf; and the environment (live or recorded).
 *
 * Under a recorded tree, `.gpuready/meta` (key = value lines written by
 * `gpuready snapshot`) stands in for what only the live process knows. */
#define _GNU_SOURCE
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

extern char **environ;

struct meta_ctx {
	const char *key;
	char *value;
};

static int meta_line(void *ud, char *line, unsigned no)
{
	(void)no;
	struct meta_ctx *m = ud;
	char *eq = strchr(line, '=');
	if (!eq || line[0] == '#')
		return 0;
	*eq = '\0';
	if (strcmp(str_trim(line), m->key))
		return 0;
	free(m->value);
	m->value = xstrdup(str_trim(eq + 1));
	return 0;
}

/* A value from .gpuready/meta, or NULL. */
static char *meta_get(const struct root *r, const char *key)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (read_all(r, &sb, "/.gpuready/meta") < 0)
		return NULL;
	struct meta_ctx m = { .key = key };
	str_foreach_line(sb.buf, sb.len, meta_line, &m);
	return m.value;
}

int uptime_parse(const char *s, double *ret)
{
	char *end = NULL;
	errno = 0;
	double v = s ? strtod(s, &end) : 0;
	if (!s || end == s || errno || !(v >= 0) || v > 1e12 || (*end && *end != ' ' && *end != '\n'))
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The value of KEY= in os-release text (os-release(5): shell-style
 * assignments, the value optionally in quotes), malloc'd; NULL when none. */
static char *os_release_value(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *l = text; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		if (strncmp(l, key, kl) || l[kl] != '=')
			continue;
		const char *v = l + kl + 1;
		size_t n = strcspn(v, "\n");
		if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
			v++;
			n -= 2;
		}
		return xstrndup(v, n);
	}
	return NULL;
}

int kernel_load(const struct root *r, struct kernel_info *k, struct user_info *u)
{
	char *s = NULL;
	bool live = root_is_live(r);

	if (read_str(r, &s, "/proc/sys/kernel/osrelease") == 0) {
		k->release = s;
	} else if (read_str(r, &s, "/proc/version") == 0) {
		/* "Linux version 5.15.0-131-generic (buildd@...) ..." */
		char rel[128];
		if (sscanf(s, "Linux version %127s", rel) == 1)
			k->release = xstrdup(rel);
		free(s);
	}
	if (read_str(r, &s, "/proc/cmdline") == 0)
		k->cmdline = s;
	/* /etc/os-release, else /usr/lib/os-release (os-release(5)) */
	struct strbuf os = STRBUF_INIT;
	if ((k->os_err = read_all(r, &os, "/etc/os-release")) < 0 && read_all(r, &os, "/usr/lib/os-release") == 0)
		k->os_err = 0;
	if (k->os_err == 0) {
		k->os_id = os_release_value(os.buf, "ID");
		k->os_id_like = os_release_value(os.buf, "ID_LIKE");
	}
	strbuf_release(&os);
	/* "350735.47 234388.90": seconds up, then idle (proc(5)) */
	k->uptime_err = read_str(r, &s, "/proc/uptime");
	if (k->uptime_err == 0) {
		k->uptime_err = uptime_parse(s, &k->uptime);
		free(s);
	}

	if (live) {
		char h[256];
		if (gethostname(h, sizeof(h)) == 0) {
			h[sizeof(h) - 1] = '\0';
			k->hostname = xstrdup(h);
		}
		struct utsname un;
		if (uname(&un) == 0)
			k->arch = xstrdup(un.machine);
	}
	if (!k->hostname && read_str(r, &s, "/proc/sys/kernel/hostname") == 0)
		k->hostname = s;
	if (!k->hostname && read_str(r, &s, "/etc/hostname") == 0)
		k->hostname = s;
	if (!k->arch)
		k->arch = meta_get(r, "arch");

	if (live) {
		u->uid = (long)getuid();
		const char *home = getenv("HOME");
		struct passwd *pw = getpwuid(getuid());
		u->home = xstrdup(home && *home ? home : pw ? pw->pw_dir : "/");
		u->name = pw ? xstrdup(pw->pw_name) : NULL;
	} else {
		char *uid = meta_get(r, "uid");
		int v;
		u->uid = uid && parse_int(uid, 10, &v) == 0 ? v : -1;
		free(uid);
		u->home = meta_get(r, "home");
		if (!u->home)
			u->home = xstrdup("/root");
		u->name = meta_get(r, "user");
	}
	return 0;
}

void kernel_free(struct kernel_info *k, struct user_info *u)
{
	free(k->release);
	free(k->cmdline);
	free(k->os_id);
	free(k->os_id_like);
	free(k->hostname);
	free(k->arch);
	free(u->home);
	free(u->name);
}

int env_load(const struct root *r, struct strv *out, bool *recorded)
{
	if (root_is_live(r)) {
		for (char **e = environ; e && *e; e++)
			strv_add(out, *e);
		*recorded = false;
		return 0;
	}
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int ret = read_all(r, &sb, "/.gpuready/environ");
	if (ret < 0)
		return ret;
	/* NUL-separated like /proc/PID/environ; newline-separated also works. */
	bool nul = memchr(sb.buf, '\0', sb.len) != NULL;
	size_t i = 0;
	while (i < sb.len) {
		size_t j = i;
		while (j < sb.len && sb.buf[j] != (nul ? '\0' : '\n'))
			j++;
		if (j > i && memchr(sb.buf + i, '=', j - i))
			strv_push(out, xstrndup(sb.buf + i, j - i));
		i = j + 1;
	}
	*recorded = true;
	return 0;
}
