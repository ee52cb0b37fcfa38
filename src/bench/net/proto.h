/* The control protocol of `gpuready bench net`, versioned.
 *
 * Frames: {u32 magic "GNET", u32 type, u32 length} and the payload, all
 * little-endian; a payload is at most NET_MSG_MAX bytes. A client opens the
 * control connection and sends HELLO (protocol version, the test and its
 * parameters: the client's options win); the server answers ACCEPT (its
 * host, the link it measures on, a token the client's data connections
 * present) or REFUSE with the reason, which both sides print. Per message
 * size the client sends START and the server READY; TCP bandwidth results
 * come back as RESULT. RDMA attributes travel as INFO, and the RDMA kernels'
 * own synchronisation as CTRL. ERROR carries why a side stops; BYE ends.
 *
 * Encoding and decoding are pure functions over byte buffers, so the
 * fuzzer and the unit tests exercise exactly what the server parses. */
#ifndef GPUREADY_BENCH_NET_PROTO_H
#define GPUREADY_BENCH_NET_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net.h"

/* 2: HELLO carries the job token flag and nonce; CHALLENGE and PROOF.
 * HELLO's byte 18, reserved before, carries --perform_warm_up: a server
 * from before it ignores the byte, so only a -b run's server half goes
 * without its warm-up there. */
#define NET_PROTO_VERSION 2
#define NET_PROTO_MAGIC 0x54454e47u /* "GNET" */
#define NET_MSG_MAX (1u << 20)
/* perftest's port (perftest's README: the default port 18515). */
#define NET_DEFAULT_PORT 18515

enum net_msg {
	NETMSG_HELLO = 1, NETMSG_ACCEPT, NETMSG_REFUSE, NETMSG_START, NETMSG_READY, NETMSG_RESULT, NETMSG_INFO,
	NETMSG_CTRL, NETMSG_ERROR, NETMSG_BYE, NETMSG_DATA_HELLO, NETMSG_CHALLENGE, NETMSG_PROOF,
};

#define NET_HELLO_HAS_TOKEN 1u  /* net_hello.flags: the client holds a job token */

struct net_hello {
	uint32_t version;
	struct net_params p;
	char host[64];
	uint32_t flags;
	unsigned char nonce[32];  /* the client's (core/auth.h) */
};

struct net_accept {
	uint32_t version;
	uint64_t token;
	char host[64];
	char link[64];           /* "eth0", "lo", "mlx5_0:1" */
	double link_gbps;        /* 0 unknown */
};

struct net_start {
	uint64_t size, iters;
	double duration;
};

struct net_data_hello {
	uint64_t token;
	uint32_t stream;
	uint32_t nstreams;
};

#define NET_HELLO_LEN 152
#define NET_ACCEPT_LEN 148
#define NET_START_LEN 24
#define NET_RESULT_LEN (32 + 8 * NET_WINDOWS + 4)
#define NET_DATA_HELLO_LEN 16

void net_hello_encode(const struct net_hello *h, uint8_t out[NET_HELLO_LEN]);
/* The decoders: 0, or -EPROTO with *err set to why (malloc'd; a version
 * from another gpuready says so). Any input is safe. */
int net_hello_decode(const uint8_t *buf, size_t len, struct net_hello *h, char **err);
void net_accept_encode(const struct net_accept *a, uint8_t out[NET_ACCEPT_LEN]);
int net_accept_decode(const uint8_t *buf, size_t len, struct net_accept *a, char **err);
void net_start_encode(const struct net_start *s, uint8_t out[NET_START_LEN]);
int net_start_decode(const uint8_t *buf, size_t len, struct net_start *s, char **err);
/* RESULT carries the receiving side's samples (no latency samples). */
void net_result_encode(const struct net_samples *s, uint8_t out[NET_RESULT_LEN]);
int net_result_decode(const uint8_t *buf, size_t len, struct net_samples *s, char **err);
void net_data_hello_encode(const struct net_data_hello *d, uint8_t out[NET_DATA_HELLO_LEN]);
int net_data_hello_decode(const uint8_t *buf, size_t len, struct net_data_hello *d, char **err);

/* A frame's header: 0 and its type and length, or -EPROTO (not our magic). */
#define NET_FRAME_HDR 12
int net_frame_hdr_decode(const uint8_t h[NET_FRAME_HDR], uint32_t *type, size_t *len);

/* Frames over a connected socket, by the deadline. recv allocates the
 * payload (*payload, NUL-terminated for text; free it) and refuses a wrong
 * magic or a length above max with -EPROTO. 0 or -errno. */
int net_msg_send(int fd, uint32_t type, const void *payload, size_t len, double deadline);
int net_msg_recv(int fd, uint32_t *type, uint8_t **payload, size_t *len, size_t max, double deadline);
/* Receives one frame that must be `want`. On failure *err (malloc'd) says
 * why: an ERROR or REFUSE instead gives the peer's text (its first 255
 * bytes) and -ECONNABORTED. */
int net_msg_expect(int fd, uint32_t want, uint8_t **payload, size_t *len, double deadline, char **err);

#endif
