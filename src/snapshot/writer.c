/* Writing a recorded tree; see writer.h. */
#define _GNU_SOURCE
#include "writer.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What ROOT_INCOMPLETE says to whoever finds it. */
#define INCOMPLETE_TEXT \
	"gpuready snapshot did not finish writing this tree: it may lack files that the checks read.\n" \
	"The check commands refuse it; --force reads it anyway.\n"

struct unreadable_ent {
	char *path;
	int err;
};

struct snap_writer {
	char *dir;
	int dirfd;
	int err;        /* the first write error */
	char *err_path; /* and where */
	struct snap_stats st;
	struct unreadable_ent *unr;
	size_t n_unr;
	char *made;     /* the directory mkdirs() last made or found, in-root */
	struct strv partial; /* files recorded only as far as they were parsed (ROOT_PARTIAL) */
};

static void note_err(struct snap_writer *w, int e, const char *path)
{
	if (!w->err) {
		w->err = e;
		w->err_path = xstrdup(path);
	}
}

/* mkdir -p of an in-root directory path under the snapshot dir. The files
 * of one directory come one after another (a port's counters, its GIDs),
 * so the directory made last answers without a system call: a tree with
 * thousands of devices is otherwise two per component per file. */
static int mkdirs(struct snap_writer *w, const char *path)
{
	_cleanup_free_ char *p = xstrdup(path[0] == '/' ? path + 1 : path);
	if (!*p || (w->made && !strcmp(w->made, p)))
		return 0;
	for (char *c = p;; c++) {
		if (*c == '/' || *c == '\0') {
			char save = *c;
			*c = '\0';
			if (mkdirat(w->dirfd, p, 0755) < 0 && errno != EEXIST)
				return -errno;
			struct stat st;
			if (fstatat(w->dirfd, p, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
				return -ENOTDIR;
			*c = save;
			if (!save)
				break;
		}
	}
	free(w->made);
	w->made = TAKE_PTR(p);
	return 0;
}

static int mkparent(struct snap_writer *w, const char *path)
{
	_cleanup_free_ char *p = xstrdup(path);
	char *slash = strrchr(p, '/');
	if (!slash || slash == p)
		return 0;
	*slash = '\0';
	return mkdirs(w, p);
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes a new file with the permission bits of mode (0644 if mode has no
 * file type, i.e. is not known). It is created 0600 and given its mode
 * once written, whatever the umask. 1 if written, 0 if the path was
 * already recorded (the first recording wins), or -errno. */
static int write_file(struct snap_writer *w, const char *path, const char *data, size_t len, mode_t mode)
{
	int e = mkparent(w, path);
	if (e < 0)
		return e;
	int fd = openat(w->dirfd, root_rel(path), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;
	e = write_all(fd, data, len);
	if (e == 0 && fchmod(fd, (mode & S_IFMT) ? (mode & 0777) : 0644) < 0)
		e = -errno;
	if (close(fd) < 0 && e == 0)
		e = -errno;
	return e < 0 ? e : 1;
}

/* The writer's own metadata is never taken from the tree it records. */
static bool own_metadata(const char *path)
{
	return !strcmp(path, ROOT_UNREADABLE) || !strcmp(path, ROOT_INCOMPLETE);
}

static void on_link(void *ud, const char *path, const char *target)
{
	struct snap_writer *w = ud;
	int e = mkparent(w, path);
	if (e < 0)
		return note_err(w, e, path);
	if (symlinkat(target, w->dirfd, root_rel(path)) == 0)
		w->st.links++;
	else if (errno != EEXIST)
		note_err(w, -errno, path);
}

static void on_dir(void *ud, const char *path)
{
	struct snap_writer *w = ud;
	int e = mkdirs(w, path);
	if (e < 0)
		note_err(w, e, path);
	else
		w->st.dirs++;
}

static void add_unreadable(struct snap_writer *w, const char *path, int err)
{
	w->unr = xreallocarray(w->unr, w->n_unr + 1, sizeof(*w->unr));
	w->unr[w->n_unr++] = (struct unreadable_ent){ .path = xstrdup(path), .err = err };
	w->st.unreadable++;
}

static void on_file(void *ud, const char *path, const char *data, size_t len, mode_t mode, int err)
{
	struct snap_writer *w = ud;
	int e;
	if (err == -ENOENT || own_metadata(path))
		return;
	if (err == -EISDIR) {
		e = mkdirs(w, path);
	} else {
		e = write_file(w, path, err ? "" : data, err ? 0 : len, mode);
		w->st.files += e == 1;
		/* listed only where its empty stand-in was written now: a
		 * file first read whole keeps its content */
		if (e == 1 && err < 0)
			add_unreadable(w, path, -err);
	}
	if (e < 0)
		note_err(w, e, path);
}

static void on_partial(void *ud, const char *path)
{
	struct snap_writer *w = ud;
	if (!strv_contains(&w->partial, path) && !strchr(path, '\n'))
		strv_add(&w->partial, path);
}

static void on_exists(void *ud, const char *path, mode_t mode)
{
	struct snap_writer *w = ud;
	if (own_metadata(path))
		return;
	int e = write_file(w, path, "", 0, mode);
	w->st.files += e == 1;
	if (e < 0)
		note_err(w, e, path);
}

struct root_recorder snap_writer_recorder(struct snap_writer *w)
{
	return (struct root_recorder){ .link = on_link, .dir = on_dir, .file = on_file, .exists = on_exists,
				       .partial = on_partial, .ud = w };
}

void snap_writer_add(struct snap_writer *w, const char *path, const char *data, size_t len, mode_t mode)
{
	int e = write_file(w, path, data, len, S_IFREG | (mode & 0777));
	w->st.files += e == 1;
	if (e < 0)
		note_err(w, e, path);
}

static int prepare_dir(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_closedir_ DIR *d = opendir(dir);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			return -ENOTEMPTY;
	return 0;
}

int snap_writer_open(const char *dir, struct snap_writer **ret, char **err)
{
	int r = prepare_dir(dir);
	if (r < 0) {
		*err = xasprintf("%s: %s", dir, r == -ENOTEMPTY ? "not empty (choose a new directory)" : strerror(-r));
		return r;
	}
	struct snap_writer *w = xcalloc(1, sizeof(*w));
	w->dir = xstrdup(dir);
	w->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0) {
		r = -errno;
		*err = xasprintf("%s: %s", dir, strerror(-r));
		snap_writer_free(w);
		return r;
	}
	r = write_file(w, ROOT_INCOMPLETE, INCOMPLETE_TEXT, strlen(INCOMPLETE_TEXT), S_IFREG | 0644);
	if (r < 0) {
		*err = xasprintf("cannot write %s%s: %s", dir, ROOT_INCOMPLETE, strerror(-r));
		snap_writer_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

static int unreadable_cmp(const void *a, const void *b)
{
	const struct unreadable_ent *x = a, *y = b;
	return strcmp(x->path, y->path);
}

int snap_writer_finish(struct snap_writer *w, bool complete, char **err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (w->n_unr)
		qsort(w->unr, w->n_unr, sizeof(*w->unr), unreadable_cmp);
	for (size_t i = 0; i < w->n_unr; i++)
		root_unreadable_line(&sb, w->unr[i].path, w->unr[i].err);
	int e = write_file(w, ROOT_UNREADABLE, sb.buf, sb.len, S_IFREG | 0644);
	if (e < 0)
		note_err(w, e, ROOT_UNREADABLE);
	/* what gpuready fix must not take for the whole file */
	strv_sort(&w->partial);
	strbuf_reset(&sb);
	for (size_t i = 0; i < w->partial.n; i++)
		strbuf_addf(&sb, "%s\n", w->partial.v[i]);
	if (w->partial.n && (e = write_file(w, ROOT_PARTIAL, sb.buf, sb.len, S_IFREG | 0644)) < 0)
		note_err(w, e, ROOT_PARTIAL);
	if (!w->err && complete && unlinkat(w->dirfd, root_rel(ROOT_INCOMPLETE), 0) < 0)
		note_err(w, -errno, ROOT_INCOMPLETE);
	if (!w->err)
		return 0;
	*err = xasprintf("writing %s%s failed: %s; %s is incomplete (%s%s marks it)", w->dir, w->err_path,
			 strerror(-w->err), w->dir, w->dir, ROOT_INCOMPLETE);
	return w->err;
}

const struct snap_stats *snap_writer_stats(const struct snap_writer *w)
{
	return &w->st;
}

void snap_writer_free(struct snap_writer *w)
{
	if (!w)
		return;
	if (w->dirfd >= 0)
		close(w->dirfd);
	for (size_t i = 0; i < w->n_unr; i++)
		free(w->unr[i].path);
	free(w->unr);
	strv_free(&w->partial);
	free(w->err_path);
	free(w->made);
	free(w->dir);
	free(w);
}
