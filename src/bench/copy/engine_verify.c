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
 * Softw. 8(14), 2003) repeated over the buffer; destinations are set to
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

int ce_verify_setup(struct ce_engine *e)
{
	void *p = NULL, *s = NULL;
	uint32_t x = CE_PATTERN_SEED;

	if (!e->plan->verify)
		return 0;
	CE_CALL(e, 0, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[0].ctx));
	CE_CALL(e, 0, "cuMemHostAlloc (the data check's pattern)",
		e->cu.mem_host_alloc(&p, e->bytes, CU_MEMHOSTALLOC_PORTABLE));
	e->pattern = p;
	CE_CALL(e, 0, "cuMemHostAlloc (the data check's read-back buffer)",
		e->cu.mem_host_alloc(&s, e->bytes, CU_MEMHOSTALLOC_PORTABLE));
	e->scratch = s;
	uint32_t *w = e->pattern;
	size_t block = e->bytes < CE_PATTERN_BLOCK ? e->bytes : CE_PATTERN_BLOCK;
	for (size_t i = 0; i < block / 4; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		w[i] = x;
	}
	for (size_t off = block; off < e->bytes; off += block)
		memcpy((char *)e->pattern + off, e->pattern, e->bytes - off < block ? e->bytes - off : block);
	return 0;
}

/* The pattern into p with the shares of the warps of parity odd set to
 * CE_DST_WORD instead. */
static void ce_split_image(const struct ce_engine *e, unsigned char *p, bool odd)
{
	memcpy(p, e->pattern, e->bytes);
	for (size_t off = odd ? CE_WARP_BYTES : 0; off < e->bytes; off += 2 * CE_WARP_BYTES) {
		uint32_t *w = (uint32_t *)(p + off);
		for (size_t k = 0; k < CE_WARP_BYTES / 4 && off + 4 * k < e->bytes; k++)
			w[k] = CE_DST_WORD;
	}
}

/* A split-warp transfer: the odd warps bring the host buffer's share to
 * the device, the even ones the device buffer's to the host. */
static int ce_split_fill(struct ce_engine *e, const struct ce_xfer *x)
{
	int d = ce_owner(e, x->dst);
	ce_split_image(e, (unsigned char *)(uintptr_t)x->src, false);
	ce_split_image(e, e->scratch, true);
	CE_CALL(e, d, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[d].ctx));
	CE_CALL(e, d, "cuMemcpyHtoD (the data check's pattern)", e->cu.memcpy_htod_v2(x->dst, e->scratch, e->bytes));
	return 0;
}

/* Sources get the pattern, destinations CE_DST_WORD. */
int ce_verify_fill(struct ce_engine *e, const struct ce_xfer *x, int n)
{
	for (int i = 0; i < n && e->plan->verify; i++) {
		if (x[i].split) {
			if (ce_split_fill(e, &x[i]) < 0)
				return -1;
			continue;
		}
		int so = ce_owner(e, x[i].src), d = ce_owner(e, x[i].dst);
		if (so < 0) {
			memcpy((void *)(uintptr_t)x[i].src, e->pattern, e->bytes);
		} else {
			CE_CALL(e, so, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[so].ctx));
			CE_CALL(e, so, "cuMemcpyHtoD (the data check's pattern)",
				e->cu.memcpy_htod_v2(x[i].src, e->pattern, e->bytes));
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

/* How many bytes of got differ from the pattern; *first the first one. */
static size_t ce_diff(const struct ce_engine *e, const unsigned char *got, size_t *first)
{
	const unsigned char *want = e->pattern;
	size_t bad = 0;
	*first = 0;
	for (size_t off = 0; off < e->bytes; off += 4096) {
		size_t len = e->bytes - off < 4096 ? e->bytes - off : 4096;
		if (!memcmp(got + off, want + off, len))
			continue;
		for (size_t k = off; k < off + len; k++)
			if (got[k] != want[k] && bad++ == 0)
				*first = k;
	}
	return bad;
}

int ce_verify_check(struct ce_engine *e, const struct ce_xfer *x, int n)
{
	for (int i = 0; i < n && e->plan->verify; i++) {
		int d = ce_owner(e, x[i].dst);
		const unsigned char *got = (const unsigned char *)(uintptr_t)x[i].dst;
		if (d >= 0) {
			CE_CALL(e, d, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[d].ctx));
			CE_CALL(e, d, "cuMemcpyDtoH (the data check)",
				e->cu.memcpy_dtoh_v2(e->scratch, x[i].dst, e->bytes));
			got = e->scratch;
		}
		size_t first, bad = ce_diff(e, got, &first);
		if (!bad && x[i].split) /* the other half went the other way */
			bad = ce_diff(e, (const unsigned char *)(uintptr_t)x[i].src, &first);
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
