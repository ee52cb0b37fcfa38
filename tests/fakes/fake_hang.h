/* Calls that never return, on demand, for the fakes of NVIDIA's libraries
 * and libibverbs: as the driver's calls can on a GPU that has fallen off
 * the bus (tests of the probes' deadline, src/probe/deadline.c). */
#ifndef GPUREADY_FAKE_HANG_H
#define GPUREADY_FAKE_HANG_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* When the environment variable var names fn: blocks until killed. */
static inline void fake_hang_if(const char *var, const char *fn)
{
	const char *s = getenv(var);
	if (s && !strcmp(s, fn))
		for (;;)
			pause();
}

#endif
