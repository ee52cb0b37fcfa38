/* The NCCL subset the benchmark calls, loaded at run time.
 *
 * gpuready never links libnccl and the build needs no nccl.h: the types,
 * values and prototypes used are declared here, each as the nccl.h line it
 * mirrors. Checked against NCCL 2.28.9's installed include/nccl.h (and its
 * libnccl.so.2 exports, nm -D) and against NVIDIA/nccl src/nccl.h.in at
 * master (021e8045, the 2.31 development header); where a fact is younger
 * than NCCL 2.7 (the oldest release with ncclSend/ncclRecv, which alltoall
 * and sendrecv need) the release that added it is named. The library is
 * dlopen'd through one symbol table (core/dl.h, STYLE 13) into struct
 * nccl_api.
 *
 * Where libnccl.so.2 comes from, in order: --nccl-lib PATH alone when given
 * (a benchmark must run the library the user named, never a fallback);
 * else the soname through the dynamic linker (system paths, ld.so.cache,
 * LD_LIBRARY_PATH: NVIDIA's libnccl2 package, a CUDA toolkit's lib/); else
 * the pip wheels nvidia-nccl-cu12/-cu13, which install
 * <site-packages>/nvidia/nccl/lib/libnccl.so.2, looked for under every
 * sys.path entry of the Python gpuready uses (the PyTorch check's rule:
 * $VIRTUAL_ENV/bin/python, /opt/pytorch-venv/bin/python, python3) and under
 * $VIRTUAL_ENV/lib/python3.N/site-packages (where pip's nvidia-nccl-cu12 puts it). */
#ifndef GPUREADY_BENCH_NCCL_API_H
#define GPUREADY_BENCH_NCCL_API_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/cuda_api.h"
#include "core/dl.h"
#include "core/strbuf.h"
#include "core/strv.h"

/* #define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z)) */
#define NCCL_VERSION_CODE(x, y, z) (((x) <= 2 && (y) <= 8) ? (x) * 1000 + (y) * 100 + (z) : (x) * 10000 + (y) * 100 + (z))

/* typedef struct ncclComm* ncclComm_t; */
typedef struct ncclComm *ncclComm_t;

/* A registered window, 2.27+ (nccl.h 2.28: typedef struct ncclWindow_vidmem*
 * ncclWindow_t; 2.27 names the struct ncclWindow: only the pointer is
 * passed around) and its flag for symmetric collectives. */
typedef struct ncclWindow_vidmem *ncclWindow_t;
#define NCCL_WIN_COLL_SYMMETRIC 0x01

/* #define NCCL_UNIQUE_ID_BYTES 128
 * typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId; */
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
	char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

/* typedef enum { ncclSuccess = 0, ... } ncclResult_t; 6 and 7 are newer
 * than 2.7 (2.14's header has both), master adds ncclTimeout = 8. Codes
 * not listed are named by ncclGetErrorString. */
typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
} ncclResult_t;

/* typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3,
 * ncclAvg = 4 (2.10+), ... ncclMaxRedOp = 0x7fffffff>>(...) } ncclRedOp_t;
 * the maximum keeps the enum int-sized, as ours is. */
typedef enum {
	ncclSum = 0,
	ncclProd = 1,
	ncclMax = 2,
	ncclMin = 3,
	ncclAvg = 4,
	ncclMaxRedOp = 0x7fffffff,
} ncclRedOp_t;

/* typedef enum { ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3,
 * ncclInt64 = 4, ncclUint64 = 5, ncclFloat16 = 6, ncclFloat32 = 7,
 * ncclFloat64 = 8, ncclBfloat16 = 9 (2.10+), ncclFloat8e4m3 = 10, ... }
 * ncclDataType_t; */
typedef enum {
	ncclInt8 = 0,
	ncclUint8 = 1,
	ncclInt32 = 2,
	ncclUint32 = 3,
	ncclInt64 = 4,
	ncclUint64 = 5,
	ncclFloat16 = 6,
	ncclFloat32 = 7,
	ncclFloat64 = 8,
	ncclBfloat16 = 9,
} ncclDataType_t;

/* Communicator configuration, 2.14+: a versioned, append-only struct that
 * NCCL reads by its own size field, checking magic, and whose members newer
 * than `version` it resets to defaults (init.cc parseCommConfig; the
 * oldest reader, which still required blocking to be 0 or 1, copies
 * min(size, its sizeof) the same way). The 2.14 layout is all gpuready
 * sets:
 *   typedef struct ncclConfig_v21400 { size_t size; unsigned int magic;
 *     unsigned int version; int blocking; } ncclConfig_t;
 * NCCL_CONFIG_INITIALIZER fills size = sizeof, magic = 0xcafebeef
 * (NCCL_API_MAGIC on master), version = the header's code, the rest
 * NCCL_CONFIG_UNDEF_INT (INT_MIN). 2.14 accepts only blocking 0 or 1. */
typedef struct ncclConfig_v21400 {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
} ncclConfig_v21400;
#define NCCL_API_MAGIC 0xcafebeef
#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_V21400_INITIALIZER                                                                         \
	{ .size = sizeof(ncclConfig_v21400), .magic = NCCL_API_MAGIC, .version = 21400,                        \
	  .blocking = NCCL_CONFIG_UNDEF_INT }

/* The entry points, filled by nccl_api_load(); optional ones may be NULL. */
struct nccl_api {
	struct dl_lib lib;
	int code;              /* ncclGetVersion(): 22105 */
	int major, minor, patch;
	char version[32];      /* "NCCL 2.21.5" */
	char file[512];        /* the file loaded, as the dynamic linker found it
				* ("/usr/lib/x86_64-linux-gnu/libnccl.so.2"); "" when
				* nothing loaded */
	/* required (NCCL 2.7+) */
	ncclResult_t (*get_version)(int *version);
	ncclResult_t (*get_unique_id)(ncclUniqueId *id);
	ncclResult_t (*comm_init_rank)(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
	ncclResult_t (*comm_destroy)(ncclComm_t comm);
	ncclResult_t (*comm_abort)(ncclComm_t comm);
	ncclResult_t (*comm_get_async_error)(ncclComm_t comm, ncclResult_t *async_error);
	const char *(*get_error_string)(ncclResult_t r);
	ncclResult_t (*group_start)(void);
	ncclResult_t (*group_end)(void);
	ncclResult_t (*all_reduce)(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
				   ncclComm_t comm, CUstream stream);
	ncclResult_t (*broadcast)(const void *send, void *recv, size_t count, ncclDataType_t t, int root,
				  ncclComm_t comm, CUstream stream);
	ncclResult_t (*reduce)(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op, int root,
			       ncclComm_t comm, CUstream stream);
	ncclResult_t (*all_gather)(const void *send, void *recv, size_t sendcount, ncclDataType_t t, ncclComm_t comm,
				   CUstream stream);
	ncclResult_t (*reduce_scatter)(const void *send, void *recv, size_t recvcount, ncclDataType_t t,
				       ncclRedOp_t op, ncclComm_t comm, CUstream stream);
	ncclResult_t (*send)(const void *send, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
			     CUstream stream);
	ncclResult_t (*recv)(void *recv, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, CUstream stream);
	/* optional: ncclCommInitRankConfig 2.14+, ncclGetLastError 2.13+ (NCCL's
	 * documentation of each); older releases leave them NULL */
	ncclResult_t (*comm_init_rank_config)(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
					      ncclConfig_v21400 *config);
	const char *(*get_last_error)(ncclComm_t comm);
	/* optional, for bench -R (nccl.h and NCCL's documentation):
	 * ncclMemAlloc, ncclMemFree, ncclCommRegister and ncclCommDeregister
	 * 2.19+; ncclCommWindowRegister and ncclCommWindowDeregister 2.27+ */
	ncclResult_t (*mem_alloc)(void **ptr, size_t size);
	ncclResult_t (*mem_free)(void *ptr);
	ncclResult_t (*comm_register)(const ncclComm_t comm, void *buff, size_t size, void **handle);
	ncclResult_t (*comm_deregister)(const ncclComm_t comm, void *handle);
	ncclResult_t (*comm_window_register)(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
					     int win_flags);
	ncclResult_t (*comm_window_deregister)(ncclComm_t comm, ncclWindow_t win);
	/* optional, for cluster nccl: ncclCommSplit 2.18+ (nccl.h: color
	 * NCCL_SPLIT_NOCOLOR (-1) for no new communicator, *newcomm NULL then;
	 * config NULL: the parent's) */
	ncclResult_t (*comm_split)(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_v21400 *config);
	/* optional (nccl.h since 2.x): a communicator's rank count and this rank in it */
	ncclResult_t (*comm_count)(const ncclComm_t comm, int *count);
	ncclResult_t (*comm_user_rank)(const ncclComm_t comm, int *rank);
};
#define NCCL_SPLIT_NOCOLOR (-1)

/* Loads libnccl.so.2 (see the top of this file) into *api and reads its
 * version. Returns 0, or -ENOENT (nothing loaded) / -ENOSYS (a required
 * symbol missing) / -EIO (ncclGetVersion failed) with *ret_err (malloc'd)
 * listing every place tried and how to install NCCL. nccl_api_unload()
 * must be called either way. The library stays mapped after unloading
 * (RTLD_NODELETE): NCCL's own threads may outlive the communicators. */
int nccl_api_load(struct nccl_api *api, const char *explicit_path, char **ret_err);
void nccl_api_unload(struct nccl_api *api);

/* The pip wheel's libnccl.so.2 files that exist, in the order
 * nccl_api_load() tries them after the soname, appended to out; where they
 * were looked for is described in searched ("python3 sys.path (5
 * entries), $VIRTUAL_ENV /venv"). Runs the Python interpreter. */
void nccl_api_wheels(struct strv *out, struct strbuf *searched);

/* Splits a version code from ncclGetVersion: major*10000 + minor*100 +
 * patch from 2.9 on (codes >= 20900), major*1000 + minor*100 + patch
 * before. -EINVAL for a code that is neither. */
int nccl_version_decode(int code, int *major, int *minor, int *patch);

/* Whether the loaded NCCL can initialise a communicator without blocking
 * (ncclCommInitRankConfig with blocking = 0: 2.14+). */
bool nccl_api_has_nonblocking_init(const struct nccl_api *api);

/* "fn: <ncclGetErrorString> (n)", plus "; NCCL's last error: <text>" from
 * ncclGetLastError(comm) when the library has it (NCCL 2.13+; comm may be
 * NULL, as for a failed ncclCommInitRank) and it says something, into out
 * (truncated, terminated). */
void nccl_api_format(const struct nccl_api *api, ncclComm_t comm, const char *fn, ncclResult_t r, char *out,
		     size_t size);

#endif
