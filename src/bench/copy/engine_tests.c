/* bench copy's engine: what each of nvbandwidth's tests copies, and where
 * its figures go (nvbandwidth v0.8 testcases_ce.cpp, testcases_sm.cpp and
 * testcase.cpp; engine.h). Buffers: each GPU's a is a source, b a
 * destination; h1 and h2 its pinned host buffers. The matrix cell (r, c)
 * of a read test is GPU c -> GPU r issued by r, of a write test GPU r ->
 * GPU c issued by r (catalog.h). */
#include "engine_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum ce_kind {
	K_H2D, K_D2H, K_H2D_BIDIR, K_D2H_BIDIR, K_D2D_READ, K_D2D_WRITE, K_D2D_BIDIR_READ, K_D2D_BIDIR_WRITE,
	K_ALL_TO_HOST, K_ALL_TO_HOST_BIDIR, K_HOST_TO_ALL, K_HOST_TO_ALL_BIDIR, K_ALL_TO_ONE_WRITE,
	K_ALL_TO_ONE_READ, K_ONE_TO_ALL_WRITE, K_ONE_TO_ALL_READ, K_LATENCY, K_LOCAL, K__UNKNOWN,
};

/* nvbandwidth's names without the _ce / _sm suffix, in K_ order */
static const char *const base_names[] = {
	"host_to_device_memcpy", "device_to_host_memcpy", "host_to_device_bidirectional_memcpy",
	"device_to_host_bidirectional_memcpy", "device_to_device_memcpy_read", "device_to_device_memcpy_write",
	"device_to_device_bidirectional_memcpy_read", "device_to_device_bidirectional_memcpy_write",
	"all_to_host_memcpy", "all_to_host_bidirectional_memcpy", "host_to_all_memcpy",
	"host_to_all_bidirectional_memcpy", "all_to_one_write", "all_to_one_read", "one_to_all_write",
	"one_to_all_read",
};

static enum ce_kind ce_kind_of(const char *name, bool *sm)
{
	size_t len = strlen(name);
	*sm = len > 3 && !strcmp(name + len - 3, "_sm");
	if (strstr(name, "latency"))
		return K_LATENCY;
	if (!strcmp(name, "device_local_copy"))
		return K_LOCAL;
	for (size_t k = 0; k < sizeof(base_names) / sizeof(base_names[0]); k++)
		if (len == strlen(base_names[k]) + 3 && !strncmp(name, base_names[k], len - 3))
			return (enum ce_kind)k;
	return K__UNKNOWN;
}

static struct ce_xfer xf(int gpu, CUdeviceptr dst, CUdeviceptr src, int mult)
{
	return (struct ce_xfer){ .gpu = gpu, .dst = dst, .src = src, .mult = mult };
}

/* The host tests: GPU g's measured copy first, then the load beside it
 * (the other direction, and for all_* / *_all every other GPU). */
static int ce_host_xfers(struct ce_engine *e, enum ce_kind k, bool sm, int g, struct ce_xfer *x)
{
	bool up = k == K_H2D || k == K_H2D_BIDIR || k == K_HOST_TO_ALL || k == K_HOST_TO_ALL_BIDIR;
	bool bidir = k == K_H2D_BIDIR || k == K_D2H_BIDIR || k == K_ALL_TO_HOST_BIDIR || k == K_HOST_TO_ALL_BIDIR;
	bool all = k >= K_ALL_TO_HOST && k <= K_HOST_TO_ALL_BIDIR;
	int n = 0;

	if (sm && (k == K_H2D_BIDIR || k == K_D2H_BIDIR)) {
		/* nvbandwidth's split warp: one kernel between the host buffer
		 * (source) and the device buffer, half the warps each way; both
		 * tests measure the same (testcases_sm.cpp) */
		x[0] = xf(g, e->g[g].a, ce_host(e->g[g].h1), 1);
		x[0].split = true;
		return 1;
	}
	for (int o = 0; o < e->n; o++) {
		if (o != g && !all)
			continue;
		struct ce_gpu *p = &e->g[o];
		int mult = o == g ? 1 : 2;
		struct ce_xfer main = up ? xf(o, p->a, ce_host(p->h1), mult) : xf(o, ce_host(p->h1), p->a, mult);
		struct ce_xfer back = up ? xf(o, ce_host(p->h2), p->b, 2) : xf(o, p->b, ce_host(p->h2), 2);
		if (o == g) {
			/* the measured copy goes first */
			memmove(x + 1, x, (size_t)n * sizeof(*x));
			x[0] = main;
			n++;
		} else {
			x[n++] = main;
		}
		if (bidir || (all && o != g && k != K_ALL_TO_HOST && k != K_HOST_TO_ALL))
			x[n++] = back;
	}
	return n;
}

/* A measurement's outcome for its cell: a failed data check is noted (the
 * cell stays NAN) and the test goes on; -1, a CUDA error, ends it. */
static int ce_cell(struct ce_engine *e, int r, struct copy_engine_test *res, int cell)
{
	if (r != -2)
		return r;
	if (e->bad_cells++ == 0)
		snprintf(e->bad_msg, sizeof(e->bad_msg), "%s", e->err);
	/* a GPU's own cell of a one-row test keeps its own reason */
	if (res->rows == 1 && cell >= 0 && cell < COPY_MAX_GPUS)
		snprintf(res->row_note[cell], sizeof(res->row_note[cell]), "%.*s", (int)sizeof(res->row_note[cell]) - 1,
			 e->err);
	return 0;
}

static int ce_row(struct ce_engine *e, enum ce_kind k, bool sm, struct copy_engine_test *res)
{
	for (int g = 0; g < e->n; g++) {
		struct ce_xfer x[CE_MAX_XFERS];
		double bw[CE_MAX_XFERS];
		int n = k == K_LOCAL ? 1 : ce_host_xfers(e, k, sm, g, x);
		if (k == K_LOCAL)
			x[0] = xf(g, e->g[g].b, e->g[g].a, 1);
		int r = ce_measure(e, x, n, sm, false, bw);
		/* the split-warp figure is both directions: half is one's
		 * (nvbandwidth getAdjustedBandwidth) */
		if (r == 0)
			res->value[0][g] = x[0].split ? bw[0] / 2 : bw[0];
		else if (ce_cell(e, r, res, g) < 0)
			return -1;
	}
	return 0;
}

/* A peer test's pair (r, c), or all of one GPU's peers at once. */
static int ce_pair(struct ce_engine *e, enum ce_kind k, bool sm, int r, int c, struct copy_engine_test *res)
{
	struct ce_gpu *R = &e->g[r], *C = &e->g[c];
	struct ce_xfer x[2];
	double bw[2];
	int n = 1;
	int cell = r * e->n + c;

	switch (k) {
	case K_D2D_READ: x[0] = xf(r, R->b, C->a, 1); break;
	case K_D2D_WRITE: x[0] = xf(r, C->b, R->a, 1); break;
	case K_D2D_BIDIR_READ: x[0] = xf(r, R->b, C->a, 1); x[1] = xf(c, C->b, R->a, 1); n = 2; break;
	/* write: the first copy is the column GPU writing into the row's, the
	 * second the reverse (nvbandwidth DeviceToDeviceBidirWriteCE: sources
	 * {peer1, src2}, destinations {src1, peer2}, in the source's context) */
	default: x[0] = xf(c, R->b, C->a, 1); x[1] = xf(r, C->b, R->a, 1); n = 2; break;
	}
	int m = ce_measure(e, x, n, sm, false, bw);
	if (m != 0)
		return ce_cell(e, m, res, cell);
	res->value[0][cell] = bw[0];
	if (n == 2) {
		res->value[1][cell] = bw[1];
		res->value[2][cell] = bw[0] + bw[1];
	}
	return 0;
}

/* Frees the extra buffers of a fan test, its GPU's context current. */
static void ce_fan_free(struct ce_engine *e, int i, CUdeviceptr *own, int n)
{
	if (e->cu.ctx_set_current(e->g[i].ctx) != CUDA_SUCCESS)
		return;
	for (int k = 1; k < n; k++)
		if (own[k])
			e->cu.mem_free_v2(own[k]);
}

/* all_to_one / one_to_all for GPU i: every peer's copy at once, the total
 * (nvbandwidth's TOTAL_BW). As nvbandwidth v0.8 (testcase.cpp
 * allToOneHelper, oneToAllHelper), GPU i has a buffer of its own for each
 * peer, so that no two copies touch the same memory; the first is its b
 * (a to write to, for the reads), the others are allocated here. */
static int ce_fan(struct ce_engine *e, enum ce_kind k, bool sm, int i, struct copy_engine_test *res)
{
	struct ce_xfer x[CE_MAX_XFERS];
	double bw[CE_MAX_XFERS];
	struct ce_gpu *I = &e->g[i];
	CUdeviceptr own[COPY_MAX_GPUS] = { 0 };
	bool src = k == K_ALL_TO_ONE_READ || k == K_ONE_TO_ALL_WRITE; /* i's buffers are read */
	int n = 0, r = 0;

	for (int p = 0; p < e->n; p++) {
		struct ce_gpu *P = &e->g[p];
		if (p == i || !e->peer[i][p])
			continue;
		own[n] = src ? I->a : I->b;
		if (n > 0) {
			ce_step(e, i, "cuMemAlloc");
			CUresult cr = e->cu.ctx_set_current(I->ctx);
			if (cr == CUDA_SUCCESS)
				cr = e->cu.mem_alloc_v2(&own[n], e->bytes);
			if (cr != CUDA_SUCCESS) {
				own[n] = 0;
				ce_fan_free(e, i, own, n);
				return ce_fail(e, i, "cuMemAlloc (a buffer per peer)", cr);
			}
		}
		switch (k) {
		case K_ALL_TO_ONE_WRITE: x[n] = xf(p, own[n], P->a, 1); break;
		case K_ALL_TO_ONE_READ: x[n] = xf(p, P->b, own[n], 1); break;
		case K_ONE_TO_ALL_WRITE: x[n] = xf(i, P->b, own[n], 1); break;
		default: x[n] = xf(i, own[n], P->a, 1); break;
		}
		n++;
	}
	/* the data check's owner of the extra buffers */
	e->extra_gpu = i;
	e->n_extra = n > 1 ? n - 1 : 0;
	memcpy(e->extra, own + 1, (size_t)e->n_extra * sizeof(own[0]));
	if (n > 0 && (r = ce_measure(e, x, n, sm, true, bw)) == 0)
		res->value[0][i] = bw[0];
	e->n_extra = 0;
	ce_fan_free(e, i, own, n);
	return ce_cell(e, r, res, i);
}

/* Why a peer test cannot run here, or NULL. Also notes N/A pairs. */
static const char *ce_peer_waiver(struct ce_engine *e, struct copy_engine_test *res)
{
	int pairs = 0, none = 0, failed = 0, nr = -1, nc = -1;
	if (e->n < 2)
		return "one GPU: there is no GPU pair";
	for (int r = 0; r < e->n; r++)
		for (int c = r + 1; c < e->n; c++) {
			if (e->peer[r][c]) {
				pairs++;
				continue;
			}
			failed += e->no_peer[r][c] == 2;
			if (none++ == 0) {
				nr = r;
				nc = c;
			}
		}
	if (!pairs && !failed)
		return "no GPU pair with peer access (cuDeviceCanAccessPeer says 0; nvbandwidth waives this test too)";
	if (!pairs) {
		snprintf(res->message, sizeof(res->message), "peer access could not be enabled for any GPU pair (%s)",
			 e->peer_err);
		return res->message;
	}
	if (none && failed)
		snprintf(res->message, sizeof(res->message),
			 "N/A: %d GPU pair%s without peer access, %d of them because cuCtxEnablePeerAccess failed (%s)",
			 none, none == 1 ? "" : "s", failed, e->peer_err);
	else if (none)
		snprintf(res->message, sizeof(res->message),
			 "N/A: %d GPU pair%s without peer access (cuDeviceCanAccessPeer), first GPU %d (%s) and "
			 "GPU %d (%s)",
			 none, none == 1 ? "" : "s", e->out->gpus[nr].ordinal, e->out->gpus[nr].bdf,
			 e->out->gpus[nc].ordinal, e->out->gpus[nc].bdf);
	return NULL;
}

static int ce_peer_test(struct ce_engine *e, enum ce_kind k, bool sm, struct copy_engine_test *res)
{
	if (k >= K_ALL_TO_ONE_WRITE) {
		for (int i = 0; i < e->n; i++)
			if (ce_fan(e, k, sm, i, res) < 0)
				return -1;
		return 0;
	}
	for (int r = 0; r < e->n; r++)
		for (int c = 0; c < e->n; c++) {
			if (r == c || !e->peer[r][c])
				continue;
			if (ce_pair(e, k, sm, r, c, res) < 0)
				return -1;
		}
	return 0;
}

void ce_run_test(struct ce_engine *e, const struct copy_test *t, struct copy_engine_test *res)
{
	bool sm;
	enum ce_kind k = ce_kind_of(t->name, &sm);

	memset(res, 0, sizeof(*res));
	res->index = copy_test_index(t);
	res->rows = t->shape == COPY_SHAPE_ROW ? 1 : e->n;
	res->cols = e->n;
	for (int m = 0; m < COPY_MAX_MATRICES; m++)
		for (int i = 0; i < COPY_MAX_GPUS * COPY_MAX_GPUS; i++)
			res->value[m][i] = NAN;
	res->status = COPY_RAN;
	if (k == K__UNKNOWN) {
		res->status = COPY_WAIVED;
		snprintf(res->message, sizeof(res->message), "gpuready does not know how to run this test");
		return;
	}
	const char *waived = t->peers ? ce_peer_waiver(e, res) : NULL;
	if (waived) {
		res->status = COPY_WAIVED;
		if (waived != res->message)
			snprintf(res->message, sizeof(res->message), "%s", waived);
		return;
	}
	e->spin_timeouts = 0;
	e->bad_cells = 0;
	int r = k == K_LATENCY ? ce_latency(e, t->peers, res)
		: t->peers     ? ce_peer_test(e, k, sm, res)
			       : ce_row(e, k, sm, res);
	if (r < 0) {
		res->status = COPY_ERROR;
		snprintf(res->message, sizeof(res->message), "%s", e->err);
	} else if (e->bad_cells) {
		res->status = COPY_BAD_DATA;
		snprintf(res->message, sizeof(res->message), "%d measurement%s failed the data check: %.*s", e->bad_cells,
			 e->bad_cells == 1 ? "" : "s", (int)sizeof(res->message) - 48, e->bad_msg);
	} else if (e->spin_timeouts) {
		size_t len = strlen(res->message);
		snprintf(res->message + len, sizeof(res->message) - len,
			 "%sthe spin kernel gave up waiting (%d s) before the copies of %d sample%s were queued: "
			 "those figures may count launch overhead",
			 len ? "; " : "", COPY_SPIN_TIMEOUT_MS / 1000, e->spin_timeouts, e->spin_timeouts == 1 ? "" : "s");
	}
}
