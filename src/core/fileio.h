/* Writing a file so that readers see the old or the new content, never a
 * half-written one (node_exporter's textfile collector, JSON results read
 * by a watcher). */
#ifndef GPUREADY_FILEIO_H
#define GPUREADY_FILEIO_H

#include <stdbool.h>
#include <stdio.h>

/* Creates a temporary file beside path (a random name, O_CREAT|O_EXCL|
 * O_NOFOLLOW, mode 0644 less the umask), calls render(f, ctx) with f a
 * stream into memory, writes that to the file, syncs it and renames it
 * over path. render returns 0 or -errno. Returns 0 or -errno: render's,
 * or write(2)'s, fsync(2)'s, close(2)'s or rename(2)'s (-ENOSPC on a full
 * disk), -ELOOP or -EEXIST when the temporary name no longer names the
 * file written. The temporary file never stays behind: it is removed on
 * every error, and on SIGINT or SIGTERM (see file_pending_remove()). Safe
 * to call from several threads at once. */
/* Reads a file named on the command line (a host path, not inside the
 * root) into out: a regular file of at most max bytes, so a FIFO or
 * /dev/zero cannot hang or eat memory. 0, -EISDIR, -EINVAL (not a regular
 * file), -EFBIG, or -errno. */
struct strbuf;
int file_read_host(const char *path, size_t max, struct strbuf *out);
/* Appends what fd gives until its end, at most max bytes in out (out->len
 * counted): *ret_cut is true when more was there (then out holds max
 * bytes). Works on pipes and terminals; 0 or -errno. */
int fd_read_capped(int fd, size_t max, struct strbuf *out, bool *ret_cut);

int file_write_atomic(const char *path, int (*render)(FILE *f, void *ctx), void *ctx);

/* Unlinks the temporary files of the file_write_atomic() calls under way,
 * for a process about to end without finishing them (a signal handler, a
 * fatal path calling _exit(2)). Async-signal-safe. */
void file_pending_remove(void);

/* Writes the JSON document o to path atomically (as above): pretty, '/'
 * unescaped, a final newline. Returns 0 or -errno; o stays the caller's. */
struct json_object;
int file_write_json(const char *path, struct json_object *o);

#endif
