/* The NVML, CUDA and GPU memory registration probes under a deadline
 * (probe.h): each runs in a child process (core/isolate.h) that loads the
 * libraries, names every call before making it and sends back what it
 * filled, so that a call that never returns (a GPU fallen off the bus
 * blocks the driver) costs `check` one deadline and becomes a finding
 * naming the call, not a hang. gpuready's own process never loads NVML,
 * the CUDA driver API or, for the registration probe, libibverbs.
 *
 * The NVML and CUDA children send their struct nvml_info / cuda_info, then
 * the n GPUs its v points at; the parent checks the sizes, takes the
 * header and copies the array into memory of its own (the child's pointer
 * means nothing here). The registration probe's child sends one struct
 * gdr_probe (no pointers) per pair as each is done. */
#include "probe.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double probe_call_timeout(void)
{
	const char *s = getenv("GPUREADY_PROBE_TIMEOUT");
	char *end = NULL;

	if (!s || !*s)
		return PROBE_CALL_TIMEOUT_S;
	errno = 0;
	double v = strtod(s, &end);
	return errno == 0 && *end == '\0' && v > 0 && v <= 3600 ? v : PROBE_CALL_TIMEOUT_S;
}

enum gpu_lib_fail probe_end_reason(const struct isolate_result *res, const char *lib, double timeout, char *out,
				   size_t size)
{
	const char *step = res->step[0] ? res->step : "its first call";
	const char *left = res->reaped ? "" : "; the process did not die when killed (stuck in the kernel) and was "
					      "left behind";

	switch (res->end) {
	case ISOLATE_TIMEOUT:
		snprintf(out, size, "%s call %s did not return within %g s (abandoned%s)", lib, step, timeout, left);
		return GPU_LIB_FAIL_TIMEOUT;
	case ISOLATE_CRASHED:
		if (res->signal)
			snprintf(out, size, "the %s probe's process died of signal %d (%s) during %s", lib, res->signal,
				 strsignal(res->signal), step);
		else
			snprintf(out, size, "the %s probe's process failed (exit status %d) during %s", lib,
				 res->exit_code, step);
		return GPU_LIB_FAIL_OTHER;
	case ISOLATE_TOO_BIG:
		snprintf(out, size, "the %s probe's process sent more than a result can be (during %s)%s", lib, step,
			 left);
		return GPU_LIB_FAIL_OTHER;
	case ISOLATE_DONE:
	default:
		snprintf(out, size, "the %s probe's process sent a malformed result (%zu bytes)", lib, res->out.len);
		return GPU_LIB_FAIL_OTHER;
	}
}

/* Where the parts of struct nvml_info and struct cuda_info are, for the
 * code both share: the struct, its array of GPUs (v, n), fail and error. */
struct probe_shape {
	const char *lib;         /* "NVML", "CUDA": for messages */
	size_t size, elem;       /* sizeof the struct, of one GPU */
	size_t n_off, v_off, fail_off, error_off, error_size;
};

#define PROBE_SHAPE(name, T)                                                                                 \
	{ .lib = name, .size = sizeof(T), .elem = sizeof(*((T *)0)->v), .n_off = offsetof(T, n),               \
	  .v_off = offsetof(T, v), .fail_off = offsetof(T, fail), .error_off = offsetof(T, error),            \
	  .error_size = sizeof(((T *)0)->error) }

static const struct probe_shape nvml_shape = PROBE_SHAPE("NVML", struct nvml_info);
static const struct probe_shape cuda_shape = PROBE_SHAPE("CUDA", struct cuda_info);

/* In the child: the struct, then the n GPUs its v points at. */
static void probe_send(struct isolate_ctx *ctx, const struct probe_shape *s, const void *info)
{
	const unsigned char *p = info;
	size_t n;
	const void *v;

	memcpy(&n, p + s->n_off, sizeof(n));
	memcpy(&v, p + s->v_off, sizeof(v));
	if (isolate_send(ctx, info, s->size) == 0 && n && v)
		(void)isolate_send(ctx, v, n * s->elem);
}

/* In the parent: what probe_send sent, into out, the GPUs in an array of
 * its own. False, out untouched, when b holds anything else. */
static bool probe_unpack(const struct probe_shape *s, const struct strbuf *b, void *out)
{
	unsigned char *o = out;
	size_t n;
	void *v = NULL;

	if (b->len < s->size)
		return false;
	memcpy(&n, b->buf + s->n_off, sizeof(n));
	if (n > GPU_LIVE_MAX_GPUS || b->len != s->size + n * s->elem)
		return false;
	if (n) {
		v = xcalloc(n, s->elem);
		memcpy(v, b->buf + s->size, n * s->elem);
	}
	memcpy(o, b->buf, s->size);
	memcpy(o + s->v_off, &v, sizeof(v));
	return true;
}

/* Runs fn in a child and fills out (already in its empty state) with what
 * it sent, or with the reason it sent nothing usable. */
static void probe_in_child(const struct probe_shape *s, isolate_fn fn, void *arg, double timeout, void *out)
{
	struct isolate_result res;
	char *err = (char *)out + s->error_off;
	enum gpu_lib_fail fail;

	int r = isolate_run(fn, arg, timeout, s->size + GPU_LIVE_MAX_GPUS * s->elem, &res);
	if (r < 0) {
		fail = GPU_LIB_FAIL_OTHER;
		snprintf(err, s->error_size, "could not start the %s probe's process: %s", s->lib, strerror(-r));
	} else if (res.end == ISOLATE_DONE && probe_unpack(s, &res.out, out)) {
		isolate_result_free(&res);
		return;
	} else {
		fail = probe_end_reason(&res, s->lib, timeout, err, s->error_size);
	}
	memcpy((char *)out + s->fail_off, &fail, sizeof(fail));
	isolate_result_free(&res);
}

static void nvml_child(struct isolate_ctx *ctx, void *arg)
{
	struct nvml_info info;

	(void)arg;
	nvml_probe(&info, ctx);
	probe_send(ctx, &nvml_shape, &info);
	nvml_info_free(&info);
}

void nvml_probe_deadline(struct nvml_info *out, double timeout_s)
{
	*out = (struct nvml_info){ .cuda_driver_version = GPU_UNKNOWN };
	probe_in_child(&nvml_shape, nvml_child, NULL, timeout_s, out);
}

static void cuda_child(struct isolate_ctx *ctx, void *arg)
{
	struct cuda_info info;

	cuda_probe(&info, *(const bool *)arg, ctx);
	probe_send(ctx, &cuda_shape, &info);
	cuda_info_free(&info);
}

void cuda_probe_deadline(struct cuda_info *out, bool roundtrip, double timeout_s)
{
	*out = (struct cuda_info){ .driver_version = GPU_UNKNOWN };
	probe_in_child(&cuda_shape, cuda_child, &roundtrip, timeout_s, out);
}

struct gdr_args {
	const char *const *bdfs, *const *ibdevs;
	size_t n;
	bool dmabuf, peermem;
};

static void gdr_child(struct isolate_ctx *ctx, void *arg)
{
	const struct gdr_args *a = arg;
	struct gdr_probe *out = xcalloc(a->n, sizeof(*out));

	gdr_probe_run(a->bdfs, a->ibdevs, a->n, a->dmabuf, a->peermem, out, ctx);
	free(out);
}

/* The library of the call a step names, for the message. */
static const char *gdr_step_lib(const char *step)
{
	return !strncmp(step, "ibv_", 4) || strstr(step, "libibverbs") ? "libibverbs" : "CUDA";
}

/* A pair the child did not finish: why, in the error of each method asked. */
static void gdr_abandoned(struct gdr_probe *p, const struct gdr_args *a, enum gpu_lib_fail fail, const char *pre,
			  const char *why)
{
	p->fail = fail;
	/* a message longer than the field is cut, as every error text of the probes is */
	_cleanup_free_ char *msg = xasprintf("%s%s", pre, why);
	if (a->dmabuf)
		snprintf(p->dmabuf_error, sizeof(p->dmabuf_error), "%s", msg);
	if (a->peermem)
		snprintf(p->peermem_error, sizeof(p->peermem_error), "%s", msg);
}

/* In the parent: the pairs the child sent, whole, into out (its strings
 * terminated whatever came). How many. */
static size_t gdr_unpack(const struct strbuf *b, size_t n, struct gdr_probe *out)
{
	size_t got = b->len / sizeof(*out);

	if (got > n)
		got = n;
	memcpy(out, b->buf, got * sizeof(*out));
	for (size_t i = 0; i < got; i++) {
		out[i].gpu_bdf[sizeof(out[i].gpu_bdf) - 1] = '\0';
		out[i].ibdev[sizeof(out[i].ibdev) - 1] = '\0';
		out[i].dmabuf_error[sizeof(out[i].dmabuf_error) - 1] = '\0';
		out[i].peermem_error[sizeof(out[i].peermem_error) - 1] = '\0';
	}
	return got;
}

void gdr_probe_deadline(const char *const *gpu_bdfs, const char *const *ibdevs, size_t n, bool try_dmabuf,
			bool try_peermem, double timeout_s, struct gdr_probe *out)
{
	struct gdr_args a = { .bdfs = gpu_bdfs, .ibdevs = ibdevs, .n = n, .dmabuf = try_dmabuf, .peermem = try_peermem };
	struct isolate_result res;
	char why[200];
	enum gpu_lib_fail fail;

	if (!out)
		return;
	/* the names, nothing tried: what a pair holds before the child's answer */
	gdr_probe_run(gpu_bdfs, ibdevs, n, false, false, out, NULL);
	if (n == 0 || (!try_dmabuf && !try_peermem))
		return;
	int r = isolate_run(gdr_child, &a, timeout_s, n * sizeof(*out), &res);
	if (r < 0) {
		snprintf(why, sizeof(why), "could not start the GPUDirect probe's process: %s", strerror(-r));
		for (size_t i = 0; i < n; i++)
			gdr_abandoned(&out[i], &a, GPU_LIB_FAIL_OTHER, "", why);
		return;
	}
	size_t got = gdr_unpack(&res.out, n, out);
	if (res.end != ISOLATE_DONE || res.out.len != n * sizeof(*out)) {
		fail = probe_end_reason(&res, gdr_step_lib(res.step), timeout_s, why, sizeof(why));
		/* the pair in progress, and those after it, never reached; every
		 * pair done: the call that overran was the last one's cleanup */
		size_t first = got < n ? got : n - 1;
		for (size_t i = first; i < n; i++)
			gdr_abandoned(&out[i], &a, fail, i == first ? "" : "not probed: ", why);
	}
	isolate_result_free(&res);
}
