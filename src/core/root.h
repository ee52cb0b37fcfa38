/* The root context: every file the tool reads goes through here.
 *
 * A root is a directory that stands for `/` (the live system, or a recorded
 * tree such as a `gpuready snapshot` or a test fixture). Paths given to these
 * functions are absolute-looking ("/sys/class/net") and are interpreted
 * inside the root. Symbolic links are resolved textually, component by
 * component, with `..` and absolute targets clamped at the root, exactly as
 * sysfs' relative links are meant to be read (never realpath()). A link
 * chain longer than ROOT_MAX_LINKS gives -ELOOP.
 *
 * All functions return 0 or a negative errno and leave their outputs
 * untouched on failure. Nothing here prints.
 *
 * A recorder, when set, is told about every file read, every directory
 * listed and every path tested, and about each link followed at least once
 * (resolved directories are cached; setting a recorder empties the cache);
 * `gpuready snapshot` uses it to copy exactly what the checks looked at.
 *
 * A recorded tree (not the live root) may say in ROOT_UNREADABLE which
 * files could not be read when it was recorded, with the error: reading
 * such a file here fails with that error, as it did on the machine, instead
 * of giving the empty file that stands in for it. The same tree is marked
 * ROOT_INCOMPLETE while `gpuready snapshot` writes it. */
#ifndef GPUREADY_ROOT_H
#define GPUREADY_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "strbuf.h"
#include "strv.h"

#define ROOT_MAX_LINKS 40
/* Largest file root_read() accepts by default (sysfs attributes are at most
 * a page; procfs tables and config files stay far below this). */
#define ROOT_READ_MAX (4u << 20)

struct root;

struct root_recorder {
	/* A symlink at `path` (resolved parent, in-root) with `target` text. */
	void (*link)(void *ud, const char *path, const char *target);
	/* A directory that was listed or traversed. */
	void (*dir)(void *ud, const char *path);
	/* A file that was read: its bytes and its mode (st_mode; 0 if it is
	 * not known), or err < 0 if reading failed (data is "" then). */
	void (*file)(void *ud, const char *path, const char *data, size_t len, mode_t mode, int err);
	/* A non-directory whose existence was tested (device nodes and such). */
	void (*exists)(void *ud, const char *path, mode_t mode);
	/* The file just given to file() holds only what a caller kept of it
	 * (root_record_kept()); may be NULL. */
	void (*partial)(void *ud, const char *path);
	void *ud;
};

int root_open(const char *dir, struct root **ret);
void root_free(struct root *r);
/* A second handle on the same tree for another thread: the same files and
 * replayed errors, its own caches (a handle is used by one thread at a
 * time). Refused (-EBUSY) while r records: a recording has one walker. */
int root_clone(const struct root *r, struct root **ret);
/* Calls fn(handle, i, ud) for every i below n, on up to one thread per CPU
 * (each with its own handle; one thread while r records) and returns when
 * all are done. fn must write only item i's own result. */
void root_for_each(const struct root *r, size_t n, void (*fn)(const struct root *r, size_t i, void *ud), void *ud);
static inline void root_freep(struct root **r) { root_free(*r); }
#define _cleanup_root_ __attribute__((cleanup(root_freep)))

/* True when the root is the running system's "/": live-only facts (process
 * environment, verbs queries, systemctl) may be used only then. */
bool root_is_live(const struct root *r);
/* The directory given to root_open(), as given. */
const char *root_dir(const struct root *r);
void root_set_recorder(struct root *r, const struct root_recorder *rec);

/* Resolves `path` to its in-root canonical form ("/sys/devices/..."): every
 * symlink followed, "." and ".." removed. The last component need not exist
 * (then the result names where it would be and the return is -ENOENT). */
int root_resolve(const struct root *r, const char *path, struct strbuf *out);
/* The same for a path about to be written: a final regular file is never
 * taken for a link's stand-in (gpuready fix writes where the file is). */
int root_resolve_write(const struct root *r, const char *path, struct strbuf *out);

/* Reads the whole file (following links) into out, which is reset first.
 * Files larger than max give -EFBIG (never a silent truncation). */
int root_read(const struct root *r, const char *path, size_t max, struct strbuf *out);

/* root_read() without telling the recorder about the file, nor about the
 * links on the way to it: for files that are scanned for something and may
 * hold secrets; the caller records what it keeps of one with
 * root_record_kept(). A failed read is recorded with its error (and its
 * links) as root_read() records it. */
int root_read_unrecorded(const struct root *r, const char *path, size_t max, struct strbuf *out);

/* The raw target text of the symlink at path (the last component is not
 * followed; earlier ones are). -EINVAL if it is not a link. */
int root_readlink(const struct root *r, const char *path, struct strbuf *out);

/* Sorted entry names of a directory, without "." and "..". */
int root_list(const struct root *r, const char *path, struct strv *out);

/* stat() of the resolved path. */
int root_stat(const struct root *r, const char *path, struct stat *st);
bool root_exists(const struct root *r, const char *path);

/* Tells the recorder (if any) what a caller keeps of the file at `path`,
 * which it read with root_read_unrecorded(): recorded at the file's
 * canonical path, with its mode, and the links on the way. */
void root_record_kept(const struct root *r, const char *path, const char *data, size_t len);

/* Tells the recorder (if any) about data read by other means than
 * root_read() (the live kernel log), to be stored at `path` in a snapshot
 * with `mode` (permission bits). */
void root_record_file(const struct root *r, const char *path, const char *data, size_t len, mode_t mode);

/* The metadata of a recorded tree (see the top of this file). */
#define ROOT_UNREADABLE "/.gpuready/unreadable"
#define ROOT_INCOMPLETE "/.gpuready/incomplete"
/* The files of a snapshot recorded only as far as the inventory parses
 * them (root_record_kept()), one canonical path per line. */
#define ROOT_PARTIAL "/.gpuready/partial"
/* ROOT_UNREADABLE larger than this is not read at all. */
#define ROOT_UNREADABLE_MAX (4u << 20)

/* Appends the ROOT_UNREADABLE line for `path` (canonical, in-root) and the
 * positive errno `err`: "<name> <path>\n", the name as <errno.h> spells it
 * (core/errname.h), or the decimal number if it has none. A path with a
 * newline cannot be listed: false, nothing appended. */
bool root_unreadable_line(struct strbuf *out, const char *path, int err);

/* A recorded tree that ROOT_INCOMPLETE marks: its snapshot did not finish. */
bool root_incomplete(const struct root *r);

/* In-root relative form of a canonical absolute path: "/a/b" -> "a/b",
 * "/" -> "." (for *at() calls on root_dirfd or a copy of the tree). Points
 * into the given string. */
const char *root_rel(const char *abs);

/* The directory fd of the root and the in-root relative form of a resolved
 * path; for callers (snapshot) that must open files themselves. */
int root_dirfd(const struct root *r);

#endif
