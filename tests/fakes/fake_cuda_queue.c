/* The fake libcuda.so.1's queued work: what a GPU does with the work
 * enqueued on its streams, for gpuready bench copy (fake_cuda_copy.c has
 * the settings).
 *
 * Work runs in order per stream and is run by the fake as soon as nothing
 * holds it: at the enqueue itself, or, behind a spin kernel, once the
 * spin's flag is set (seen by the next call that looks at the queues:
 * any enqueue, query or synchronisation) or its timeout has passed. So a
 * copy queued behind a held stream has not happened until then, as on a
 * GPU. Host memory stands in for device memory: copies are memmove.
 *
 * Time is modelled, not measured: each stream has a clock (ms of
 * CLOCK_MONOTONIC) at which its last work ends; work starts at the later
 * of that, the moment it runs, and the end of earlier work on the links
 * it uses (a GPU's h2d link, its d2h link, its memory, its NVLink out and
 * in), and lasts bytes / rate (FAKE_CUDA_COPY_GBPS; the copy kernel: its
 * loop count x the elements x 16 bytes at the sm_ rate). Events take the
 * clock of their stream where they are reached, so elapsed times are the
 * modelled ones: 1 GB h2d at 50 GB/s is 20 ms. Work enqueued on an idle
 * stream starts when it is enqueued, so an engine that does not hold its
 * streams (nvbandwidth's spin kernel) measures its own launch gaps, as on
 * a GPU. Streams take turns one operation at a time, so two streams on
 * one link share it.
 *
 * Copies between GPUs take the NVLink path (rate p2p) when either side
 * has peer access to the other enabled, else are staged through the host
 * (both PCIe legs, the slower rate). The copy kernel reads and writes
 * through the device it runs on: memory of another GPU without peer
 * access, pageable host memory or an address not 16-byte aligned is a
 * fault (CUDA_ERROR_ILLEGAL_ADDRESS / _MISALIGNED_ADDRESS), sticky for
 * that GPU, raised when the kernel runs, as a GPU reports it at the next
 * synchronisation. A lost GPU's queued work is dropped (its events
 * complete, so nothing waits on them forever). The NULL stream is one
 * stream per device with the same rules (not synchronising with the
 * others). */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define EVENT_MAGIC 0xe7e47u

enum { R_H2D, R_D2H, R_LOCAL, R_NV_OUT, R_NV_IN, R__N };

enum fop_kind { FOP_COPY, FOP_SET32, FOP_SPIN, FOP_RECORD, FOP_WAIT, FOP_TIMED, FOP_SPLIT };

struct fake_op {
	enum fop_kind kind;
	struct fake_op *next;
	void *dst;
	const void *src;
	size_t bytes;
	unsigned value;                /* SET32 */
	double ms;                     /* modelled duration */
	int res[2];                    /* links held, R_* x FAKE_CUDA_MAX + dev, or -1 */
	const volatile uint32_t *flag; /* SPIN */
	double deadline;
	CUevent ev;                    /* RECORD, WAIT */
	unsigned long gen;
	CUresult fault;                /* raised on the stream's device when it runs */
	int corrupt;                   /* COPY: change a byte of what arrives (FAKE_CUDA_CORRUPT) */
};

struct CUevent_st {
	unsigned magic;
	int dev;
	unsigned flags;
	int recorded;
	unsigned long gen_enq, gen_done; /* records enqueued / reached */
	double t;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUstream_st *streams;
static struct CUstream_st legacy[FAKE_CUDA_MAX];
static double busy[R__N * FAKE_CUDA_MAX];
static atomic_int spin_timeouts;

double fake_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void link_locked(CUstream s)
{
	s->next = streams;
	streams = s;
}

void fake_queue_init(void)
{
	pthread_mutex_lock(&lock);
	for (int d = 0; d < FAKE_CUDA_MAX; d++)
		if (legacy[d].magic != STREAM_MAGIC) {
			legacy[d] = (struct CUstream_st){ .magic = STREAM_MAGIC, .dev = d };
			link_locked(&legacy[d]);
		}
	memset(busy, 0, sizeof(busy));
	atomic_store(&spin_timeouts, 0);
	pthread_mutex_unlock(&lock);
}

void fake_stream_link(CUstream s)
{
	pthread_mutex_lock(&lock);
	link_locked(s);
	pthread_mutex_unlock(&lock);
}

/* ---- running the queues ---- */

static int op_ready(const struct fake_op *op, double now)
{
	if (op->kind == FOP_WAIT)
		return op->ev->gen_done >= op->gen;
	if (op->kind != FOP_SPIN)
		return 1;
	return __atomic_load_n(op->flag, __ATOMIC_ACQUIRE) != 0 || now >= op->deadline;
}

/* Runs op, the head of s, at modelled time. */
static void op_run(CUstream s, struct fake_op *op, double now)
{
	double start = s->t > now ? s->t : now;
	int lost = fake_sticky(s->dev) != CUDA_SUCCESS;

	for (int i = 0; i < 2; i++)
		if (op->res[i] >= 0 && busy[op->res[i]] > start)
			start = busy[op->res[i]];
	if (op->kind == FOP_RECORD) {
		op->ev->t = start;
		op->ev->gen_done = op->gen;
		s->t = start;
		return;
	}
	if (lost)
		return;
	if (op->fault != CUDA_SUCCESS) {
		fake_fault(s->dev, op->fault);
		return;
	}
	switch (op->kind) {
	case FOP_COPY:
		memmove(op->dst, op->src, op->bytes);
		if (op->corrupt && op->bytes)
			((unsigned char *)op->dst)[op->bytes / 3] ^= 0x10;
		break;
	case FOP_SPLIT: /* odd warps' 512 bytes src -> dst, even ones dst -> src */
		for (size_t off = 0; off < op->bytes; off += 512) {
			size_t len = op->bytes - off < 512 ? op->bytes - off : 512;
			if ((off / 512) & 1)
				memmove((char *)op->dst + off, (const char *)op->src + off, len);
			else
				memmove((char *)(uintptr_t)op->src + off, (char *)op->dst + off, len);
		}
		if (op->corrupt && op->bytes > 512) /* in an odd warp's share */
			((unsigned char *)op->dst)[512 + 7] ^= 0x10;
		break;
	case FOP_SET32:
		for (size_t i = 0; i < op->bytes / 4; i++)
			memcpy((char *)op->dst + 4 * i, &op->value, 4);
		break;
	case FOP_SPIN:
		if (__atomic_load_n(op->flag, __ATOMIC_ACQUIRE) == 0) {
			/* as the kernel does: the second word says it gave up */
			__atomic_store_n((uint32_t *)(uintptr_t)(op->flag + 1), 1u, __ATOMIC_RELEASE);
			atomic_fetch_add(&spin_timeouts, 1);
		}
		break; /* it ran until now */
	case FOP_WAIT:
		if (op->ev->t > start)
			start = op->ev->t;
		break;
	default: break;
	}
	s->t = start + op->ms;
	for (int i = 0; i < 2; i++)
		if (op->res[i] >= 0)
			busy[op->res[i]] = s->t;
}

/* One turn of every stream (at most one operation each); how many ran. */
static int drain_once(double now)
{
	int ran = 0;
	for (struct CUstream_st *s = streams; s; s = s->next) {
		struct fake_op *op = s->head;
		/* a lost GPU's work is dropped, held or not */
		if (!op || !(fake_sticky(s->dev) != CUDA_SUCCESS || op_ready(op, now)))
			continue;
		op_run(s, op, now);
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		free(op);
		ran++;
	}
	return ran;
}

/* Frees the destroyed streams whose work has all run. */
static void reap_orphans(void)
{
	for (struct CUstream_st **p = &streams; *p;) {
		struct CUstream_st *s = *p;
		if (s->orphan && !s->head) {
			*p = s->next;
			free(s);
		} else {
			p = &s->next;
		}
	}
}

static void drain(void)
{
	double now = fake_now_ms();
	while (drain_once(now))
		;
	reap_orphans();
}

/* Runs the queues until done(arg) holds; while only spins hold them, polls
 * their flags (the lock released) until their timeouts. Under the lock. */
static CUresult drain_until(int (*done)(const void *), const void *arg)
{
	for (;;) {
		drain();
		if (done(arg))
			return CUDA_SUCCESS;
		int spinning = 0;
		for (struct CUstream_st *s = streams; s; s = s->next)
			spinning |= s->head && s->head->kind == FOP_SPIN;
		if (!spinning)
			return CUDA_ERROR_LAUNCH_TIMEOUT; /* waits on nothing that can come */
		pthread_mutex_unlock(&lock);
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
		pthread_mutex_lock(&lock);
	}
}

static int stream_empty(const void *s)
{
	return !((const struct CUstream_st *)s)->head;
}

static int device_idle(const void *arg)
{
	int dev = *(const int *)arg;
	for (struct CUstream_st *s = streams; s; s = s->next)
		if (s->head && (dev < 0 || s->dev == dev))
			return 0;
	return 1;
}

static void enqueue(CUstream s, struct fake_op *op)
{
	op->next = NULL;
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	drain();
}

int fake_stream_unlink(CUstream s)
{
	pthread_mutex_lock(&lock);
	drain();
	if (s->head) {
		/* "the function will return immediately and the resources
		 * associated with hStream will be released automatically once
		 * the device has completed all work in hStream" (cuda.h,
		 * cuStreamDestroy) */
		s->orphan = 1;
		pthread_mutex_unlock(&lock);
		return 1;
	}
	for (struct CUstream_st **p = &streams; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	return 0;
}

CUresult fake_stream_sync(CUstream s)
{
	pthread_mutex_lock(&lock);
	CUresult r = drain_until(stream_empty, s);
	pthread_mutex_unlock(&lock);
	CUresult e = fake_gate(s->dev);
	return e != CUDA_SUCCESS ? e : r;
}

CUresult fake_stream_query(CUstream s)
{
	pthread_mutex_lock(&lock);
	drain();
	int pending = s->head != NULL;
	pthread_mutex_unlock(&lock);
	CUresult e = fake_gate(s->dev);
	return e != CUDA_SUCCESS ? e : pending ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

CUresult fake_ctx_sync(int dev)
{
	pthread_mutex_lock(&lock);
	CUresult r = drain_until(device_idle, &dev);
	pthread_mutex_unlock(&lock);
	CUresult e = fake_sticky(dev);
	return e != CUDA_SUCCESS ? e : r;
}

/* ---- planning work ---- */

static int res(int r, int dev)
{
	return r * FAKE_CUDA_MAX + dev;
}

/* The links and duration of a copy from src (on sd: a device, FAKE_HOST or
 * FAKE_PAGEABLE) to dst (dd), issued on device on; sm: by the copy kernel,
 * which faults on memory it cannot reach. */
static void plan_copy(struct fake_op *op, int sd, int dd, int on, int sm, double copies)
{
	double gbps;
	op->res[0] = op->res[1] = -1;
	op->corrupt = fake_corrupts(sd) || fake_corrupts(dd);
	if (sm && ((sd >= 0 && sd != on && !fake_peer_on(on, sd)) || (dd >= 0 && dd != on && !fake_peer_on(on, dd)) ||
		   sd == FAKE_PAGEABLE || dd == FAKE_PAGEABLE)) {
		op->fault = CUDA_ERROR_ILLEGAL_ADDRESS;
		return;
	}
	if (sd >= 0 && dd >= 0 && sd == dd) {
		gbps = fake_rate(FK_LOCAL, sd, sm);
		op->res[0] = res(R_LOCAL, sd);
	} else if (sd >= 0 && dd >= 0 && (fake_peer_on(sd, dd) || fake_peer_on(dd, sd))) {
		gbps = fake_rate(FK_P2P, sd, sm);
		op->res[0] = res(R_NV_OUT, sd);
		op->res[1] = res(R_NV_IN, dd);
	} else if (sd >= 0 && dd >= 0) { /* staged through the host */
		double a = fake_rate(FK_D2H, sd, 0), b = fake_rate(FK_H2D, dd, 0);
		gbps = a < b ? a : b;
		op->res[0] = res(R_D2H, fake_host_link(sd));
		op->res[1] = res(R_H2D, fake_host_link(dd));
	} else if (dd >= 0) {
		gbps = fake_rate(FK_H2D, dd, sm);
		op->res[0] = res(R_H2D, fake_host_link(dd));
	} else if (sd >= 0) {
		gbps = fake_rate(FK_D2H, sd, sm);
		op->res[0] = res(R_D2H, fake_host_link(sd));
	} else {
		gbps = fake_rate(FK_H2D, on, sm); /* host to host */
	}
	op->ms = copies * (double)op->bytes / (gbps * 1e6);
}

static struct fake_op *op_new(enum fop_kind kind)
{
	struct fake_op *op = calloc(1, sizeof(*op));
	if (op) {
		op->kind = kind;
		op->res[0] = op->res[1] = -1;
	}
	return op;
}

/* s, or for NULL the legacy stream of the current context's device;
 * NULL without one. */
static CUstream stream_of(CUstream s)
{
	if (s)
		return s->magic == STREAM_MAGIC ? s : NULL;
	return fake_current ? &legacy[fake_current->dev] : NULL;
}

FAKE_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream hs)
{
	CUstream s = stream_of(hs);
	if (!s)
		return hs ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_CONTEXT;
	CUresult r = fake_gate(s->dev);
	if (r != CUDA_SUCCESS || !bytes)
		return r;
	int sd = fake_reg_find((void *)(uintptr_t)src, bytes), dd = fake_reg_find((void *)(uintptr_t)dst, bytes);
	if (!dst || !src || sd == -3 || dd == -3)
		return CUDA_ERROR_INVALID_VALUE;
	struct fake_op *op = op_new(FOP_COPY);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->dst = (void *)(uintptr_t)dst;
	op->src = (const void *)(uintptr_t)src;
	op->bytes = bytes;
	plan_copy(op, sd, dd, s->dev, 0, 1);
	pthread_mutex_lock(&lock);
	enqueue(s, op);
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t n, CUstream hs)
{
	CUstream s = stream_of(hs);
	if (!s)
		return hs ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_CONTEXT;
	CUresult r = fake_gate(s->dev);
	if (r != CUDA_SUCCESS || !n)
		return r;
	int dd = fake_reg_find((void *)(uintptr_t)dst, n * 4);
	if (!dst || dd == -3 || dd == FAKE_PAGEABLE || dst % 4)
		return CUDA_ERROR_INVALID_VALUE;
	struct fake_op *op = op_new(FOP_SET32);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->dst = (void *)(uintptr_t)dst;
	op->bytes = n * 4;
	op->value = value;
	int dev = dd >= 0 ? dd : s->dev;
	op->res[0] = res(R_LOCAL, dev);
	op->ms = (double)op->bytes / (fake_rate(FK_LOCAL, dev, 0) * 1e6);
	pthread_mutex_lock(&lock);
	enqueue(s, op);
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/* ---- kernels ---- */

/* The copy kernel's work (kernels.h: dst, src, n 16-byte elements, loops). */
static struct fake_op *plan_copy_kernel(void **params, int on)
{
	CUdeviceptr dst = *(CUdeviceptr *)params[0], src = *(CUdeviceptr *)params[1];
	unsigned long long n = *(unsigned long long *)params[2];
	unsigned loops = *(unsigned *)params[3];
	struct fake_op *op = op_new(FOP_COPY);
	if (!op)
		return NULL;
	op->dst = (void *)(uintptr_t)dst;
	op->src = (const void *)(uintptr_t)src;
	op->bytes = loops && n ? (size_t)n * 16 : 0;
	int sd = fake_reg_find(op->src, op->bytes), dd = fake_reg_find(op->dst, op->bytes);
	if (sd == -3 || dd == -3)
		op->fault = CUDA_ERROR_ILLEGAL_ADDRESS;
	else if ((dst | src) % 16)
		op->fault = CUDA_ERROR_MISALIGNED_ADDRESS;
	else
		plan_copy(op, sd, dd, on, 1, 1); /* one pass: the launch queues loops of them */
	return op;
}

/* The split-warp kernel's (dst, src, loops) over grid x block 16-byte
 * elements: one pass moves half the bytes each way, src's side to dst's
 * and back at once, holding both directions of the host link (or of the
 * NVLinks) for the slower half. */
static struct fake_op *plan_split(void **params, int on, unsigned long long elems)
{
	CUdeviceptr dst = *(CUdeviceptr *)params[0], src = *(CUdeviceptr *)params[1];
	struct fake_op *op = op_new(FOP_SPLIT), there, back;
	if (!op)
		return NULL;
	op->dst = (void *)(uintptr_t)dst;
	op->src = (const void *)(uintptr_t)src;
	op->bytes = (size_t)elems * 16;
	int sd = fake_reg_find(op->src, op->bytes), dd = fake_reg_find(op->dst, op->bytes);
	if (sd == -3 || dd == -3) {
		op->fault = CUDA_ERROR_ILLEGAL_ADDRESS;
		return op;
	}
	there = back = *op;
	there.bytes = back.bytes = op->bytes / 2;
	plan_copy(&there, sd, dd, on, 1, 1);
	plan_copy(&back, dd, sd, on, 1, 1);
	op->fault = there.fault != CUDA_SUCCESS ? there.fault : back.fault;
	op->ms = there.ms > back.ms ? there.ms : back.ms;
	op->res[0] = there.res[0];
	op->res[1] = back.res[0];
	op->corrupt = there.corrupt;
	return op;
}

/* The spin kernel's (flag, timeout in clocks): held until the flag is set
 * or the timeout has passed at the fake's clock rate. */
static struct fake_op *plan_spin(void **params)
{
	CUdeviceptr flag = *(CUdeviceptr *)params[0];
	unsigned long long clocks = *(unsigned long long *)params[1];
	struct fake_op *op = op_new(FOP_SPIN);
	if (!op)
		return NULL;
	int where = fake_reg_find((void *)(uintptr_t)flag, 8);
	if (where == FAKE_PAGEABLE || where == -3 || flag % 4) {
		op->fault = CUDA_ERROR_ILLEGAL_ADDRESS;
		op->kind = FOP_COPY;
		return op;
	}
	op->flag = (const volatile uint32_t *)(uintptr_t)flag;
	op->deadline = fake_now_ms() + (double)clocks / FAKE_CLOCK_KHZ;
	return op;
}

FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				 unsigned bz, unsigned shared, CUstream hs, void **params, void **extra)
{
	(void)shared;
	if (!f || f->magic != FUNC_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	CUstream s = stream_of(hs);
	if (!s || s->dev != fake_current->dev || f->dev != s->dev)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > 1024 || extra ||
	    (f->kind != FF_OTHER && !params))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_gate(s->dev);
	if (r != CUDA_SUCCESS)
		return r;
	fake_count_launch(f->name);
	if (f->kind == FF_OTHER)
		return CUDA_SUCCESS;
	if (f->kind == FF_CHASE)
		return fake_chase_launch(s, gx, params);
	struct fake_op *op = f->kind == FF_COPY	  ? plan_copy_kernel(params, s->dev)
			     : f->kind == FF_SPLIT ? plan_split(params, s->dev, (unsigned long long)gx * bx)
						   : plan_spin(params);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* the copy kernels' passes one by one, so that the copies of other
	 * streams on the same link take turns with them, as copy-engine
	 * copies do */
	unsigned passes = f->kind == FF_COPY && op->fault == CUDA_SUCCESS && op->bytes ? *(unsigned *)params[3]
			  : f->kind == FF_SPLIT && op->fault == CUDA_SUCCESS		 ? *(unsigned *)params[2]
											 : 1;
	pthread_mutex_lock(&lock);
	for (unsigned i = 1; i < passes; i++) {
		struct fake_op *more = op_new(op->kind);
		if (!more)
			break;
		*more = *op;
		enqueue(s, more);
	}
	enqueue(s, op);
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/* A kernel timed by its own emulation (fake_cuda_chase.c): ms on s, no
 * link held; its fault raised when it runs. */
CUresult fake_enqueue_timed(CUstream s, double ms, CUresult fault)
{
	struct fake_op *op = op_new(FOP_TIMED);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->ms = ms;
	op->fault = fault;
	pthread_mutex_lock(&lock);
	enqueue(s, op);
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/* ---- events ---- */

static int bad_event(CUevent e)
{
	return !e || e->magic != EVENT_MAGIC;
}

static int event_done(const void *e)
{
	const struct CUevent_st *ev = e;
	return ev->gen_done >= ev->gen_enq;
}

FAKE_API CUresult cuEventCreate(CUevent *e, unsigned flags)
{
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!e || flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | 0x4 /* INTERPROCESS */))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_gate(fake_current->dev);
	if (r != CUDA_SUCCESS)
		return r;
	struct CUevent_st *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*ev = (struct CUevent_st){ .magic = EVENT_MAGIC, .dev = fake_current->dev, .flags = flags };
	*e = ev;
	return CUDA_SUCCESS;
}

/* On a capturing stream the event completes at once, as before graphs
 * were modelled here (the fake NCCL's captures record no GPU work). */
FAKE_API CUresult cuEventRecord(CUevent e, CUstream hs)
{
	if (bad_event(e) || (hs && hs->magic != STREAM_MAGIC))
		return CUDA_ERROR_INVALID_HANDLE;
	CUstream s = hs ? hs : &legacy[e->dev];
	if (s->dev != e->dev) /* cuda.h: event and stream from different contexts */
		return CUDA_ERROR_INVALID_HANDLE;
	CUresult r = fake_gate(s->dev);
	if (r != CUDA_SUCCESS)
		return r;
	struct fake_op *op = op_new(FOP_RECORD);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&lock);
	e->recorded = 1;
	op->ev = e;
	op->gen = ++e->gen_enq;
	if (s->capture) {
		e->t = fake_now_ms();
		e->gen_done = op->gen;
		free(op);
	} else {
		enqueue(s, op);
	}
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamWaitEvent(CUstream hs, CUevent e, unsigned flags)
{
	if (bad_event(e))
		return CUDA_ERROR_INVALID_HANDLE;
	CUstream s = stream_of(hs);
	if (!s)
		return hs ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_CONTEXT;
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_gate(s->dev);
	if (r != CUDA_SUCCESS)
		return r;
	struct fake_op *op = op_new(FOP_WAIT);
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&lock);
	op->ev = e;
	op->gen = e->gen_enq; /* the latest record; none: nothing to wait for */
	enqueue(s, op);
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventQuery(CUevent e)
{
	if (bad_event(e))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	drain();
	int done = event_done(e);
	pthread_mutex_unlock(&lock);
	CUresult r = fake_gate(e->dev);
	return r != CUDA_SUCCESS ? r : done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_API CUresult cuEventSynchronize(CUevent e)
{
	if (bad_event(e))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	CUresult w = drain_until(event_done, e);
	pthread_mutex_unlock(&lock);
	CUresult r = fake_gate(e->dev);
	return r != CUDA_SUCCESS ? r : w;
}

/* cuda.h: never recorded or created with DISABLE_TIMING: INVALID_HANDLE;
 * not yet reached: NOT_READY. */
FAKE_API CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	if (bad_event(a) || bad_event(b) || !a->recorded || !b->recorded ||
	    (a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = fake_gate(a->dev);
	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&lock);
	drain();
	int done = event_done(a) && event_done(b);
	if (done)
		*ms = (float)(b->t - a->t);
	pthread_mutex_unlock(&lock);
	return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	return cuEventElapsedTime(ms, a, b);
}

static int event_unused(const void *e)
{
	for (struct CUstream_st *s = streams; s; s = s->next)
		for (struct fake_op *op = s->head; op; op = op->next)
			if (op->ev == e)
				return 0;
	return 1;
}

/* The driver releases an event once the work referring to it is done;
 * the fake waits for that work here. */
FAKE_API CUresult cuEventDestroy_v2(CUevent e)
{
	if (bad_event(e))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	drain_until(event_unused, e);
	e->magic = 0;
	free(e);
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/* ---- test hooks, not in the real driver ---- */

/* Spin kernels that ended on their timeout since cuInit. */
FAKE_API int fake_cuda_spin_timeouts(void)
{
	return atomic_load(&spin_timeouts);
}
