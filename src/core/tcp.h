/* TCP helpers with deadlines for gpuready's control connections.
 *
 * Every blocking step takes an absolute deadline on the monotonic clock
 * (net_now() seconds; 0 = none) and gives up with -ETIMEDOUT when it
 * passes: nothing here can hang. Errors are 0 or -errno; messages for the
 * caller to print are written into a caller buffer. */
#ifndef GPUREADY_NET_H
#define GPUREADY_NET_H

#include <stdbool.h>
#include <stddef.h>

/* Monotonic seconds. */
double net_now(void);

/* Listens on host:port (host NULL or "" = every address; port 0 = any
 * free port, read back with net_local_port). Returns the fd or -errno. */
int net_listen(const char *host, int port, char *msg, size_t msglen);
int net_local_port(int fd);

/* Connects to host:port, retrying refused connections every 100 ms until
 * the deadline (rank 0 may not be listening yet). Returns the fd or -errno. */
int net_connect(const char *host, int port, double deadline, char *msg, size_t msglen);

/* Accepts one connection by the deadline. Returns the fd or -errno. */
int net_accept(int lfd, double deadline);

/* Writes / reads exactly len bytes by the deadline. A peer that closes
 * gives -ECONNRESET (read: also on a clean EOF before len bytes). */
int net_write_all(int fd, const void *buf, size_t len, double deadline);
int net_read_all(int fd, void *buf, size_t len, double deadline);

/* Without blocking, fd's state: NET_PEER_DATA when data waits to be read
 * (left unread: a message sent before a close is read first), else
 * NET_PEER_GONE once the peer has closed it (end of stream, reset,
 * hang-up), else NET_PEER_IDLE. */
enum net_peer_state { NET_PEER_IDLE, NET_PEER_DATA, NET_PEER_GONE };
enum net_peer_state net_peer_state(int fd);

/* This host's IPv4 addresses that other nodes may reach (interfaces up,
 * not loopback), comma-separated, then "127.0.0.1" last; for announcing
 * rank 0 through MPI. Returns a malloc'd string. */
char *net_local_addresses(void);

/* The short host name (up to the first dot), into buf. */
void net_hostname(char *buf, size_t len);

#endif
