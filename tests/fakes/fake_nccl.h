/* What the parts of the fake libnccl.so.2 share (fake_nccl.c,
 * fake_nccl_log.c, fake_nccl_math.c); hidden from the library's exports,
 * which are NCCL's API only. */
#ifndef GPUREADY_FAKE_NCCL_H
#define GPUREADY_FAKE_NCCL_H

#include "lib/nccl_api.h"

#include <stddef.h>

/* One NCCL call, queued until its group runs (fake_nccl.c). */
enum kind { K_ALL_REDUCE, K_REDUCE, K_BROADCAST, K_ALL_GATHER, K_REDUCE_SCATTER, K_SEND, K_RECV };

struct op {
	enum kind kind;
	struct ncclComm *comm;
	const void *send;
	void *recv;
	size_t count;
	ncclDataType_t t;
	ncclRedOp_t op;
	int root;              /* collectives */
	int peer;              /* send/recv */
	CUstream stream;
	struct op *next;
};

/* fake_nccl.c: a symbol of the loaded libcuda.so.1 (the fake's hooks
 * included), NULL when it has none by that name. */
void *fake_cuda_sym(const char *name);
/* fake_nccl.c: issues a copy of every op of list as one group, exactly as
 * the outermost ncclGroupEnd runs a group; ops of communicators destroyed
 * since are skipped with a warning. */
void fake_group_replay(const struct op *list);
/* fake_nccl.c: marks s hung for the communicators of list's ops on s (a
 * graph launched there waits for its peers' launches, fake_group_replay
 * releases it). */
void fake_group_hold(const struct op *list, CUstream s);

/* fake_nccl.c: nonzero for a handle that is no live communicator */
int fake_comm_invalid(ncclComm_t c);
/* fake_nccl_reg.c: the buffer registrations c still holds */
int fake_regs_left(ncclComm_t c);

/* fake_nccl_graph.c: 1 while s captures (fake libcuda), 0 when not (or
 * the libcuda has no graphs), -1 when its capture was invalidated. */
int fake_stream_capturing(CUstream s);
/* fake_nccl_graph.c: records a group's ops issued on capturing streams
 * (list, taken over) into those streams' captures, to be replayed as one
 * group. ncclSuccess, or ncclUnhandledCudaError when a stream no longer
 * captures. */
ncclResult_t fake_capture_group(struct op *list);

/* NCCL_DEBUG_SUBSYS bits (NCCL src/include/nccl_common.h order). */
enum { SUB_INIT = 0x1, SUB_COLL = 0x2, SUB_P2P = 0x4, SUB_NET = 0x10, SUB_ENV = 0x80, SUB_BOOTSTRAP = 0x1000,
       SUB_ALL = ~0 };

/* "<host>:<pid>:<tid> [<dev>] NCCL INFO <msg>" when NCCL_DEBUG is INFO (or
 * TRACE) and NCCL_DEBUG_SUBSYS has one of flags; settings are read once. */
void fake_info(int dev, unsigned flags, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "\n<host>:<pid>:<tid> [<dev>] <file>:<line> NCCL WARN <msg>" from WARN up. */
void fake_warn_at(int dev, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define WARN(dev, ...) fake_warn_at(dev, __FILE__, __LINE__, __VA_ARGS__)
/* The text of the last WARN in the process, "" before any (what
 * ncclGetLastError answers). */
const char *fake_last_error(void);
/* The version line, once per process: bare at NCCL_DEBUG=VERSION or WARN,
 * an INFO line (all subsystems) at INFO. */
void fake_log_version(int dev, const char *version);

/* Bytes per element, 0 for a type the fake does not know. */
size_t fake_type_size(ncclDataType_t t);
/* acc[i] = acc[i] op in[i]; integers wrap, half and bfloat16 are rounded
 * back on every step; avg sums (fake_avg_finish divides). */
void fake_reduce(ncclDataType_t t, ncclRedOp_t op, void *acc, const void *in, size_t count);
void fake_avg_finish(ncclDataType_t t, void *buf, size_t count, int n);
/* Floating-point averages are pre-multiplied sums, as NCCL's: each input
 * times 1/n in its type, then summed. */
bool fake_avg_prescales(ncclDataType_t t);
void fake_avg_prescale(ncclDataType_t t, void *buf, size_t count, int n);

#endif
