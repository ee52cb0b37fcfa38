/* The job's frames (job_int.h): the 16-byte header, sending a frame to
 * one peer by a deadline with one writer at a time, and reading a whole
 * frame before the receiver thread runs.
 *
 * Wire format (little-endian, same on every process): a 16-byte header
 * {u32 type, u32 reserved, u64 length} and the payload. DATA payloads
 * start with {u32 op, u32 reserved, u64 seq}: every process performs the
 * same exchanges in the same order, so a mismatch means the processes run
 * different programs or options, and is reported as such. */
#define _GNU_SOURCE
#include "job_int.h"
#include "core/cleanup.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void job_put_hdr(struct hdr *h, enum msg type, uint64_t len)
{
	h->type = htole32(type);
	h->reserved = 0;
	h->len = htole64(len);
}

/* Sends one frame (header, optional data header, body) to peer i by the
 * deadline. With lock_wait >= 0, waits at most that long for another
 * thread writing to that peer (the abort path and heartbeats must not wait
 * behind a stuck transfer); -1 waits as long as it takes. */
int job_send_frame_ex(struct job *c, int i, enum msg type, const void *pre, size_t prelen, const void *body,
			 size_t len, double deadline, double lock_wait)
{
	struct peer *p = &c->peers[i];
	struct hdr h;
	int r;

	if (p->fd < 0 || p->dead)
		return -ECONNRESET;
	job_put_hdr(&h, type, prelen + len);
	if (lock_wait >= 0) {
		/* another thread's frame to this peer finishes first, unless it
		 * is stuck: wait for it lock_wait seconds, not forever */
		struct timespec ts;
		double left = lock_wait;
		clock_gettime(CLOCK_REALTIME, &ts);
		if (left > 0) {
			ts.tv_sec += (time_t)left;
			ts.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
		}
		if (pthread_mutex_timedlock(&p->wlock, &ts))
			return -EBUSY;
	} else {
		pthread_mutex_lock(&p->wlock);
	}
	r = tcp_write_all(p->fd, &h, sizeof(h), deadline);
	if (r == 0 && prelen)
		r = tcp_write_all(p->fd, pre, prelen, deadline);
	if (r == 0 && len)
		r = tcp_write_all(p->fd, body, len, deadline);
	pthread_mutex_unlock(&p->wlock);
	return r;
}

int job_send_frame(struct job *c, int i, enum msg type, const void *pre, size_t prelen, const void *body,
		      size_t len, double deadline)
{
	return job_send_frame_ex(c, i, type, pre, prelen, body, len, deadline, -1);
}

/* Reads one whole frame synchronously (before the receiver thread runs). */
int job_read_frame(int fd, enum msg *type, char **payload, size_t *len, double deadline)
{
	struct hdr h;
	int r = tcp_read_all(fd, &h, sizeof(h), deadline);
	if (r < 0)
		return r;
	*len = le64toh(h.len);
	*type = (enum msg)le32toh(h.type);
	if (*len > (1u << 20))
		return -EPROTO;
	*payload = xcalloc(1, *len + 1);
	r = tcp_read_all(fd, *payload, *len, deadline);
	if (r < 0) {
		free(*payload);
		*payload = NULL;
	}
	return r;
}
