/* Writing inside the root for `fix --apply` and `--revert`: directories
 * made as needed, files replaced atomically (a temporary file beside,
 * fsync, rename), every path resolved through the root first so that a
 * link in a recorded tree never leads out of it (core/root.h). */
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

/* path's in-root canonical form, its last component not required to exist. */
static int canonical(const struct root *root, const char *path, struct strbuf *out)
{
	int r = root_resolve(root, path, out);
	return r == -ENOENT ? 0 : r;
}

int fix_mkdirs(const struct root *root, const char *dir, struct strv *made)
{
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT;
	int r = root_resolve(root, dir, &c);
	if (r == 0) {
		struct stat st;
		if (fstatat(root_dirfd(root), root_rel(c.buf), &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	}
	if (r != -ENOENT)
		return r;
	const char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		_cleanup_free_ char *parent = xstrndup(dir, (size_t)(slash - dir));
		if ((r = fix_mkdirs(root, parent, made)) < 0)
			return r;
	}
	strbuf_reset(&c);
	if ((r = canonical(root, dir, &c)) < 0)
		return r;
	if (mkdirat(root_dirfd(root), root_rel(c.buf), 0755) < 0 && errno != EEXIST)
		return -errno;
	if (made)
		strv_add(made, c.buf);
	return 0;
}

int fix_write_file(const struct root *root, const char *path, const char *data, size_t len, mode_t mode,
		   struct strv *made)
{
	return fix_write_file_like(root, path, data, len, mode, NULL, made);
}

int fix_write_file_like(const struct root *root, const char *path, const char *data, size_t len, mode_t mode,
			const struct stat *like, struct strv *made)
{
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT;
	_cleanup_free_ char *dir = xstrndup(path, (size_t)(strrchr(path, '/') - path));
	int r;
	if (*dir && (r = fix_mkdirs(root, dir, made)) < 0)
		return r;
	if ((r = canonical(root, path, &c)) < 0)
		return r;
	const char *rel = root_rel(c.buf), *slash = strrchr(rel, '/');
	_cleanup_free_ char *tmp = slash ? xasprintf("%.*s/.%s.gpuready-XXXXXX", (int)(slash - rel), rel, slash + 1)
					 : xasprintf(".%s.gpuready-XXXXXX", rel);
	/* a random suffix, created exclusively */
	size_t n = strlen(tmp);
	unsigned char rnd[6];
	randombytes_buf(rnd, sizeof(rnd));
	for (size_t i = 0; i < 6; i++)
		tmp[n - 6 + i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rnd[i] % 36];
	int fd = openat(root_dirfd(root), tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = 0;
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
	if (!r && renameat(root_dirfd(root), tmp, root_dirfd(root), rel) < 0)
		r = -errno;
	if (r)
		unlinkat(root_dirfd(root), tmp, 0);
	return r;
}

int fix_write_link(const struct root *root, const char *path, const char *target, struct strv *made)
{
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT;
	_cleanup_free_ char *dir = xstrndup(path, (size_t)(strrchr(path, '/') - path));
	int r;
	if (*dir && (r = fix_mkdirs(root, dir, made)) < 0)
		return r;
	if ((r = canonical(root, path, &c)) < 0)
		return r;
	const char *rel = root_rel(c.buf), *slash = strrchr(rel, '/');
	unsigned char rnd[6];
	randombytes_buf(rnd, sizeof(rnd));
	_cleanup_free_ char *tmp = xasprintf("%.*s.%s.gpuready-%02x%02x%02x%02x%02x%02x", slash ? (int)(slash - rel + 1) : 0,
					     rel, slash ? slash + 1 : rel, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	if (symlinkat(target, root_dirfd(root), tmp) < 0)
		return -errno;
	if (renameat(root_dirfd(root), tmp, root_dirfd(root), rel) < 0) {
		r = -errno;
		unlinkat(root_dirfd(root), tmp, 0);
		return r;
	}
	return 0;
}

/* Kernel state files (sysfs, procfs, configfs in a tree) are written in
 * place, as the command they stand for would. */
int fix_write_state(const struct root *root, const char *path, const char *value, struct strv *made)
{
	return fix_write_file(root, path, value, strlen(value), 0644, made);
}

int fix_unlink(const struct root *root, const char *path)
{
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT;
	int r = root_resolve(root, path, &c);
	if (r < 0)
		return r;
	return unlinkat(root_dirfd(root), root_rel(c.buf), 0) < 0 ? -errno : 0;
}

int fix_unlink_link(const struct root *root, const char *path)
{
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT;
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = xstrndup(path, slash ? (size_t)(slash - path) : 0);
	int r = root_resolve(root, *dir ? dir : "/", &c);
	if (r < 0)
		return r;
	_cleanup_free_ char *rel = xasprintf("%s/%s", root_rel(c.buf), slash ? slash + 1 : path);
	return unlinkat(root_dirfd(root), rel, 0) < 0 ? -errno : 0;
}

int fix_rmdir(const struct root *root, const char *path)
{
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT;
	int r = root_resolve(root, path, &c);
	if (r < 0)
		return r;
	return unlinkat(root_dirfd(root), root_rel(c.buf), AT_REMOVEDIR) < 0 ? -errno : 0;
}

int fix_rename(const struct root *root, const char *from, const char *to)
{
	_cleanup_strbuf_ struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	int r;
	if ((r = root_resolve(root, from, &a)) < 0 || (r = canonical(root, to, &b)) < 0)
		return r;
	return renameat(root_dirfd(root), root_rel(a.buf), root_dirfd(root), root_rel(b.buf)) < 0 ? -errno : 0;
}
