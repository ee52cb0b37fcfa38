/* Writing a file so that readers see the old or the new content, never a
 * half-written one (node_exporter's textfile collector, JSON results read
 * by a watcher). */
#ifndef GPUREADY_FILEIO_H
#define GPUREADY_FILEIO_H

#include <stdio.h>

/* Calls write(f, ctx) on a temporary file beside path, flushes and syncs
 * it, and renames it over path. write returns 0 or -errno. Returns 0 or
 * -errno; the temporary file never stays behind. */
int file_write_atomic(const char *path, int (*write)(FILE *f, void *ctx), void *ctx);

/* Writes the JSON document o to path atomically (as above): pretty, '/'
 * unescaped, a final newline. Returns 0 or -errno; o stays the caller's. */
struct json_object;
int file_write_json(const char *path, struct json_object *o);

#endif
