/* `fix --revert`: undoes, from the audit log, what `fix --apply` wrote
 * since the last revert: a file it replaced comes back from its backup
 * (the oldest one: backups are never overwritten), a file it created is
 * removed when it is still what gpuready wrote, and the directories it
 * made are removed when empty. Values already in effect (a sysctl, an
 * MTU) stay until the node reboots or the operator sets them back; under
 * a sysroot the state files it wrote are files like the others. */
#include "fix/fix_int.h"

#include "core/cleanup.h"
#include "core/root.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct undo {
	const struct root *root;
	char time[32];
	struct fix_result *res;
	int ret;
};

static void note(struct undo *u, const char *path, const char *kind, const char *detail)
{
	struct fix_log_entry e = { u->time, "revert", "-", (char *)path, (char *)kind, "-", "-", (char *)detail };
	fix_log_append(u->root, &e);
}

static void failed(struct undo *u, const char *path, const char *why)
{
	strv_push(&u->res->lines, xasprintf("NOT reverted %s: %s", path, why));
	note(u, path, "kept", why);
	u->res->failed++;
	u->ret = u->ret ? u->ret : -EIO;
}

/* The file as gpuready last wrote it: its current digest equals the last
 * entry's `after`. */
static bool unchanged_since(struct undo *u, const char *path, const char *after, bool link)
{
	_cleanup_strbuf_ struct strbuf cur = STRBUF_INIT;
	int r = link ? root_readlink(u->root, path, &cur) : root_read(u->root, path, 64u << 20, &cur);
	char d[FIX_DIGEST_LEN];
	fix_digest(cur.buf, cur.len, r == 0, d);
	return !strcmp(d, after);
}

/* Where the log may say gpuready wrote: what the remedies write, and its
 * own directories. The log is gpuready's, but in a tree it is the tree's:
 * revert never acts on a path elsewhere, or one with "." or ".." parts. */
static const char *const under[] = { "/etc/", "/usr/local/", "/proc/", "/sys/", "/var/lib/gpuready/", "/root/",
				     "/home/" };

static bool path_ok(const char *p)
{
	if (p[0] != '/' || strstr(p, "/./") || strstr(p, "/../") || strstr(p, "//"))
		return false;
	size_t n = strlen(p);
	if ((n >= 2 && !strcmp(p + n - 2, "/.")) || (n >= 3 && !strcmp(p + n - 3, "/..")))
		return false;
	for (const char *s = p; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	for (size_t i = 0; i < sizeof(under) / sizeof(*under); i++)
		if (!strncmp(p, under[i], strlen(under[i])))
			return true;
	return false;
}

/* A directory gpuready may have made: where it writes, or on the way there
 * ("/usr", "/var/lib"). */
static bool dir_ok(const char *p)
{
	if (path_ok(p))
		return true;
	size_t n = strlen(p);
	for (size_t i = 0; i < sizeof(under) / sizeof(*under) && p[0] == '/' && !strstr(p, ".."); i++)
		if (!strncmp(under[i], p, n) && under[i][n] == '/')
			return true;
	return false;
}

/* A replaced file back from its backup: only when the file is still what
 * gpuready wrote last, and the backup is what gpuready replaced first. */
static void restore(struct undo *u, const struct fix_log_entry *first, const struct fix_log_entry *last)
{
	const char *path = first->path, *bak = first->detail;
	_cleanup_free_ char *want = fix_backup_path(path);
	int r;
	if (strcmp(bak, want))
		return failed(u, path, "the audit log names another backup than gpuready writes; left as it is");
	if (!root_exists(u->root, bak))
		return failed(u, path, "its backup is gone");
	if (!unchanged_since(u, path, last->after, false))
		return failed(u, path, "changed since gpuready wrote it; left as it is (gpuready's backup of the file "
				       "before: see the audit log)");
	if (!unchanged_since(u, bak, first->before, false))
		return failed(u, path, "its backup is not the file gpuready replaced; left as it is");
	if ((r = fix_rename(u->root, bak, path)) < 0)
		return failed(u, path, strerror(-r));
	strv_push(&u->res->lines, xasprintf("restored %s", path));
	note(u, path, "restored", bak);
	u->res->applied++;
}

static void undo_file(struct undo *u, const struct fix_log_entry *first, const struct fix_log_entry *last)
{
	const char *path = first->path;
	int r;
	if (!path_ok(path))
		return failed(u, path, "not a path gpuready writes; the audit log is damaged");
	if (strcmp(first->before, "-"))
		return restore(u, first, last);
	bool link = !strcmp(last->kind, "link");
	if (!unchanged_since(u, path, last->after, link))
		return failed(u, path, "changed since gpuready created it; left as it is");
	if ((r = link ? fix_unlink_link(u->root, path) : fix_unlink(u->root, path)) < 0 && r != -ENOENT)
		return failed(u, path, strerror(-r));
	strv_push(&u->res->lines, xasprintf("removed %s", path));
	note(u, path, "removed", "-");
	u->res->applied++;
}

/* A path an earlier, incomplete revert already restored or removed. */
static bool reverted_before(const struct fix_log_entry *v, size_t n, size_t after, const char *path)
{
	for (size_t k = after + 1; k < n; k++)
		if (!strcmp(v[k].action, "revert") && !strcmp(v[k].path, path) &&
		    (!strcmp(v[k].kind, "restored") || !strcmp(v[k].kind, "removed")))
			return true;
	return false;
}

static bool is_file_kind(const char *k)
{
	return !strcmp(k, "created") || !strcmp(k, "replaced") || !strcmp(k, "state") || !strcmp(k, "link");
}

int fix_revert(const struct root *root, double now, struct fix_result *res)
{
	struct undo u = { .root = root, .res = res };
	fix_time(now, u.time);
	struct fix_log_entry *v;
	size_t n;
	int r = fix_log_read(root, &v, &n);
	if (r < 0)
		return r;
	/* the files, newest first, each once: from its first and last entries */
	for (size_t i = n; i-- > 0;) {
		if (strcmp(v[i].action, "apply") || !is_file_kind(v[i].kind))
			continue;
		bool later = false;
		for (size_t k = i + 1; k < n && !later; k++)
			later = is_file_kind(v[k].kind) && !strcmp(v[k].path, v[i].path) && !strcmp(v[k].action, "apply");
		if (later || reverted_before(v, n, i, v[i].path))
			continue;
		size_t first = i;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(v[k].action, "apply") && is_file_kind(v[k].kind) && !strcmp(v[k].path, v[i].path)) {
				first = k;
				break;
			}
		undo_file(&u, &v[first], &v[i]);
	}
	if ((r = fix_unlink(root, FIX_PENDING)) == 0)
		strv_push(&res->lines, xasprintf("removed %s", FIX_PENDING));
	for (size_t i = n; i-- > 0;)
		if (!strcmp(v[i].action, "apply") && !strcmp(v[i].kind, "mkdir") && dir_ok(v[i].path) &&
		    fix_rmdir(root, v[i].path) == 0)
			note(&u, v[i].path, "rmdir", "-");
	if (!n)
		strv_push(&res->lines, xstrdup("nothing to revert: the audit log lists no change since the last revert"));
	else if (!u.ret)
		note(&u, "-", "done", "-"); /* an incomplete revert can be run again */
	fix_log_free(v, n);
	return u.ret;
}
