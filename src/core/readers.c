/* Typed single-file readers; see readers.h. */
#include "readers.h"
#include "cleanup.h"
#include "parse.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

static char *vpath(const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_vaddf(&sb, fmt, ap);
	return strbuf_detach(&sb);
}

#define WITH_PATH(p)                                  \
	_cleanup_free_ char *p = NULL;                \
	do {                                          \
		va_list ap;                           \
		va_start(ap, fmt);                    \
		p = vpath(fmt, ap);                   \
		va_end(ap);                           \
	} while (0)

static int read_attr(const struct root *r, const char *path, struct strbuf *out)
{
	int ret = root_read(r, path, ATTR_MAX, out);
	if (ret < 0)
		return ret;
	if (memchr(out->buf, '\0', out->len))
		return -EINVAL;
	return 0;
}

int read_str(const struct root *r, char **ret, const char *fmt, ...)
{
	WITH_PATH(p);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e = read_attr(r, p, &sb);
	if (e < 0)
		return e;
	char *l = str_first_line(sb.buf);
	if (!*l) {
		free(l);
		return -ENODATA;
	}
	*ret = l;
	return 0;
}

int read_all(const struct root *r, struct strbuf *out, const char *fmt, ...)
{
	WITH_PATH(p);
	return root_read(r, p, ROOT_READ_MAX, out);
}

int read_u64(const struct root *r, uint64_t *ret, const char *fmt, ...)
{
	WITH_PATH(p);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e = read_attr(r, p, &sb);
	return e < 0 ? e : parse_u64(sb.buf, 10, ret);
}

int read_s64(const struct root *r, int64_t *ret, const char *fmt, ...)
{
	WITH_PATH(p);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e = read_attr(r, p, &sb);
	return e < 0 ? e : parse_s64(sb.buf, 10, ret);
}

int read_hex(const struct root *r, uint32_t *ret, const char *fmt, ...)
{
	WITH_PATH(p);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e = read_attr(r, p, &sb);
	if (e < 0)
		return e;
	uint64_t v;
	e = parse_u64(sb.buf, 16, &v);
	if (e < 0)
		return e;
	if (v > UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

int read_link(const struct root *r, char **ret, int base, const char *fmt, ...)
{
	WITH_PATH(p);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e = root_readlink(r, p, &sb);
	if (e < 0)
		return e;
	strbuf_rtrim(&sb);
	while (sb.len > 1 && sb.buf[sb.len - 1] == '/')
		strbuf_setlen(&sb, sb.len - 1);
	if (base) {
		const char *s = strrchr(sb.buf, '/');
		*ret = xstrdup(s ? s + 1 : sb.buf);
	} else {
		*ret = strbuf_detach(&sb);
	}
	return 0;
}

const char *read_strerror(int err)
{
	switch (err) {
	case 0:
		return "ok";
	case -ENOENT:
		return "missing";
	case -ENODATA:
		return "empty";
	case -EINVAL:
		return "malformed";
	case -EFBIG:
		return "too large";
	case -ERANGE:
		return "out of range";
	default:
		return strerror(-err);
	}
}
