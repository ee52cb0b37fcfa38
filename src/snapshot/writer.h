/* Writing a recorded tree: what `gpuready snapshot` does with what the root
 * recorder (core/root.h) tells it.
 *
 * Every link, directory and file is written into the snapshot directory at
 * the same in-root path. Symlinks keep their target text; files keep their
 * bytes and permission bits (never setuid, setgid or sticky); a file that
 * could not be read becomes an empty file of its mode and a line of
 * ROOT_UNREADABLE with its errno, which the root layer replays when the
 * snapshot is read; a device node or FIFO whose existence was tested
 * becomes an empty file. Directories are made 0755 (less the umask).
 *
 * The directory is marked ROOT_INCOMPLETE before anything else is written,
 * and the mark is removed only after everything was: a snapshot that
 * stopped part-way (a full disk, a crash) says so, and the check commands
 * refuse it. */
#ifndef GPUREADY_SNAPSHOT_WRITER_H
#define GPUREADY_SNAPSHOT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/root.h"

struct snap_writer;

struct snap_stats {
	size_t files, links, dirs, unreadable;
};

/* Makes dir (it must be new or empty) and marks it incomplete. On failure
 * returns -errno with the reason in *err (to free). */
int snap_writer_open(const char *dir, struct snap_writer **ret, char **err);
void snap_writer_free(struct snap_writer *w);
static inline void snap_writer_freep(struct snap_writer **w) { snap_writer_free(*w); }
#define _cleanup_snap_writer_ __attribute__((cleanup(snap_writer_freep)))

/* The recorder to set on the root that is being recorded. */
struct root_recorder snap_writer_recorder(struct snap_writer *w);

/* A file that is no recording of the root (the live process's environment,
 * the snapshot's metadata), with its permission bits. */
void snap_writer_add(struct snap_writer *w, const char *path, const char *data, size_t len, mode_t mode);

/* Writes ROOT_UNREADABLE and, when everything was written and the caller
 * says the recording is `complete`, removes the incomplete mark. Returns 0,
 * or the first write error (-errno) with a message in *err (to free). */
int snap_writer_finish(struct snap_writer *w, bool complete, char **err);

const struct snap_stats *snap_writer_stats(const struct snap_writer *w);

#endif
