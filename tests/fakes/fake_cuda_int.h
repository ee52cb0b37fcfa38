/* What the two halves of the fake libcuda.so.1 share: fake_cuda.c
 * (devices, contexts, device memory, streams, graphs) and
 * fake_cuda_copy.c (queued work, events, pinned host memory, peer access,
 * modules and kernels, failures on demand). Hidden symbols, not the
 * driver's ABI. */
#ifndef GPUREADY_FAKE_CUDA_INT_H
#define GPUREADY_FAKE_CUDA_INT_H

#include "lib/cuda_api.h"

#include <pthread.h>
#include <stdatomic.h>

#define FAKE_CUDA_MAX 16
#define FAKE_API __attribute__((visibility("default")))
#define FAKE_CLOCK_KHZ 1980000 /* CU_DEVICE_ATTRIBUTE_CLOCK_RATE: an H100 SXM5's boost clock */

struct CUctx_st {
	int dev;
	int refs;
};

struct fake_op; /* work queued on a stream (fake_cuda_copy.c) */

struct CUstream_st {
	unsigned magic;
	int dev;
	atomic_int hung;
	struct CUgraph_st *capture; /* while capturing */
	CUstreamCaptureMode mode;
	pthread_t capturer;
	int invalidated;            /* an illegal call broke the capture */
	int orphan;                 /* destroyed with work pending: freed once that has run */
	/* fake_cuda_copy.c, under its lock: the queue, the modelled time its
	 * last work ends (ms, CLOCK_MONOTONIC), the list of live streams */
	struct fake_op *head, *tail;
	double t;
	struct CUstream_st *next;
};

#define STREAM_MAGIC 0x57e4a3u

extern int fake_initialised;
extern int fake_ndev;
extern struct CUctx_st fake_ctxs[FAKE_CUDA_MAX];
extern __thread CUcontext fake_current;

double fake_now_ms(void);

/* ---- fake_cuda_copy.c: settings, failures, memory, peers, modules ---- */

/* cuInit: reads the FAKE_CUDA_* settings of the copy model (see
 * fake_cuda_copy.c) and forgets peer access, sticky errors and counters. */
void fake_copy_init(void);
/* An entry point's check of dev: its sticky error (a lost GPU, a kernel's
 * fault), or, counting this call towards FAKE_CUDA_LOST_AFTER, the loss;
 * else CUDA_SUCCESS. fake_sticky() only looks. */
CUresult fake_gate(int dev);
CUresult fake_sticky(int dev);
void fake_fault(int dev, CUresult r);
/* Whether a device (or all pinned host memory) holding have bytes may
 * take want more (FAKE_CUDA_OOM). */
int fake_oom(long long have, size_t want);

/* The address registry: device memory (dev >= 0) and pinned host memory
 * (FAKE_HOST); anything else is pageable host memory. */
#define FAKE_HOST (-1)
#define FAKE_PAGEABLE (-2)
void fake_reg_add(void *p, size_t bytes, int dev);
void fake_reg_del(void *p);
/* Where [p, p + bytes) lies: a device, FAKE_HOST or FAKE_PAGEABLE; -3
 * when it starts inside an allocation and runs past its end. */
int fake_reg_find(const void *p, size_t bytes);

/* Modelled copy rates in GB/s (1e9 bytes per second). */
enum fake_kind { FK_H2D, FK_D2H, FK_P2P, FK_LOCAL, FK__N };
double fake_rate(enum fake_kind k, int dev, int sm);
/* The GPU whose host link dev's host copies use (FAKE_CUDA_SHARED_HOST). */
int fake_host_link(int dev);
/* Whether copies to or from device dev arrive changed (FAKE_CUDA_CORRUPT). */
int fake_corrupts(int dev);
/* CU_DEVICE_ATTRIBUTE_CLOCK_RATE as reported (FAKE_CUDA_CLOCK_KHZ). */
int fake_reported_khz(void);
/* Whether a context on device `from` has peer access to `to` enabled. */
int fake_peer_on(int from, int to);

#define FUNC_MAGIC 0xf7c0u
enum fake_func_kind { FF_OTHER, FF_COPY, FF_SPIN, FF_CHASE, FF_SPLIT };
struct CUfunc_st {
	unsigned magic;
	int dev;
	enum fake_func_kind kind;
	char name[64];
};
void fake_count_launch(const char *name);

/* ---- fake_cuda_queue.c: streams' queues, events, async work ---- */

void fake_queue_init(void);
void fake_stream_link(CUstream s);
/* cuStreamDestroy's side: as the driver, returns at once; work s still
 * holds runs later, and s is freed after it (1), or now (0: the caller
 * frees it). */
int fake_stream_unlink(CUstream s);
CUresult fake_stream_sync(CUstream s);
CUresult fake_stream_query(CUstream s);
/* Waits for all queued work (dev < 0: of every device), then dev's
 * sticky error. */
CUresult fake_ctx_sync(int dev);
/* Queues on s work of ms modelled milliseconds that holds no link (a
 * kernel the caller timed), raising fault on s's device when it runs
 * (CUDA_SUCCESS: none). */
CUresult fake_enqueue_timed(CUstream s, double ms, CUresult fault);

/* ---- fake_cuda_chase.c: the pointer-chase kernel ---- */

/* cuInit: reads FAKE_CUDA_LATENCY_NS, forgets the hop counts. */
void fake_chase_init(void);
/* cuLaunchKernel of gpuready_chase on s with gx blocks. */
CUresult fake_chase_launch(CUstream s, unsigned gx, void **params);

#endif
