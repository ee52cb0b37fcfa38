/* Reading NCCL's own INFO log (NCCL documentation, Troubleshooting; NCCL src/debug.cc) into facts: which network NCCL
 * chose, whether GPUDirect RDMA is on per HCA, DMA-BUF, the intra-node
 * transports, the NCCL version, warnings. gpuready's `nccl` command runs NCCL
 * with NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET and NCCL_DEBUG_FILE
 * pointing at a file per rank, then parses each file with this module.
 *
 * Pure text processing: no I/O beyond the buffer given; unit-tested on
 * realistic logs and fuzzed. */
#ifndef GPUREADY_NCCL_LOG_H
#define GPUREADY_NCCL_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/strv.h"

enum nccl_net { NCCL_NET_UNKNOWN, NCCL_NET_IB, NCCL_NET_SOCKET, NCCL_NET_OTHER };

/* One HCA/port NCCL listed ("NET/IB : Using [0]mlx5_0:1/RoCE ...") with the
 * GPUDirect RDMA verdict NCCL logged for it ("GPU Direct RDMA Enabled for
 * HCA 0 'mlx5_0'" or "Disabled"). */
struct nccl_hca {
	int index;          /* the [i] NCCL gave it */
	char *name;         /* "mlx5_0" */
	int port;           /* -1 unknown */
	char *link;         /* "IB", "RoCE", or NULL */
	int gdr;            /* 1 enabled, 0 disabled, -1 not logged */
};

struct nccl_log {
	char *version;          /* "2.21.5+cuda12.4" from "NCCL version ..." */
	enum nccl_net net;      /* from "Using network IB|Socket|<plugin>" */
	char *net_name;         /* the name as logged ("IB", "Socket", plugin name) */
	struct nccl_hca *hcas;
	size_t n_hcas;
	bool ib_no_device;      /* "NET/IB : No device found." */
	char *socket_if;        /* "NET/Socket : Using [0]eth0:10.0.0.1<0>" -> "eth0:10.0.0.1" */
	char *oob_if;           /* "; OOB eth0:10.0.0.1<0>" -> "eth0:10.0.0.1" */
	int dmabuf;             /* count of "DMA-BUF is available on GPU device N" lines; 0 none */
	bool gdrdma_channels;   /* a "via NET/.../GDRDMA" channel line was seen */
	bool net_channels;      /* any "via NET/" channel line */
	/* intra-node transports seen in channel lines, each once, in order:
	 * "P2P/CUMEM", "P2P/IPC", "P2P/direct pointer", "SHM/direct/direct", ... */
	struct strv transports;
	struct strv warnings;   /* "NCCL WARN ..." message texts, each once */
	int lines;              /* lines read */
};

/* Parses a whole log (lines from any number of NCCL processes/threads).
 * Never fails: unknown lines are ignored. The caller frees with
 * nccl_log_free. */
void nccl_log_parse(const char *text, size_t len, struct nccl_log *out);
void nccl_log_free(struct nccl_log *l);
/* The same line by line (bench/nccl_explain.c attributes each line to its
 * process first): nccl_log_init empties out; nccl_log_line reads one line
 * without its newline (no NUL inside, at most 64 KiB). */
void nccl_log_init(struct nccl_log *out);
void nccl_log_line(struct nccl_log *l, char *line);

/* The verdict for one rank's log, for `gpuready nccl`: a short line per
 * fact ("network: IB (mlx5_0:1/RoCE, mlx5_1:1/RoCE)", "GPUDirect RDMA: on
 * for mlx5_0, mlx5_1", "DMA-BUF: available", "intra-node: P2P/CUMEM",
 * "NCCL 2.21.5+cuda12.4"), appended to out. */
void nccl_log_summary(const struct nccl_log *l, struct strv *out);

/* Requirements for --require (comma-separated "ib", "gdr", "dmabuf"):
 * returns true when all hold; otherwise appends why not to why. */
bool nccl_log_meets(const struct nccl_log *l, const char *require, struct strv *why);
/* --require's form, checked before anything runs: NULL when every word
 * of the list is a requirement nccl_log_meets knows, else the form in
 * words for the message (opt.valid, core/options.h). Pure. */
const char *nccl_require_form(const char *require);

/* What the log says, as fields of the JSON object o (docs/nccl.schema.json):
 * the HCAs NCCL listed (GPUDirect RDMA true/false, null when not logged),
 * DMA-BUF, the socket interface, intra-node transports, NCCL's warnings. */
struct json_object;
void nccl_log_facts_json(struct json_object *o, const struct nccl_log *log);

#endif
