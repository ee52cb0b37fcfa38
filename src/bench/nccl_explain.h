/* Reading the NCCL logs of real jobs (`gpuready nccl --explain`): the
 * second half of the NCCL log reader (bench/nccl_log.c reads the facts of
 * each line; this file attributes lines to processes and matches warnings
 * against the signature table, bench/nccl_sig.c).
 *
 * A log holds the lines of many processes, interleaved, each with NCCL's
 * `host:pid:tid [dev] ` prefix (debug.cc), perhaps behind a timestamp
 * ("[%F %T] ", NCCL_DEBUG_TIMESTAMP_LEVELS, 2.23+) or a launcher's prefix:
 * Slurm's `srun -l` ("0: "), torchrun's "[rank0]:" / "[default0]:", Open
 * MPI's "[1,0]<stdout>:". Lines without any prefix (NCCL's bare
 * "NCCL version ..." of rank 0, a framework's traceback) belong to the
 * process of the line before them.
 *
 * Pure text processing: the caller reads the files (with the caps below)
 * and hands each one as a stream. */
#ifndef GPUREADY_NCCL_EXPLAIN_H
#define GPUREADY_NCCL_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/nccl_log.h"
#include "core/strbuf.h"
#include "core/strv.h"

/* What one input may cost: bytes read per stream and lines in all. */
#define NCCL_EXPLAIN_MAX_BYTES (64u << 20)
#define NCCL_EXPLAIN_MAX_LINES 2000000
#define NCCL_EXPLAIN_MAX_PROCS 4096
#define NCCL_EXPLAIN_MAX_UNMATCHED 200
#define NCCL_EXPLAIN_SLOTS 16384 /* > 3 x NCCL_EXPLAIN_MAX_PROCS: the lookup table's size */

struct nccl_proc {
	char *key;           /* "host:pid", else the launcher tag ("rank0", "0"), else "" */
	char *host;          /* NULL when no NCCL prefix was seen */
	int pid;             /* -1 unknown */
	char *tag;           /* the launcher's tag, NULL none */
	int stream;          /* the input its first line came from */
	struct nccl_log log; /* the facts of its lines (bench/nccl_log.h) */
	struct strv env;     /* "NCCL_X=value" from "NCCL_X set by environment to value", each once */
	char *bootstrap_if;  /* "eth0:10.0.0.1" from "Bootstrap : Using ..." */
	char *net_plugin;    /* "Loaded net plugin NAME": NAME */
	int coll_channels, nvls_channels, p2p_channels; /* "%d coll channels, ..."; -1 not logged */
	int rings;           /* "Channel 00/08 :  0 1 ..." ring lines: the 08; -1 not logged */
	int trees;           /* "[i]" entries of the "Trees" line; -1 not logged */
	bool init_complete;  /* "... - Init COMPLETE" */
	bool ended;          /* "Destroy COMPLETE" or "Abort COMPLETE" */
	bool collective;     /* a collective was launched ("opCount") */
	long long max_op;    /* the highest opCount it launched (hexadecimal in the log); -1 none */
	bool end_final;      /* its last NCCL line is an Init COMPLETE or a first collective call */
	bool end_coll0;      /* ... a first collective call */
	bool warn_after;     /* a WARN of its input comes after its last line */
	size_t end_index;    /* its last NCCL line among its input's NCCL lines */
	int gdr_any;         /* any NCCL "GPU Direct RDMA Enabled|Disabled for" line (NET/Socket's too): 1
	                      * any Enabled, 0 only Disabled, -1 none: the gdr label */
	int gdr_path;        /* graph/paths.cc's "GPU Direct RDMA Enabled|Disabled for GPU ...": 1 any
	                      * Enabled, 0 only Disabled, -1 none */
	size_t lines;
	size_t first_line, last_line; /* line numbers in its stream (1-based) */
	char *last_text;     /* its last line, cut to 200 bytes */
	struct strv sigs;    /* signature IDs on its lines, each once */
	int error_traces;    /* "file.cc:123 -> N" INFO lines */
};

/* A warning no signature matches, kept verbatim. */
struct nccl_unmatched {
	char *text;          /* the text after "NCCL WARN " */
	char *first_proc;    /* the key of the first process that printed it */
	size_t count;
};

/* A signature seen: which processes, an example line. */
struct nccl_seen_sig {
	char *id;            /* "ib-wc-12" */
	int num;             /* ib-wc's status, else -1 */
	const struct nccl_sig *row; /* the row that matched first (bench/nccl_sig.h); NULL: found by ID */
	char *example;       /* the first line's text after the level */
	struct strv procs;   /* keys of the processes that printed it (first 16) */
	size_t count;
};

struct nccl_explain {
	struct nccl_proc *procs;
	size_t n_procs;
	uint32_t *slots;          /* processes by key and by tag (nccl_explain.c) */
	struct nccl_log all;      /* every line, merged (network, HCAs, GDR as nccl_log merges them) */
	struct nccl_seen_sig *sigs;
	size_t n_sigs;
	struct nccl_unmatched *unmatched;
	size_t n_unmatched;
	size_t unmatched_total;   /* unmatched WARN lines, counting repeats and those past the cap */
	size_t warn_lines;        /* every WARN line */
	size_t nccl_lines;        /* lines with "NCCL INFO" or "NCCL WARN" */
	size_t lines;
	size_t max_lines;         /* NCCL_EXPLAIN_MAX_LINES (tests lower it) */
	int streams;
	bool cut_lines;           /* max_lines reached: the rest was not read */
	bool cut_procs;           /* more processes than NCCL_EXPLAIN_MAX_PROCS: the rest merged into the last */
	struct strv versions;     /* "2.18.3" (no "+cuda"), each once, sorted */
	char *stopped_first;      /* stopped-after-init: the key of the process that stopped first */
	bool stopped_weak;        /* ... only because every process's last line is its Init COMPLETE: a hang or a
	                           * log that ends there (listed, not a failure for the exit status) */
	size_t n_stopped;
};

void nccl_explain_init(struct nccl_explain *x);
/* Reads one stream (a file, stdin): its lines are attributed and matched;
 * the order of lines within a stream is what stopped-after-init reads. */
void nccl_explain_feed(struct nccl_explain *x, const char *text, size_t len);
/* After the last stream: versions, version-mismatch, stopped-after-init. */
void nccl_explain_finish(struct nccl_explain *x);
void nccl_explain_free(struct nccl_explain *x);

/* The labels of a log, as docs/nccl-explain.schema.json names them. */
char *nccl_explain_network(const struct nccl_explain *x);   /* NULL: not logged */
void nccl_explain_hcas(const struct nccl_explain *x, struct strv *out); /* "mlx5_0:1", sorted */
const char *nccl_explain_link(const struct nccl_explain *x); /* "IB", "RoCE", NULL */
char *nccl_explain_socket_if(const struct nccl_explain *x);  /* "eth0", NULL */
int nccl_explain_gdr(const struct nccl_explain *x);          /* 1, 0, -1 not logged */
bool nccl_explain_dmabuf(const struct nccl_explain *x);
/* Signature IDs of one kind (harmless or not), sorted. */
void nccl_explain_ids(const struct nccl_explain *x, bool harmless, struct strv *out);
/* Whether any failure signature (not fallback, not harmless) was seen. */
bool nccl_explain_failed(const struct nccl_explain *x);

/* What a node says against the log (cmd/nccl_explain.c fills it from the
 * inventory): lines of disagreement are appended to x's report. */
struct json_object;
/* Text: one screen. notes: the node comparison's lines (may be empty). */
void nccl_explain_text(const struct nccl_explain *x, const struct strv *notes, struct strbuf *out);
/* JSON: the labels' fields, processes, unmatched, env, notes. */
struct json_object *nccl_explain_json(const struct nccl_explain *x, const struct strv *notes);
/* --require for the whole log: as nccl_log_meets on the merged facts. */
bool nccl_explain_meets(const struct nccl_explain *x, const char *require, struct strv *why);

#endif
