/* gpuready's exit codes, one meaning each, for every command and alias
 * (the man page's "Exit status" lists them):
 *   0  every check passed (or the command did what it was asked)
 *   1  a check failed (a verdict about the node, not a tool error)
 *   2  gpuready could not do the job: bad usage, a missing library, ...
 *   3  bench, nccl: a rank stalled past a deadline or was lost;
 *      bench net: the peer disconnected or stalled past a deadline */
#ifndef GPUREADY_EXITCODES_H
#define GPUREADY_EXITCODES_H

enum {
	EXIT_OK = 0,
	EXIT_CHECK_FAILED = 1,
	EXIT_TOOL_ERROR = 2,
	EXIT_STALLED = 3,
};

#endif
