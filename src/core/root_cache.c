#define _GNU_SOURCE
#include "root_cache.h"
#include "root.h"
#include "strbuf.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The root's caches (root_cache.h).
 *
 * The directory cache:
 * Resolution costs an lstat per component, and the checks read thousands of
 * attributes under a few hundred directories. Directories already resolved
 * are remembered: key "canonical parent/component" -> canonical directory.
 * Trees do not change during a run; setting a recorder empties the cache so
 * a recording sees every link at least once. */
static size_t hash(const char *s, size_t n)
{
	size_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

void dcache_clear(struct dcache *c)
{
	for (size_t i = 0; i < c->cap; i++) {
		free(c->v[i].key);
		free(c->v[i].val);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

const char *dcache_get(const struct dcache *c, const char *key, size_t n)
{
	if (!c->cap)
		return NULL;
	for (size_t i = hash(key, n) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		if (!c->v[i].key)
			return NULL;
		if (!strncmp(c->v[i].key, key, n) && c->v[i].key[n] == '\0')
			return c->v[i].val;
	}
}

void dcache_put(struct dcache *c, const char *key, const char *val)
{
	if ((c->n + 1) * 2 > c->cap) {
		struct dcache old = *c;
		c->cap = old.cap ? old.cap * 2 : 256;
		c->v = xcalloc(c->cap, sizeof(*c->v));
		c->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.v[i].key) {
				size_t k = hash(old.v[i].key, strlen(old.v[i].key)) & (c->cap - 1);
				while (c->v[k].key)
					k = (k + 1) & (c->cap - 1);
				c->v[k] = old.v[i];
				c->n++;
			}
		free(old.v);
	}
	size_t i = hash(key, strlen(key)) & (c->cap - 1);
	while (c->v[i].key) {
		if (!strcmp(c->v[i].key, key))
			return;
		i = (i + 1) & (c->cap - 1);
	}
	c->v[i].key = xstrdup(key);
	c->v[i].val = xstrdup(val);
	c->n++;
}

/* Open directories:
 * A file named by its whole canonical path costs the kernel a walk of every
 * component, twice (the lstat that makes sure it is a regular file, then
 * the open). The checks read tens of attributes per directory, one
 * directory after another, so the last few directories a read went
 * through stay open (O_PATH) and the file is looked up relative to its
 * directory: one component to walk. Entries are canonical directories,
 * reached without links, and the tree does not change during a run. */
void dfd_clear(struct dfd_cache *c)
{
	for (size_t i = 0; i < DFD_SLOTS; i++) {
		free(c->v[i].dir);
		if (c->v[i].dir)
			close(c->v[i].fd);
	}
	memset(c, 0, sizeof(*c));
}

int dfd_get(struct dfd_cache *c, int rootfd, const char *dir)
{
	for (size_t i = 0; i < DFD_SLOTS; i++)
		if (c->v[i].dir && !strcmp(c->v[i].dir, dir))
			return c->v[i].fd;
	int fd = openat(rootfd, root_rel(dir), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return rootfd;
	size_t i = c->next++ % DFD_SLOTS;
	if (c->v[i].dir) {
		free(c->v[i].dir);
		close(c->v[i].fd);
	}
	c->v[i].dir = xstrdup(dir);
	c->v[i].fd = fd;
	return fd;
}
