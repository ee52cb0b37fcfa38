/* bench copy's data check, on unless -s: nvbandwidth v0.8 checks every
 * copy's data by default (memcpy.cpp memsetPattern and memcmpPattern; its
 * -s, --skipVerification, turns that off). Before a measurement each
 * source holds a pattern and each destination another value; after it
 * every destination must hold the pattern, so a copy that moved nothing,
 * or changed what it moved (a PCIe or NVLink path that corrupts data),
 * fails the cell instead of giving a figure. nvbandwidth stops the whole
 * run on a mismatch; gpuready names the copy, counts the bytes that
 * differ and goes on with the other cells.
 *
 * The pattern is a 2 MiB block of xorshift32 words (seed 0xBAADF00D, as
 * nvbandwidth's source pattern; Marsaglia, "Xorshift RNGs", J. Stat.
 * Softw. 8(14), 2003) repeated over the buffer, which goes to and from
 * the GPUs a block at a time through two 2 MiB pinned blocks; destinations are set to
 * the word 0xCAFEBABE first, nvbandwidth's destination seed. Device
 * buffers are filled and read back in their own GPU's context with the
 * synchronous cuMemcpyHtoD / cuMemcpyDtoH and cuMemsetD32Async on that
 * context's NULL stream; none of it is timed. The split-warp copy moves
 * each 512-byte warp's share one way or the other (kernels.h), so there
 * both buffers start as the pattern with the other direction's shares
 * cleared, and both must hold the whole pattern after it (nvbandwidth's
 * MemcpyInitiatorSMSplitWarp memsetPattern and memcmpPattern). */
#define _GNU_SOURCE
#include "engine_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CE_PATTERN_BLOCK (2u << 20)
#define CE_PATTERN_SEED 0xBAADF00Du
#define CE_DST_WORD 0xCAFEBABEu
#define CE_WARP_BYTES 512 /* 32 threads x 16 bytes */

int ce_owner(const struct ce_engine *e, CUdeviceptr p)
{
	for (int i = 0; i < e->n; i++) {
		const struct ce_gpu *g = &e->g[i];
		if (p == ce_host(g->h1) || p == ce_host(g->h2))
			return -1;
		if (p == g->a || p == g->b)
			return i;
	}
	for (int k = 0; k < e->n_extra; k++)
		if (p == e->extra[k])
			return e->extra_gpu;
	return -1;
}

static void ce_where(const struct ce_engine *e, CUdeviceptr p, char *out, size_t size)
{
	int o = ce_owner(e, p);
	if (o < 0)
		snprintf(out, size, "host memory");
	else
		snprintf(out, size, "GPU %d (%s)", e->out->gpus[o].ordinal, e->out->gpus[o].bdf);
}

/* The pattern block's length: 2 MiB, or the buffer where it is smaller. */
static size_t ce_block(const struct ce_engine *e)
{
	return e->bytes < CE_PATTERN_BLOCK ? e->bytes : CE_PATTERN_BLOCK;
}

int ce_verify_setup(struct ce_engine *e)
{
	void *p = NULL, *s = NULL;
	uint32_t x = CE_PATTERN_SEED;

	if (!e->plan->verify)
		return 0;
	/* two blocks of pinned memory, as nvbandwidth's 2 MiB pattern, not
	 * two buffers' worth: the buffers go through them block by block */
	CE_CALL(e, 0, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[0].ctx));
	CE_CALL(e, 0, "cuMemHostAlloc (the data check's pattern)",
		e->cu.mem_host_alloc(&p, ce_block(e), CU_MEMHOSTALLOC_PORTABLE));
	e->pattern = p;
	CE_CALL(e, 0, "cuMemHostAlloc (the data check's read-back block)",
		e->cu.mem_host_alloc(&s, ce_block(e), CU_MEMHOSTALLOC_PORTABLE));
	e->scratch = s;
	uint32_t *w = e->pattern;
	for (size_t i = 0; i < ce_block(e) / 4; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		w[i] = x;
	}
	return 0;
}

/* The pattern's block at buffer offset off (a multiple of the block), len
 * bytes, into p, with the shares of the warps of parity odd set to
 * CE_DST_WORD when split (a block starts on an even warp: 2 MiB is a
 * multiple of two warps' 1024 bytes). */
static void ce_image(const struct ce_engine *e, unsigned char *p, size_t len, bool split, bool odd)
{
	memcpy(p, e->pattern, len);
	for (size_t off = odd ? CE_WARP_BYTES : 0; split && off < len; off += 2 * CE_WARP_BYTES)
		for (size_t k = 0; k < CE_WARP_BYTES && off + k + 4 <= len; k += 4)
			memcpy(p + off + k, &(uint32_t){ CE_DST_WORD }, 4);
}

/* Fills buffer p (held by GPU owner, or host memory for -1) block by
 * block with the pattern (split: with the shares of parity odd cleared). */
static int ce_put(struct ce_engine *e, CUdeviceptr p, int owner, bool split, bool odd)
{
	if (owner >= 0)
		CE_CALL(e, owner, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[owner].ctx));
	for (size_t off = 0; off < e->bytes; off += ce_block(e)) {
		size_t len = e->bytes - off < ce_block(e) ? e->bytes - off : ce_block(e);
		if (owner < 0) {
			ce_image(e, (unsigned char *)(uintptr_t)(p + off), len, split, odd);
			continue;
		}
		ce_image(e, e->scratch, len, split, odd);
		CE_CALL(e, owner, "cuMemcpyHtoD (the data check's pattern)",
			e->cu.memcpy_htod_v2(p + off, e->scratch, len));
	}
	return 0;
}

/* Sources get the pattern, destinations CE_DST_WORD; a split-warp
 * transfer's buffers both the pattern, less the share the other brings
 * (odd warps carry the host buffer's to the device, even ones back). */
int ce_verify_fill(struct ce_engine *e, const struct ce_xfer *x, int n)
{
	for (int i = 0; i < n && e->plan->verify; i++) {
		int so = ce_owner(e, x[i].src), d = ce_owner(e, x[i].dst);
		if (ce_put(e, x[i].src, so, x[i].split, false) < 0)
			return -1;
		if (x[i].split) {
			if (ce_put(e, x[i].dst, d, true, true) < 0)
				return -1;
			continue;
		}
		if (d < 0) {
			uint32_t *w = (uint32_t *)(uintptr_t)x[i].dst;
			for (size_t k = 0; k < e->bytes / 4; k++)
				w[k] = CE_DST_WORD;
			continue;
		}
		CE_CALL(e, d, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[d].ctx));
		CE_CALL(e, d, "cuMemsetD32Async (the data check)",
			e->cu.memset_d32_async(x[i].dst, CE_DST_WORD, e->bytes / 4, NULL));
		CE_CALL(e, d, "cuCtxSynchronize (the data check)", e->cu.ctx_synchronize());
	}
	return 0;
}

/* Counts the bytes of buffer p (GPU owner's, or host memory) that differ
 * from the pattern into *bad, the first at *first. Returns 0, or -1 with
 * e->err on a CUDA error. */
static int ce_compare(struct ce_engine *e, CUdeviceptr p, int owner, size_t *bad, size_t *first)
{
	const unsigned char *want = e->pattern;
	if (owner >= 0)
		CE_CALL(e, owner, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[owner].ctx));
	for (size_t off = 0; off < e->bytes; off += ce_block(e)) {
		size_t len = e->bytes - off < ce_block(e) ? e->bytes - off : ce_block(e);
		const unsigned char *got = (const unsigned char *)(uintptr_t)(p + off);
		if (owner >= 0) {
			CE_CALL(e, owner, "cuMemcpyDtoH (the data check)", e->cu.memcpy_dtoh_v2(e->scratch, p + off, len));
			got = e->scratch;
		}
		if (!memcmp(got, want, len))
			continue;
		for (size_t k = 0; k < len; k++)
			if (got[k] != want[k] && (*bad)++ == 0)
				*first = off + k;
	}
	return 0;
}

int ce_verify_check(struct ce_engine *e, const struct ce_xfer *x, int n)
{
	for (int i = 0; i < n && e->plan->verify; i++) {
		size_t first = 0, bad = 0;
		if (ce_compare(e, x[i].dst, ce_owner(e, x[i].dst), &bad, &first) < 0)
			return -1;
		/* a split-warp transfer's other half went the other way */
		if (!bad && x[i].split && ce_compare(e, x[i].src, ce_owner(e, x[i].src), &bad, &first) < 0)
			return -1;
		if (!bad)
			continue;
		char from[64], to[64];
		ce_where(e, x[i].src, from, sizeof(from));
		ce_where(e, x[i].dst, to, sizeof(to));
		snprintf(e->err, sizeof(e->err),
			 "the copy from %s to %s (issued by GPU %d) left %zu of %zu bytes different from the source, "
			 "the first at byte %zu",
			 from, to, e->out->gpus[x[i].gpu].ordinal, bad, e->bytes, first);
		return -2;
	}
	return 0;
}
