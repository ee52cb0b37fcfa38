/* Atomic file replacement (see fileio.h).
 *
 * The temporary file is made the way mkstemp(3) makes one, but beside the
 * target and relative to the target's directory (openat(2)): a random
 * name, O_CREAT|O_EXCL and O_NOFOLLOW. With O_EXCL, open(2) fails on any
 * name that exists, a symbolic link included, whatever it points at; so a
 * link planted in a group-writable directory cannot make a root run write
 * another file. rename(2) renames a link rather than following it; before
 * it runs, the temporary name is checked to still be the file written
 * (same device and inode, not following links), so a file swapped in
 * meanwhile is never moved over the target.
 *
 * The content is rendered into memory (open_memstream(3)) and then written
 * with write(2): the errno of a failed write (ENOSPC on a full disk), of
 * fsync(2) and of close(2) is what the caller gets, not a stream's EIO.
 *
 * While the temporary file exists its name is in a small registry, which
 * file_pending_remove() and a SIGINT/SIGTERM handler read. The handler is
 * installed at the first write, only over the default action (a handler
 * or SIG_IGN someone else set stays); it unlinks the pending files and
 * raises the signal again with the default action restored (SA_RESETHAND,
 * sigaction(2)), so the process still ends by that signal. */
#define _GNU_SOURCE
#include "fileio.h"
#include "cleanup.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Temporary files that may exist at once: the main thread's and a fatal
 * handler's (a job's watchdog writes the error JSON while the main thread
 * may be writing its own); a few more for good measure. */
#define PENDING_MAX 4
/* Random names tried before giving up: each taken one is someone else's
 * file or link (mkstemp(3) in glibc tries 62^3 times; one collision in 62^6
 * names is already unlikely, a hundred are an attack). */
#define NAME_TRIES 100
#define NAME_RANDOM 6

enum { SLOT_FREE, SLOT_FILLING, SLOT_SET };

struct pending {
	atomic_int state;
	int dirfd;
	char name[NAME_MAX + 1];
};

static struct pending pending[PENDING_MAX];
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

void file_pending_remove(void)
{
	for (size_t i = 0; i < PENDING_MAX; i++)
		if (atomic_load(&pending[i].state) == SLOT_SET)
			unlinkat(pending[i].dirfd, pending[i].name, 0);
}

/* Only async-signal-safe calls (signal-safety(7)): unlinkat, raise. */
static void on_signal(int sig)
{
	file_pending_remove();
	raise(sig);
}

static void handler_install(void)
{
	const int sigs[] = { SIGINT, SIGTERM };
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++) {
		struct sigaction old, sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND | SA_RESTART };
		sigemptyset(&sa.sa_mask);
		if (sigaction(sigs[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
	}
}

/* Registers name in dirfd for the handler; NULL when every slot is taken
 * (the file is then still removed on errors, not on a signal). */
static struct pending *pending_add(int dirfd, const char *name)
{
	pthread_once(&handler_once, handler_install);
	for (size_t i = 0; i < PENDING_MAX; i++) {
		int expect = SLOT_FREE;
		if (atomic_compare_exchange_strong(&pending[i].state, &expect, SLOT_FILLING)) {
			pending[i].dirfd = dirfd;
			snprintf(pending[i].name, sizeof(pending[i].name), "%s", name);
			atomic_store(&pending[i].state, SLOT_SET);
			return &pending[i];
		}
	}
	return NULL;
}

static void pending_drop(struct pending *p)
{
	if (p)
		atomic_store(&p->state, SLOT_FREE);
}

/* NAME_RANDOM characters of [A-Za-z0-9] at x, from getrandom(2); where the
 * kernel has none to give yet, from the clock, the thread and the try:
 * O_EXCL keeps a guessable name safe, randomness only avoids collisions
 * (the step is Knuth's MMIX linear congruential generator). */
static void random_name(char *x, unsigned try)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[NAME_RANDOM];
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t v = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)gettid() << 20 ^ try;
		for (size_t i = 0; i < sizeof(r); i++, v = v * 6364136223846793005u + 1442695040888963407u)
			r[i] = (unsigned char)(v >> 56);
	}
	for (size_t i = 0; i < sizeof(r); i++)
		x[i] = chars[r[i] % (sizeof(chars) - 1)];
}

/* The temporary file of one write. */
struct tmpfile {
	int dirfd;             /* the target's directory */
	const char *base;      /* the target's name in it */
	char name[NAME_MAX + 1]; /* the temporary file's name in it */
	int fd;                /* open for writing, else -1 */
	bool created;          /* name is ours to remove */
	struct stat st;        /* the file as created */
	struct pending *slot;
};

/* Opens path's directory and creates "<base>.tmp.XXXXXX" in it. */
static int tmp_create(struct tmpfile *t, const char *path)
{
	_cleanup_free_ char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	t->base = slash ? path + (slash - dir) + 1 : path;
	if (slash)
		slash[slash == dir] = '\0'; /* "/name" is in "/" */
	t->dirfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dirfd < 0)
		return -errno;
	int n = snprintf(t->name, sizeof(t->name), "%s.tmp.XXXXXX", t->base);
	if (n < 0 || (size_t)n >= sizeof(t->name))
		return -ENAMETOOLONG;
	for (unsigned try = 0; try < NAME_TRIES; try++) {
		random_name(t->name + n - NAME_RANDOM, try);
		t->fd = openat(t->dirfd, t->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (t->fd >= 0)
			break;
		if (errno != EEXIST)
			return -errno;
	}
	if (t->fd < 0)
		return -EEXIST;
	t->created = true;
	t->slot = pending_add(t->dirfd, t->name);
	return fstat(t->fd, &t->st) < 0 ? -errno : 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Syncs and closes the file, and renames it over the target if the
 * temporary name still names it. */
static int tmp_commit(struct tmpfile *t)
{
	int ret = fsync(t->fd) < 0 ? -errno : 0;
	if (close(TAKE_FD(t->fd)) < 0 && ret == 0)
		ret = -errno;
	if (ret < 0)
		return ret;
	struct stat now;
	if (fstatat(t->dirfd, t->name, &now, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (now.st_dev != t->st.st_dev || now.st_ino != t->st.st_ino)
		return S_ISLNK(now.st_mode) ? -ELOOP : -EEXIST; /* as open(2) with O_NOFOLLOW, O_EXCL */
	return renameat(t->dirfd, t->name, t->dirfd, t->base) < 0 ? -errno : 0;
}

/* Renders through render into memory, then into t's file. */
static int tmp_fill(struct tmpfile *t, int (*render)(FILE *f, void *ctx), void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -errno;
	int ret = render(f, ctx);
	if (fclose(f) != 0 && ret == 0)
		ret = -errno;
	if (ret == 0)
		ret = write_all(t->fd, buf, len);
	free(buf);
	return ret;
}

int file_write_atomic(const char *path, int (*render)(FILE *f, void *ctx), void *ctx)
{
	struct tmpfile t = { .dirfd = -1, .fd = -1 };
	int ret = tmp_create(&t, path);
	if (ret == 0)
		ret = tmp_fill(&t, render, ctx);
	if (ret == 0)
		ret = tmp_commit(&t);
	if (t.fd >= 0)
		close(t.fd);
	if (ret < 0 && t.created)
		unlinkat(t.dirfd, t.name, 0);
	pending_drop(t.slot);
	if (t.dirfd >= 0)
		close(t.dirfd);
	return ret;
}

static int write_json(FILE *f, void *ctx)
{
	const char *txt = json_object_to_json_string_ext(ctx, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	return fputs(txt, f) < 0 || fputc('\n', f) < 0 ? -EIO : 0;
}

int file_write_json(const char *path, struct json_object *o)
{
	return file_write_atomic(path, write_json, o);
}

int file_read_host(const char *path, size_t max, struct strbuf *out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	bool cut;
	int r = fd_read_capped(fd, max, out, &cut);
	return r ? r : cut ? -EFBIG : 0;
}

int fd_read_capped(int fd, size_t max, struct strbuf *out, bool *ret_cut)
{
	char buf[4096];
	*ret_cut = false;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		strbuf_add(out, buf, (size_t)n);
		if (out->len > max) {
			strbuf_setlen(out, max);
			*ret_cut = true;
			return 0;
		}
	}
}
