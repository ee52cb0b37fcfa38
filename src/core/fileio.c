/* Atomic file replacement (see fileio.h). */
#define _GNU_SOURCE
#include "fileio.h"
#include "cleanup.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <unistd.h>

int file_write_atomic(const char *path, int (*write)(FILE *f, void *ctx), void *ctx)
{
	/* per thread: a fatal handler may write while the main thread does */
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.%ld.%ld", path, (long)getpid(), (long)gettid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = -errno;
		close(fd);
		unlink(tmp);
		return e;
	}
	int ret = write(f, ctx);
	if (fflush(f) != 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (fclose(f) != 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret < 0)
		unlink(tmp);
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
