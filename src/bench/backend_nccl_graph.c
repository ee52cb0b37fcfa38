/* The NCCL backend's CUDA graphs (-G, as nccl-tests common.cu BenchTime):
 * capture on every local rank's stream, instantiate one graph per rank,
 * launch them, free them; and what init checks for them (the driver's
 * graph entry points, NCCL 2.9+, NCCL_GRAPH_MIXING_SUPPORT). See
 * backend_nccl.c for the whole backend. */
#define _GNU_SOURCE
#include "backend_nccl_int.h"
#include "core/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nccl_graph_supported(struct nccl_backend *n)
{
	const char *missing = cuda_api_missing(&n->cu, CUDA_NEED_GRAPH);

	if (missing) {
		backend_set_error(&n->base, "CUDA graphs (-G) are not available: the CUDA driver library %s lacks %s "
					    "(CUDA 11.4 and newer drivers have every graph call used); run without -G",
				  n->culib.path, missing);
		return -ENOTSUP;
	}
	if (n->nccl.major < 2 || (n->nccl.major == 2 && n->nccl.minor < 9)) {
		backend_set_error(&n->base, "CUDA graphs (-G) need NCCL 2.9 or newer (as nccl-tests -G); this is %s",
				  n->nccl.version);
		return -ENOTSUP;
	}
	return 0;
}

/* NCCL's guide (Using NCCL with CUDA Graphs): the mechanism that lets
 * captured and uncaptured NCCL work be outstanding together "has been seen
 * to cause CUDA to deadlock when the graphs of multiple communicators are
 * cudaGraphLaunch()'d from the same thread" -- what -G with -g N > 1 does.
 * The harness never mixes them (every launch is waited for before the
 * graphs run, the graphs before the next launch), so it is switched off
 * with NCCL_GRAPH_MIXING_SUPPORT=0 before the communicators exist, unless
 * the user set it. */
void nccl_graph_mixing(const struct backend_env *env)
{
	if (env->local > 1 && !getenv("NCCL_GRAPH_MIXING_SUPPORT"))
		setenv("NCCL_GRAPH_MIXING_SUPPORT", "0", 1);
}

/* ---- CUDA graphs (-G) ---- */

/* Thread-local as nccl-tests' timed -G loop (common.cu BenchTime): global
 * mode would also forbid unsafe calls (cudaMalloc) in every other thread,
 * NCCL's included, while the capture lasts. */
#define NCCL_CAPTURE_MODE CU_STREAM_CAPTURE_MODE_THREAD_LOCAL

static int graph_fail(struct nccl_backend *n, int l, const char *call, CUresult r)
{
	char what[160];
	snprintf(what, sizeof(what), "%s (rank %d, GPU %d)", call, n->r[l].rank, n->base.env.first_gpu + l);
	return nccl_cu_fail(n, what, r);
}

/* Destroys the graphs and abandons a capture still running (its stream
 * would be unusable otherwise); accepts a backend without any. */
void nccl_graph_free(struct backend *b)
{
	struct nccl_backend *n = nb(b);

	for (int l = 0; l < n->n; l++) {
		struct nccl_rank *k = &n->r[l];
		if (!k->capturing && !k->graph && !k->exec)
			continue;
		n->cu.ctx_set_current(k->ctx);
		if (k->capturing) {
			CUgraph g = NULL;
			if (n->cu.stream_end_capture(k->stream, &g) == CUDA_SUCCESS && g)
				n->cu.graph_destroy(g);
			k->capturing = false;
		}
		if (k->exec)
			n->cu.graph_exec_destroy(k->exec);
		if (k->graph)
			n->cu.graph_destroy(k->graph);
		k->exec = NULL;
		k->graph = NULL;
	}
}

/* Replaces the graphs of an earlier capture. */
int nccl_capture_begin(struct backend *b)
{
	struct nccl_backend *n = nb(b);
	int r = nccl_capture_busy(n, "capture_begin");

	if (r == 0 && n->n == 0) {
		backend_set_error(b, "nccl: CUDA graph capture before init");
		r = -EINVAL;
	}
	if (r == 0)
		r = nccl_graph_supported(n);
	if (r < 0)
		return r;
	nccl_graph_free(b);
	for (int l = 0; l < n->n && r == 0; l++) {
		if (nccl_set_ctx(n, l) < 0) {
			r = -EIO;
			break;
		}
		CUresult c = n->cu.stream_begin_capture_v2(n->r[l].stream, NCCL_CAPTURE_MODE);
		if (c != CUDA_SUCCESS)
			r = graph_fail(n, l, "cuStreamBeginCapture_v2", c);
		n->r[l].capturing = c == CUDA_SUCCESS;
	}
	if (r < 0)
		nccl_graph_free(b);
	return r;
}

/* Ends every rank's capture (even after one failed: a stream left
 * capturing is unusable), then instantiates each graph. */
int nccl_capture_end(struct backend *b)
{
	struct nccl_backend *n = nb(b);
	int r = 0;

	if (!capturing(n)) {
		backend_set_error(b, "nccl: capture_end without capture_begin");
		return -EINVAL;
	}
	for (int l = 0; l < n->n; l++) {
		struct nccl_rank *k = &n->r[l];
		n->cu.ctx_set_current(k->ctx);
		CUresult c = n->cu.stream_end_capture(k->stream, &k->graph);
		k->capturing = false;
		if (c == CUDA_SUCCESS && !k->graph)
			c = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED; /* the driver's "invalidated" answer */
		if (c != CUDA_SUCCESS) {
			k->graph = NULL;
			if (r == 0)
				r = graph_fail(n, l, "cuStreamEndCapture", c);
		}
	}
	for (int l = 0; l < n->n && r == 0; l++) {
		struct nccl_rank *k = &n->r[l];
		if (nccl_set_ctx(n, l) < 0) {
			r = -EIO;
			break;
		}
		CUresult c = cuda_api_instantiate(&n->cu, &k->exec, k->graph);
		if (c != CUDA_SUCCESS) {
			k->exec = NULL;
			r = graph_fail(n, l, n->cu.graph_instantiate_with_flags ? "cuGraphInstantiateWithFlags"
										  : "cuGraphInstantiate_v2", c);
		}
	}
	if (r < 0)
		nccl_graph_free(b);
	return r;
}

/* One launch per rank, in rank order, on the rank's stream. */
int nccl_graph_launch(struct backend *b)
{
	struct nccl_backend *n = nb(b);

	if (nccl_capture_busy(n, "graph_launch") < 0)
		return -EBUSY;
	if (n->n == 0 || !n->r[0].exec) { /* capture_end makes all ranks' or none */
		backend_set_error(b, "nccl: graph_launch without a graph (capture_begin, run, capture_end first)");
		return -EINVAL;
	}
	for (int l = 0; l < n->n; l++) {
		struct nccl_rank *k = &n->r[l];
		if (nccl_set_ctx(n, l) < 0)
			return -EIO;
		k->done = false;
		CUresult c = n->cu.graph_launch(k->exec, k->stream);
		if (c != CUDA_SUCCESS)
			return graph_fail(n, l, "cuGraphLaunch", c);
	}
	return 0;
}
