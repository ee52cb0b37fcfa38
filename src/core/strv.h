/* A NULL-terminated, owned vector of strings.
 *
 * `v` is NULL or has n+1 slots with v[n] == NULL. strv_free releases every
 * string and the vector itself. */
#ifndef GPUREADY_STRV_H
#define GPUREADY_STRV_H

#include <stdbool.h>
#include <stddef.h>

struct strv {
	char **v;
	size_t n;
};

#define STRV_INIT { .v = NULL, .n = 0 }

/* Takes ownership of s. */
void strv_push(struct strv *sv, char *s);
void strv_add(struct strv *sv, const char *s);
void strv_sort(struct strv *sv);
bool strv_contains(const struct strv *sv, const char *s);
void strv_free(struct strv *sv);

static inline void strv_freep(struct strv *sv) { strv_free(sv); }
#define _cleanup_strv_ __attribute__((cleanup(strv_freep)))

#endif
