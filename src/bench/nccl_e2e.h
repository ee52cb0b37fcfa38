/* The NCCL end-to-end test's engine (gpuready nccl, test-nccl): NCCL's
 * log routed into a file per process, and the two checks every rank runs
 * through a ready backend: its rank number all-reduced, then a large
 * buffer of verifiable data checked element by element. cmd/nccl.c starts
 * the ranks, gathers the verdicts and renders them. */
#ifndef GPUREADY_BENCH_NCCL_E2E_H
#define GPUREADY_BENCH_NCCL_E2E_H

#include "backend.h"

#include <stdbool.h>
#include <stddef.h>

/* Who this process is: its process rank, its local ranks, all ranks. */
struct nccl_e2e_shape {
	int proc, local, nranks;
};

/* One local rank's result. */
struct nccl_e2e_rank {
	int rank;
	double result, expected;
	size_t wrong, checked;
	bool ok;
};

/* Sets NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS (INIT and NET added to the
 * user's) and NCCL_DEBUG_FILE=DIR/nccl.%h.%p.log before NCCL loads.
 * Returns 0 or -errno with *err. */
int nccl_e2e_log_env(const char *dir, char **err);
/* This process's log from DIR (malloc'd, *len bytes, at most 64 MiB), or
 * NULL when there is none. */
char *nccl_e2e_read_log(const char *dir, size_t *len);
/* Step 1 and step 2 on buf (one device buffer per local rank); each fills
 * rc[0..local) and returns 0 or -errno with *err. */
int nccl_e2e_rank_sum(struct backend *b, const struct nccl_e2e_shape *ss, void **buf, struct nccl_e2e_rank *rc,
		      double deadline, char **err);
int nccl_e2e_large(struct backend *b, const struct nccl_e2e_shape *ss, void **buf, size_t bytes,
		   struct nccl_e2e_rank *rc, double deadline, char **err);

#endif
