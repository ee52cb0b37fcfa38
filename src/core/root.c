/* Root context: textual symlink resolution inside a directory that stands
 * for "/". See root.h for the contract.
 *
 * Resolution keeps a stack of resolved components. Each component of the
 * input is appended and lstat'ed (fstatat with AT_SYMLINK_NOFOLLOW relative
 * to the root's directory fd); a symlink's target is spliced in front of the
 * remaining components, with absolute targets restarting at the root and
 * ".." never climbing above it. That is how the kernel resolves sysfs links,
 * and it keeps a recorded tree closed: nothing outside the root is read. */
#define _GNU_SOURCE
#include "root.h"
#include "root_cache.h"
#include "cleanup.h"
#include "errname.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A file of a recorded tree that could not be read when it was recorded
 * (ROOT_UNREADABLE): its canonical path and the positive errno. */
struct unreadable {
	char *path;
	int err;
};

struct root {
	int dirfd;
	struct dcache *cache;
	struct dfd_cache *dfds;
	char *dir;
	bool live;
	struct root_recorder rec;
	bool recording;
	struct unreadable *unr; /* sorted by path, one entry per path */
	size_t n_unr;
	bool clone; /* unr belongs to the handle it was cloned from */
};

/* One walk through the tree (a read, a resolution): the links it followed
 * so far, and whether the links it follows are kept from the recorder
 * (root_read_unrecorded() while recording). A quiet walk caches no
 * directory it reached through a link, so that a later recorded walk
 * still sees, and records, that link. */
struct walk {
	int links;
	bool quiet;
};

static void load_unreadable(struct root *r);

int root_open(const char *dir, struct root **ret)
{
	if (!dir || !*dir)
		return -EINVAL;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat a, b;
	bool live = false;
	if (fstat(fd, &a) == 0 && stat("/", &b) == 0)
		live = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	struct root *r = xcalloc(1, sizeof(*r));
	r->dirfd = fd;
	r->dir = xstrdup(dir);
	r->live = live;
	r->cache = xcalloc(1, sizeof(*r->cache));
	r->dfds = xcalloc(1, sizeof(*r->dfds));
	if (!live)
		load_unreadable(r);
	*ret = r;
	return 0;
}

void root_free(struct root *r)
{
	if (!r)
		return;
	if (r->dirfd >= 0)
		close(r->dirfd);
	free(r->dir);
	dcache_clear(r->cache);
	free(r->cache);
	dfd_clear(r->dfds);
	free(r->dfds);
	if (!r->clone) {
		for (size_t i = 0; i < r->n_unr; i++)
			free(r->unr[i].path);
		free(r->unr);
	}
	free(r);
}

int root_clone(const struct root *r, struct root **ret)
{
	if (r->recording)
		return -EBUSY;
	int fd = fcntl(r->dirfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct root *c = xcalloc(1, sizeof(*c));
	c->dirfd = fd;
	c->dir = xstrdup(r->dir);
	c->live = r->live;
	c->cache = xcalloc(1, sizeof(*c->cache));
	c->dfds = xcalloc(1, sizeof(*c->dfds));
	c->unr = r->unr;
	c->n_unr = r->n_unr;
	c->clone = true;
	*ret = c;
	return 0;
}

bool root_is_live(const struct root *r) { return r->live; }
const char *root_dir(const struct root *r) { return r->dir; }
int root_dirfd(const struct root *r) { return r->dirfd; }

void root_set_recorder(struct root *r, const struct root_recorder *rec)
{
	dcache_clear(r->cache);
	dfd_clear(r->dfds);
	if (rec) {
		r->rec = *rec;
		r->recording = true;
	} else {
		memset(&r->rec, 0, sizeof(r->rec));
		r->recording = false;
	}
}

const char *root_rel(const char *abs)
{
	while (*abs == '/')
		abs++;
	return *abs ? abs : ".";
}

/* Pops the last component of the canonical path in sb (never the root). */
static void pop_component(struct strbuf *sb)
{
	char *s = strrchr(sb->buf, '/');
	if (!s)
		return;
	strbuf_setlen(sb, s == sb->buf ? 1 : (size_t)(s - sb->buf));
}

static void push_component(struct strbuf *sb, const char *c, size_t n)
{
	if (sb->len == 0 || sb->buf[sb->len - 1] != '/')
		strbuf_addch(sb, '/');
	strbuf_add(sb, c, n);
}

/* A recorded tree copied by a tool that does not keep symlinks holds each
 * link as a small regular file whose whole content is the link's target
 * text (no newline). sysfs links always start with "../" (kernfs builds
 * them that way), and no sysfs or procfs attribute reads like that, so in a
 * recorded root such a file is followed as the link it stands for. Never
 * on the live root. Returns the target length, or -1 if it is no stand-in. */
/* The stand-in rule on bytes already read: "../" first, no NUL, newline
 * or space, shorter than a path buffer. */
static bool stand_in_text(const struct root *r, const char *buf, size_t len)
{
	if (r->live || len < 4 || len >= 4096 || strncmp(buf, "../", 3))
		return false;
	return !memchr(buf, '\0', len) && !memchr(buf, '\n', len) && !memchr(buf, ' ', len);
}

static ssize_t stand_in(const struct root *r, const char *path, const struct stat *st, char *buf, size_t size)
{
	if (r->live || st->st_size < 4 || (size_t)st->st_size >= size)
		return -1;
	_cleanup_close_ int fd = openat(r->dirfd, root_rel(path), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	if (n != st->st_size || !stand_in_text(r, buf, (size_t)n))
		return -1;
	buf[n] = '\0';
	return n;
}

/* Core resolver: `path` into canonical `out`.
 *   follow_last: follow a final symlink (and stand-in);
 *   standin_last: also treat a final regular file as a possible stand-in
 *                 (root_read checks that itself, after reading it once);
 *   w: the walk, whose hop counter is shared across the recursion for
 *      link targets. */
static int resolve_at(const struct root *r, const char *path, bool follow_last, bool standin_last, struct walk *w,
		      struct strbuf *out);

/* The link text of a link (or stand-in file) at cur, or -1 for anything
 * else; -errno on failure. */
static ssize_t link_text(const struct root *r, const char *cur, const struct stat *st, bool standin, char *buf,
			 size_t size)
{
	if (S_ISLNK(st->st_mode)) {
		ssize_t l = readlinkat(r->dirfd, root_rel(cur), buf, size - 1);
		if (l < 0)
			return errno == EPERM ? -EACCES : -errno; /* -1 means "not a link" */
		if (l == 0)
			return -ENOENT;
		buf[l] = '\0';
		return l;
	}
	if (S_ISREG(st->st_mode) && standin)
		return stand_in(r, cur, st, buf, size);
	return -1;
}

/* Replaces the link component at the end of cur (its parent is cur's first
 * `parent` bytes) by its resolved target. A target that must be a
 * directory (more components follow) is cached. */
static int follow(const struct root *r, struct strbuf *cur, size_t parent, const char *text, bool need_dir, bool last,
		  struct walk *w, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf target = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf sub = STRBUF_INIT;
	if (++w->links > ROOT_MAX_LINKS)
		return -ELOOP;
	if (r->recording && r->rec.link && !w->quiet)
		r->rec.link(r->rec.ud, cur->buf, text);
	if (text[0] != '/') {
		strbuf_add(&target, cur->buf, parent);
		strbuf_addch(&target, '/');
	}
	strbuf_adds(&target, text);
	int e = resolve_at(r, target.buf, true, true, w, &sub);
	if (e < 0) {
		if (e == -ENOENT && last) {
			strbuf_reset(out);
			strbuf_add(out, sub.buf, sub.len);
		}
		return e;
	}
	if (need_dir) {
		struct stat dst;
		if (fstatat(r->dirfd, root_rel(sub.buf), &dst, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (!S_ISDIR(dst.st_mode))
			return -ENOTDIR;
		if (!w->quiet)
			dcache_put(r->cache, cur->buf, sub.buf);
	}
	strbuf_reset(cur);
	strbuf_add(cur, sub.buf, sub.len);
	return 0;
}

static int resolve_at(const struct root *r, const char *path, bool follow_last, bool standin_last, struct walk *w,
		      struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf cur = STRBUF_INIT;
	char linkbuf[4096];

	if (!path || path[0] != '/')
		return -EINVAL;
	/* A directory resolved before answers the whole path at once: the
	 * cache's keys are canonical paths, and a path that equals one walks
	 * to the same directory, component by component, through the cache. */
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	const char *whole = follow_last ? dcache_get(r->cache, path, len) : NULL;
	if (whole) {
		strbuf_reset(out);
		strbuf_adds(out, whole);
		return 0;
	}
	strbuf_addch(&cur, '/');
	for (const char *s = path;;) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *c = s;
		while (*s && *s != '/')
			s++;
		size_t n = (size_t)(s - c);
		const char *rest = s;
		while (*rest == '/')
			rest++;
		bool last = *rest == '\0';
		bool want_dir = last && *s == '/'; /* "x/" must name a directory */
		if (n == 1 && c[0] == '.')
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			pop_component(&cur);
			continue;
		}
		size_t parent = cur.len;
		push_component(&cur, c, n);
		/* A cached directory answers a component unless it is a final
		 * link the caller wants unresolved (readlink). */
		const char *hit = last && !follow_last ? NULL : dcache_get(r->cache, cur.buf, cur.len);
		if (hit) {
			strbuf_reset(&cur);
			strbuf_adds(&cur, hit);
			continue;
		}
		struct stat st;
		if (fstatat(r->dirfd, root_rel(cur.buf), &st, AT_SYMLINK_NOFOLLOW) < 0) {
			int e = -errno;
			if (e == -ENOENT && last) {
				strbuf_reset(out);
				strbuf_add(out, cur.buf, cur.len);
			}
			return e;
		}
		if (S_ISDIR(st.st_mode)) {
			dcache_put(r->cache, cur.buf, cur.buf);
			continue;
		}
		if (last && !follow_last && !want_dir)
			continue;
		ssize_t l = link_text(r, cur.buf, &st, !last || standin_last || want_dir, linkbuf, sizeof(linkbuf));
		if (l < -1)
			return (int)l;
		if (l == -1) {
			if (!last || want_dir)
				return -ENOTDIR;
			continue;
		}
		int e = follow(r, &cur, parent, linkbuf, !last || want_dir, last, w, out);
		if (e < 0)
			return e;
	}
	strbuf_reset(out);
	strbuf_add(out, cur.buf, cur.len);
	return 0;
}

static int resolve(const struct root *r, const char *path, bool follow_last, struct strbuf *out)
{
	struct walk w = { 0 };
	return resolve_at(r, path, follow_last, true, &w, out);
}

int root_resolve(const struct root *r, const char *path, struct strbuf *out)
{
	return resolve(r, path, true, out);
}

int root_resolve_write(const struct root *r, const char *path, struct strbuf *out)
{
	struct walk w = { 0 };
	return resolve_at(r, path, true, false, &w, out);
}

static int read_at(const struct root *r, const char *path, size_t max, struct walk *w, struct strbuf *out);

int root_read(const struct root *r, const char *path, size_t max, struct strbuf *out)
{
	struct walk w = { 0 };
	return read_at(r, path, max, &w, out);
}

int root_read_unrecorded(const struct root *r, const char *path, size_t max, struct strbuf *out)
{
	struct walk w = { .quiet = r->recording };
	return read_at(r, path, max, &w, out);
}

/* Where a located file is opened: openat(fd, name). */
struct place {
	int fd;
	const char *name;
};

/* Finds the file to read: resolves the directory, then looks at the last
 * component without following it (fstatat), so only a symlink there costs
 * a full resolution. Never opens anything that is not a regular file: a
 * recorded tree may hold device nodes or FIFOs, and opening some devices
 * has side effects. On success p holds the canonical path, st its stat,
 * and at (when given) where to open it. */
static int locate(const struct root *r, const char *path, struct walk *w, struct strbuf *p, struct stat *st,
		  struct place *at)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int ret = -ELOOP;
	struct place here = { r->dirfd, NULL };
	if (slash && *base && strcmp(base, ".") && strcmp(base, "..")) {
		_cleanup_free_ char *dir = xstrndup(path, (size_t)(slash - path) + 1);
		ret = resolve_at(r, dir, true, true, w, p);
		if (ret < 0)
			return ret;
		here.fd = dfd_get(r->dfds, r->dirfd, p->buf);
		push_component(p, base, strlen(base));
		here.name = here.fd == r->dirfd ? root_rel(p->buf) : strrchr(p->buf, '/') + 1;
		if (fstatat(here.fd, here.name, st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		ret = S_ISLNK(st->st_mode) ? -ELOOP : 0;
	}
	if (ret == -ELOOP) {
		ret = resolve_at(r, path, true, false, w, p);
		if (ret < 0)
			return ret;
		here = (struct place){ r->dirfd, root_rel(p->buf) };
		if (fstatat(r->dirfd, here.name, st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if (at)
		*at = here;
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	return S_ISREG(st->st_mode) ? 0 : -EINVAL;
}

/* Reads an open regular file to its end, at most max bytes (-EFBIG). A
 * recorded file has its true size, so reading stops there; sysfs and
 * procfs files do not (4096 or 0) and are read to EOF. */
static int slurp(int fd, off_t size, size_t max, struct strbuf *data)
{
	for (;;) {
		strbuf_grow(data, 4096);
		ssize_t n = read(fd, data->buf + data->len, data->alloc - data->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		data->len += (size_t)n;
		data->buf[data->len] = '\0';
		if (data->len > max)
			return -EFBIG;
		if (size > 0 && (off_t)data->len == size)
			return 0;
	}
}

/* The error ROOT_UNREADABLE lists for a canonical path, or 0. */
static int replayed_error(const struct root *r, const char *canon)
{
	size_t lo = 0, hi = r->n_unr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(canon, r->unr[mid].path);
		if (c == 0)
			return r->unr[mid].err;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

/* Tells the recorder about a read of `path` (canonical: canon): the bytes
 * and mode, or the error. A missing file is not recorded, nor one too large
 * for this reader (another may read all of it), nor a link loop (the links
 * are). A quiet walk records only an error, after the links on the way,
 * which are walked again for that. */
static void record_read(const struct root *r, const char *path, const struct walk *w, const char *canon,
			const struct strbuf *data, mode_t mode, int err)
{
	if (!r->recording || !r->rec.file || !*canon || err == -ENOENT || err == -EFBIG || err == -ELOOP)
		return;
	if (w->quiet) {
		if (err == 0)
			return;
		struct walk again = { 0 };
		_cleanup_strbuf_ struct strbuf p = STRBUF_INIT;
		struct stat st;
		locate(r, path, &again, &p, &st, NULL);
	}
	r->rec.file(r->rec.ud, canon, err ? "" : data->buf, err ? 0 : data->len, mode, err);
}

static int read_at(const struct root *r, const char *path, size_t max, struct walk *w, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf p = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf data = STRBUF_INIT;
	struct stat st = { 0 };
	struct place at;
	int ret = locate(r, path, w, &p, &st, &at);
	if (ret == 0)
		ret = -replayed_error(r, p.buf);
	if (ret == 0) {
		_cleanup_close_ int fd = openat(at.fd, at.name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		ret = fd < 0 ? -errno : slurp(fd, st.st_size, max, &data);
	}
	if (ret == 0 && stand_in_text(r, data.buf, data.len)) {
		/* A link stored as a file (see stand_in()): follow it. */
		if (++w->links > ROOT_MAX_LINKS)
			return -ELOOP;
		if (r->recording && r->rec.link && !w->quiet)
			r->rec.link(r->rec.ud, p.buf, data.buf);
		_cleanup_strbuf_ struct strbuf target = STRBUF_INIT;
		const char *ps = strrchr(p.buf, '/');
		strbuf_add(&target, p.buf, ps ? (size_t)(ps - p.buf) : 0);
		strbuf_addch(&target, '/');
		strbuf_add(&target, data.buf, data.len);
		return read_at(r, target.buf, max, w, out);
	}
	record_read(r, path, w, p.buf, &data, st.st_mode, ret);
	if (ret == 0) {
		strbuf_release(out);
		*out = data;
		strbuf_init(&data);
	}
	return ret;
}

int root_readlink(const struct root *r, const char *path, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf p = STRBUF_INIT;
	char buf[4096];
	int ret = resolve(r, path, false, &p);
	if (ret < 0)
		return ret;
	ssize_t l = readlinkat(r->dirfd, root_rel(p.buf), buf, sizeof(buf) - 1);
	if (l < 0) {
		int e = errno;
		struct stat st;
		if (e != EINVAL)
			return -e;
		if (fstatat(r->dirfd, root_rel(p.buf), &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    (l = stand_in(r, p.buf, &st, buf, sizeof(buf))) < 0)
			return -EINVAL;
	}
	buf[l] = '\0';
	if (r->recording && r->rec.link)
		r->rec.link(r->rec.ud, p.buf, buf);
	strbuf_reset(out);
	strbuf_add(out, buf, (size_t)l);
	return 0;
}

/* A listing is recorded with its entries' kinds: links (with their text)
 * and directories, so a snapshot lists the same names. Regular files are
 * recorded when they are read. */
static void record_entries(const struct root *r, const char *dir, const struct strv *names)
{
	_cleanup_strbuf_ struct strbuf e = STRBUF_INIT;
	char buf[4096];
	if (r->rec.dir)
		r->rec.dir(r->rec.ud, dir);
	for (size_t i = 0; i < names->n; i++) {
		struct stat st;
		strbuf_reset(&e);
		strbuf_addf(&e, "%s/%s", strcmp(dir, "/") ? dir : "", names->v[i]);
		if (fstatat(r->dirfd, root_rel(e.buf), &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode) && r->rec.link) {
			ssize_t l = readlinkat(r->dirfd, root_rel(e.buf), buf, sizeof(buf) - 1);
			if (l > 0) {
				buf[l] = '\0';
				r->rec.link(r->rec.ud, e.buf, buf);
			}
		} else if (S_ISDIR(st.st_mode) && r->rec.dir) {
			r->rec.dir(r->rec.ud, e.buf);
		}
	}
}

int root_list(const struct root *r, const char *path, struct strv *out)
{
	_cleanup_strbuf_ struct strbuf p = STRBUF_INIT;
	int ret = resolve(r, path, true, &p);
	if (ret < 0)
		return ret;
	int fd = openat(r->dirfd, root_rel(p.buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		return ret;
	}
	struct strv names = STRV_INIT;
	struct dirent *de;
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		strv_add(&names, de->d_name);
	}
	if (errno) {
		/* never a silently partial listing */
		ret = -errno;
		strv_free(&names);
		return ret;
	}
	strv_sort(&names);
	if (r->recording)
		record_entries(r, p.buf, &names);
	strv_free(out);
	*out = names;
	return 0;
}

int root_stat(const struct root *r, const char *path, struct stat *st)
{
	_cleanup_strbuf_ struct strbuf p = STRBUF_INIT;
	int ret = resolve(r, path, true, &p);
	if (ret < 0)
		return ret;
	struct stat s;
	if (fstatat(r->dirfd, root_rel(p.buf), &s, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (r->recording) {
		if (S_ISDIR(s.st_mode) && r->rec.dir)
			r->rec.dir(r->rec.ud, p.buf);
		else if (!S_ISDIR(s.st_mode) && r->rec.exists)
			r->rec.exists(r->rec.ud, p.buf, s.st_mode);
	}
	*st = s;
	return 0;
}

void root_record_file(const struct root *r, const char *path, const char *data, size_t len, mode_t mode)
{
	if (r->recording && r->rec.file)
		r->rec.file(r->rec.ud, path, data, len, S_IFREG | (mode & 07777), 0);
}

void root_record_kept(const struct root *r, const char *path, const char *data, size_t len)
{
	_cleanup_strbuf_ struct strbuf p = STRBUF_INIT;
	struct walk w = { 0 };
	struct stat st;
	if (r->recording && r->rec.file && locate(r, path, &w, &p, &st, NULL) == 0) {
		r->rec.file(r->rec.ud, p.buf, data, len, st.st_mode, 0);
		if (r->rec.partial)
			r->rec.partial(r->rec.ud, p.buf);
	}
}

bool root_exists(const struct root *r, const char *path)
{
	struct stat st;
	return root_stat(r, path, &st) == 0;
}

/* ---- the metadata of a recorded tree ----
 * ROOT_UNREADABLE: one line per file that could not be read when the tree
 * was recorded, "<errno name> <canonical in-root path>", sorted by path. A
 * line that is not exactly that (no name or an unknown one, a number out of
 * range, a path that is not absolute and canonical, a NUL) is ignored, and
 * so is the whole file if it is larger than ROOT_UNREADABLE_MAX. */

/* A path as the resolver writes it: absolute, no empty, "." or ".."
 * component, no trailing slash, not "/" itself. */
static bool canonical_path(const char *p, size_t n)
{
	if (n < 2 || p[0] != '/' || p[n - 1] == '/' || n >= 4096)
		return false;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && p[j] != '/')
			j++;
		size_t c = j - i - 1; /* the component after p[i] == '/' */
		if (c == 0 || (c == 1 && p[i + 1] == '.') || (c == 2 && p[i + 1] == '.' && p[i + 2] == '.'))
			return false;
		i = j;
	}
	return true;
}

static int unreadable_cmp(const void *a, const void *b)
{
	const struct unreadable *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	/* equal paths: the earlier line wins (err holds its line index) */
	return c ? c : (x->err > y->err) - (x->err < y->err);
}

/* Parses the lines of text into r->unr, sorted by path; the first line for
 * a path wins. */
static void parse_unreadable(struct root *r, const char *text, size_t len)
{
	struct unreadable *v = NULL;
	int *errs = NULL;
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		const char *l = text + i, *nl = memchr(l, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - l) : len - i;
		i += ll + 1;
		const char *sp = memchr(l, ' ', ll);
		if (!sp || memchr(l, '\0', ll))
			continue;
		int e = errno_parse(l, (size_t)(sp - l));
		const char *path = sp + 1;
		size_t pl = ll - (size_t)(path - l);
		if (!e || !canonical_path(path, pl))
			continue;
		v = xreallocarray(v, n + 1, sizeof(*v));
		errs = xreallocarray(errs, n + 1, sizeof(*errs));
		v[n] = (struct unreadable){ .path = xstrndup(path, pl), .err = (int)n };
		errs[n++] = e;
	}
	if (n)
		qsort(v, n, sizeof(*v), unreadable_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(v[k - 1].path, v[i].path)) {
			free(v[i].path);
			continue;
		}
		v[k] = v[i];
		v[k++].err = errs[v[i].err];
	}
	free(errs);
	r->unr = v;
	r->n_unr = k;
}

static void load_unreadable(struct root *r)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct walk w = { 0 };
	if (read_at(r, ROOT_UNREADABLE, ROOT_UNREADABLE_MAX, &w, &sb) == 0)
		parse_unreadable(r, sb.buf, sb.len);
}

bool root_unreadable_line(struct strbuf *out, const char *path, int err)
{
	if (strchr(path, '\n'))
		return false;
	const char *name = errno_name(err);
	if (name)
		strbuf_addf(out, "%s %s\n", name, path);
	else
		strbuf_addf(out, "%d %s\n", err, path);
	return true;
}

bool root_incomplete(const struct root *r)
{
	struct strbuf p = STRBUF_INIT;
	struct stat st;
	bool marked = !r->live && resolve(r, ROOT_INCOMPLETE, true, &p) == 0 &&
		      fstatat(r->dirfd, root_rel(p.buf), &st, AT_SYMLINK_NOFOLLOW) == 0;
	strbuf_release(&p);
	return marked;
}
