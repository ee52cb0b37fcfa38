/* `gpuready snapshot DIR`: record what the checks read.
 *
 * The inventory is loaded once with a recorder on the root (core/root.h):
 * every symlink followed, directory listed, path tested and file read is
 * written into DIR at the same in-root path. Symlinks keep their original
 * target text (relative sysfs links stay relative; absolute links such as
 * systemd's .wants/ entries stay absolute and are clamped into the root
 * when read). Files that could not be read become empty files, which is how
 * the readers see "unreadable"; device nodes become empty files.
 *
 * From the live process only this is added, in DIR/.gpuready/: `environ`
 * (NUL-separated NCCL_*, UCX_* and CUDA_VISIBLE_DEVICES only — no other
 * environment, so no secrets) and `meta` (home, user, uid, arch). */
#define _GNU_SOURCE
#include "cmd.h"
#include "config.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "inventory/inventory.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

struct snap {
	int dirfd;
	int err;        /* first write error */
	char *err_path;
	size_t files, links, dirs;
};

static void note_err(struct snap *s, int e, const char *path)
{
	if (!s->err) {
		s->err = e;
		s->err_path = xstrdup(path);
	}
}

/* mkdir -p of an in-root directory path under the snapshot dir. */
static int mkdirs(struct snap *s, const char *path)
{
	_cleanup_free_ char *p = xstrdup(path[0] == '/' ? path + 1 : path);
	if (!*p)
		return 0;
	for (char *c = p;; c++) {
		if (*c == '/' || *c == '\0') {
			char save = *c;
			*c = '\0';
			if (mkdirat(s->dirfd, p, 0755) < 0 && errno != EEXIST)
				return -errno;
			struct stat st;
			if (fstatat(s->dirfd, p, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
				return -ENOTDIR;
			*c = save;
			if (!save)
				break;
		}
	}
	return 0;
}

static int mkparent(struct snap *s, const char *path)
{
	_cleanup_free_ char *p = xstrdup(path);
	char *slash = strrchr(p, '/');
	if (!slash || slash == p)
		return 0;
	*slash = '\0';
	return mkdirs(s, p);
}

static void on_link(void *ud, const char *path, const char *target)
{
	struct snap *s = ud;
	int e = mkparent(s, path);
	if (e < 0)
		return note_err(s, e, path);
	if (symlinkat(target, s->dirfd, root_rel(path)) == 0)
		s->links++;
	else if (errno != EEXIST)
		note_err(s, -errno, path);
}

static void on_dir(void *ud, const char *path)
{
	struct snap *s = ud;
	int e = mkdirs(s, path);
	if (e < 0)
		note_err(s, e, path);
	else
		s->dirs++;
}

static int write_file(struct snap *s, const char *path, const char *data, size_t len)
{
	int e = mkparent(s, path);
	if (e < 0)
		return e;
	_cleanup_close_ int fd = openat(s->dirfd, root_rel(path), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;
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
	s->files++;
	return 0;
}

static void on_file(void *ud, const char *path, const char *data, size_t len, int err)
{
	struct snap *s = ud;
	int e;
	if (err == -ENOENT)
		return;
	if (err == -EISDIR)
		e = mkdirs(s, path);
	else
		e = write_file(s, path, err ? "" : data, err ? 0 : len);
	if (e < 0)
		note_err(s, e, path);
}

static void on_exists(void *ud, const char *path, mode_t mode)
{
	(void)mode;
	struct snap *s = ud;
	int e = write_file(s, path, "", 0);
	if (e < 0)
		note_err(s, e, path);
}

static bool keep_env(const char *kv)
{
	return str_startswith(kv, "NCCL_") || str_startswith(kv, "UCX_") || str_startswith(kv, "CUDA_VISIBLE_DEVICES=");
}

static int write_live_extras(struct snap *s, const struct inventory *inv)
{
	struct strbuf env = STRBUF_INIT, meta = STRBUF_INIT;
	extern char **environ;
	for (char **e = environ; e && *e; e++)
		if (keep_env(*e) && strchr(*e, '=')) {
			strbuf_adds(&env, *e);
			strbuf_addch(&env, '\0');
		}
	strbuf_addf(&meta, "# written by gpuready %s snapshot\n", GPUREADY_VERSION);
	if (inv->user.home)
		strbuf_addf(&meta, "home = %s\n", inv->user.home);
	if (inv->user.name)
		strbuf_addf(&meta, "user = %s\n", inv->user.name);
	strbuf_addf(&meta, "uid = %ld\n", inv->user.uid);
	if (inv->kernel.arch)
		strbuf_addf(&meta, "arch = %s\n", inv->kernel.arch);
	int e = write_file(s, "/.gpuready/environ", env.buf, env.len);
	if (e == 0)
		e = write_file(s, "/.gpuready/meta", meta.buf, meta.len);
	strbuf_release(&env);
	strbuf_release(&meta);
	return e;
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

int cmd_snapshot(struct cmd_env *env)
{
	const char *src = env->set->sysroot ? env->set->sysroot : "/";
	const char *dir = env->args.v[0];
	_cleanup_root_ struct root *root = NULL;
	_cleanup_inventory_ struct inventory *inv = NULL;
	struct snap s = { .dirfd = -1 };
	int r;

	if ((r = prepare_dir(dir)) < 0) {
		fprintf(stderr, "%s snapshot: %s: %s\n", env->progname, dir,
			r == -ENOTEMPTY ? "not empty (choose a new directory)" : strerror(-r));
		return EXIT_TOOL_ERROR;
	}
	if ((r = root_open(src, &root)) < 0) {
		fprintf(stderr, "%s snapshot: cannot open %s: %s\n", env->progname, src, strerror(-r));
		return EXIT_TOOL_ERROR;
	}
	s.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s.dirfd < 0) {
		fprintf(stderr, "%s snapshot: %s: %s\n", env->progname, dir, strerror(errno));
		return EXIT_TOOL_ERROR;
	}
	struct root_recorder rec = { .link = on_link, .dir = on_dir, .file = on_file, .exists = on_exists, .ud = &s };
	root_set_recorder(root, &rec);
	struct load_opts lo = { .parts = INV_FILES };
	r = inventory_load(root, &lo, &inv);
	if (r == 0) {
		/* the site config is read by the check commands, not the inventory */
		struct strbuf sb = STRBUF_INIT;
		root_read(root, "/etc/gpuready.conf", 1u << 20, &sb);
		strbuf_release(&sb);
	}
	root_set_recorder(root, NULL);
	if (r == 0 && root_is_live(root)) {
		int e = write_live_extras(&s, inv);
		if (e < 0)
			note_err(&s, e, "/.gpuready");
	}
	close(s.dirfd);
	if (r < 0) {
		fprintf(stderr, "%s snapshot: reading the machine failed: %s\n", env->progname, strerror(-r));
		free(s.err_path);
		return EXIT_TOOL_ERROR;
	}
	if (s.err) {
		fprintf(stderr, "%s snapshot: writing %s%s failed: %s\n", env->progname, dir, s.err_path,
			strerror(-s.err));
		free(s.err_path);
		return EXIT_TOOL_ERROR;
	}
	fprintf(stderr, "%s snapshot: %zu files, %zu links, %zu directories recorded in %s\n"
			"check it elsewhere with: gpuready check --sysroot %s\n",
		env->progname, s.files, s.links, s.dirs, dir, dir);
	return EXIT_OK;
}
