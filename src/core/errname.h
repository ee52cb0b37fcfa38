/* errno values by name ("EACCES" <-> EACCES), as <errno.h> spells them:
 * files that record an error (a snapshot's .gpuready/unreadable) name it,
 * so they read the same on another architecture, where the numbers may
 * differ. Pure lookups over a constant table. */
#ifndef GPUREADY_ERRNAME_H
#define GPUREADY_ERRNAME_H

#include <stddef.h>

/* The name of a positive errno value, or NULL if the table has none. */
const char *errno_name(int err);

/* The positive errno value of the n bytes at s: a name from the table or a
 * decimal number in 1..4095 (the kernel's range, MAX_ERRNO); 0 for anything
 * else. */
int errno_parse(const char *s, size_t n);

#endif
