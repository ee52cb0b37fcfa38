/* The `bench net` server's door: every connection that has not said what
 * it is yet waits here, each with a deadline of its own, read without
 * blocking, so idle connections cost a slot and never hold up a client.
 *
 * net_gate_next() accepts, reads, and hands over the first connection
 * that has sent one whole frame (a control HELLO, or a data connection's
 * DATA_HELLO). A connection that sends nothing whole within its time
 * (at most NET_GATE_S) is dropped, as is one that sends what is not our
 * protocol; with NET_GATE_MAX waiting, a new one drops the oldest. Each
 * drop is told to on_drop (may be NULL) with the peer and the reason. */
#ifndef GPUREADY_BENCH_NET_GATE_H
#define GPUREADY_BENCH_NET_GATE_H

#include <stddef.h>
#include <stdint.h>

#define NET_GATE_S 5.0
#define NET_GATE_MAX 64
#define NET_GATE_FRAME_MAX 1024  /* the largest first frame: HELLO */

struct net_gate_conn;

struct net_gate {
	struct net_gate_conn *v;  /* NET_GATE_MAX of them */
	size_t n;
	double seconds;           /* each connection's time to send its first frame */
	void (*on_drop)(void *ctx, const char *addr, const char *why);
	void *ctx;
};

/* One frame and its connection, now the caller's (close fd, free payload). */
struct net_gate_msg {
	int fd;
	uint32_t type;
	uint8_t *payload;         /* NUL-terminated */
	size_t len;
	char addr[80];            /* the peer's address */
};

void net_gate_init(struct net_gate *g, double seconds, void (*on_drop)(void *ctx, const char *addr, const char *why),
		   void *ctx);
void net_gate_free(struct net_gate *g);
/* The next whole first frame, by the deadline (0: none). 0, -ETIMEDOUT,
 * -EINTR (a signal: the caller decides), or another -errno of the
 * listening socket. */
int net_gate_next(struct net_gate *g, int lfd, double deadline, struct net_gate_msg *out);

#endif
