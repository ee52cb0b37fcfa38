/* The socket backend's groups (backend_socket_group.c): split() over the
 * job's control plane, then a ring all_reduce over direct TCP connections
 * between the group's members. Internal to the socket backend and its
 * unit test (tests/unit/test_socket_split.c). */
#ifndef GPUREADY_BENCH_BACKEND_SOCKET_GROUP_H
#define GPUREADY_BENCH_BACKEND_SOCKET_GROUP_H

#include "backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What every process announces for split(): fixed-size records on the
 * wire (little-endian, core/wire.h), color, key and port as 32-bit
 * integers, the address a NUL-terminated field of SG_ADDR_LEN bytes.
 * Process 0 broadcasts a 64-bit nonce, then every process's record in
 * parent order: SG_TABLE_BYTES(nprocs) bytes. */
#define SG_ADDR_LEN 64
#define SG_ENTRY_BYTES (4 + 4 + 4 + SG_ADDR_LEN)
#define SG_TABLE_BYTES(n) (8 + (size_t)(n) * SG_ENTRY_BYTES)

struct sg_entry {
	int color, key, port;
	char addr[SG_ADDR_LEN];  /* always terminated here; "" when the field was not */
	bool addr_ok;            /* the field held its own NUL */
};

/* Packs one record into out[SG_ENTRY_BYTES] (addr cut to fit). */
void sg_entry_pack(const struct sg_entry *e, void *out);
/* Reads a table of n records (SG_TABLE_BYTES(n) bytes at buf) into nonce
 * and out[0..n); the values are the senders' and still to be checked
 * (sg_entry_problem). */
void sg_table_unpack(const void *buf, int n, uint64_t *nonce, struct sg_entry *out);
/* Why a member's record cannot be used (its port is not 1..65535, its
 * color is below -1, its address is not a terminated string), malloc'd,
 * naming parent process proc; NULL when it is fine. */
char *sg_entry_problem(const struct sg_entry *e, int proc);

/* The hello that opens each ring connection, from the member at group
 * index idx to the next: magic "gpsg", color, idx, zero, nonce (u32 x 4,
 * u64, little-endian). The accepting member takes only the exact bytes its
 * previous member sends; anything else (a stranger, an earlier split's
 * connection) is closed. */
#define SG_HELLO_BYTES 24
void sg_hello_pack(void *out, uint64_t nonce, int color, int idx);

/* The socket backend's split (backend.h), for its ops table. b is an
 * initialised socket backend. Every process of the job calls it; one that
 * cannot take part (no address, color below -1) still joins the exchange,
 * so the others fail at once naming it instead of waiting. The child runs
 * all_reduce only (others: -ENOTSUP), each call bounded by how->timeout
 * seconds (60 when not set); its alloc, free and copies are the parent's;
 * its env has no sync (the group has no control plane) and it cannot be
 * split again. After a failed collective its connections are closed and
 * every later one fails. */
int backend_socket_split(struct backend *b, const struct backend_split *how, double deadline, struct backend **child);

#endif
