/* A growable, always NUL-terminated string buffer (after git's strbuf.h).
 *
 * Invariants: after strbuf_init() or STRBUF_INIT, `buf` is never NULL and
 * buf[len] == '\0'; `len` excludes the terminator; `alloc` is 0 while `buf`
 * points at the shared empty string. strbuf_release() returns the buffer to
 * that state, so a released strbuf can be reused. strbuf_detach() hands the
 * malloc'd string to the caller. Allocation failure aborts the process: the
 * tool works on small inputs and has no sensible way to go on without memory. */
#ifndef GPUREADY_STRBUF_H
#define GPUREADY_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

extern char strbuf_empty[];
#define STRBUF_INIT { .buf = strbuf_empty, .len = 0, .alloc = 0 }

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_setlen(struct strbuf *sb, size_t len);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_adds(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Removes trailing whitespace (including newlines). */
void strbuf_rtrim(struct strbuf *sb);

static inline void strbuf_releasep(struct strbuf *sb) { strbuf_release(sb); }
#define _cleanup_strbuf_ __attribute__((cleanup(strbuf_releasep)))

/* malloc'd printf; aborts on allocation failure. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xcalloc(size_t n, size_t size);
void *xreallocarray(void *p, size_t n, size_t size);

#endif
