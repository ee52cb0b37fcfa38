/* The signatures of NCCL's warnings and errors: a static table that
 * `gpuready nccl --explain` (bench/nccl_explain.c) matches every WARN line,
 * a few INFO lines and the error texts frameworks print (PyTorch's
 * "NCCL error in: ..., unhandled system error") against. Each row carries
 * an ID (the names docs/failure-modes.md, section H, uses), fixed
 * substrings to match, what it means, likely causes, next checks as
 * commands, whether it is harmless and the public source of the text.
 *
 * Pure data and string matching: no allocation, no I/O. */
#ifndef GPUREADY_NCCL_SIG_H
#define GPUREADY_NCCL_SIG_H

#include <stdbool.h>
#include <stddef.h>

/* Where a line's text comes from. */
enum {
	NCCL_SIG_WARN = 1u << 0,  /* the text after "NCCL WARN " */
	NCCL_SIG_INFO = 1u << 1,  /* the text after "NCCL INFO " */
	NCCL_SIG_OTHER = 1u << 2, /* any other line (a framework's exception, a launcher) */
};

enum nccl_sig_kind {
	NCCL_SIG_FAIL,      /* the job failed or will: exit 1 */
	NCCL_SIG_FALLBACK,  /* NCCL runs, slower (no IB device, GDR off): exit 1 only under --require */
	NCCL_SIG_HARMLESS,  /* looks alarming, is not */
};

struct nccl_sig {
	const char *id;           /* "ib-reg-mr"; the completion row's "ib-wc" takes the status: "ib-wc-12" */
	unsigned where;           /* NCCL_SIG_WARN | ... */
	const char *any[4];       /* matches when the text holds any of these (NULL-ended) */
	const char *also;         /* ... and this one too, when not NULL */
	const char *unless;       /* ... and not this one, when not NULL */
	enum nccl_sig_kind kind;
	const char *meaning;
	const char *causes;
	const char *next;         /* commands in backticks */
	const char *source;       /* NCCL source file (and versions) or a public thread */
};

/* The first row matching text from `where` (one NCCL_SIG_* bit), or NULL.
 * For the completion row, *num receives the ibv_wc_status the line states
 * (-1 when none could be read); untouched otherwise. */
const struct nccl_sig *nccl_sig_match(const char *text, unsigned where, int *num);

/* The row of an ID ("ib-wc-12" finds the completion row), or NULL. */
const struct nccl_sig *nccl_sig_find(const char *id);

/* rdma-core's ibv_wc_status_str() text for a status ("transport retry
 * counter exceeded" for 12) and its enum name ("IBV_WC_RETRY_EXC_ERR");
 * NULL for a number rdma-core does not define. */
const char *nccl_wc_status_str(int status);
const char *nccl_wc_status_name(int status);
/* What a completion status usually means on an NCCL job, one sentence. */
const char *nccl_wc_status_meaning(int status);

/* The table, for tests and documentation. */
extern const struct nccl_sig nccl_sigs[];
extern const size_t n_nccl_sigs;

#endif
