/* What the NCCL backend's files share (backend_nccl.c: setup, copies,
 * collectives, teardown; backend_nccl_graph.c: CUDA graphs for -G;
 * backend_nccl_iter.c: -I's events; backend_nccl_mem.c: buffers, -M, -R): the
 * backend's state and the few calls that cross them. Not for use outside
 * the backend. */
#ifndef GPUREADY_BENCH_BACKEND_NCCL_INT_H
#define GPUREADY_BENCH_BACKEND_NCCL_INT_H

#include "bench/backend.h"
#include "lib/nccl_api.h"
#include "lib/cuda_api.h"

#include <stdbool.h>

#define NCCL_CUDA_NEED (CUDA_NEED_BASE | CUDA_NEED_FACTS | CUDA_NEED_COPY | CUDA_NEED_STREAM)

/* -R: a buffer registered with the rank's communicator */
struct nccl_reg {
	void *p;
	void *handle;          /* ncclCommRegister's (-R 1) */
	ncclWindow_t win;      /* ncclCommWindowRegister's (-R 2) */
};
#define NCCL_MAX_REGS 4

struct nccl_rank {
	int rank;              /* global */
	CUdevice dev;
	CUcontext ctx;         /* retained primary context, NULL until then */
	CUstream stream;
	ncclComm_t comm;
	CUdeviceptr barrier;   /* one int32 for barrier() */
	bool done;             /* wait(): this rank's stream has drained */
	bool capturing;        /* stream is in a capture capture_begin started */
	CUgraph graph;         /* what capture_end got, until graph_free */
	CUgraphExec exec;
	CUevent *marks;        /* -I's timing points (backend_nccl_iter.c) */
	int nmarks;
	int64_t free_before_init; /* -M: free memory before communicator setup */
	struct nccl_reg regs[NCCL_MAX_REGS];
	int nregs;
};

struct nccl_backend {
	struct backend base;   /* first: the harness sees a struct backend */
	struct dl_lib culib;
	struct cuda_api cu;
	struct nccl_api nccl;
	bool nccl_loaded;
	char library[640];     /* "NCCL 2.21.5 (/path/libnccl.so.2)" once loaded */
	bool cuda_ready;       /* cuInit succeeded */
	struct nccl_rank *r;   /* env.local entries once init allocated them */
	int n;                 /* entries in r */
	struct nccl_backend *parent; /* split()'s child: libraries, contexts and streams are the parent's */
	double t_begin;
};

static inline struct nccl_backend *nb(struct backend *b)
{
	return (struct nccl_backend *)b;
}

static inline bool capturing(const struct nccl_backend *n)
{
	for (int l = 0; l < n->n; l++)
		if (n->r[l].capturing)
			return true;
	return false;
}

/* backend_nccl.c */
/* Sets b->error to "what: <CUDA error>" and returns -EIO. */
int nccl_cu_fail(struct nccl_backend *n, const char *what, CUresult r);
/* Makes local rank l's context current; 0 or -EIO. */
int nccl_set_ctx(struct nccl_backend *n, int l);
/* Sets b->error to "what: <NCCL error>; NCCL's last error" and returns -EIO. */
int nccl_fail(struct nccl_backend *n, ncclComm_t comm, const char *what, ncclResult_t r);
/* -EBUSY (with the error set) for a call that a capture forbids, else 0. */
int nccl_capture_busy(struct nccl_backend *n, const char *op);

/* backend_nccl_graph.c: the backend_ops for -G, and at init */
int nccl_graph_supported(struct nccl_backend *n);
void nccl_graph_mixing(const struct backend_env *env);
int nccl_capture_begin(struct backend *b);
int nccl_capture_end(struct backend *b);
int nccl_graph_launch(struct backend *b);
void nccl_graph_free(struct backend *b);

/* Aborts every local rank's communicator (NULL after). */
void nccl_abort_comms(struct nccl_backend *n);
/* Non-blocking setup: until no communicator is in progress, or the
 * deadline (then aborted, -ETIMEDOUT naming the ranks). */
int nccl_poll_init(struct nccl_backend *n, double deadline);

/* backend_nccl_split.c: the backend_ops' split (cluster nccl), and the
 * child's teardown (its communicators only) */
int nccl_split(struct backend *b, const struct backend_split *how, double deadline, struct backend **child);
void nccl_split_fini(struct nccl_backend *c);

/* backend_nccl_iter.c: the backend_ops for -I */
int nccl_marks(struct backend *b, int count);
int nccl_mark(struct backend *b, int i);
int nccl_mark_elapsed(struct backend *b, int from, int to, double *sec);

/* backend_nccl_mem.c: -M */
int nccl_mem_supported(struct nccl_backend *n);
int nccl_mem_free(struct backend *b, int l, int64_t *bytes);
int nccl_mem_init_note(struct nccl_backend *n, bool after);
/* backend_nccl_mem.c: -R (env.reg): init's check, the buffers from
 * ncclMemAlloc, their registration (the backend_ops' reg) */
int nccl_reg_supported(struct nccl_backend *n, int reg);
int nccl_reg(struct backend *b, int l, void *p, size_t bytes);
/* backend_nccl_mem.c: the backend_ops' alloc and free */
int nccl_alloc(struct backend *b, int l, size_t bytes, void **ret);
void nccl_free(struct backend *b, int l, void *p);

#endif
