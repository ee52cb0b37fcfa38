/* `gpuready cluster links` with rails (docs/cluster.md, "cluster links"):
 * the analysis of links.h runs per rail, since rails may differ in speed
 * (TCP over the control network, each RDMA rail at its NIC's rate): each
 * rail is a block with its own median, MAD, suspects and verdicts. The
 * second pass measures the union of the blocks' suspects (every rail of a
 * re-measured pair is measured again). Pure but for the output. */
#ifndef GPUREADY_CLUSTER_LINKS_BLOCKS_H
#define GPUREADY_CLUSTER_LINKS_BLOCKS_H

#include <stdint.h>
#include <stdio.h>

#include "cluster/links.h"
#include "cluster/links_render.h"

struct links_blocks {
	int n;                                  /* blocks */
	int rail[LINKS_RAILS_MAX + 1];          /* each block's rail, TCP first, then RDMA rails in order */
	struct links_stats st[LINKS_RAILS_MAX + 1];
	struct links_suspects s[LINKS_RAILS_MAX + 1];
};

/* The measurements of one rail (a shallow copy: err is shared; free the
 * array only), *out_n of them. */
struct links_meas *links_rail_meas(const struct links_meas *m, size_t n_m, int rail, size_t *out_n);

/* Rank 0 after the first pass: a block per rail measured (TCP when mode
 * has it, every RDMA rail some measurement is of), its statistics and
 * suspects; merged: the suspects of the second pass (a suspect of any
 * rail; known-good on every rail that measured a rate). */
void links_blocks_first(int n, int mode, const struct links_meas *m, size_t n_m, double expect, struct links_blocks *b,
			struct links_suspects *merged);
void links_blocks_free(struct links_blocks *b);

/* The verdicts of block k over both passes (malloc'd, *nv). */
void links_blocks_classify(const struct links_blocks *b, int k, int n, const struct links_meas *m, size_t n_m,
			   struct links_verdict **v, size_t *nv);

/* Every block's report (base: the run's; its m, st, v, rail and block
 * are set per block) as text or JSON (one document: the first block at
 * the top, the others in "rails"), and the first block's SVG heat map to
 * svg (NULL: none); the exit code, the worst of the blocks', or -1 when
 * an output could not be written. */
int links_blocks_write(const struct links_blocks *b, const struct links_report *base, const struct links_meas *m,
		       size_t n_m, bool json, FILE *f, FILE *svg);

#endif
