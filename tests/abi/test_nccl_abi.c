/* src/lib/nccl_api.h against NCCL's nccl.h (see abi.h): the result,
 * reduction and data type codes, the unique ID and communicator handle,
 * the fields of the 2.14 communicator configuration gpuready fills (a
 * prefix of every later ncclConfig_t), and every entry point's prototype.
 * Debian packages no NCCL: the header comes from the CUDA toolkit where
 * one is installed; without it the test skips and says why. */
#ifdef ABI_REAL
#ifdef ABI_HEADER
#if __has_include(ABI_HEADER) && __has_include(<cuda_runtime.h>)
/* nccl.h declares ncclGroupStart() and a few others without (void) */
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include ABI_HEADER
#define HAVE_HEADER 1
/* the entries name our 2.14 struct; the header's ncclConfig_t is a later
 * version of it (same prefix, fields appended) */
#define ncclConfig_v21400 ncclConfig_t
#define ABI_NCCL_VERSION NCCL_VERSION
#define ABI_NCCL_CONFIG NCCL_CONFIG_INITIALIZER
#elif __has_include(ABI_HEADER)
#define ABI_NO_CUDART 1
#endif
#endif
#else
#include "lib/nccl_api.h"

#include <stdio.h>
#define ABI_NCCL_VERSION NCCL_VERSION_CODE
#define ABI_NCCL_CONFIG NCCL_CONFIG_V21400_INITIALIZER
#endif

#include "abi.h"

#include <limits.h>

#define ABI_TYPES \
	ABI_S(ncclResult_t, 0) ABI_S(ncclRedOp_t, 0) ABI_S(ncclDataType_t, 0) ABI_S(ncclComm_t, 0) \
	ABI_S(ncclUniqueId, 0) ABI_F(ncclUniqueId, internal, 0) ABI_E(NCCL_UNIQUE_ID_BYTES, 0) \
	ABI_F(ncclConfig_v21400, size, 0) ABI_F(ncclConfig_v21400, magic, 0) \
	ABI_F(ncclConfig_v21400, version, 0) ABI_F(ncclConfig_v21400, blocking, 0) ABI_E(NCCL_CONFIG_UNDEF_INT, 0)

/* The version code formula (ours: NCCL_VERSION_CODE(x, y, z), nccl.h:
 * NCCL_VERSION(X, Y, Z)) on both sides of its 2.8/2.9 switch. */
#define ABI_FORMULA \
	ABI_V("NCCL_VERSION(2, 7, 8)", ABI_NCCL_VERSION(2, 7, 8), 0) \
	ABI_V("NCCL_VERSION(2, 8, 4)", ABI_NCCL_VERSION(2, 8, 4), 0) \
	ABI_V("NCCL_VERSION(2, 9, 6)", ABI_NCCL_VERSION(2, 9, 6), 0) \
	ABI_V("NCCL_VERSION(2, 14, 3)", ABI_NCCL_VERSION(2, 14, 3), 0) \
	ABI_V("NCCL_VERSION(2, 28, 9)", ABI_NCCL_VERSION(2, 28, 9), 0) \
	ABI_V("NCCL_VERSION(3, 0, 0)", ABI_NCCL_VERSION(3, 0, 0), 0)

/* What the configuration initializer sets that gpuready's must set alike
 * (its size and version are each header's own): NCCL_API_MAGIC is the
 * magic nccl.h writes into NCCL_CONFIG_INITIALIZER (2.28 spells it as a
 * number there), blocking NCCL_CONFIG_UNDEF_INT. Values of a compound
 * literal: known at run time only. */
#define ABI_CONFIG \
	ABI_V("NCCL_API_MAGIC", ((ncclConfig_v21400)ABI_NCCL_CONFIG).magic, 0) \
	ABI_V("NCCL_CONFIG_INITIALIZER.blocking", ((ncclConfig_v21400)ABI_NCCL_CONFIG).blocking, 0)

#define ABI_ENUMS \
	ABI_E(ncclSuccess, 0) ABI_E(ncclUnhandledCudaError, 0) ABI_E(ncclSystemError, 0) \
	ABI_E(ncclInternalError, 0) ABI_E(ncclInvalidArgument, 0) ABI_E(ncclInvalidUsage, 0) \
	ABI_E(ncclRemoteError, 0) ABI_E(ncclInProgress, 0) \
	ABI_E(ncclSum, 0) ABI_E(ncclProd, 0) ABI_E(ncclMax, 0) ABI_E(ncclMin, 0) ABI_E(ncclAvg, 0) \
	ABI_E(ncclMaxRedOp, 0) \
	ABI_E(ncclInt8, 0) ABI_E(ncclUint8, 0) ABI_E(ncclInt32, 0) ABI_E(ncclUint32, 0) ABI_E(ncclInt64, 0) \
	ABI_E(ncclUint64, 0) ABI_E(ncclFloat16, 0) ABI_E(ncclFloat32, 0) ABI_E(ncclFloat64, 0) \
	ABI_E(ncclBfloat16, 0)

/* Version groups: what a header older than that release does not
 * declare (bench -R's calls, nccl.h and NCCL's documentation). */
#define G_NCCL219 1u /* ncclMemAlloc, ncclMemFree, ncclCommRegister, ncclCommDeregister */
#define G_NCCL227 2u /* ncclWindow_t, NCCL_WIN_COLL_SYMMETRIC, ncclCommWindowRegister/Deregister */
#define G_NCCL218 4u /* ncclCommSplit (cluster nccl) */

#define ABI_WINDOW ABI_S(ncclWindow_t, G_NCCL227) ABI_E(NCCL_WIN_COLL_SYMMETRIC, G_NCCL227)
#define ABI_SPLIT ABI_E(NCCL_SPLIT_NOCOLOR, G_NCCL218)

typedef struct CUstream_st *abi_stream;
#define ABI_REG_PROTOS \
	PG(ncclMemAlloc, mem_alloc, ncclResult_t (*)(void **, size_t), G_NCCL219) \
	PG(ncclMemFree, mem_free, ncclResult_t (*)(void *), G_NCCL219) \
	PG(ncclCommRegister, comm_register, ncclResult_t (*)(const ncclComm_t, void *, size_t, void **), G_NCCL219) \
	PG(ncclCommDeregister, comm_deregister, ncclResult_t (*)(const ncclComm_t, void *), G_NCCL219) \
	PG(ncclCommWindowRegister, comm_window_register, \
	   ncclResult_t (*)(ncclComm_t, void *, size_t, ncclWindow_t *, int), G_NCCL227) \
	PG(ncclCommWindowDeregister, comm_window_deregister, ncclResult_t (*)(ncclComm_t, ncclWindow_t), G_NCCL227) \
	PG(ncclCommSplit, comm_split, ncclResult_t (*)(ncclComm_t, int, int, ncclComm_t *, ncclConfig_v21400 *), \
	   G_NCCL218)

#define ABI_PROTOS \
	P(ncclGetVersion, get_version, ncclResult_t (*)(int *)) \
	P(ncclGetUniqueId, get_unique_id, ncclResult_t (*)(ncclUniqueId *)) \
	P(ncclCommInitRank, comm_init_rank, ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int)) \
	P(ncclCommDestroy, comm_destroy, ncclResult_t (*)(ncclComm_t)) \
	P(ncclCommAbort, comm_abort, ncclResult_t (*)(ncclComm_t)) \
	P(ncclCommGetAsyncError, comm_get_async_error, ncclResult_t (*)(ncclComm_t, ncclResult_t *)) \
	P(ncclGetErrorString, get_error_string, const char *(*)(ncclResult_t)) \
	P(ncclGroupStart, group_start, ncclResult_t (*)(void)) \
	P(ncclGroupEnd, group_end, ncclResult_t (*)(void)) \
	P(ncclAllReduce, all_reduce, \
	  ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, abi_stream)) \
	P(ncclBroadcast, broadcast, \
	  ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, abi_stream)) \
	P(ncclReduce, reduce, \
	  ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, abi_stream)) \
	P(ncclAllGather, all_gather, \
	  ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, abi_stream)) \
	P(ncclReduceScatter, reduce_scatter, \
	  ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, abi_stream)) \
	P(ncclSend, send, ncclResult_t (*)(const void *, size_t, ncclDataType_t, int, ncclComm_t, abi_stream)) \
	P(ncclRecv, recv, ncclResult_t (*)(void *, size_t, ncclDataType_t, int, ncclComm_t, abi_stream)) \
	P(ncclCommInitRankConfig, comm_init_rank_config, \
	  ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_v21400 *)) \
	P(ncclGetLastError, get_last_error, const char *(*)(ncclComm_t)) \
	P(ncclCommCount, comm_count, ncclResult_t (*)(const ncclComm_t, int *)) \
	P(ncclCommUserRank, comm_user_rank, ncclResult_t (*)(const ncclComm_t, int *))

#ifdef ABI_REAL
extern const struct abi_real abi_nccl_real;
#ifdef HAVE_HEADER
#define P(sym, member, type) ABI_P_REAL(#sym, sym, type, 0)
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
#define PG_G_NCCL219(sym, member, type) ABI_P_REAL(#sym, sym, type, G_NCCL219)
#else
#define PG_G_NCCL219(sym, member, type)
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
#define PG_G_NCCL218(sym, member, type) ABI_P_REAL(#sym, sym, type, G_NCCL218)
#define ABI_SPLIT_REAL ABI_SPLIT
#else
#define PG_G_NCCL218(sym, member, type)
#define ABI_SPLIT_REAL
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
#define PG_G_NCCL227(sym, member, type) ABI_P_REAL(#sym, sym, type, G_NCCL227)
#define ABI_WINDOW_REAL ABI_WINDOW
#else
#define PG_G_NCCL227(sym, member, type)
#define ABI_WINDOW_REAL
#endif
#define PG(sym, member, type, g) PG_##g(sym, member, type)
static const struct abi_entry real[] = { ABI_TYPES ABI_WINDOW_REAL ABI_SPLIT_REAL ABI_ENUMS ABI_FORMULA ABI_PROTOS ABI_REG_PROTOS };
ABI_RUNTIME_FN(runtime, ABI_CONFIG)
const struct abi_real abi_nccl_real = {
	.have_header = 1,
	.groups = (NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0) ? G_NCCL218 : 0) |
		  (NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0) ? G_NCCL219 : 0) |
		  (NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0) ? G_NCCL227 : 0),
	.header_version = "nccl.h of NCCL_VERSION_CODE " ABI_XSTR(NCCL_VERSION_CODE) " (" ABI_HEADER ")",
	.v = real, .n = ABI_N(real), .runtime = runtime,
};
#elif defined(ABI_NO_CUDART)
const struct abi_real abi_nccl_real = {
	.header_version = ABI_HEADER " includes <cuda_runtime.h>, which is not on the include path (a CUDA "
			  "toolkit, or PyTorch's nvidia-cuda-runtime wheel, has it)",
};
#else
const struct abi_real abi_nccl_real = {
	.header_version = "nccl.h not found: " ABI_HEADER_WHERE " (Debian packages no NCCL; a CUDA toolkit "
			  "or PyTorch's nvidia-nccl wheel has it)",
};
#endif
#else
#define P(sym, member, type) ABI_P_OURS(struct nccl_api, sym, member, type, 0)
#define PG(sym, member, type, g) ABI_P_OURS(struct nccl_api, sym, member, type, g)
extern const struct abi_real abi_nccl_real;
static const struct abi_entry ours[] = { ABI_TYPES ABI_WINDOW ABI_SPLIT ABI_ENUMS ABI_FORMULA ABI_PROTOS ABI_REG_PROTOS };
ABI_RUNTIME_FN(runtime, ABI_CONFIG)
#undef P
#undef PG
#define P(sym, member, type) #member,
#define PG(sym, member, type, g) #member,
static const char *const members[] = { ABI_PROTOS ABI_REG_PROTOS };

int main(void)
{
	/* gpuready's own macros, not nccl.h's: NCCL_CONFIG_V21400_INITIALIZER
	 * is checked through ABI_CONFIG */
	static const char *const except[] = { "NCCL_PY_TIMEOUT_MS", NULL };
	int skip = abi_skip_without_header("NCCL", &abi_nccl_real);

	if (skip)
		return skip;
	int bad = abi_compare("NCCL", ours, ABI_N(ours), runtime, &abi_nccl_real, NULL);
	bad += abi_cover("NCCL", "src/lib/nccl_api.h", ours, ABI_N(ours), runtime, members, ABI_N(members),
			 except);
	return bad ? 1 : 0;
}
#endif
