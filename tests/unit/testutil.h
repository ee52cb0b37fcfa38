/* Helpers shared by the unit tests: temporary trees and fixture paths. */
#ifndef GPUREADY_TESTUTIL_H
#define GPUREADY_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* A fresh empty directory under $TMPDIR; removed by tu_rmtree(). */
char *tu_mkdtemp(void);
void tu_rmtree(const char *dir);
/* Writes a file (creating parent directories) under dir. */
void tu_write(const char *dir, const char *path, const char *content);
void tu_write_bytes(const char *dir, const char *path, const void *data, size_t len);
/* Creates a symlink at dir/path with the given target text. */
void tu_symlink(const char *dir, const char *path, const char *target);
void tu_mkdir(const char *dir, const char *path);
/* $GPUREADY_FIXTURES/<name>/root, malloc'd. */
char *tu_fixture(const char *name);
/* $GPUREADY_SOURCE_DIR, not freed. */
const char *tu_source_dir(void);

/* A whole file (binary-safe, NUL-terminated), malloc'd; NULL if it cannot
 * be opened. len may be NULL. */
char *tu_read_file(const char *path, size_t *len);
struct strv;
/* Passes when got holds exactly want[0..n); otherwise prints both lists
 * and fails with what. */
void tu_expect_strv(const struct strv *got, const char *const *want, size_t n, const char *what);

struct report;
/* The worst status (fail > warn > skip > ok > info) among the findings of
 * check id about subject, or -1 when there is none. */
int tu_worst(const struct report *r, const char *id, const char *subject);
/* The finding of check id about subject (the last one), failing the test
 * when there is none. */
const struct finding *tu_finding(const struct report *r, const char *id, const char *subject);
/* Fails the test unless s (NULL allowed) contains part. */
void tu_assert_has(const char *s, const char *part);

struct strbuf;
/* Deterministic garbage for parsers: out becomes `count` picks (a linear
 * congruential generator on *seed) among tokens[0..n) and a NUL byte. */
void tu_random_tokens(struct strbuf *out, const char *const *tokens, size_t n, size_t count, unsigned *seed);

#endif
