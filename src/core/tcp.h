/* TCP helpers with deadlines: the job's control connections (src/job/)
 * and the point-to-point benchmark's streams (src/bench/net*).
 *
 * Every blocking step takes an absolute deadline on the monotonic clock
 * (clock_now() seconds, core/clock.h; 0 = none) and gives up with -ETIMEDOUT when it
 * passes: nothing here can hang. Errors are 0 or -errno; where a call takes
 * err, *err is then set to a message for the caller to print (malloc'd:
 * free it). */
#ifndef GPUREADY_TCP_H
#define GPUREADY_TCP_H

#include "core/clock.h"

#include <stdbool.h>
#include <stddef.h>

/* Listens on host:port (host NULL or "" = every address; port 0 = any
 * free port, read back with tcp_local_port). Returns the fd or -errno. */
int tcp_listen(const char *host, int port, char **err);
int tcp_local_port(int fd);

/* Connects to host:port, retrying refused connections every 100 ms until
 * the deadline (rank 0 may not be listening yet). Returns the fd or -errno:
 * -ECONNREFUSED when the last attempt was refused (nothing listened there
 * until the deadline), -ETIMEDOUT when it went unanswered. */
int tcp_connect(const char *host, int port, double deadline, char **err);

/* Accepts one connection by the deadline. Returns the fd or -errno. */
int tcp_accept(int lfd, double deadline);

/* Writes / reads exactly len bytes by the deadline. A peer that closes
 * gives -ECONNRESET (read: also on a clean EOF before len bytes). */
int tcp_write_all(int fd, const void *buf, size_t len, double deadline);
int tcp_read_all(int fd, void *buf, size_t len, double deadline);

/* Without blocking, fd's state: TCP_PEER_DATA when data waits to be read
 * (left unread: a message sent before a close is read first), else
 * TCP_PEER_GONE once the peer has closed it (end of stream, reset,
 * hang-up), else TCP_PEER_IDLE. */
enum tcp_peer_state { TCP_PEER_IDLE, TCP_PEER_DATA, TCP_PEER_GONE };
enum tcp_peer_state tcp_peer_state(int fd);

/* This host's IPv4 addresses that other nodes may reach (interfaces up,
 * not loopback), comma-separated, then "127.0.0.1" last; for announcing
 * rank 0 through MPI. Returns a malloc'd string. */
char *tcp_local_addresses(void);

/* The numeric addresses host resolves to on this host (getaddrinfo, IPv4
 * and IPv6, in its order, each once), comma-separated; loopback addresses
 * (127.0.0.0/8, ::1) left out when drop_loopback, so the result may be "".
 * NULL with *err when host does not resolve. */
char *tcp_resolve_addresses(const char *host, bool drop_loopback, char **err);

/* The peer's address of fd, "10.0.0.2:51234" or "[fe80::1]:51234", into
 * buf ("?" when unknown). */
void tcp_peer_name(int fd, char *buf, size_t len);

/* The short host name (up to the first dot), into buf. */
void tcp_hostname(char *buf, size_t len);

#endif
