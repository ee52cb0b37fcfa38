/* The TCP kernels of `gpuready bench net`: tcp_bw and tcp_lat over
 * connected sockets (the command sets them up; see net.h).
 *
 * Bandwidth: every stream carries its share of the messages (or runs for
 * the duration); a sender writes messages whose first 8 bytes are the
 * message's sequence number and the rest a per-stream pattern, then shuts
 * its side down; a receiver reads whole messages until end of stream,
 * checks every sequence number and every 64th message's payload, and
 * measures from its first byte to its last message. With -b both ends send
 * and receive on every stream.
 *
 * Latency: ping-pong on one stream; the client times each round trip and
 * records half of it (one-way, as perftest's write_lat and sockperf do)
 * and checks the echo after taking the time; the server echoes until end
 * of stream.
 *
 * Sockets are blocking with send/receive timeouts set to the time left
 * before the deadline (one system call per message, as iperf3 and sockperf
 * make), and the deadline is checked after every message. */
#ifndef GPUREADY_BENCH_NET_TCP_H
#define GPUREADY_BENCH_NET_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "net.h"

/* Runs one size on n connected streams. send/recv: what this end does.
 * iters is the total over all streams (0 with a duration). rx gets what
 * this end received (bytes, messages, time, windows, errors). */
int net_tcp_bw(const int *fds, int n, bool send, bool recv, uint64_t size, uint64_t iters, double duration,
	       double deadline, struct net_samples *rx, char **err);

/* -T / --tclass on a data connection: the ToS byte, IP_TOS on IPv4,
 * IPV6_TCLASS on IPv6 (both ends set it on their streams, so -b marks
 * both directions). tos < 0 leaves the socket alone. 0 or -errno. */
int net_tcp_set_tos(int fd, int tos);

/* Client: iters round trips (after a warm-up of a tenth, at least 10), or
 * round trips for the duration. out->lat_us gets one sample each. */
int net_tcp_lat_client(int fd, uint64_t size, uint64_t iters, double duration, double deadline,
		       struct net_samples *out, char **err);
/* Server: echoes messages of size bytes until end of stream. */
int net_tcp_lat_server(int fd, uint64_t size, double deadline, char **err);

/* The per-stream payload byte at offset i (tests and the kernels). */
static inline uint8_t net_tcp_pattern(uint32_t stream, uint64_t i)
{
	return (uint8_t)(i * 7u + stream * 31u + 1u);
}

#endif
