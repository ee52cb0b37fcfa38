/* Typed readers of single files under a root (rdma-core's
 * ibv_read_sysfs_file_at, in spirit): they read, parse with parse.h, and
 * return 0 or a negative errno, writing outputs only on success.
 *
 *   -ENOENT   the file (or a directory on the way) does not exist
 *   -ENODATA  it exists but is empty: how recorded trees store attributes
 *             the kernel refused to read (carrier of a down link, ...)
 *   -EINVAL   its content is not what the format says
 *   -EFBIG    it is larger than an attribute can be; never truncated
 *   other     the errno of the failed open/read
 *
 * Paths are printf formats, so callers need no buffers of their own. */
#ifndef GPUREADY_READERS_H
#define GPUREADY_READERS_H

#include <stdint.h>

#include "root.h"

/* Largest single attribute: sysfs shows at most a page; leave room. */
#define ATTR_MAX 65536

/* First line, trimmed. -ENODATA if that is empty. */
int read_str(const struct root *r, char **ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Whole file, any size up to ROOT_READ_MAX (may be empty). */
int read_all(const struct root *r, struct strbuf *out, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int read_u64(const struct root *r, uint64_t *ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Signed decimal (sysfs numa_node and net speed use -1). */
int read_s64(const struct root *r, int64_t *ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "0x%x" style hex such as PCI vendor/device/class. */
int read_hex(const struct root *r, uint32_t *ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Target text of a symlink; its last path component (basename) if base. */
int read_link(const struct root *r, char **ret, int base, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Text of an errno for messages ("no such file", "empty"). */
const char *read_strerror(int err);

#endif
