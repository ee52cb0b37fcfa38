/* The fake NCCL under CUDA graph capture: what nccl-tests -G does with
 * NCCL, without a GPU. A group of calls issued on capturing streams (the
 * fake libcuda's, asked through its fake_cuda_capturing hook) becomes one
 * record; each stream it used gets a node in its capture
 * (fake_cuda_capture_add) that stands for that stream's part. Every launch
 * of a graph holding a part counts one pending launch for it; once every
 * part has one pending, the whole group is issued again as at
 * ncclGroupEnd (fake_group_replay), so calls spread over -g N ranks'
 * graphs still meet. A part launched before its peers leaves its stream
 * hung meanwhile, as a real NCCL kernel waits for its peers.
 *
 * Records live as long as a graph or executable graph holds one of their
 * parts (the fake libcuda releases each part once); their state sits under
 * one mutex of their own, never held while calling into fake_nccl.c. */
#define _GNU_SOURCE
#include "fake_nccl.h"

#include <pthread.h>
#include <stdlib.h>

struct rec;

struct part {
	struct rec *rec;
	CUstream stream;
	int pending;           /* launches not replayed yet */
};

struct rec {
	struct op *ops;        /* the group's calls, issue order */
	int nparts;
	int refs;              /* parts the fake libcuda still holds */
	struct part parts[];
};

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;

int fake_stream_capturing(CUstream s)
{
	int (*f)(CUstream) = (int (*)(CUstream))fake_cuda_sym("fake_cuda_capturing");
	return f ? f(s) : 0;
}

static void free_ops(struct op *o)
{
	while (o) {
		struct op *next = o->next;
		free(o);
		o = next;
	}
}

/* A launch of one part's graph: replays the group once every part has a
 * launch pending, else holds the stream until its peers launch. */
static void part_run(void *arg)
{
	struct part *pt = arg;
	struct rec *rc = pt->rec;
	int all = 1;

	pthread_mutex_lock(&rec_lock);
	pt->pending++;
	for (int i = 0; i < rc->nparts; i++)
		all &= rc->parts[i].pending > 0;
	if (all)
		for (int i = 0; i < rc->nparts; i++)
			rc->parts[i].pending--;
	pthread_mutex_unlock(&rec_lock);
	if (all)
		fake_group_replay(rc->ops);
	else
		fake_group_hold(rc->ops, pt->stream);
}

static void part_release(void *arg)
{
	struct part *pt = arg;
	struct rec *rc = pt->rec;

	pthread_mutex_lock(&rec_lock);
	int last = --rc->refs == 0;
	pthread_mutex_unlock(&rec_lock);
	if (last) {
		free_ops(rc->ops);
		free(rc);
	}
}

/* The distinct streams of list, in first-use order, into a new record. */
static struct rec *rec_new(struct op *list)
{
	int n = 0;
	for (const struct op *o = list; o; o = o->next)
		n++;
	struct rec *rc = calloc(1, sizeof(*rc) + (size_t)n * sizeof(rc->parts[0]));
	rc->ops = list;
	for (const struct op *o = list; o; o = o->next) {
		int seen = 0;
		for (int i = 0; i < rc->nparts; i++)
			seen |= rc->parts[i].stream == o->stream;
		if (!seen)
			rc->parts[rc->nparts++] = (struct part){ .rec = rc, .stream = o->stream };
	}
	return rc;
}

ncclResult_t fake_capture_group(struct op *list)
{
	int (*add)(CUstream, void (*)(void *), void (*)(void *), void *) =
		(int (*)(CUstream, void (*)(void *), void (*)(void *), void *))fake_cuda_sym("fake_cuda_capture_add");
	struct rec *rc = rec_new(list);
	int failed = 0;

	/* every part counts before any is added: none can free rc early */
	rc->refs = rc->nparts;
	for (int i = 0; i < rc->nparts; i++)
		failed += !add || add(rc->parts[i].stream, part_run, part_release, &rc->parts[i]) != 0;
	if (!failed)
		return ncclSuccess;
	pthread_mutex_lock(&rec_lock);
	rc->refs -= failed; /* parts no graph holds */
	int last = rc->refs == 0;
	pthread_mutex_unlock(&rec_lock);
	if (last) {
		free_ops(rc->ops);
		free(rc);
	}
	return ncclUnhandledCudaError;
}
