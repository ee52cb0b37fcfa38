/* The one clock every deadline and timing in gpuready is measured on:
 * CLOCK_MONOTONIC in seconds (clock_gettime(2)), which no wall-clock
 * change moves. */
#ifndef GPUREADY_CLOCK_H
#define GPUREADY_CLOCK_H

#include <time.h>

static inline double clock_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Unix time in seconds (the wall clock: for reports and timestamps, never
 * for deadlines). */
static inline double clock_unix(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
