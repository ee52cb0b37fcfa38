/* root_for_each(): a loop over independent items that read the tree, spread
 * over threads. Reading a tree is system calls (open, stat, read, close per
 * attribute), so a node with thousands of devices is read as fast as its
 * CPUs make them; each thread walks with its own handle (root_clone()),
 * since a handle's caches are one thread's. Items are handed out one at a
 * time, and each writes only its own result, so the result does not
 * depend on the threads' order. */
#define _GNU_SOURCE
#include "root.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

/* Threads beyond this read no faster: the kernel's lookups of one tree
 * contend, and a loop this size is over in well under a second. */
#define ROOT_MAX_THREADS 8
/* Fewer items per thread than this are not worth a thread's start. */
#define ROOT_ITEMS_PER_THREAD 64

struct each {
	const struct root *r;
	size_t n;
	atomic_size_t next;
	void (*fn)(const struct root *r, size_t i, void *ud);
	void *ud;
};

static void run_items(struct each *e, const struct root *r)
{
	for (size_t i; (i = atomic_fetch_add(&e->next, 1)) < e->n;)
		e->fn(r, i, e->ud);
}

static void *worker(void *arg)
{
	struct each *e = arg;
	struct root *own = NULL;
	if (root_clone(e->r, &own) < 0)
		return NULL; /* the other threads take its items */
	run_items(e, own);
	root_free(own);
	return NULL;
}

static size_t threads_for(const struct root *r, size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t t = n / ROOT_ITEMS_PER_THREAD;
	if (cpus > 0 && t > (size_t)cpus)
		t = (size_t)cpus;
	if (t > ROOT_MAX_THREADS)
		t = ROOT_MAX_THREADS;
	struct root *probe = NULL;
	if (t > 1 && root_clone(r, &probe) < 0)
		t = 1; /* recording: one walker */
	root_free(probe);
	return t ? t : 1;
}

void root_for_each(const struct root *r, size_t n, void (*fn)(const struct root *r, size_t i, void *ud), void *ud)
{
	struct each e = { .r = r, .n = n, .fn = fn, .ud = ud };
	atomic_init(&e.next, 0);
	pthread_t tid[ROOT_MAX_THREADS];
	size_t started = 0, want = threads_for(r, n);
	while (started + 1 < want && pthread_create(&tid[started], NULL, worker, &e) == 0)
		started++;
	run_items(&e, r);
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}
