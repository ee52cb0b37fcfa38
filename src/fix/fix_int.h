/* What the fix planner's files share and no one else uses: writing inside
 * the root (write.c) and the audit log (log.c). */
#ifndef GPUREADY_FIX_INT_H
#define GPUREADY_FIX_INT_H

#include "fix/fix.h"

/* "sha256:<64 hex>" or "-" for a file that does not exist. */
#define FIX_DIGEST_LEN 72
void fix_digest(const char *data, size_t len, bool exists, char out[FIX_DIGEST_LEN]);

/* Makes dir and its missing parents inside the root (0755), the made ones
 * added to made (canonical paths, parents first). 0 or -errno. */
int fix_mkdirs(const struct root *root, const char *dir, struct strv *made);
/* Replaces path inside the root with data atomically (mode as given);
 * missing directories are made. 0 or -errno. */
int fix_write_file(const struct root *root, const char *path, const char *data, size_t len, mode_t mode,
		   struct strv *made);
/* The same, the new file owned as `like` is (the file it replaces), when
 * the process may: a file in a user's home stays the user's. */
int fix_write_file_like(const struct root *root, const char *path, const char *data, size_t len, mode_t mode,
			const struct stat *like, struct strv *made);
/* Makes path inside the root a symbolic link to target (atomically: a
 * link beside it, renamed over); missing directories are made. */
int fix_write_link(const struct root *root, const char *path, const char *target, struct strv *made);
int fix_write_state(const struct root *root, const char *path, const char *value, struct strv *made);
int fix_unlink(const struct root *root, const char *path);
/* Removes the link at path itself (its last component not followed). */
int fix_unlink_link(const struct root *root, const char *path);
int fix_rmdir(const struct root *root, const char *path);
/* Renames a regular file (a backup) over another path; -EPERM when from
 * is not a regular file. Neither last name is followed. */
int fix_rename(const struct root *root, const char *from, const char *to);
/* lstat(2) of path inside the root (its directory walked safely). */
int fix_lstat(const struct root *root, const char *path, struct stat *st);
/* An fd for appending to path (made if absent, mode), never through a link. */
int fix_open_append(const struct root *root, const char *path, mode_t mode);

/* One line of the audit log (FIX_LOG): tab-separated
 *   TIME  ACTION  CHECKS  PATH  KIND  BEFORE  AFTER  DETAIL
 * ACTION apply or revert; KIND created, replaced, link, mkdir, state, ran,
 * restored, removed, done; BEFORE and AFTER digests (fix_digest) or "-". */
struct fix_log_entry {
	char *time, *action, *checks, *path, *kind, *before, *after, *detail;
};
int fix_log_append(const struct root *root, const struct fix_log_entry *e);
/* The entries since the last `revert done`, in order; 0 (none is fine) or -errno. */
int fix_log_read(const struct root *root, struct fix_log_entry **ret, size_t *ret_n);
void fix_log_free(struct fix_log_entry *v, size_t n);
/* ISO 8601 UTC of a Unix time. */
void fix_time(double now, char buf[32]);

#endif
