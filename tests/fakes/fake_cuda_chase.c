/* The fake libcuda.so.1's pointer-chase kernel, gpuready_chase
 * (src/bench/copy/kernels.h), for bench copy's latency tests: the fake
 * follows the chain it is given in memory, one node after the other, as
 * the kernel does, so a chain set up wrong is caught rather than timed.
 *
 * FAKE_CUDA_LATENCY_NS="host=800,p2p=700,local=600,hit=30,host@1=2000"
 *   the modelled time of one access in ns: host when the chain lies in
 *   pinned host memory, p2p in another GPU's memory (peer access enabled
 *   from the chasing GPU to it), local in the chasing GPU's own memory;
 *   hit for an access to the same 128-byte line as the access before (a
 *   cache hit: a chain whose stride is under a line measures mostly
 *   hits); "@N" for chases run on GPU N alone. Defaults: host 800, p2p
 *   700, local 600, hit 30 (round numbers, not measurements). Read by
 *   every cuInit.
 *
 * A launch (data, size, hops, block) with a grid of at least block + 1
 * blocks walks hops nodes from data at once (the work queued before it on
 * the stream has run then, unless a spin kernel holds the stream: the
 * chase does not wait for it) and queues the sum of the hops' latencies
 * as the kernel's modelled time on its stream (fake_cuda_queue.c). Every node it
 * reads must be 8-byte aligned (else CUDA_ERROR_MISALIGNED_ADDRESS) and
 * lie inside [data, data + size), which must be one allocation: pinned
 * host memory, or a GPU's memory that the chasing GPU owns or has peer
 * access to; anything else (a null or stale pointer, a host pointer in a
 * GPU's chain, pageable memory) is CUDA_ERROR_ILLEGAL_ADDRESS; a chain
 * whose last node reads 0 traps (CUDA_ERROR_LAUNCH_FAILED). The fault is
 * raised when the kernel runs, sticky for the GPU, as the copy kernel's.
 * A grid that does not reach the block does nothing (as the real kernel,
 * whose blocks other than `block` return at once).
 *
 * Test hooks: fake_cuda_chase_hops() counts the hops walked since cuInit,
 * fake_cuda_chase_nodes() the distinct nodes the last walk visited (the
 * chain's period when it wraps around). */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

enum { LAT_HOST, LAT_P2P, LAT_LOCAL, LAT_HIT, LAT__N };

static const char *const lat_keys[LAT__N] = { "host", "p2p", "local", "hit" };
static const double lat_default[LAT__N] = { 800, 700, 600, 30 };
static double lat_ns[LAT__N][FAKE_CUDA_MAX];
static atomic_llong hops_walked;
static atomic_llong last_nodes;

/* One "key[@dev]=ns"; pass 0 takes those for every GPU, pass 1 those for
 * one (so a GPU's own figure wins whatever the order). -1: malformed. */
static int lat_item(const char *item, int pass)
{
	char key[16];
	double ns;
	int dev = -1, n = 0;
	if (sscanf(item, "%15[a-z2]%n", key, &n) != 1)
		return -1;
	if (item[n] == '@' && sscanf(item + n, "@%d=%lf", &dev, &ns) == 2) {
		if (dev < 0 || dev >= FAKE_CUDA_MAX)
			return -1;
	} else if (sscanf(item + n, "=%lf", &ns) != 1) {
		return -1;
	}
	for (int k = 0; k < LAT__N; k++) {
		if (strcmp(key, lat_keys[k]))
			continue;
		if (!(ns > 0))
			return -1;
		for (int d = 0; d < FAKE_CUDA_MAX && pass == (dev >= 0); d++)
			if (dev < 0 || d == dev)
				lat_ns[k][d] = ns;
		return 0;
	}
	return -1;
}

void fake_chase_init(void)
{
	const char *s = getenv("FAKE_CUDA_LATENCY_NS");

	for (int k = 0; k < LAT__N; k++)
		for (int d = 0; d < FAKE_CUDA_MAX; d++)
			lat_ns[k][d] = lat_default[k];
	for (int pass = 0; s && pass < 2; pass++) {
		char *copy = strdup(s);
		for (char *save = NULL, *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save))
			if (lat_item(it, pass) < 0 && pass == 0)
				fprintf(stderr, "fake libcuda: FAKE_CUDA_LATENCY_NS: ignoring \"%s\"\n", it);
		free(copy);
	}
	atomic_store(&hops_walked, 0);
	atomic_store(&last_nodes, 0);
}

/* The latency of the memory [data, data + size) as GPU `on` reads it, or
 * a fault. */
static CUresult lat_of(uintptr_t data, size_t size, int on, double *ns)
{
	int where = fake_reg_find((const void *)data, size);
	if (!data || !size || where == -3 || where == FAKE_PAGEABLE)
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	if (where == FAKE_HOST)
		*ns = lat_ns[LAT_HOST][on];
	else if (where == on)
		*ns = lat_ns[LAT_LOCAL][on];
	else if (fake_peer_on(on, where))
		*ns = lat_ns[LAT_P2P][on];
	else
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	return CUDA_SUCCESS;
}

/* Follows hops nodes from data inside [data, data + size), marking the
 * nodes visited in seen (a bit per 8 bytes) and counting in *hits the
 * hops to the 128-byte line of the hop before; a fault at the first node
 * out of bounds or misaligned. */
static CUresult walk(uintptr_t data, size_t size, unsigned hops, unsigned char *seen, unsigned *hits)
{
	uintptr_t p = data, line = 0;
	long long distinct = 0;
	unsigned i;
	CUresult r = CUDA_SUCCESS;

	*hits = 0;
	for (i = 0; i < hops; i++) {
		if (p < data || p - data >= size || size - (p - data) < 8) {
			r = CUDA_ERROR_ILLEGAL_ADDRESS;
			break;
		}
		if (p % 8) {
			r = CUDA_ERROR_MISALIGNED_ADDRESS;
			break;
		}
		*hits += i > 0 && p / 128 == line;
		line = p / 128;
		size_t node = (p - data) / 8;
		if (!(seen[node / 8] & (1u << (node % 8)))) {
			seen[node / 8] |= (unsigned char)(1u << (node % 8));
			distinct++;
		}
		uint64_t next;
		memcpy(&next, (const void *)p, sizeof(next));
		p = (uintptr_t)next;
	}
	atomic_fetch_add(&hops_walked, (long long)i);
	atomic_store(&last_nodes, distinct);
	if (r == CUDA_SUCCESS && hops && !p)
		r = CUDA_ERROR_LAUNCH_FAILED; /* the kernel's trap */
	return r;
}

/* cuLaunchKernel of gpuready_chase on s (its device's context), gx
 * blocks; params as kernels.h says. */
CUresult fake_chase_launch(CUstream s, unsigned gx, void **params)
{
	uintptr_t data = (uintptr_t)*(CUdeviceptr *)params[0];
	size_t size = (size_t)*(unsigned long long *)params[1];
	unsigned hops = *(unsigned *)params[2], block = *(unsigned *)params[3], hits = 0;
	double ns = 0;

	if (block >= gx || !hops)
		return fake_enqueue_timed(s, 0, CUDA_SUCCESS);
	CUresult fault = lat_of(data, size, s->dev, &ns);
	if (fault == CUDA_SUCCESS) {
		unsigned char *seen = calloc(size / 64 + 1, 1);
		if (!seen)
			return CUDA_ERROR_OUT_OF_MEMORY;
		fault = walk(data, size, hops, seen, &hits);
		free(seen);
	}
	double ms = ((double)(hops - hits) * ns + (double)hits * lat_ns[LAT_HIT][s->dev]) / 1e6;
	return fake_enqueue_timed(s, fault == CUDA_SUCCESS ? ms : 0, fault);
}

/* ---- test hooks, not in the real driver ---- */

FAKE_API int fake_cuda_chase_hops(void)
{
	return (int)atomic_load(&hops_walked);
}

FAKE_API int fake_cuda_chase_nodes(void)
{
	return (int)atomic_load(&last_nodes);
}
