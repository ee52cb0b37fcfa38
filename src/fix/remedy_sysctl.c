/* rdma.sockbuf: net.core.rmem_max and wmem_max raised in
 * /etc/sysctl.d/90-gpuready.conf (sysctl.d(5): files are read in the
 * order of their names, a later one wins, /etc/sysctl.conf last with
 * procps' `sysctl --system`) and now with `sysctl -w`; under a sysroot the
 * value goes into proc/sys of the tree. A file read after ours that sets
 * the key lower would undo it at boot (any of the sysctl.d directories,
 * keys with '.' or '/'): then it is a manual step naming that file, which
 * is the operator's. */
#include "fix/fix.h"

#include "checks/expect.h"
#include "core/cleanup.h"
#include "core/root.h"

#include <stdlib.h>
#include <string.h>

#define SYSCTL_FILE "/etc/sysctl.d/90-gpuready.conf"

/* A line's key as sysctl reads it: '/' and '.' both separate (sysctl.d(5)). */
static bool same_key(const char *s, size_t n, const char *key)
{
	if (n != strlen(key))
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] != key[i] && !(s[i] == '/' && key[i] == '.'))
			return false;
	return true;
}

/* The value `key` is given on a line of text ("key = v", "key=v", "-key=v";
 * '#' and ';' comments), the last one; NULL when none. *line gets its number. */
static char *value_in(const char *text, const char *key, unsigned *line)
{
	char *val = NULL;
	unsigned no = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		no++;
		_cleanup_free_ char *l = xstrndup(p, n);
		char *s = l + strspn(l, " \t-");
		size_t kl = strcspn(s, " \t=");
		if (same_key(s, kl, key)) {
			char *v = s + kl + strspn(s + kl, " \t");
			if (*v == '=') {
				v++;
				v += strspn(v, " \t");
				v[strcspn(v, " \t\r")] = '\0';
				free(val);
				val = xstrdup(v);
				*line = no;
			}
		}
		p += n + (nl ? 1 : 0);
	}
	return val;
}

/* Does v (as written in a file) undo want? Only a smaller number does. */
static bool lowers(const char *v, const char *want)
{
	char *end;
	unsigned long long a = strtoull(v, &end, 10), b = strtoull(want, NULL, 10);
	return *end || end == v || a < b;
}

/* The files sysctl reads after SYSCTL_FILE: those of the sysctl.d
 * directories whose names sort after it (a name in /etc hides the same
 * name elsewhere; sysctl.d(5)), then /etc/sysctl.conf (procps reads it
 * last with --system). */
static void later_files(const struct fix_ctx *c, struct strv *files)
{
	static const char *const dirs[] = { "/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d",
					    "/usr/lib/sysctl.d", "/lib/sysctl.d" };
	struct strv seen = { 0 };
	for (size_t d = 0; d < sizeof(dirs) / sizeof(*dirs); d++) {
		_cleanup_strv_ struct strv names = { 0 };
		if (root_list(c->root, dirs[d], &names) < 0)
			continue;
		for (size_t i = 0; i < names.n; i++) {
			const char *nm = names.v[i];
			size_t l = strlen(nm);
			if (l <= 5 || strcmp(nm + l - 5, ".conf") || strcmp(nm, "90-gpuready.conf") <= 0 ||
			    strv_contains(&seen, nm))
				continue;
			strv_add(&seen, nm);
			strv_push(files, xasprintf("%s/%s", dirs[d], nm));
		}
	}
	strv_free(&seen);
	strv_add(files, "/etc/sysctl.conf");
}

/* A file that sysctl reads after SYSCTL_FILE and sets key lower than want. */
static char *overridden(const struct fix_ctx *c, const char *key, const char *want)
{
	struct strv files = { 0 };
	later_files(c, &files);
	char *why = NULL;
	for (size_t i = 0; i < files.n && !why; i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		unsigned line = 0;
		if (root_read(c->root, files.v[i], ROOT_READ_MAX, &sb) < 0)
			continue;
		_cleanup_free_ char *v = value_in(sb.buf, key, &line);
		if (v && lowers(v, want))
			why = xasprintf("%s:%u sets %s = %s and is read after %s: change it there", files.v[i], line, key,
					v, SYSCTL_FILE);
	}
	strv_free(&files);
	return why;
}

/* text with key set to want: its line replaced, or added at the end. */
static void set_key(struct strbuf *out, const char *text, const char *key, const char *want)
{
	bool done = false;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		unsigned line = 0;
		_cleanup_free_ char *l = xstrndup(p, n), *v = value_in(l, key, &line);
		if (v && !done) {
			strbuf_addf(out, "%s = %s\n", key, want);
			done = true;
		} else if (!v) {
			strbuf_addf(out, "%s\n", l);
		}
		p += n + (nl ? 1 : 0);
	}
	if (!done)
		strbuf_addf(out, "%s = %s\n", key, want);
}

static int plan(struct fix_ctx *c)
{
	struct fix_remedy *r = NULL;
	struct fix_file *file = NULL;
	char want[32];
	snprintf(want, sizeof(want), "%llu", (unsigned long long)c->expect->min_sockbuf);
	for (const struct finding *f = fix_next(c, "rdma.sockbuf", NULL); f; f = fix_next(c, "rdma.sockbuf", f)) {
		if (strncmp(f->subject, "net.core.", 9) || !f->observed) {
			fix_decline(c, f, "its value could not be read");
			continue;
		}
		_cleanup_free_ char *why = overridden(c, f->subject, want);
		if (why) {
			fix_decline(c, f, "%s", why);
			continue;
		}
		if (!r) {
			r = fix_remedy_new(c, "sysctl", FIX_NOW, "raise the socket buffer ceilings to %s bytes", want);
			int err = 0;
			if (!(file = fix_file_add(c, r, SYSCTL_FILE, 0644, &err)))
				return err;
			if (file->existed)
				strbuf_adds(&file->new, file->old.buf);
			else
				fix_header(&file->new, "# ", "rdma.sockbuf");
		}
		_cleanup_strbuf_ struct strbuf next = STRBUF_INIT;
		set_key(&next, file->new.buf, f->subject, want);
		strbuf_reset(&file->new);
		strbuf_add(&file->new, next.buf, next.len);
		_cleanup_free_ char *arg = xasprintf("%s=%s", f->subject, want);
		_cleanup_free_ char *proc = xasprintf("/proc/sys/%s", f->subject);
		for (char *p = proc + 10; *p; p++)
			if (*p == '.')
				*p = '/';
		struct fix_cmd *cmd = fix_cmd_add(r, (const char *const[]){ "sysctl", "-w", arg, NULL });
		fix_cmd_sets(cmd, proc, "%s\n", want);
		fix_answer(c, r, f);
	}
	return 0;
}

const struct fix_def fix_sysctl = {
	.id = "sysctl",
	.checks = (const char *const[]){ "rdma.sockbuf", NULL },
	.plan = plan,
};
