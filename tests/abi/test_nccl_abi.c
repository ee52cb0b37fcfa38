/* src/bench/nccl_api.h against NCCL's nccl.h (see abi.h): the result,
 * reduction and data type codes, the unique ID and communicator handle,
 * the fields of the 2.14 communicator configuration gpuready fills (a
 * prefix of every later ncclConfig_t), and every entry point's prototype.
 * Debian packages no NCCL: the header comes from the CUDA toolkit where
 * one is installed; without it the test skips and says why. */
#ifdef ABI_REAL
#if __has_include(<nccl.h>)
/* nccl.h declares ncclGroupStart() and a few others without (void) */
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#define HAVE_HEADER 1
typedef ncclConfig_t abi_nccl_config;
#endif
#else
#include "bench/nccl_api.h"

#include <stdio.h>
typedef ncclConfig_v21400 abi_nccl_config;
#endif

#include "abi.h"

#define ABI_TYPES \
	ABI_S(ncclResult_t, 0) ABI_S(ncclRedOp_t, 0) ABI_S(ncclDataType_t, 0) ABI_S(ncclComm_t, 0) \
	ABI_S(ncclUniqueId, 0) ABI_F(ncclUniqueId, internal, 0) ABI_E(NCCL_UNIQUE_ID_BYTES, 0) \
	ABI_F(abi_nccl_config, size, 0) ABI_F(abi_nccl_config, magic, 0) ABI_F(abi_nccl_config, version, 0) \
	ABI_F(abi_nccl_config, blocking, 0)

#define ABI_ENUMS \
	ABI_E(ncclSuccess, 0) ABI_E(ncclUnhandledCudaError, 0) ABI_E(ncclSystemError, 0) \
	ABI_E(ncclInternalError, 0) ABI_E(ncclInvalidArgument, 0) ABI_E(ncclInvalidUsage, 0) \
	ABI_E(ncclRemoteError, 0) ABI_E(ncclInProgress, 0) \
	ABI_E(ncclSum, 0) ABI_E(ncclProd, 0) ABI_E(ncclMax, 0) ABI_E(ncclMin, 0) ABI_E(ncclAvg, 0) \
	ABI_E(ncclMaxRedOp, 0) \
	ABI_E(ncclInt8, 0) ABI_E(ncclUint8, 0) ABI_E(ncclInt32, 0) ABI_E(ncclUint32, 0) ABI_E(ncclInt64, 0) \
	ABI_E(ncclUint64, 0) ABI_E(ncclFloat16, 0) ABI_E(ncclFloat32, 0) ABI_E(ncclFloat64, 0) \
	ABI_E(ncclBfloat16, 0)

typedef struct CUstream_st *abi_stream;
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
	  ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int, abi_nccl_config *)) \
	P(ncclGetLastError, get_last_error, const char *(*)(ncclComm_t))

#ifdef ABI_REAL
extern const struct abi_real abi_nccl_real;
#ifdef HAVE_HEADER
#define P(sym, member, type) ABI_P_REAL(#sym, sym, type, 0)
static const struct abi_entry real[] = { ABI_TYPES ABI_ENUMS ABI_PROTOS };
const struct abi_real abi_nccl_real = {
	.have_header = 1,
	.header_version = "nccl.h of NCCL_VERSION_CODE " ABI_XSTR(NCCL_VERSION_CODE),
	.v = real, .n = ABI_N(real),
};
#else
const struct abi_real abi_nccl_real = {
	.header_version = "nccl.h not found (" ABI_HEADER_WHERE "): Debian packages no NCCL; the CUDA toolkit "
			  "(/usr/local/cuda/include) or PyTorch's nvidia-nccl wheel has it",
};
#endif
#else
#define P(sym, member, type) ABI_P_OURS(struct nccl_api, sym, member, type, 0)
extern const struct abi_real abi_nccl_real;
static const struct abi_entry ours[] = { ABI_TYPES ABI_ENUMS ABI_PROTOS };

int main(void)
{
	int skip = abi_skip_without_header("NCCL", &abi_nccl_real);

	if (skip)
		return skip;
	return abi_compare("NCCL", ours, ABI_N(ours), &abi_nccl_real, NULL) ? 1 : 0;
}
#endif
