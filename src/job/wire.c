/* The job's frames (job_int.h): their encoding, sending a frame to one
 * peer by a deadline with one writer at a time, and reading a whole frame
 * before the receiver thread runs.
 *
 * Wire format (little-endian, same on every process; core/wire.h): a
 * 16-byte header {u32 type, u32 reserved, u64 length} and the payload.
 * HELLO (sent bare, before any frame) is {char magic[8], u32 proc, nprocs,
 * ranks_per_proc, local_rank, pid, flags, char host[64], char job[128],
 * u8 nonce[32], char version[32]}; with a job token, process 0 answers it with CHALLENGE
 * {u8 nonce[32], u8 proof[32]} and the process with PROOF {u8 proof[32]}
 * (core/auth.h); WELCOME's roster is one {u32 proc, pid, local_rank, reserved,
 * char host[64]} per process. DATA payloads start with {u32 op, u32
 * reserved, u64 seq}: every process performs the same exchanges in the
 * same order, so a mismatch means the processes run different programs or
 * options, and is reported as such. ABORT and FAIL start with {u32 exit
 * code, u32 reserved}, PHASE and DONE with {u64 phase}, HEARTBEAT is {u64
 * progress}; the rest of ABORT, FAIL and PHASE is text. */
#define _GNU_SOURCE
#include "job_int.h"
#include "core/cleanup.h"
#include "core/strbuf.h"
#include "core/tcp.h"
#include "core/wire.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void job_hdr_encode(uint8_t out[JOB_HDR_LEN], enum msg type, uint64_t len)
{
	struct wire_w w = WIRE_W(out, JOB_HDR_LEN);
	wire_put_u32(&w, type);
	wire_put_u32(&w, 0);
	wire_put_u64(&w, len);
}

struct hdr job_hdr_decode(const uint8_t in[JOB_HDR_LEN])
{
	struct wire_r r = WIRE_R(in, JOB_HDR_LEN);
	struct hdr h = { .type = wire_get_u32(&r) };
	wire_skip(&r, 4);
	h.len = wire_get_u64(&r);
	return h;
}

void job_hello_encode(const struct hello *h, uint8_t out[JOB_HELLO_LEN])
{
	struct wire_w w = WIRE_W(out, JOB_HELLO_LEN);
	wire_put_bytes(&w, h->magic, sizeof(h->magic));
	wire_put_u32(&w, h->proc);
	wire_put_u32(&w, h->nprocs);
	wire_put_u32(&w, h->ranks_per_proc);
	wire_put_u32(&w, h->local_rank);
	wire_put_u32(&w, h->pid);
	wire_put_u32(&w, h->flags);
	wire_put_str(&w, h->host, sizeof(h->host));
	wire_put_str(&w, h->job, sizeof(h->job));
	wire_put_bytes(&w, h->nonce, sizeof(h->nonce));
	wire_put_str(&w, h->version, sizeof(h->version));
}

void job_hello_decode(const uint8_t in[JOB_HELLO_LEN], struct hello *h)
{
	struct wire_r r = WIRE_R(in, JOB_HELLO_LEN);
	wire_get_bytes(&r, h->magic, sizeof(h->magic));
	h->proc = wire_get_u32(&r);
	h->nprocs = wire_get_u32(&r);
	h->ranks_per_proc = wire_get_u32(&r);
	h->local_rank = wire_get_u32(&r);
	h->pid = wire_get_u32(&r);
	h->flags = wire_get_u32(&r);
	(void)wire_get_str(&r, h->host, sizeof(h->host));
	wire_get_bytes(&r, h->job, sizeof(h->job)); /* compared as it came */
	wire_get_bytes(&r, h->nonce, sizeof(h->nonce));
	(void)wire_get_str(&r, h->version, sizeof(h->version));
}

void job_roster_encode(const struct job_member *m, int n, uint8_t *out)
{
	struct wire_w w = WIRE_W(out, (size_t)n * JOB_MEMBER_LEN);
	for (int i = 0; i < n; i++) {
		wire_put_u32(&w, (uint32_t)i);
		wire_put_u32(&w, (uint32_t)m[i].pid);
		wire_put_u32(&w, (uint32_t)m[i].local_rank);
		wire_put_u32(&w, 0);
		wire_put_bytes(&w, m[i].host, sizeof(m[i].host));
	}
}

void job_member_decode(const uint8_t in[JOB_MEMBER_LEN], struct job_member *m)
{
	struct wire_r r = WIRE_R(in, JOB_MEMBER_LEN);
	m->proc = (int)wire_get_u32(&r);
	m->pid = (int)wire_get_u32(&r);
	m->local_rank = (int)wire_get_u32(&r);
	wire_skip(&r, 4);
	(void)wire_get_str(&r, m->host, sizeof(m->host));
}

void job_data_hdr_encode(uint8_t out[JOB_DATA_HDR_LEN], uint32_t op, uint64_t seq)
{
	struct wire_w w = WIRE_W(out, JOB_DATA_HDR_LEN);
	wire_put_u32(&w, op);
	wire_put_u32(&w, 0);
	wire_put_u64(&w, seq);
}

bool job_data_hdr_decode(const uint8_t *in, size_t len, struct data_hdr *dh)
{
	struct wire_r r = WIRE_R(in, len);
	dh->op = wire_get_u32(&r);
	wire_skip(&r, 4);
	dh->seq = wire_get_u64(&r);
	return !r.short_read;
}

/* Sends one frame (header, optional data header, body) to peer i by the
 * deadline. With lock_wait >= 0, waits at most that long for another
 * thread writing to that peer (the abort path and heartbeats must not wait
 * behind a stuck transfer); -1 waits as long as it takes. */
int job_send_frame_ex(struct job *c, int i, enum msg type, const void *pre, size_t prelen, const void *body,
			 size_t len, double deadline, double lock_wait)
{
	struct peer *p = &c->peers[i];
	uint8_t h[JOB_HDR_LEN];
	int r;

	if (p->fd < 0 || p->dead)
		return -ECONNRESET;
	job_hdr_encode(h, type, prelen + len);
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
	r = tcp_write_all(p->fd, h, sizeof(h), deadline);
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

/* A frame whose payload starts with {u32 code, u32 reserved} (ABORT,
 * FAIL), then text. */
int job_send_code(struct job *c, int i, enum msg type, int code, const char *text, double deadline,
		  double lock_wait)
{
	uint8_t pre[8];
	struct wire_w w = WIRE_W(pre, sizeof(pre));
	wire_put_u32(&w, (uint32_t)code);
	wire_put_u32(&w, 0);
	return job_send_frame_ex(c, i, type, pre, sizeof(pre), text, strlen(text), deadline, lock_wait);
}

/* A frame whose payload starts with a u64 (PHASE, DONE, HEARTBEAT), then
 * len bytes of text. */
int job_send_u64(struct job *c, int i, enum msg type, uint64_t v, const char *text, size_t len, double deadline,
		 double lock_wait)
{
	uint8_t pre[8];
	struct wire_w w = WIRE_W(pre, sizeof(pre));
	wire_put_u64(&w, v);
	return job_send_frame_ex(c, i, type, pre, sizeof(pre), text, len, deadline, lock_wait);
}

/* Reads one whole frame synchronously (before the receiver thread runs). */
int job_read_frame(int fd, enum msg *type, char **payload, size_t *len, double deadline)
{
	uint8_t raw[JOB_HDR_LEN];
	int r = tcp_read_all(fd, raw, sizeof(raw), deadline);
	if (r < 0)
		return r;
	struct hdr h = job_hdr_decode(raw);
	*len = h.len;
	*type = (enum msg)h.type;
	/* WELCOME's roster is the largest: 80 bytes a process, 200,000
	 * processes in 16 MiB */
	if (*len > (16u << 20))
		return -EPROTO;
	*payload = xcalloc(1, *len + 1);
	r = tcp_read_all(fd, *payload, *len, deadline);
	if (r < 0) {
		free(*payload);
		*payload = NULL;
	}
	return r;
}
