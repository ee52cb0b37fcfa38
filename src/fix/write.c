/* Writing inside the root for `fix --apply` and `--revert`: directories
 * made as needed, files replaced atomically (a temporary file beside,
 * fsync, rename). A path is resolved through the root first (links in a
 * recorded tree followed inside it, core/root.h), and then its directory
 * is opened component by component from the root's fd without following
 * any link: a link found there now (the tree changed since it was
 * resolved) fails with -ELOOP instead of leading out of the root. Every
 * change is made relative to that directory's fd, on the last name only,
 * which is never followed. */
#include "fix/fix_int.h"

#include "core/cleanup.h"
#include "core/root.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *fix_backup_path(const char *path)
{
	static const char *const elsewhere[] = {
		"/etc/network/interfaces.d/",            /* Debian sources every file in it */
		"/etc/NetworkManager/system-connections/", /* the keyfile plugin reads every file */
		"/proc/", "/sys/",                        /* kernel state, in a tree */
	};
	for (size_t i = 0; i < sizeof(elsewhere) / sizeof(*elsewhere); i++)
		if (!strncmp(path, elsewhere[i], strlen(elsewhere[i])))
			return xasprintf("%s%s%s", FIX_BACKUP_DIR, path, FIX_BAK_SUFFIX);
	return xasprintf("%s%s", path, FIX_BAK_SUFFIX);
}

void fix_digest(const char *data, size_t len, bool exists, char out[FIX_DIGEST_LEN])
{
	if (!exists) {
		snprintf(out, FIX_DIGEST_LEN, "-");
		return;
	}
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, (const unsigned char *)data, len);
	memcpy(out, "sha256:", 7);
	sodium_bin2hex(out + 7, FIX_DIGEST_LEN - 7, h, sizeof(h));
}

/* The canonical in-root form of directory dir, its missing components
 * appended as written (no "." or ".." there). 0 or -errno. */
static int canon_dir(const struct root *root, const char *dir, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf cur = STRBUF_INIT, next = STRBUF_INIT, res = STRBUF_INIT;
	strbuf_addch(&cur, '/');
	bool missing = false;
	for (const char *s = dir; *s;) {
		while (*s == '/')
			s++;
		const char *c = s;
		while (*s && *s != '/')
			s++;
		size_t n = (size_t)(s - c);
		if (!n)
			break;
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return -EINVAL;
		strbuf_reset(&next);
		strbuf_addf(&next, "%s%s%.*s", cur.buf, cur.len > 1 ? "/" : "", (int)n, c);
		int r = missing ? -ENOENT : root_resolve_write(root, next.buf, &res);
		if (r == 0) {
			strbuf_reset(&cur);
			strbuf_adds(&cur, res.buf);
		} else if (r == -ENOENT) {
			missing = true;
			strbuf_reset(&cur);
			strbuf_adds(&cur, next.buf);
		} else {
			return r;
		}
	}
	strbuf_reset(out);
	strbuf_adds(out, cur.buf);
	return 0;
}

/* Opens the canonical directory canon by walking it from the root's fd,
 * following no link; with make, missing directories are made (0755) and
 * added to made. The fd, or -errno (-ELOOP: a link where a directory was). */
static int walk_dir(const struct root *root, const char *canon, bool make, struct strv *made)
{
	int fd = openat(root_dirfd(root), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	_cleanup_strbuf_ struct strbuf sofar = STRBUF_INIT;
	for (const char *s = canon; *s;) {
		while (*s == '/')
			s++;
		const char *c = s;
		while (*s && *s != '/')
			s++;
		if (s == c)
			break;
		_cleanup_free_ char *name = xstrndup(c, (size_t)(s - c));
		strbuf_addf(&sofar, "/%s", name);
		int nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && make) {
			if (mkdirat(fd, name, 0755) < 0 && errno != EEXIST) {
				int e = -errno;
				close(fd);
				return e;
			}
			if (made)
				strv_add(made, sofar.buf);
			nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		int e = nfd < 0 ? (errno == ENOTDIR ? -ELOOP : -errno) : 0;
		close(fd);
		if (nfd < 0)
			return e;
		fd = nfd;
	}
	return fd;
}

/* The directory of path opened safely (walk_dir), and the last name:
 * follow_last resolves a final link inside the root first (a file written
 * through its link), else the name is path's own. */
static int open_parent(const struct root *root, const char *path, bool follow_last, bool make, struct strv *made,
		       char **name)
{
	const char *slash = strrchr(path, '/');
	if (!slash || !slash[1] || path[0] != '/')
		return -EINVAL;
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT, dir = STRBUF_INIT;
	int r = 0;
	if (follow_last && (r = root_resolve_write(root, path, &c)) == 0) {
		slash = strrchr(c.buf, '/');
		strbuf_add(&dir, c.buf, (size_t)(slash - c.buf));
		*name = xstrdup(slash + 1);
	} else if (r != 0 && r != -ENOENT) {
		return r;
	} else {
		_cleanup_free_ char *d = xstrndup(path, (size_t)(slash - path));
		if ((r = canon_dir(root, *d ? d : "/", &dir)) < 0)
			return r;
		*name = xstrdup(slash + 1);
	}
	if (!strcmp(*name, ".") || !strcmp(*name, "..")) {
		free(*name);
		return -EINVAL;
	}
	int fd = walk_dir(root, dir.len ? dir.buf : "/", make, made);
	if (fd < 0) {
		free(*name);
		*name = NULL;
	}
	return fd;
}

int fix_mkdirs(const struct root *root, const char *dir, struct strv *made)
{
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT;
	int r = canon_dir(root, dir, &c);
	if (r < 0)
		return r;
	int fd = walk_dir(root, c.buf, true, made);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int fix_lstat(const struct root *root, const char *path, struct stat *st)
{
	_cleanup_free_ char *name = NULL;
	int fd = open_parent(root, path, false, false, NULL, &name);
	if (fd < 0)
		return fd;
	int r = fstatat(fd, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* A name beside `name` for a temporary file: ".NAME.gpuready-XXXXXX". */
static char *temp_name(const char *name)
{
	unsigned char rnd[6];
	randombytes_buf(rnd, sizeof(rnd));
	return xasprintf(".%s.gpuready-%02x%02x%02x%02x%02x%02x", name, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
}

int fix_write_file(const struct root *root, const char *path, const char *data, size_t len, mode_t mode,
		   struct strv *made)
{
	return fix_write_file_like(root, path, data, len, mode, NULL, made);
}

int fix_write_file_like(const struct root *root, const char *path, const char *data, size_t len, mode_t mode,
			const struct stat *like, struct strv *made)
{
	_cleanup_free_ char *name = NULL;
	int dfd = open_parent(root, path, true, true, made, &name);
	if (dfd < 0)
		return dfd;
	_cleanup_free_ char *tmp = temp_name(name);
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600), r = 0;
	if (fd < 0) {
		r = -errno;
		close(dfd);
		return r;
	}
	for (size_t off = 0; off < len && !r;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno != EINTR)
			r = -errno;
		else if (w > 0)
			off += (size_t)w;
	}
	if (!r && like && (like->st_uid != geteuid() || like->st_gid != getegid()) &&
	    fchown(fd, like->st_uid, like->st_gid) < 0 && errno != EPERM)
		r = -errno;
	if (!r && fchmod(fd, mode & 07777) < 0)
		r = -errno;
	if (!r && fsync(fd) < 0 && errno != EINVAL)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return r;
}

int fix_write_link(const struct root *root, const char *path, const char *target, struct strv *made)
{
	_cleanup_free_ char *name = NULL;
	int dfd = open_parent(root, path, false, true, made, &name);
	if (dfd < 0)
		return dfd;
	_cleanup_free_ char *tmp = temp_name(name);
	int r = symlinkat(target, dfd, tmp) < 0 ? -errno : 0;
	if (!r && renameat(dfd, tmp, dfd, name) < 0) {
		r = -errno;
		unlinkat(dfd, tmp, 0);
	}
	close(dfd);
	return r;
}

/* Kernel state files (sysfs, procfs, configfs in a tree) are written in
 * place, as the command they stand for would. */
int fix_write_state(const struct root *root, const char *path, const char *value, struct strv *made)
{
	return fix_write_file(root, path, value, strlen(value), 0644, made);
}

/* Removes path's last name (never followed); flags as unlinkat(2). */
static int remove_name(const struct root *root, const char *path, int flags)
{
	_cleanup_free_ char *name = NULL;
	int dfd = open_parent(root, path, false, false, NULL, &name);
	if (dfd < 0)
		return dfd;
	int r = unlinkat(dfd, name, flags) < 0 ? -errno : 0;
	close(dfd);
	return r;
}

int fix_unlink(const struct root *root, const char *path)
{
	return remove_name(root, path, 0);
}

int fix_unlink_link(const struct root *root, const char *path)
{
	return remove_name(root, path, 0);
}

int fix_rmdir(const struct root *root, const char *path)
{
	return remove_name(root, path, AT_REMOVEDIR);
}

int fix_rename(const struct root *root, const char *from, const char *to)
{
	_cleanup_free_ char *a = NULL, *b = NULL;
	int fa = open_parent(root, from, false, false, NULL, &a);
	if (fa < 0)
		return fa;
	int fb = open_parent(root, to, false, false, NULL, &b), r;
	if (fb < 0) {
		close(fa);
		return fb;
	}
	struct stat st;
	if (fstatat(fa, a, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EPERM; /* a backup is a regular file: anything else is not ours */
	else
		r = renameat(fa, a, fb, b) < 0 ? -errno : 0;
	close(fa);
	close(fb);
	return r;
}

int fix_open_append(const struct root *root, const char *path, mode_t mode)
{
	_cleanup_free_ char *name = NULL;
	int dfd = open_parent(root, path, false, true, NULL, &name);
	if (dfd < 0)
		return dfd;
	int fd = openat(dfd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode);
	int r = fd < 0 ? -errno : fd;
	close(dfd);
	return r;
}
