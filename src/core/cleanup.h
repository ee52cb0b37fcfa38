/* Scope-bound cleanup helpers in the systemd style.
 *
 * `_cleanup_free_ char *p = NULL;` frees p when it leaves scope; TAKE_PTR(p)
 * hands ownership out of such a variable (and leaves NULL behind so the
 * cleanup does nothing). Destructors used here accept NULL. */
#ifndef GPUREADY_CLEANUP_H
#define GPUREADY_CLEANUP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closedirp(DIR **d) { if (*d) closedir(*d); }

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })
#define TAKE_FD(fd) ({ int _tfd = (fd); (fd) = -1; _tfd; })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
