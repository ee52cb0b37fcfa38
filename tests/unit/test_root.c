/* Unit tests for the root context (core/root): textual symlink resolution
 * inside a directory that stands for "/", clamping of absolute and ".."
 * targets, loops, dangling links, reads that refuse to truncate or block,
 * sorted listings, the recorder callbacks used by `snapshot`, and a
 * recorded tree's metadata: read errors replayed from .gpuready/unreadable,
 * the .gpuready/incomplete mark.
 *
 * One temporary tree shaped like sysfs is built for the whole group. */
#define _GNU_SOURCE
#include "testutil.h"
#include "core/cleanup.h"
#include "core/errname.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PCI_DEV "/sys/devices/pci0000:00/0000:00:01.0/0000:17:00.0"
#define IB_DEV PCI_DEV "/infiniband/mlx5_0"

struct fx {
	char *dir;
	struct root *r;
};

static int group_setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	char *d = tu_mkdtemp();
	fx->dir = d;

	/* sysfs-like: class links are relative and climb with ../.. */
	tu_write(d, IB_DEV "/ports/1/state", "4: ACTIVE\n");
	tu_write(d, IB_DEV "/ports/1/rate", "400 Gb/sec (4X NDR)\n");
	tu_write(d, PCI_DEV "/vendor", "0x15b3\n");
	tu_symlink(d, "/sys/class/infiniband/mlx5_0", "../../devices/pci0000:00/0000:00:01.0/0000:17:00.0/infiniband/mlx5_0");
	tu_symlink(d, IB_DEV "/device", "../../../0000:17:00.0");
	tu_mkdir(d, "/sys/bus/pci/drivers/mlx5_core");
	tu_symlink(d, PCI_DEV "/driver", "../../../../bus/pci/drivers/mlx5_core");

	/* absolute targets and climbing above the root are clamped */
	tu_write(d, "/etc/x", "inroot\n");
	tu_symlink(d, "/abs", "/etc/x");
	tu_symlink(d, "/abs_passwd", "/etc/passwd"); /* exists on the host, not here */
	tu_symlink(d, "/abs_dir", "/etc");
	tu_symlink(d, "/up", "../../../../../etc/x");
	tu_symlink(d, "/sys/up_abs", "/../../../etc/x");

	/* loops, dangling links, a link in the middle of a path */
	tu_symlink(d, "/loop1", "loop2");
	tu_symlink(d, "/loop2", "loop1");
	tu_symlink(d, "/self", "self");
	tu_symlink(d, "/dangling", "missing");
	tu_symlink(d, "/dangling_deep", "nothing/here");
	tu_symlink(d, "/mid", "sys/devices");
	tu_symlink(d, "/file_link", "etc/x");
	tu_symlink(d, "/dir_link", "etc/");

	/* a chain of exactly ROOT_MAX_LINKS links, and one more */
	tu_write(d, "/chain/target", "end\n");
	for (int i = 0; i <= ROOT_MAX_LINKS; i++) {
		char name[32], target[32];
		snprintf(name, sizeof(name), "/chain/c%02d", i);
		if (i == ROOT_MAX_LINKS)
			snprintf(target, sizeof(target), "target");
		else
			snprintf(target, sizeof(target), "c%02d", i + 1);
		tu_symlink(d, name, target);
	}

	/* special files */
	tu_write(d, "/files/empty", "");
	tu_write_bytes(d, "/files/bin", "a\0b\n", 4);
	tu_mkdir(d, "/files/dir");
	tu_mkdir(d, "/files/emptydir");
	char *fifo = xasprintf("%s/files/fifo", d);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	free(fifo);
	tu_write(d, "/list/b", "");
	tu_write(d, "/list/a", "");
	tu_write(d, "/list/.hidden", "");
	tu_mkdir(d, "/list/c_dir");
	tu_symlink(d, "/list/d_link", "a");

	assert_int_equal(root_open(d, &fx->r), 0);
	*state = fx;
	return 0;
}

static int group_teardown(void **state)
{
	struct fx *fx = *state;
	root_free(fx->r);
	tu_rmtree(fx->dir);
	free(fx->dir);
	free(fx);
	return 0;
}

static void resolve_ok(const struct root *r, const char *path, const char *want)
{
	struct strbuf out = STRBUF_INIT;
	int ret = root_resolve(r, path, &out);
	char *got = strbuf_detach(&out);
	bool ok = ret == 0 && !strcmp(got, want);
	if (!ok)
		print_error("root_resolve(%s) = %d \"%s\", want 0 \"%s\"\n", path, ret, got, want);
	free(got);
	assert_true(ok);
}

static void resolve_err(const struct root *r, const char *path, int err)
{
	struct strbuf out = STRBUF_INIT;
	int ret = root_resolve(r, path, &out);
	if (ret != err)
		print_error("root_resolve(%s) = %d (\"%s\"), want %d\n", path, ret, out.buf, err);
	strbuf_release(&out);
	assert_int_equal(ret, err);
}

static void read_ok(const struct root *r, const char *path, const char *want)
{
	struct strbuf out = STRBUF_INIT;
	int ret = root_read(r, path, ROOT_READ_MAX, &out);
	char *got = strbuf_detach(&out);
	bool ok = ret == 0 && !strcmp(got, want);
	if (!ok)
		print_error("root_read(%s) = %d \"%s\", want 0 \"%s\"\n", path, ret, got, want);
	free(got);
	assert_true(ok);
}

/* A failed read returns err and leaves the output as it was. */
static void read_err(const struct root *r, const char *path, int err)
{
	struct strbuf out = STRBUF_INIT;
	strbuf_adds(&out, "previous");
	int ret = root_read(r, path, ROOT_READ_MAX, &out);
	bool untouched = !strcmp(out.buf, "previous");
	if (ret != err || !untouched)
		print_error("root_read(%s) = %d, want %d (output %s)\n", path, ret, err,
			    untouched ? "untouched" : "changed");
	strbuf_release(&out);
	assert_int_equal(ret, err);
	assert_true(untouched);
}

static void test_open_errors(void **state)
{
	struct fx *fx = *state;
	struct root *r = (struct root *)0x1;
	assert_int_equal(root_open("", &r), -EINVAL);
	assert_int_equal(root_open(NULL, &r), -EINVAL);
	char *missing = xasprintf("%s/no-such-dir", fx->dir);
	assert_int_equal(root_open(missing, &r), -ENOENT);
	free(missing);
	char *file = xasprintf("%s/etc/x", fx->dir);
	assert_int_equal(root_open(file, &r), -ENOTDIR);
	free(file);
	assert_ptr_equal(r, (struct root *)0x1); /* untouched on failure */
	root_free(NULL);
}

static void test_is_live(void **state)
{
	struct fx *fx = *state;
	assert_false(root_is_live(fx->r));
	assert_string_equal(root_dir(fx->r), fx->dir);
	assert_true(root_dirfd(fx->r) >= 0);

	struct root *live = NULL;
	assert_int_equal(root_open("/", &live), 0);
	assert_true(root_is_live(live));
	assert_string_equal(root_dir(live), "/");
	root_free(live);
	/* another spelling of "/" is still the live system */
	assert_int_equal(root_open("/etc/..", &live), 0);
	assert_true(root_is_live(live));
	root_free(live);
	/* a subdirectory of the fixture is not */
	char *sub = xasprintf("%s/etc", fx->dir);
	assert_int_equal(root_open(sub, &live), 0);
	assert_false(root_is_live(live));
	root_free(live);
	free(sub);
}

static void test_resolve_plain(void **state)
{
	struct fx *fx = *state;
	resolve_ok(fx->r, "/", "/");
	resolve_ok(fx->r, "/.", "/");
	resolve_ok(fx->r, "//", "/");
	resolve_ok(fx->r, "/etc/x", "/etc/x");
	resolve_ok(fx->r, "/etc//x", "/etc/x");
	resolve_ok(fx->r, "/./etc/./x", "/etc/x");
	resolve_ok(fx->r, "/etc/../etc/x", "/etc/x");
	resolve_ok(fx->r, "/etc/", "/etc");
	resolve_ok(fx->r, "/etc///", "/etc");
	resolve_ok(fx->r, "/sys/devices/", "/sys/devices");
	/* relative input is refused */
	resolve_err(fx->r, "etc/x", -EINVAL);
	resolve_err(fx->r, "", -EINVAL);
	resolve_err(fx->r, NULL, -EINVAL);
}

static void test_resolve_sysfs_relative(void **state)
{
	struct fx *fx = *state;
	resolve_ok(fx->r, "/sys/class/infiniband/mlx5_0", IB_DEV);
	resolve_ok(fx->r, "/sys/class/infiniband/mlx5_0/", IB_DEV);
	resolve_ok(fx->r, "/sys/class/infiniband/mlx5_0/ports/1/state", IB_DEV "/ports/1/state");
	/* two links on the way: class -> device dir -> PCI function */
	resolve_ok(fx->r, "/sys/class/infiniband/mlx5_0/device", PCI_DEV);
	resolve_ok(fx->r, "/sys/class/infiniband/mlx5_0/device/vendor", PCI_DEV "/vendor");
	resolve_ok(fx->r, "/sys/class/infiniband/mlx5_0/device/driver", "/sys/bus/pci/drivers/mlx5_core");
	/* ".." after a link is taken in the link's target (kernel semantics) */
	resolve_ok(fx->r, "/sys/class/infiniband/mlx5_0/../..", PCI_DEV);
	resolve_ok(fx->r, "/sys/class/infiniband/mlx5_0/device/..", "/sys/devices/pci0000:00/0000:00:01.0");
	/* a link in the middle of the path */
	resolve_ok(fx->r, "/mid/pci0000:00/0000:00:01.0", "/sys/devices/pci0000:00/0000:00:01.0");
	resolve_ok(fx->r, "/dir_link/x", "/etc/x");
	read_ok(fx->r, "/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
	read_ok(fx->r, "/sys/class/infiniband/mlx5_0/device/vendor", "0x15b3\n");
	read_ok(fx->r, "/mid/pci0000:00/0000:00:01.0/0000:17:00.0/vendor", "0x15b3\n");
}

static void test_resolve_clamped(void **state)
{
	struct fx *fx = *state;
	/* absolute target: ROOT/etc/x, never the host's /etc */
	resolve_ok(fx->r, "/abs", "/etc/x");
	read_ok(fx->r, "/abs", "inroot\n");
	resolve_ok(fx->r, "/abs_dir/x", "/etc/x");
	read_ok(fx->r, "/abs_dir/x", "inroot\n");
	/* the host has /etc/passwd; the root does not */
	read_err(fx->r, "/abs_passwd", -ENOENT);
	read_err(fx->r, "/etc/passwd", -ENOENT);
	/* ".." above the root stays at the root */
	resolve_ok(fx->r, "/..", "/");
	resolve_ok(fx->r, "/../../..", "/");
	resolve_ok(fx->r, "/../../etc/x", "/etc/x");
	resolve_ok(fx->r, "/etc/../../../etc/x", "/etc/x");
	read_ok(fx->r, "/../../../etc/x", "inroot\n");
	read_err(fx->r, "/../../../etc/passwd", -ENOENT);
	resolve_ok(fx->r, "/up", "/etc/x");
	read_ok(fx->r, "/up", "inroot\n");
	resolve_ok(fx->r, "/sys/up_abs", "/etc/x");
	read_ok(fx->r, "/sys/up_abs", "inroot\n");
}

static void test_resolve_loops(void **state)
{
	struct fx *fx = *state;
	resolve_err(fx->r, "/loop1", -ELOOP);
	resolve_err(fx->r, "/self", -ELOOP);
	resolve_err(fx->r, "/self/x", -ELOOP);
	read_err(fx->r, "/loop2", -ELOOP);
	assert_false(root_exists(fx->r, "/loop1"));
	/* exactly ROOT_MAX_LINKS links are followed; one more is a loop */
	read_ok(fx->r, "/chain/c01", "end\n");
	resolve_ok(fx->r, "/chain/c01", "/chain/target");
	resolve_err(fx->r, "/chain/c00", -ELOOP);
	read_err(fx->r, "/chain/c00", -ELOOP);
}

static void test_resolve_missing(void **state)
{
	struct fx *fx = *state;
	struct strbuf out = STRBUF_INIT;
	/* a missing last component: -ENOENT and where it would be */
	assert_int_equal(root_resolve(fx->r, "/etc/nothere", &out), -ENOENT);
	assert_string_equal(out.buf, "/etc/nothere");
	assert_int_equal(root_resolve(fx->r, "/dangling", &out), -ENOENT);
	assert_string_equal(out.buf, "/missing");
	assert_int_equal(root_resolve(fx->r, "/sys/class/infiniband/mlx5_0/nothere", &out), -ENOENT);
	assert_string_equal(out.buf, IB_DEV "/nothere");
	strbuf_release(&out);
	/* a missing middle component: -ENOENT */
	resolve_err(fx->r, "/nothere/x", -ENOENT);
	resolve_err(fx->r, "/dangling_deep", -ENOENT);
	resolve_err(fx->r, "/dangling/x", -ENOENT);
	read_err(fx->r, "/dangling", -ENOENT);
	read_err(fx->r, "/dangling_deep", -ENOENT);
	read_err(fx->r, "/nothere", -ENOENT);
	assert_false(root_exists(fx->r, "/dangling"));
	assert_false(root_exists(fx->r, "/nothere"));
}

static void test_resolve_notdir(void **state)
{
	struct fx *fx = *state;
	resolve_err(fx->r, "/etc/x/y", -ENOTDIR);
	resolve_err(fx->r, "/etc/x/y/z", -ENOTDIR);
	resolve_err(fx->r, "/file_link/y", -ENOTDIR);
	resolve_err(fx->r, "/files/fifo/x", -ENOTDIR);
	read_err(fx->r, "/etc/x/y", -ENOTDIR);
	read_err(fx->r, "/abs/y", -ENOTDIR);
	struct strv l = STRV_INIT;
	assert_int_equal(root_list(fx->r, "/etc/x", &l), -ENOTDIR);
	assert_int_equal(l.n, 0);
}

static void test_resolve_trailing_slash_on_file(void **state)
{
	struct fx *fx = *state;
	/* Regression (fixed): a trailing slash after a regular file resolves as if it were
	 * absent; the kernel (and POSIX path resolution) give ENOTDIR for
	 * "file/". root.c resolve() treats any all-slash remainder as "last"
	 * and never checks that the component is a directory. */
	resolve_err(fx->r, "/etc/x/", -ENOTDIR);
	read_err(fx->r, "/etc/x/", -ENOTDIR);
}

static void test_resolve_long_names(void **state)
{
	struct fx *fx = *state;
	/* a component longer than NAME_MAX is an error, not a crash */
	char path[600];
	path[0] = '/';
	memset(path + 1, 'a', 300);
	path[301] = '\0';
	resolve_err(fx->r, path, -ENAMETOOLONG);
	read_err(fx->r, path, -ENAMETOOLONG);
	/* a long but valid path of "x/.." pairs */
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 2000; i++)
		strbuf_adds(&sb, "/etc/..");
	strbuf_adds(&sb, "/etc/x");
	resolve_ok(fx->r, sb.buf, "/etc/x");
	strbuf_release(&sb);
}

static void test_read_special(void **state)
{
	struct fx *fx = *state;
	struct strbuf out = STRBUF_INIT;
	/* empty file: success, empty output, previous content replaced */
	strbuf_adds(&out, "previous");
	assert_int_equal(root_read(fx->r, "/files/empty", ROOT_READ_MAX, &out), 0);
	assert_int_equal(out.len, 0);
	assert_string_equal(out.buf, "");
	/* binary content is kept byte for byte */
	assert_int_equal(root_read(fx->r, "/files/bin", ROOT_READ_MAX, &out), 0);
	assert_int_equal(out.len, 4);
	assert_memory_equal(out.buf, "a\0b\n", 4);
	assert_int_equal(out.buf[4], '\0');
	strbuf_release(&out);

	read_err(fx->r, "/files/dir", -EISDIR);
	read_err(fx->r, "/dir_link", -EISDIR);
	read_err(fx->r, "/", -EISDIR);
	/* a FIFO must neither block nor be read */
	alarm(5);
	read_err(fx->r, "/files/fifo", -EINVAL);
	alarm(0);
}

static void test_read_max(void **state)
{
	(void)state;
	char *d = tu_mkdtemp();
	char *big = malloc(20001);
	assert_non_null(big);
	for (int i = 0; i < 20000; i++)
		big[i] = (char)('a' + i % 26);
	big[20000] = '\0';
	tu_write(d, "/big", big);
	tu_write(d, "/hundred", "0123456789012345678901234567890123456789012345678901234567890123456789"
				"012345678901234567890123456789");
	struct root *r = NULL;
	assert_int_equal(root_open(d, &r), 0);
	struct strbuf out = STRBUF_INIT;
	strbuf_adds(&out, "previous");

	/* exactly max bytes is fine; one fewer allowed is -EFBIG, untouched */
	assert_int_equal(root_read(r, "/hundred", 99, &out), -EFBIG);
	assert_string_equal(out.buf, "previous");
	assert_int_equal(root_read(r, "/hundred", 0, &out), -EFBIG);
	assert_string_equal(out.buf, "previous");
	assert_int_equal(root_read(r, "/hundred", 100, &out), 0);
	assert_int_equal(out.len, 100);

	/* larger than one read chunk: never truncated */
	assert_int_equal(root_read(r, "/big", 19999, &out), -EFBIG);
	assert_int_equal(out.len, 100);
	assert_int_equal(root_read(r, "/big", 5000, &out), -EFBIG);
	assert_int_equal(root_read(r, "/big", ROOT_READ_MAX, &out), 0);
	assert_int_equal(out.len, 20000);
	assert_memory_equal(out.buf, big, 20000);
	assert_int_equal(out.buf[20000], '\0');
	assert_int_equal(root_read(r, "/big", 20000, &out), 0);
	assert_int_equal(out.len, 20000);

	strbuf_release(&out);
	root_free(r);
	free(big);
	tu_rmtree(d);
	free(d);
}

static void test_list(void **state)
{
	struct fx *fx = *state;
	struct strv l = STRV_INIT;
	strv_add(&l, "stale");
	assert_int_equal(root_list(fx->r, "/list", &l), 0);
	/* sorted, without "." and "..", old content replaced */
	assert_int_equal(l.n, 5);
	assert_string_equal(l.v[0], ".hidden");
	assert_string_equal(l.v[1], "a");
	assert_string_equal(l.v[2], "b");
	assert_string_equal(l.v[3], "c_dir");
	assert_string_equal(l.v[4], "d_link");
	assert_null(l.v[5]);
	assert_false(strv_contains(&l, "."));
	assert_false(strv_contains(&l, ".."));
	assert_false(strv_contains(&l, "stale"));

	/* through a link */
	assert_int_equal(root_list(fx->r, "/sys/class/infiniband", &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "mlx5_0");
	assert_int_equal(root_list(fx->r, "/sys/class/infiniband/mlx5_0/ports", &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "1");

	/* empty directory */
	assert_int_equal(root_list(fx->r, "/files/emptydir", &l), 0);
	assert_int_equal(l.n, 0);

	/* errors leave the output untouched */
	strv_add(&l, "keep");
	assert_int_equal(root_list(fx->r, "/nothere", &l), -ENOENT);
	assert_int_equal(root_list(fx->r, "/files/empty", &l), -ENOTDIR);
	assert_int_equal(root_list(fx->r, "/loop1", &l), -ELOOP);
	assert_int_equal(root_list(fx->r, "/dangling", &l), -ENOENT);
	assert_int_equal(root_list(fx->r, "relative", &l), -EINVAL);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "keep");
	strv_free(&l);

	/* the root itself */
	assert_int_equal(root_list(fx->r, "/", &l), 0);
	assert_true(strv_contains(&l, "sys"));
	assert_true(strv_contains(&l, "etc"));
	for (size_t i = 1; i < l.n; i++)
		assert_true(strcmp(l.v[i - 1], l.v[i]) < 0);
	strv_free(&l);
}

static void test_readlink(void **state)
{
	struct fx *fx0 = *state;
	/* a fresh root: the shared one has resolved through these links */
	struct fx fresh = { .dir = fx0->dir }, *fx = &fresh;
	assert_int_equal(root_open(fx0->dir, &fresh.r), 0);
	struct strbuf out = STRBUF_INIT;
	assert_int_equal(root_readlink(fx->r, "/sys/class/infiniband/mlx5_0", &out), 0);
	assert_string_equal(out.buf, "../../devices/pci0000:00/0000:00:01.0/0000:17:00.0/infiniband/mlx5_0");
	/* earlier components are followed, the last is not */
	assert_int_equal(root_readlink(fx->r, "/sys/class/infiniband/mlx5_0/device", &out), 0);
	assert_string_equal(out.buf, "../../../0000:17:00.0");
	assert_int_equal(root_readlink(fx->r, "/sys/class/infiniband/mlx5_0/device/driver", &out), 0);
	assert_string_equal(out.buf, "../../../../bus/pci/drivers/mlx5_core");
	assert_int_equal(root_readlink(fx->r, "/abs", &out), 0);
	assert_string_equal(out.buf, "/etc/x");
	/* dangling and looping links still have a target text */
	assert_int_equal(root_readlink(fx->r, "/dangling", &out), 0);
	assert_string_equal(out.buf, "missing");
	assert_int_equal(root_readlink(fx->r, "/loop1", &out), 0);
	assert_string_equal(out.buf, "loop2");

	/* errors leave out untouched */
	strbuf_reset(&out);
	strbuf_adds(&out, "previous");
	assert_int_equal(root_readlink(fx->r, "/etc/x", &out), -EINVAL);
	assert_int_equal(root_readlink(fx->r, "/etc", &out), -EINVAL);
	assert_int_equal(root_readlink(fx->r, "/nothere", &out), -ENOENT);
	assert_int_equal(root_readlink(fx->r, "/nothere/x", &out), -ENOENT);
	assert_int_equal(root_readlink(fx->r, "/loop1/x", &out), -ELOOP);
	assert_int_equal(root_readlink(fx->r, "/etc/x/y", &out), -ENOTDIR);
	assert_string_equal(out.buf, "previous");
	strbuf_release(&out);
	root_free(fresh.r);
}

static void test_readlink_after_traversal(void **state)
{
	struct fx *fx = *state;
	struct root *r = NULL;
	assert_int_equal(root_open(fx->dir, &r), 0);
	struct strbuf out = STRBUF_INIT;
	const char *link = "/sys/class/infiniband/mlx5_0/device";
	/* reading the link works on a fresh root ... */
	assert_int_equal(root_readlink(r, link, &out), 0);
	assert_string_equal(out.buf, "../../../0000:17:00.0");
	/* ... and after reading a file below it (the last component of the
	 * directory part stays a link there) */
	assert_int_equal(root_read(r, "/sys/class/infiniband/mlx5_0/device/vendor", ROOT_READ_MAX, &out), 0);
	assert_int_equal(root_readlink(r, link, &out), 0);
	/* Regression (fixed): root.c resolve_at() consults the directory cache (dcache_get)
	 * before it checks `last && !follow_last`. Once a link has been
	 * traversed as a middle component (root_resolve, root_stat,
	 * root_exists, root_list of a path below it), the cache maps it to its
	 * target, so root_readlink() of the link itself resolves to the target
	 * directory and readlinkat() fails: -EINVAL ("not a link"). The usual
	 * inventory pattern "stat/list something under device/, then
	 * read_link device" breaks. */
	int e1, e2, e3;
	assert_true(root_exists(r, "/sys/class/infiniband/mlx5_0/device/vendor"));
	e1 = root_readlink(r, link, &out);
	struct strv l = STRV_INIT;
	assert_int_equal(root_list(r, "/sys/class/infiniband/mlx5_0/ports", &l), 0);
	strv_free(&l);
	e2 = root_readlink(r, "/sys/class/infiniband/mlx5_0", &out);
	strbuf_reset(&out);
	e3 = root_readlink(r, link, &out);
	bool same = !strcmp(out.buf, "../../../0000:17:00.0");
	strbuf_release(&out);
	root_free(r);
	assert_int_equal(e1, 0);
	assert_int_equal(e2, 0);
	assert_int_equal(e3, 0);
	assert_true(same);
}

static void test_stat_exists(void **state)
{
	struct fx *fx = *state;
	struct stat st;
	assert_int_equal(root_stat(fx->r, "/abs", &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 7);
	assert_int_equal(root_stat(fx->r, "/sys/class/infiniband/mlx5_0", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(root_stat(fx->r, "/files/fifo", &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	memset(&st, 0x5a, sizeof(st));
	assert_int_equal(root_stat(fx->r, "/nothere", &st), -ENOENT);
	assert_int_equal(st.st_mode, 0x5a5a5a5a); /* untouched */
	assert_true(root_exists(fx->r, "/"));
	assert_true(root_exists(fx->r, "/etc/x"));
	assert_true(root_exists(fx->r, "/up"));
	assert_true(root_exists(fx->r, "/files/fifo"));
	assert_false(root_exists(fx->r, "/etc/passwd"));
	assert_false(root_exists(fx->r, "/self"));
	assert_false(root_exists(fx->r, "/etc/x/y"));
}

static void test_stand_in(void **state)
{
	(void)state;
	/* A recorded tree copied without symlinks keeps each sysfs link as a
	 * regular file holding the target text ("../..." and nothing else);
	 * root.c follows such files in a recorded root. */
	char *d = tu_mkdtemp();
	tu_write(d, "/sys/devices/virtual/net/eth1/mtu", "1500\n");
	tu_write(d, "/sys/class/net/eth1", "../../devices/virtual/net/eth1");
	tu_write(d, "/sys/devices/virtual/net/eth1/to_file", "mtu/../mtu"); /* no "../" start */
	tu_write(d, "/sys/devices/virtual/net/eth1/up", "../../../../../../etc/x");
	tu_write(d, "/etc/x", "inroot\n");
	tu_write(d, "/sys/nl", "../devices\n");   /* a newline: plain data */
	tu_write(d, "/sys/sp", "../devices x");   /* a blank: plain data */
	tu_write(d, "/sys/loop", "../sys/loop");
	struct root *r = NULL;
	assert_int_equal(root_open(d, &r), 0);
	/* readlink first: it is not affected by earlier traversals then */
	struct strbuf out = STRBUF_INIT;
	assert_int_equal(root_readlink(r, "/sys/class/net/eth1", &out), 0);
	assert_string_equal(out.buf, "../../devices/virtual/net/eth1");
	assert_int_equal(root_readlink(r, "/sys/nl", &out), -EINVAL);
	strbuf_release(&out);
	resolve_ok(r, "/sys/class/net/eth1", "/sys/devices/virtual/net/eth1");
	resolve_ok(r, "/sys/class/net/eth1/mtu", "/sys/devices/virtual/net/eth1/mtu");
	read_ok(r, "/sys/class/net/eth1/mtu", "1500\n");
	read_ok(r, "/sys/class/net/eth1/up", "inroot\n");
	read_ok(r, "/sys/class/net/eth1/to_file", "mtu/../mtu");
	read_ok(r, "/sys/nl", "../devices\n");
	read_ok(r, "/sys/sp", "../devices x");
	read_err(r, "/sys/class/net/eth1", -EISDIR);
	read_err(r, "/sys/loop", -ELOOP);
	struct strv l = STRV_INIT;
	assert_int_equal(root_list(r, "/sys/class/net/eth1", &l), 0);
	assert_true(strv_contains(&l, "mtu"));
	strv_free(&l);
	root_free(r);
	tu_rmtree(d);
	free(d);
}

/* ---- recorder ---- */

struct rec_log {
	struct strv ev;
	mode_t mode; /* of the last file() */
};

static void rec_link(void *ud, const char *path, const char *target)
{
	struct rec_log *l = ud;
	strv_push(&l->ev, xasprintf("link %s -> %s", path, target));
}

static void rec_dir(void *ud, const char *path)
{
	struct rec_log *l = ud;
	strv_push(&l->ev, xasprintf("dir %s", path));
}

static void rec_file(void *ud, const char *path, const char *data, size_t len, mode_t mode, int err)
{
	struct rec_log *l = ud;
	assert_non_null(data);
	strv_push(&l->ev, xasprintf("file %s len=%zu err=%d", path, len, err));
	l->mode = mode;
}

static void rec_exists(void *ud, const char *path, mode_t mode)
{
	struct rec_log *l = ud;
	strv_push(&l->ev, xasprintf("exists %s %s", path, S_ISFIFO(mode) ? "fifo" : S_ISREG(mode) ? "reg" : "other"));
}

static bool str_endswith_slash(const char *p)
{
	size_t n = strlen(p);
	return n > 1 && p[n - 1] == '/';
}

static void dump_events(const struct rec_log *l)
{
	for (size_t i = 0; i < l->ev.n; i++)
		print_message("  event: %s\n", l->ev.v[i]);
}

static void expect_event(const struct rec_log *l, const char *ev)
{
	if (!strv_contains(&l->ev, ev)) {
		dump_events(l);
		fail_msg("missing recorder event \"%s\"", ev);
	}
}

static void test_recorder(void **state)
{
	struct fx *fx = *state;
	struct rec_log log = { .ev = STRV_INIT };
	const struct root_recorder rec = {
		.link = rec_link, .dir = rec_dir, .file = rec_file, .exists = rec_exists, .ud = &log,
	};
	root_set_recorder(fx->r, &rec);
	struct strbuf out = STRBUF_INIT;
	struct strv l = STRV_INIT;

	/* a read through two links: both links and the canonical file path */
	assert_int_equal(root_read(fx->r, "/sys/class/infiniband/mlx5_0/device/vendor", ROOT_READ_MAX, &out), 0);
	expect_event(&log, "link /sys/class/infiniband/mlx5_0 -> "
			   "../../devices/pci0000:00/0000:00:01.0/0000:17:00.0/infiniband/mlx5_0");
	expect_event(&log, "link " IB_DEV "/device -> ../../../0000:17:00.0");
	expect_event(&log, "file " PCI_DEV "/vendor len=7 err=0");
	assert_int_equal(log.ev.n, 3);

	/* absolute link: the link is recorded where it is, the file clamped */
	strv_free(&log.ev);
	root_set_recorder(fx->r, &rec);
	assert_int_equal(root_read(fx->r, "/abs", ROOT_READ_MAX, &out), 0);
	expect_event(&log, "link /abs -> /etc/x");
	expect_event(&log, "file /etc/x len=7 err=0");
	assert_int_equal(log.ev.n, 2);

	/* a failed read of an existing object is recorded with its error */
	strv_free(&log.ev);
	assert_int_equal(root_read(fx->r, "/files/dir/", ROOT_READ_MAX, &out), -EISDIR);
	expect_event(&log, "file /files/dir len=0 err=-21");
	strv_free(&log.ev);
	assert_int_equal(root_read(fx->r, "/files/fifo", ROOT_READ_MAX, &out), -EINVAL);
	expect_event(&log, "file /files/fifo len=0 err=-22");
	/* a missing file: no event, or one with -ENOENT and no data */
	strv_free(&log.ev);
	assert_int_equal(root_read(fx->r, "/nothere", ROOT_READ_MAX, &out), -ENOENT);
	if (log.ev.n)
		expect_event(&log, "file /nothere len=0 err=-2");
	assert_true(log.ev.n <= 1);
	/* a missing directory on the way: nothing was read */
	strv_free(&log.ev);
	assert_int_equal(root_read(fx->r, "/nodir/file", ROOT_READ_MAX, &out), -ENOENT);
	assert_int_equal(log.ev.n, 0);

	/* listing: the canonical directory */
	strv_free(&log.ev);
	assert_int_equal(root_list(fx->r, "/sys/class/infiniband/mlx5_0/./ports/", &l), 0);
	expect_event(&log, "dir " IB_DEV "/ports");

	/* stat: directories go to dir(), everything else to exists() */
	strv_free(&log.ev);
	root_set_recorder(fx->r, &rec);
	assert_true(root_exists(fx->r, "/files/fifo"));
	assert_true(root_exists(fx->r, "/mid/../devices"));
	assert_true(root_exists(fx->r, "/up"));
	expect_event(&log, "exists /files/fifo fifo");
	expect_event(&log, "link /mid -> sys/devices");
	expect_event(&log, "dir /sys/devices");
	expect_event(&log, "link /up -> ../../../../../etc/x");
	expect_event(&log, "exists /etc/x reg");

	/* readlink records the link itself at its canonical place. Links
	 * are reported at least once per recording (setting the recorder
	 * empties root.c's directory cache), so start a new recording. */
	strv_free(&log.ev);
	root_set_recorder(fx->r, &rec);
	assert_int_equal(root_readlink(fx->r, "/mid/pci0000:00/0000:00:01.0/0000:17:00.0/driver", &out), 0);
	expect_event(&log, "link /mid -> sys/devices");
	expect_event(&log, "link " PCI_DEV "/driver -> ../../../../bus/pci/drivers/mlx5_core");

	/* every recorded path is canonical: absolute, no "//", ".", ".." */
	for (size_t i = 0; i < log.ev.n; i++) {
		const char *p = strchr(log.ev.v[i], ' ') + 1;
		char *path = xstrndup(p, strcspn(p, " "));
		assert_int_equal(path[0], '/');
		assert_null(strstr(path, "//"));
		assert_null(strstr(path, "/./"));
		assert_null(strstr(path, "/../"));
		assert_false(str_endswith_slash(path));
		free(path);
	}

	/* no recorder: no calls */
	strv_free(&log.ev);
	root_set_recorder(fx->r, NULL);
	assert_int_equal(root_read(fx->r, "/abs", ROOT_READ_MAX, &out), 0);
	assert_int_equal(root_list(fx->r, "/etc", &l), 0);
	assert_int_equal(log.ev.n, 0);

	/* a recorder with only some callbacks set */
	const struct root_recorder only_dir = { .dir = rec_dir, .ud = &log };
	root_set_recorder(fx->r, &only_dir);
	assert_int_equal(root_read(fx->r, "/abs", ROOT_READ_MAX, &out), 0);
	assert_true(root_exists(fx->r, "/etc/x"));
	assert_int_equal(root_list(fx->r, "/etc", &l), 0);
	assert_int_equal(log.ev.n, 1);
	expect_event(&log, "dir /etc");
	root_set_recorder(fx->r, NULL);

	strv_free(&log.ev);
	strv_free(&l);
	strbuf_release(&out);
}

static void test_recorder_efbig(void **state)
{
	struct fx *fx = *state;
	struct rec_log log = { .ev = STRV_INIT };
	const struct root_recorder rec = { .file = rec_file, .ud = &log };
	root_set_recorder(fx->r, &rec);
	struct strbuf out = STRBUF_INIT;
	/* an oversize file is not recorded (its content was cut short) */
	assert_int_equal(root_read(fx->r, "/etc/x", 3, &out), -EFBIG);
	assert_int_equal(log.ev.n, 0);
	root_set_recorder(fx->r, NULL);
	strbuf_release(&out);
	strv_free(&log.ev);
}

/* ---- a recorded tree's metadata: replayed read errors, the incomplete mark ---- */

static int read_ret(const struct root *r, const char *path)
{
	struct strbuf out = STRBUF_INIT;
	int ret = root_read(r, path, ROOT_READ_MAX, &out);
	strbuf_release(&out);
	return ret;
}

static void test_unreadable_replay(void **state)
{
	(void)state;
	char *d = tu_mkdtemp();
	struct root *r = NULL;
	tu_write(d, "/etc/acc", "");
	tu_write(d, "/etc/ok", "fine\n");
	tu_write(d, "/etc/num", "");
	tu_write(d, "/etc/dup", "");
	tu_write(d, "/etc/bogus", "x\n");
	tu_write(d, "/sys/devices/eth0/carrier", "");
	tu_symlink(d, "/sys/class/net/eth0", "../../devices/eth0");
	tu_symlink(d, "/etc/link", "acc");
	tu_mkdir(d, "/etc/dir");
	static const char list[] = "EACCES /etc/acc\n"
				   "EINVAL /sys/devices/eth0/carrier\n"
				   "5 /etc/num\n"
				   "EIO /etc/dup\nEPERM /etc/dup\n"
				   "EACCES /etc/dir\n"
				   /* malformed: ignored */
				   "EBOGUS /etc/bogus\nEACCES\nEACCES etc/bogus\n EACCES /etc/bogus\n"
				   "EACCES  /etc/bogus\nEACCES /etc//bogus\nEACCES /etc/./bogus\nEACCES /etc/x/../bogus\n"
				   "EACCES /etc/bogus/\n0 /etc/bogus\n4096 /etc/bogus\n99999999999999 /etc/bogus\n"
				   "-13 /etc/bogus\nEACCES /\n\nEACCES /etc/bogus\0\nEACC\0S /etc/bogus\n"
				   "eacces /etc/bogus\nEACCES /etc/bogus\r\n"
				   "ENOENT /etc/ok"; /* no newline: still a line, for a file that exists */
	tu_write_bytes(d, ROOT_UNREADABLE, list, sizeof(list) - 1);
	assert_int_equal(root_open(d, &r), 0);
	assert_int_equal(read_ret(r, "/etc/acc"), -EACCES);
	assert_int_equal(read_ret(r, "/etc/link"), -EACCES); /* by its canonical path */
	assert_int_equal(read_ret(r, "/sys/class/net/eth0/carrier"), -EINVAL);
	assert_int_equal(read_ret(r, "/etc/num"), -EIO);
	assert_int_equal(read_ret(r, "/etc/dup"), -EIO); /* the first line wins */
	assert_int_equal(read_ret(r, "/etc/dir"), -EISDIR); /* only files */
	assert_int_equal(read_ret(r, "/etc/ok"), -ENOENT);
	read_ok(r, "/etc/bogus", "x\n");
	struct strbuf out = STRBUF_INIT;
	assert_int_equal(root_read_unrecorded(r, "/etc/acc", ROOT_READ_MAX, &out), -EACCES);
	/* the other calls are not affected: the file is there */
	assert_true(root_exists(r, "/etc/acc"));
	root_free(r);

	/* no list, an empty one, or one too large to read: nothing replayed */
	tu_write(d, ROOT_UNREADABLE, "");
	assert_int_equal(root_open(d, &r), 0);
	assert_int_equal(read_ret(r, "/etc/acc"), 0);
	root_free(r);
	size_t big = ROOT_UNREADABLE_MAX + 1;
	char *buf = xcalloc(big, 1);
	memcpy(buf, "EACCES /etc/acc\n", 16);
	memset(buf + 16, '\n', big - 16);
	tu_write_bytes(d, ROOT_UNREADABLE, buf, big);
	free(buf);
	assert_int_equal(root_open(d, &r), 0);
	assert_int_equal(read_ret(r, "/etc/acc"), 0);
	root_free(r);
	/* a list that is a directory or a link out of the tree: ignored */
	char *p = xasprintf("%s%s", d, ROOT_UNREADABLE);
	assert_int_equal(unlink(p), 0);
	free(p);
	tu_symlink(d, ROOT_UNREADABLE, "/etc/passwd");
	assert_int_equal(root_open(d, &r), 0);
	assert_int_equal(read_ret(r, "/etc/acc"), 0);
	root_free(r);
	strbuf_release(&out);
	tu_rmtree(d);
	free(d);
}

/* root_for_each(): every item is read once, through its own thread's
 * handle, with the same result as a plain loop; a clone replays the
 * recorded errors; nothing is cloned while recording (one walker). */
#define EACH_N 300

struct each_res {
	char *data[EACH_N];
	int ret[EACH_N];
	int calls[EACH_N];
};

static void each_item(const struct root *r, size_t i, void *ud)
{
	struct each_res *res = ud;
	char path[64];
	struct strbuf out = STRBUF_INIT;
	snprintf(path, sizeof(path), "/sys/class/dev/d%03zu/value", i);
	res->ret[i] = root_read(r, path, ROOT_READ_MAX, &out);
	res->data[i] = strbuf_detach(&out);
	res->calls[i]++;
}

static void test_for_each(void **state)
{
	(void)state;
	char *d = tu_mkdtemp();
	for (int i = 0; i < EACH_N; i++) {
		char dev[64], link[64], target[64], val[16];
		snprintf(dev, sizeof(dev), "/sys/devices/d%03d/value", i);
		snprintf(val, sizeof(val), "%d\n", i);
		if (i % 7)
			tu_write(d, dev, val);
		else
			tu_mkdir(d, dev); /* a directory where a file should be */
		snprintf(link, sizeof(link), "/sys/class/dev/d%03d", i);
		snprintf(target, sizeof(target), "../../devices/d%03d", i);
		tu_symlink(d, link, target);
	}
	tu_write(d, ROOT_UNREADABLE, "EIO /sys/devices/d001/value\n");
	struct root *r = NULL, *c = NULL;
	assert_int_equal(root_open(d, &r), 0);
	assert_int_equal(root_clone(r, &c), 0);
	assert_int_equal(read_ret(c, "/sys/class/dev/d001/value"), -EIO);
	read_ok(c, "/sys/class/dev/d002/value", "2\n");
	root_free(c);

	struct each_res *res = xcalloc(1, sizeof(*res));
	root_for_each(r, EACH_N, each_item, res);
	for (int i = 0; i < EACH_N; i++) {
		char want[16];
		snprintf(want, sizeof(want), "%d\n", i);
		assert_int_equal(res->calls[i], 1);
		if (i == 1)
			assert_int_equal(res->ret[i], -EIO);
		else if (i % 7 == 0)
			assert_int_equal(res->ret[i], -EISDIR);
		else {
			assert_int_equal(res->ret[i], 0);
			assert_string_equal(res->data[i], want);
		}
		free(res->data[i]);
	}
	free(res);

	struct root_recorder rec = { .ud = NULL };
	root_set_recorder(r, &rec);
	assert_int_equal(root_clone(r, &c), -EBUSY);
	res = xcalloc(1, sizeof(*res));
	root_for_each(r, EACH_N, each_item, res);
	for (int i = 0; i < EACH_N; i++) {
		assert_int_equal(res->calls[i], 1);
		free(res->data[i]);
	}
	free(res);
	root_free(r);
	tu_rmtree(d);
	free(d);
}

/* Random lists made of the tokens the format has: opening the tree and
 * reading through it never fails otherwise than as a listed path says. */
static void test_unreadable_garbage(void **state)
{
	(void)state;
	static const char *const tokens[] = {
		"EACCES", "EIO", "13", "0", "99999", " ", "  ", "/", "//", "/etc", "/ok", "/x", ".", "..", "\n", "\r",
		"\t", "a", "E", "-",
	};
	char *d = tu_mkdtemp();
	tu_write(d, "/etc/ok", "1\n");
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
	unsigned seed = 777;
	for (int round = 0; round < 300; round++) {
		tu_random_tokens(&text, tokens, ARRAY_SIZE(tokens), (size_t)(round % 61), &seed);
		tu_write_bytes(d, ROOT_UNREADABLE, text.buf, text.len);
		struct root *r = NULL;
		assert_int_equal(root_open(d, &r), 0);
		int ret = root_read(r, "/etc/ok", ROOT_READ_MAX, &out);
		/* only a whole line "<name> /etc/ok" may make it fail */
		if (ret != 0) {
			assert_true(ret == -EACCES || ret == -EIO);
			assert_non_null(memmem(text.buf, text.len, " /etc/ok", 8));
		}
		root_free(r);
	}
	strbuf_release(&text);
	strbuf_release(&out);
	tu_rmtree(d);
	free(d);
}

static void test_unreadable_line(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	assert_true(root_unreadable_line(&sb, "/etc/profile.d/x.sh", EACCES));
	assert_true(root_unreadable_line(&sb, "/sys/a b", 524)); /* the kernel's ENOTSUPP has no name */
	assert_false(root_unreadable_line(&sb, "/etc/new\nline", EIO));
	assert_string_equal(sb.buf, "EACCES /etc/profile.d/x.sh\n524 /sys/a b\n");
	strbuf_release(&sb);
	/* every name reads back as its value; aliases read as theirs */
	for (int e = 1; e < 4096; e++) {
		const char *n = errno_name(e);
		if (n)
			assert_int_equal(errno_parse(n, strlen(n)), e);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
		/* the names glibc gives (strerrorname_np, glibc 2.32) */
		const char *g = strerrorname_np(e);
		if (g && n)
			assert_string_equal(n, g);
		else
			assert_true(!g == !n);
#endif
	}
	assert_int_equal(errno_parse("EWOULDBLOCK", 11), EAGAIN);
	assert_int_equal(errno_parse("ENOTSUP", 7), EOPNOTSUPP);
	assert_string_equal(errno_name(EACCES), "EACCES");
	assert_int_equal(errno_parse("4095", 4), 4095);
	assert_int_equal(errno_parse("4096", 4), 0);
	assert_int_equal(errno_parse("013", 3), 0);
	assert_int_equal(errno_parse("EACCESS", 7), 0);
	assert_int_equal(errno_parse("", 0), 0);
}

static void test_incomplete(void **state)
{
	struct fx *fx = *state;
	char *d = tu_mkdtemp();
	struct root *r = NULL;
	tu_write(d, "/etc/x", "1\n");
	assert_int_equal(root_open(d, &r), 0);
	assert_false(root_incomplete(r));
	root_free(r);
	tu_write(d, ROOT_INCOMPLETE, "");
	assert_int_equal(root_open(d, &r), 0);
	assert_true(root_incomplete(r));
	root_free(r);
	assert_false(root_incomplete(fx->r));
	tu_rmtree(d);
	free(d);
}

/* What the recorder is told about modes, replayed errors and the reads of
 * root_read_unrecorded(). */
static void test_recorder_modes_quiet(void **state)
{
	(void)state;
	char *d = tu_mkdtemp();
	struct root *r = NULL;
	struct rec_log log = { .ev = STRV_INIT };
	const struct root_recorder rec = { .link = rec_link, .file = rec_file, .ud = &log };
	struct strbuf out = STRBUF_INIT;
	tu_write(d, "/real/secret.sh", "TOKEN=x\nexport NCCL_A=1\n");
	tu_write(d, "/real/private", "p\n");
	tu_write(d, "/real/gone", "");
	tu_symlink(d, "/etc", "real");
	char *p = xasprintf("%s/real/private", d);
	assert_int_equal(chmod(p, 0600), 0);
	free(p);
	tu_write(d, ROOT_UNREADABLE, "ENODEV /real/gone\n");
	assert_int_equal(root_open(d, &r), 0);
	root_set_recorder(r, &rec);

	/* a file's mode comes with its bytes; a replayed error is recorded */
	assert_int_equal(root_read(r, "/etc/private", ROOT_READ_MAX, &out), 0);
	expect_event(&log, "file /real/private len=2 err=0");
	assert_int_equal(log.mode & 07777, 0600);
	assert_true(S_ISREG(log.mode));
	strv_free(&log.ev);
	root_set_recorder(r, &rec);
	assert_int_equal(root_read(r, "/etc/gone", ROOT_READ_MAX, &out), -ENODEV);
	expect_event(&log, "link /etc -> real");
	expect_event(&log, "file /real/gone len=0 err=-19");

	/* unrecorded: neither the file nor the link to it... */
	strv_free(&log.ev);
	root_set_recorder(r, &rec);
	assert_int_equal(root_read_unrecorded(r, "/etc/secret.sh", ROOT_READ_MAX, &out), 0);
	assert_int_equal(log.ev.n, 0);
	/* ...until the caller records what it keeps, at the canonical path */
	root_record_kept(r, "/etc/secret.sh", "\nexport NCCL_A=1\n", 17);
	expect_event(&log, "link /etc -> real");
	expect_event(&log, "file /real/secret.sh len=17 err=0");
	assert_true(S_ISREG(log.mode));
	/* the quiet walk did not cache the link away from a recorded one */
	strv_free(&log.ev);
	root_set_recorder(r, &rec);
	assert_int_equal(root_read_unrecorded(r, "/etc/secret.sh", ROOT_READ_MAX, &out), 0);
	assert_int_equal(root_read(r, "/etc/private", ROOT_READ_MAX, &out), 0);
	expect_event(&log, "link /etc -> real");
	/* an unrecorded read that fails is recorded, links and all */
	strv_free(&log.ev);
	root_set_recorder(r, &rec);
	assert_int_equal(root_read_unrecorded(r, "/etc/gone", ROOT_READ_MAX, &out), -ENODEV);
	expect_event(&log, "link /etc -> real");
	expect_event(&log, "file /real/gone len=0 err=-19");
	/* data from elsewhere gets the mode it is given */
	root_record_file(r, "/.gpuready/kmsg", "k\n", 2, 0600);
	expect_event(&log, "file /.gpuready/kmsg len=2 err=0");
	assert_int_equal(log.mode, S_IFREG | 0600);
	root_set_recorder(r, NULL);

	root_free(r);
	strv_free(&log.ev);
	strbuf_release(&out);
	tu_rmtree(d);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_is_live),
		cmocka_unit_test(test_resolve_plain),
		cmocka_unit_test(test_resolve_sysfs_relative),
		cmocka_unit_test(test_resolve_clamped),
		cmocka_unit_test(test_resolve_loops),
		cmocka_unit_test(test_resolve_missing),
		cmocka_unit_test(test_resolve_notdir),
		cmocka_unit_test(test_resolve_trailing_slash_on_file),
		cmocka_unit_test(test_resolve_long_names),
		cmocka_unit_test(test_read_special),
		cmocka_unit_test(test_read_max),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_readlink),
		cmocka_unit_test(test_readlink_after_traversal),
		cmocka_unit_test(test_stat_exists),
		cmocka_unit_test(test_stand_in),
		cmocka_unit_test(test_recorder),
		cmocka_unit_test(test_recorder_efbig),
		cmocka_unit_test(test_unreadable_replay),
		cmocka_unit_test(test_unreadable_garbage),
		cmocka_unit_test(test_for_each),
		cmocka_unit_test(test_unreadable_line),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_recorder_modes_quiet),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
