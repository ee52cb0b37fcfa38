/* The live probes: what only the running machine can say, through its
 * libraries (NVML, CUDA, libibverbs, PyTorch), filling the inventory's
 * structs (inventory/gpu_live.h, inventory.h) for the checks. Each fails
 * cleanly: a missing library or driver is recorded with its reason.
 * inventory_load() runs them through load_opts.live = probe_live. */
#ifndef GPUREADY_PROBE_H
#define GPUREADY_PROBE_H

#include "core/isolate.h"
#include "inventory/gpu_live.h"
#include "inventory/inventory.h"

#include <stdbool.h>
#include <stddef.h>

/* The live layer for inventory_load (load_opts.live): the verbs queries
 * (INV_RDMA: a recorded tree says why it cannot answer), and on the live
 * root NVML (INV_LIVE_NVML), CUDA and PyTorch (INV_LIVE_CUDA), and GPU
 * memory registration (INV_LIVE_GDR). Returns 0 or -errno. */
int probe_live(struct root *r, const struct load_opts *o, struct inventory *inv);

/* Lists the live interface addresses with getifaddrs(3) into ni (as NCCL
 * lists its bootstrap candidates, NCCL src/misc/socket.cc): IPv4 and IPv6,
 * with prefix lengths. Sets addrs_known, or addrs_why on failure.
 * Returns 0 (a failure is recorded, not returned). */
int ifaddrs_live(struct net_info *ni);

/* Queries the DCB state (PFC, DSCP APP entries, DCBX mode) of each named
 * netdev over rtnetlink (RTM_GETDCB, DCB_CMD_IEEE_GET) in a child process,
 * each request given timeout_s seconds, into di (src/probe/dcb.c): a netdev
 * without DCB operations gets err -EOPNOTSUPP, one the child did not reach
 * -ETIMEDOUT or -EIO. Sets di->known; di->why when the child could not
 * start. Never fails. */
void dcb_probe_names(const char *const *names, size_t n, double timeout_s, struct dcb_info *di);
/* dcb_probe_names for the netdevs of the RoCE ports (a LAG bond's slaves
 * for a bond) into inv->net.dcb, under probe_call_timeout(). Returns 0. */
int dcb_live(struct inventory *inv);

/* The class of an nvmlInit_v2 / cuInit return code (not the stub, which
 * the probes recognise by other means; CUDA_ERROR_STUB_LIBRARY aside).
 * NONE for success. */
enum gpu_lib_fail nvml_fail_class(int code);
enum gpu_lib_fail cuda_fail_class(int code);
/* A dlopen'd library's file: whether it is a CUDA toolkit stub, by its
 * path as loaded or as resolved (a ".../stubs/..." directory), or by what
 * it printed while loading (the NVML stub's banner calls itself a "stub
 * library"). path and said may be NULL. */
bool gpu_lib_is_stub(const char *path, const char *resolved, const char *said);

/* Loads NVML and reads every GPU, in this process. t names each call to
 * a watchdog before it is made (core/isolate.h); NULL for none. */
void nvml_probe(struct nvml_info *out, struct isolate_ctx *t);

/* Loads the CUDA driver API, reads every device's attributes and, when
 * roundtrip is true, on each device allocates 64 MiB, copies a pattern in
 * and out and compares it (a basic tensor operation without PyTorch), in
 * this process. t as for nvml_probe. */
void cuda_probe(struct cuda_info *out, bool roundtrip, struct isolate_ctx *t);

/* How long one NVML or CUDA call of the live probes may take before the
 * probe is abandoned: 20 s, gpuready's own generous bound (no vendor gives
 * one): the slowest call on a healthy node is cuInit, which sets up every
 * GPU whose driver state is not kept loaded (persistence mode off), and
 * a call still blocked after 20 s is taken as stuck. The environment
 * variable GPUREADY_PROBE_TIMEOUT (seconds, a positive number up to 3600)
 * overrides it, for tests. */
#define PROBE_CALL_TIMEOUT_S 20.0
double probe_call_timeout(void);

/* nvml_probe and cuda_probe in a child process (core/isolate.h), the
 * library loaded only there, each call given timeout_s seconds. A call
 * that overran leaves loaded false, fail GPU_LIB_FAIL_TIMEOUT and error
 * "NVML call <call> on GPU <i> did not return within <t> s"; a child that
 * died gives GPU_LIB_FAIL_OTHER and says how and during which call.
 * Never fails; the caller owns out->v as with the in-process probes. */
void nvml_probe_deadline(struct nvml_info *out, double timeout_s);
void cuda_probe_deadline(struct cuda_info *out, bool roundtrip, double timeout_s);

/* Why an isolated probe's child gave no result, into out: the call that
 * overran ("<lib> call <step> did not return within <t> s (abandoned)"),
 * or how the child died and during which call. Returns the class:
 * GPU_LIB_FAIL_TIMEOUT for an overrun, else GPU_LIB_FAIL_OTHER. */
enum gpu_lib_fail probe_end_reason(const struct isolate_result *res, const char *lib, double timeout, char *out,
				   size_t size);

/* For each pair (gpu_bdfs[i], ibdevs[i]): registers GPU memory with that
 * RDMA device through DMA-BUF (if try_dmabuf) and through plain
 * ibv_reg_mr (if try_peermem), in this process. Loads libcuda.so.1 and
 * libibverbs.so.1 by itself. Results in out[0..n). t as for nvml_probe;
 * with t, each pair's struct gdr_probe is also sent (isolate_send) as soon
 * as it is final. */
void gdr_probe_run(const char *const *gpu_bdfs, const char *const *ibdevs, size_t n, bool try_dmabuf,
		   bool try_peermem, struct gdr_probe *out, struct isolate_ctx *t);

/* gdr_probe_run in a child process (core/isolate.h), each CUDA and verbs
 * call given timeout_s seconds. The pairs the child finished keep their
 * results; the others (the last one, when a call overran after every pair
 * was done) get fail GPU_LIB_FAIL_TIMEOUT and, in the error of each method
 * asked for, "CUDA call <call> did not return within <t> s" (or
 * "libibverbs call ..."), or GPU_LIB_FAIL_OTHER and how the child died.
 * Never fails. */
void gdr_probe_deadline(const char *const *gpu_bdfs, const char *const *ibdevs, size_t n, bool try_dmabuf,
			bool try_peermem, double timeout_s, struct gdr_probe *out);

/* Live verbs queries of every RDMA port (InfiniBand active MTU), in a
 * child process under probe_call_timeout() per call (a query that never
 * returns leaves the ports it did not reach unqueried and verbs_status
 * naming the call); a recorded tree says it cannot answer. 0 or -errno for
 * internal errors. */
int verbs_load(const struct root *r, struct rdma_info *ri);
/* PyTorch's view of the GPUs through python (NULL: search). */
int torch_load(const char *python, struct torch_info *t);

#endif
