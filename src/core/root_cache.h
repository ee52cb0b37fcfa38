/* The root context's caches (core/root.c): canonical directories by the
 * names that reach them, and the last few directories held open. Private
 * to the root; one thread's each (root_clone() makes new ones). */
#ifndef GPUREADY_CORE_ROOT_CACHE_H
#define GPUREADY_CORE_ROOT_CACHE_H

#include <stddef.h>

struct dcache_ent {
	char *key;
	char *val;
};

struct dcache {
	struct dcache_ent *v;
	size_t cap, n;
};

/* The directory the first n bytes of key resolve to, or NULL. */
const char *dcache_get(const struct dcache *c, const char *key, size_t n);
void dcache_put(struct dcache *c, const char *key, const char *val);
void dcache_clear(struct dcache *c);

#define DFD_SLOTS 8

struct dfd_cache {
	struct {
		char *dir;
		int fd;
	} v[DFD_SLOTS];
	unsigned next;
};

/* An open descriptor (O_PATH) of the canonical directory dir of the root
 * open at rootfd, or rootfd itself when it cannot be opened (the caller
 * then names the file by its whole path). */
int dfd_get(struct dfd_cache *c, int rootfd, const char *dir);
void dfd_clear(struct dfd_cache *c);

#endif
