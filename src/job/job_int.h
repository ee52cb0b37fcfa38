/* What the job's files (wire.c, rendezvous.c, watchdog.c, coll.c) share:
 * the wire structs, the per-peer and per-job state, and the few internal
 * calls that cross files. Not for use outside src/job/. */
#ifndef GPUREADY_JOB_INT_H
#define GPUREADY_JOB_INT_H

#include "job.h"
#include "core/auth.h"
#include "core/strbuf.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum msg {
	MSG_HELLO = 1, MSG_WELCOME, MSG_REJECT, MSG_DATA, MSG_PHASE, MSG_DONE, MSG_ABORT, MSG_FAIL, MSG_BYE,
	MSG_HEARTBEAT, MSG_CHALLENGE, MSG_PROOF,
};

/* Frames bigger than this are a protocol error, not a buffer to allocate:
 * 16 GiB covers the socket backend's largest gather. */
#define MAX_FRAME (16ull << 30)
/* The last byte is the protocol's version: 2 added the job token's
 * challenge-response (flags and nonce in HELLO, CHALLENGE, PROOF), 3 the
 * sender's gpuready version at the end of HELLO (a run needs one version
 * on every rank). */
#define MAGIC "GPURDY\0\3"
#define HELLO_HAS_TOKEN 1u   /* hello.flags: this process holds a job token */

/* Every process's receiver thread says it is alive this often, with the
 * main thread's progress; a peer silent for SILENT_S is frozen (stopped,
 * swapping, its host hung) or cut off. */
#define HEARTBEAT_S 1.0
#define SILENT_S 3.0

/* The fixed parts of the frames, as wire.c encodes them. */
#define JOB_HDR_LEN 16
#define JOB_HELLO_LEN 288
#define JOB_MEMBER_LEN 80
#define JOB_DATA_HDR_LEN 16

/* Process 0's door (admit.c): at most this many connections wait to be
 * admitted or refused at once, and poll() watches them and the listeners. */
#define ADMIT_PENDING_MAX 64
/* DATA frames waiting for the main thread, per peer: every exchange waits
 * for its answer, so a peer is at most a few frames ahead. */
#define JOB_MAX_QUEUED 64
#define JOB_DOOR_FDS (JOB_MAX_LISTEN + ADMIT_PENDING_MAX)

struct hdr {
	uint32_t type;
	uint64_t len;
};

struct hello {
	char magic[8];
	uint32_t proc, nprocs, ranks_per_proc, local_rank, pid, flags;
	char host[64];              /* always terminated */
	char job[128];              /* as it came: not always terminated */
	unsigned char nonce[32];    /* the connector's nonce (core/auth.h) */
	char version[32];           /* gpuready's version (always terminated) */
};

struct data_hdr {
	uint32_t op;
	uint64_t seq;
};

struct frame {
	struct frame *next;
	size_t len;
	unsigned char *buf;
};

struct peer {
	int fd;
	bool dead, bye;
	/* frame being assembled by the receiver thread */
	uint8_t raw_hdr[JOB_HDR_LEN];
	struct hdr hdr;             /* decoded once raw_hdr is whole */
	size_t got;                 /* bytes of header + payload read so far */
	unsigned char *payload;
	/* DATA frames for the main thread, how many and their bytes: a peer
	 * that sends more than JOB_MAX_QUEUED frames (or twice max_frame
	 * bytes) the main thread has not taken is lost, not buffered */
	struct frame *head, **tail;
	size_t queued, queued_bytes;
	/* progress (process 0 only) */
	uint64_t begun, done;
	uint64_t progress;          /* launches its main thread finished in the phase */
	double last_seen;           /* clock_now() of the last bytes from it */
	char phase[160];
	pthread_mutex_t wlock;      /* one writer at a time */
};

struct job {
	struct job_opts o;
	char host[64], job[128];
	struct job_member *members;
	struct peer *peers;         /* process 0: one per process (index 0 unused); others: [0] = process 0 */
	int lfds[JOB_MAX_LISTEN], nlfd, port; /* process 0: where it listens, for the job's lifetime */
	struct admit *door;         /* process 0, once the job formed: late connections (receiver thread) */
	double formed;              /* process 0: when the job formed (clock_now()) */
	struct auth_key key;        /* the job token's, when there is one */
	char *refusals;             /* process 0: connections it refused while the rest arrived */
	int sfd, wake[2];
	bool thread_started, sigs_blocked;
	sigset_t oldmask;
	pthread_t thread;
	pthread_mutex_t m;
	pthread_cond_t cv;
	atomic_int fatal;
	atomic_bool stopping;
	atomic_ullong progress;     /* this process's, for heartbeats */
	atomic_int finished;        /* 1 + the decided exit code, 0 while undecided */
	double last_beat;
	uint64_t op_seq;
	/* the main thread's current phase */
	uint64_t phase_seq;
	bool in_phase;
	char note[512];             /* the main thread's own account of a timeout (job_stalled) */
	char phase[160];
	double phase_deadline, phase_start;
};

static inline int npeers(const struct job *c)
{
	return c->o.proc == 0 ? c->o.nprocs : 1;
}

/* wire.c */
void job_hdr_encode(uint8_t out[JOB_HDR_LEN], enum msg type, uint64_t len);
struct hdr job_hdr_decode(const uint8_t in[JOB_HDR_LEN]);
void job_hello_encode(const struct hello *h, uint8_t out[JOB_HELLO_LEN]);
void job_hello_decode(const uint8_t in[JOB_HELLO_LEN], struct hello *h);
/* WELCOME's roster: n members, JOB_MEMBER_LEN bytes each, member i as
 * process i. */
void job_roster_encode(const struct job_member *m, int n, uint8_t *out);
void job_member_decode(const uint8_t in[JOB_MEMBER_LEN], struct job_member *m);
void job_data_hdr_encode(uint8_t out[JOB_DATA_HDR_LEN], uint32_t op, uint64_t seq);
/* false (and zeros) when len is too short for the header */
bool job_data_hdr_decode(const uint8_t *in, size_t len, struct data_hdr *dh);
int job_send_frame_ex(struct job *c, int i, enum msg type, const void *pre, size_t prelen, const void *body,
		      size_t len, double deadline, double lock_wait);
int job_send_frame(struct job *c, int i, enum msg type, const void *pre, size_t prelen, const void *body,
		   size_t len, double deadline);
int job_send_code(struct job *c, int i, enum msg type, int code, const char *text, double deadline,
		  double lock_wait);
int job_send_u64(struct job *c, int i, enum msg type, uint64_t v, const char *text, size_t len, double deadline,
		 double lock_wait);
int job_read_frame(int fd, enum msg *type, char **payload, size_t *len, double deadline);
/* rendezvous.c */
void job_set_member(struct job_member *m, int proc, int pid, int local_rank, const char *host);
/* m->addr from tcp_peer_name()'s "ADDR:PORT" or "[ADDR]:PORT" ("" for "?") */
void job_member_addr(struct job_member *m, const char *peer);
/* admit.c: process 0 admits every other process by c->o.deadline; 0 or
 * -ETIMEDOUT, refusals and dropped connections appended to rejected. */
int job_admit_all(struct job *c, struct strbuf *rejected, struct strbuf *odd);
/* Once the job formed, the door stays open: job_door_open notes the time
 * and makes c->door; the receiver thread puts up to JOB_DOOR_FDS fds in
 * its poll set (job_door_poll, which drops the connections whose HELLO
 * deadline passed; 0 before job_door_open) and hands the same entries to
 * job_door_ready after poll(), which refuses every late HELLO (reported
 * through job_opts.on_late) and never waits. job_door_close frees c->door
 * and its connections (not the listeners: job_close closes those). */
struct pollfd;
void job_door_open(struct job *c);
size_t job_door_poll(struct job *c, struct pollfd *pf);
void job_door_ready(struct job *c, const struct pollfd *pf);
void job_door_close(struct job *c);
/* watchdog.c: the receiver thread's body */
void *job_receiver(void *arg);

#endif
