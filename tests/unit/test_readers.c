/* Unit tests for the typed single-file readers (core/readers): the error
 * contract of readers.h (-ENOENT, -ENODATA, -EINVAL, -EFBIG, the open/read
 * errno otherwise), outputs written only on success, printf-style paths. */
#define _GNU_SOURCE
#include "testutil.h"
#include "core/readers.h"
#include "core/strbuf.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define U64_SENTINEL 0xdeadbeefcafef00dull
#define S64_SENTINEL ((int64_t)-424242424242)
#define U32_SENTINEL 0xa5a5a5a5u

struct fx {
	char *dir;
	struct root *r;
	char *ptr_sentinel;
};

static int group_setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	char *d = tu_mkdtemp();
	fx->dir = d;
	fx->ptr_sentinel = xstrdup("untouched");

	tu_write(d, "/sys/class/net/eth0/mtu", "9000\n");
	tu_write(d, "/sys/class/net/eth0/speed", "-1\n");
	tu_write(d, "/sys/class/net/eth0/operstate", "up\n");
	tu_write(d, "/v/u64", "42\n");
	tu_write(d, "/v/u64_max", "18446744073709551615\n");
	tu_write(d, "/v/u64_over", "18446744073709551616\n");
	tu_write(d, "/v/neg", "-1\n");
	tu_write(d, "/v/plus", "+3\n");
	tu_write(d, "/v/spaced", "  12 \n");
	tu_write(d, "/v/crlf", "value\r\n");
	tu_write(d, "/v/s64_min", "-9223372036854775808\n");
	tu_write(d, "/v/s64_over", "9223372036854775808\n");
	tu_write(d, "/v/hex", "0x15b3\n");
	tu_write(d, "/v/hex_bare", "15B3\n");
	tu_write(d, "/v/hex_u32max", "0xffffffff\n");
	tu_write(d, "/v/hex_big", "0x100000000\n");
	tu_write(d, "/v/hex_neg", "-0x1\n");
	tu_write(d, "/v/hex_0x", "0x\n");
	tu_write(d, "/v/str", "  hello world  \nsecond line\n");
	tu_write(d, "/v/str_noeol", "no newline");
	tu_write(d, "/v/empty", "");
	tu_write(d, "/v/blank", "\n");
	tu_write(d, "/v/spaces", "   \t \n");
	tu_write(d, "/v/blank_first", "\nsecond\n");
	tu_write(d, "/v/garbage", "abc\n");
	tu_write(d, "/v/trailing", "12abc\n");
	tu_write(d, "/v/two", "1 2\n");
	tu_write(d, "/v/multiline_num", "12\n34\n");
	tu_write_bytes(d, "/v/nul_mid", "12\0" "34\n", 6);
	tu_write_bytes(d, "/v/nul_end", "12\n\0", 4);
	tu_write_bytes(d, "/v/nul_str", "ab\0cd\n", 6);
	tu_write_bytes(d, "/v/nul_only", "\0", 1);
	tu_write_bytes(d, "/v/binary", "\x01\x02\xff\xfe", 4);
	tu_mkdir(d, "/v/dir");
	char *fifo = xasprintf("%s/v/fifo", d);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	free(fifo);

	/* exactly ATTR_MAX is allowed, one byte more is not */
	char *big = malloc(ATTR_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', ATTR_MAX + 1);
	memcpy(big, "7", 1);
	big[ATTR_MAX] = '\0';
	tu_write(d, "/v/attr_max", big);
	big[ATTR_MAX] = ' ';
	big[ATTR_MAX + 1] = '\0';
	tu_write(d, "/v/attr_over", big);
	free(big);

	tu_symlink(d, "/sys/bus/pci/devices/0000:17:00.0", "../../../devices/pci0000:00/0000:17:00.0");
	tu_mkdir(d, "/sys/devices/pci0000:00/0000:17:00.0");
	tu_mkdir(d, "/sys/bus/pci/drivers/mlx5_core");
	tu_symlink(d, "/sys/devices/pci0000:00/0000:17:00.0/driver", "../../../bus/pci/drivers/mlx5_core");
	tu_symlink(d, "/sys/devices/pci0000:00/0000:17:00.0/slash", "../../../bus/pci/drivers/mlx5_core//");
	tu_symlink(d, "/sys/devices/pci0000:00/0000:17:00.0/plain", "mlx5_core");
	tu_symlink(d, "/sys/devices/pci0000:00/0000:17:00.0/dangling", "../nothere");
	tu_symlink(d, "/v/link_u64", "u64");

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
	free(fx->ptr_sentinel);
	free(fx);
	return 0;
}

static void u64_is(const struct root *r, const char *path, int want_err, uint64_t want)
{
	uint64_t v = U64_SENTINEL;
	int e = read_u64(r, &v, "%s", path);
	if (e != want_err)
		fail_msg("read_u64(%s) = %d (%s), want %d", path, e, read_strerror(e), want_err);
	assert_int_equal(v, want_err ? U64_SENTINEL : want);
}

static void s64_is(const struct root *r, const char *path, int want_err, int64_t want)
{
	int64_t v = S64_SENTINEL;
	int e = read_s64(r, &v, "%s", path);
	if (e != want_err)
		fail_msg("read_s64(%s) = %d (%s), want %d", path, e, read_strerror(e), want_err);
	assert_true(v == (want_err ? S64_SENTINEL : want));
}

static void hex_is(const struct root *r, const char *path, int want_err, uint32_t want)
{
	uint32_t v = U32_SENTINEL;
	int e = read_hex(r, &v, "%s", path);
	if (e != want_err)
		fail_msg("read_hex(%s) = %d (%s), want %d", path, e, read_strerror(e), want_err);
	assert_int_equal(v, want_err ? U32_SENTINEL : want);
}

static void str_is(const struct fx *fx, const char *path, int want_err, const char *want)
{
	char *v = fx->ptr_sentinel;
	int e = read_str(fx->r, &v, "%s", path);
	if (e != want_err)
		fail_msg("read_str(%s) = %d (%s), want %d", path, e, read_strerror(e), want_err);
	if (want_err) {
		assert_ptr_equal(v, fx->ptr_sentinel);
	} else {
		assert_string_equal(v, want);
		free(v);
	}
}

static void test_read_u64(void **state)
{
	struct fx *fx = *state;
	u64_is(fx->r, "/v/u64", 0, 42);
	u64_is(fx->r, "/v/link_u64", 0, 42);
	u64_is(fx->r, "/v/spaced", 0, 12);
	u64_is(fx->r, "/v/u64_max", 0, UINT64_MAX);
	u64_is(fx->r, "/v/attr_max", 0, 7);
	u64_is(fx->r, "/v/nothere", -ENOENT, 0);
	u64_is(fx->r, "/nothere/u64", -ENOENT, 0);
	u64_is(fx->r, "/v/empty", -ENODATA, 0);
	u64_is(fx->r, "/v/blank", -ENODATA, 0);
	u64_is(fx->r, "/v/spaces", -ENODATA, 0);
	u64_is(fx->r, "/v/garbage", -EINVAL, 0);
	u64_is(fx->r, "/v/trailing", -EINVAL, 0);
	u64_is(fx->r, "/v/two", -EINVAL, 0);
	u64_is(fx->r, "/v/multiline_num", -EINVAL, 0);
	u64_is(fx->r, "/v/neg", -EINVAL, 0);
	u64_is(fx->r, "/v/plus", -EINVAL, 0);
	u64_is(fx->r, "/v/hex", -EINVAL, 0); /* decimal only */
	u64_is(fx->r, "/v/binary", -EINVAL, 0);
	u64_is(fx->r, "/v/nul_mid", -EINVAL, 0);
	u64_is(fx->r, "/v/nul_end", -EINVAL, 0);
	u64_is(fx->r, "/v/nul_only", -EINVAL, 0);
	u64_is(fx->r, "/v/u64_over", -ERANGE, 0);
	u64_is(fx->r, "/v/attr_over", -EFBIG, 0);
	u64_is(fx->r, "/v/dir", -EISDIR, 0);
	u64_is(fx->r, "/v/u64/x", -ENOTDIR, 0);
	alarm(5);
	u64_is(fx->r, "/v/fifo", -EINVAL, 0);
	alarm(0);
}

static void test_read_s64(void **state)
{
	struct fx *fx = *state;
	s64_is(fx->r, "/sys/class/net/eth0/speed", 0, -1);
	s64_is(fx->r, "/v/u64", 0, 42);
	s64_is(fx->r, "/v/plus", 0, 3);
	s64_is(fx->r, "/v/spaced", 0, 12);
	s64_is(fx->r, "/v/s64_min", 0, INT64_MIN);
	s64_is(fx->r, "/v/s64_over", -ERANGE, 0);
	s64_is(fx->r, "/v/u64_max", -ERANGE, 0);
	s64_is(fx->r, "/v/nothere", -ENOENT, 0);
	s64_is(fx->r, "/v/empty", -ENODATA, 0);
	s64_is(fx->r, "/v/spaces", -ENODATA, 0);
	s64_is(fx->r, "/v/garbage", -EINVAL, 0);
	s64_is(fx->r, "/v/trailing", -EINVAL, 0);
	s64_is(fx->r, "/v/hex", -EINVAL, 0);
	s64_is(fx->r, "/v/nul_mid", -EINVAL, 0);
	s64_is(fx->r, "/v/attr_over", -EFBIG, 0);
	s64_is(fx->r, "/v/dir", -EISDIR, 0);
}

static void test_read_hex(void **state)
{
	struct fx *fx = *state;
	hex_is(fx->r, "/v/hex", 0, 0x15b3);
	hex_is(fx->r, "/v/hex_bare", 0, 0x15b3);
	hex_is(fx->r, "/v/u64", 0, 0x42);
	hex_is(fx->r, "/v/hex_u32max", 0, UINT32_MAX);
	hex_is(fx->r, "/v/hex_big", -ERANGE, 0);
	hex_is(fx->r, "/v/u64_over", -ERANGE, 0);
	hex_is(fx->r, "/v/hex_neg", -EINVAL, 0);
	hex_is(fx->r, "/v/hex_0x", -EINVAL, 0);
	hex_is(fx->r, "/v/garbage", 0, 0xabc); /* "abc" is valid hex */
	hex_is(fx->r, "/v/trailing", 0, 0x12abc);
	hex_is(fx->r, "/v/str", -EINVAL, 0);
	hex_is(fx->r, "/v/nothere", -ENOENT, 0);
	hex_is(fx->r, "/v/empty", -ENODATA, 0);
	hex_is(fx->r, "/v/nul_mid", -EINVAL, 0);
	hex_is(fx->r, "/v/attr_over", -EFBIG, 0);
	hex_is(fx->r, "/v/dir", -EISDIR, 0);
}

static void test_read_str(void **state)
{
	struct fx *fx = *state;
	str_is(fx, "/sys/class/net/eth0/operstate", 0, "up");
	str_is(fx, "/v/str", 0, "hello world");
	str_is(fx, "/v/str_noeol", 0, "no newline");
	str_is(fx, "/v/crlf", 0, "value");
	str_is(fx, "/v/garbage", 0, "abc");
	str_is(fx, "/v/multiline_num", 0, "12");
	str_is(fx, "/v/binary", 0, "\x01\x02\xff\xfe");
	str_is(fx, "/v/nothere", -ENOENT, NULL);
	str_is(fx, "/v/empty", -ENODATA, NULL);
	str_is(fx, "/v/blank", -ENODATA, NULL);
	str_is(fx, "/v/spaces", -ENODATA, NULL);
	str_is(fx, "/v/blank_first", -ENODATA, NULL); /* the first line is what counts */
	str_is(fx, "/v/nul_str", -EINVAL, NULL);
	str_is(fx, "/v/nul_only", -EINVAL, NULL);
	str_is(fx, "/v/attr_over", -EFBIG, NULL);
	str_is(fx, "/v/dir", -EISDIR, NULL);
	str_is(fx, "/v/str/x", -ENOTDIR, NULL);
	alarm(5);
	str_is(fx, "/v/fifo", -EINVAL, NULL);
	alarm(0);
}

static void test_read_all(void **state)
{
	struct fx *fx = *state;
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(read_all(fx->r, &sb, "/v/%s", "str"), 0);
	assert_string_equal(sb.buf, "  hello world  \nsecond line\n");
	/* empty is fine for read_all */
	assert_int_equal(read_all(fx->r, &sb, "/v/empty"), 0);
	assert_int_equal(sb.len, 0);
	/* larger than an attribute is fine too */
	assert_int_equal(read_all(fx->r, &sb, "/v/attr_over"), 0);
	assert_int_equal(sb.len, ATTR_MAX + 1);
	/* failures leave the buffer alone */
	strbuf_reset(&sb);
	strbuf_adds(&sb, "previous");
	assert_int_equal(read_all(fx->r, &sb, "/v/nothere"), -ENOENT);
	assert_int_equal(read_all(fx->r, &sb, "/v/dir"), -EISDIR);
	alarm(5);
	assert_int_equal(read_all(fx->r, &sb, "/v/fifo"), -EINVAL);
	alarm(0);
	assert_string_equal(sb.buf, "previous");
	strbuf_release(&sb);
}

static void test_read_all_oversize(void **state)
{
	(void)state;
	char *d = tu_mkdtemp();
	size_t n = ROOT_READ_MAX + 1;
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, 'x', n);
	tu_write_bytes(d, "/huge", big, n);
	tu_write_bytes(d, "/max", big, n - 1);
	free(big);
	struct root *r = NULL;
	assert_int_equal(root_open(d, &r), 0);
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "previous");
	assert_int_equal(read_all(r, &sb, "/huge"), -EFBIG);
	assert_string_equal(sb.buf, "previous");
	assert_int_equal(read_all(r, &sb, "/max"), 0);
	assert_int_equal(sb.len, ROOT_READ_MAX);
	uint64_t v = U64_SENTINEL;
	assert_int_equal(read_u64(r, &v, "/huge"), -EFBIG);
	assert_int_equal(v, U64_SENTINEL);
	strbuf_release(&sb);
	root_free(r);
	tu_rmtree(d);
	free(d);
}

static void test_read_link(void **state)
{
	struct fx *fx = *state;
	const char *dev = "/sys/bus/pci/devices/0000:17:00.0";
	char *v = fx->ptr_sentinel;
	/* the directory link itself, through the bus link (first: see
	 * test_read_link_after_stat for what happens once it was traversed) */
	assert_int_equal(read_link(fx->r, &v, 1, "%s", dev), 0);
	assert_string_equal(v, "0000:17:00.0");
	free(v);
	assert_int_equal(read_link(fx->r, &v, 1, "%s/driver", dev), 0);
	assert_string_equal(v, "mlx5_core");
	free(v);
	assert_int_equal(read_link(fx->r, &v, 0, "%s/driver", dev), 0);
	assert_string_equal(v, "../../../bus/pci/drivers/mlx5_core");
	free(v);
	/* trailing slashes do not make an empty basename */
	assert_int_equal(read_link(fx->r, &v, 1, "%s/slash", dev), 0);
	assert_string_equal(v, "mlx5_core");
	free(v);
	assert_int_equal(read_link(fx->r, &v, 0, "%s/slash", dev), 0);
	assert_string_equal(v, "../../../bus/pci/drivers/mlx5_core");
	free(v);
	/* a target without '/' is its own basename */
	assert_int_equal(read_link(fx->r, &v, 1, "%s/plain", dev), 0);
	assert_string_equal(v, "mlx5_core");
	free(v);
	/* a dangling link still has a target */
	assert_int_equal(read_link(fx->r, &v, 1, "%s/dangling", dev), 0);
	assert_string_equal(v, "nothere");
	free(v);

	v = fx->ptr_sentinel;
	assert_int_equal(read_link(fx->r, &v, 1, "%s/nothere", dev), -ENOENT);
	assert_int_equal(read_link(fx->r, &v, 1, "/v/u64"), -EINVAL);
	assert_int_equal(read_link(fx->r, &v, 0, "/v/dir"), -EINVAL);
	assert_int_equal(read_link(fx->r, &v, 0, "/v/u64/x"), -ENOTDIR);
	assert_ptr_equal(v, fx->ptr_sentinel);
}

static void test_read_link_after_stat(void **state)
{
	struct fx *fx = *state;
	struct root *r = NULL;
	assert_int_equal(root_open(fx->dir, &r), 0);
	const char *dev = "/sys/bus/pci/devices/0000:17:00.0";
	char *v = NULL;
	/* the inventory pattern: look at something under a device, then ask
	 * which PCI function the device link names */
	assert_true(root_exists(r, "/sys/bus/pci/devices/0000:17:00.0/driver"));
	/* Regression (fixed): root.c resolve_at() answers the last component from its
	 * directory cache even when root_readlink() asked not to follow it,
	 * so once the link was traversed read_link() fails with -EINVAL
	 * instead of returning "0000:17:00.0" (see test_root.c
	 * test_readlink_after_traversal). */
	int e = read_link(r, &v, 1, "%s", dev);
	bool ok = e == 0 && v && !strcmp(v, "0000:17:00.0");
	if (e == 0)
		free(v);
	root_free(r);
	assert_int_equal(e, 0);
	assert_true(ok);
}

static void test_path_format(void **state)
{
	struct fx *fx = *state;
	uint64_t v = 0;
	assert_int_equal(read_u64(fx->r, &v, "/sys/class/net/%s/%s", "eth0", "mtu"), 0);
	assert_int_equal(v, 9000);
	assert_int_equal(read_u64(fx->r, &v, "/v/%s%d", "u", 64), 0);
	assert_int_equal(v, 42);
	/* a "%" in an argument is not interpreted again */
	assert_int_equal(read_u64(fx->r, &v, "/v/%s", "%s%s%s%n"), -ENOENT);
	/* a long formatted path is not cut at some buffer size */
	char name[1000];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	int e = read_u64(fx->r, &v, "/v/%s/%s", "dir", name);
	assert_int_equal(e, -ENAMETOOLONG);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(read_strerror(0), "ok");
	assert_string_equal(read_strerror(-ENOENT), "missing");
	assert_non_null(strstr(read_strerror(-ENODATA), "empty"));
	assert_string_equal(read_strerror(-EINVAL), "malformed");
	assert_string_equal(read_strerror(-EFBIG), "too large");
	assert_string_equal(read_strerror(-ERANGE), "out of range");
	assert_string_equal(read_strerror(-EISDIR), strerror(EISDIR));
	assert_string_equal(read_strerror(-ELOOP), strerror(ELOOP));
	assert_non_null(read_strerror(-9999));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_u64),
		cmocka_unit_test(test_read_s64),
		cmocka_unit_test(test_read_hex),
		cmocka_unit_test(test_read_str),
		cmocka_unit_test(test_read_all),
		cmocka_unit_test(test_read_all_oversize),
		cmocka_unit_test(test_read_link),
		cmocka_unit_test(test_read_link_after_stat),
		cmocka_unit_test(test_path_format),
		cmocka_unit_test(test_strerror),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
