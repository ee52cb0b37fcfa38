/* The output of `gpuready cluster links`: text (summary, verdicts with
 * what to check next, a heat map in % of the median), JSON
 * (docs/cluster-links.schema.json) and an SVG heat map. */
#ifndef GPUREADY_CLUSTER_LINKS_RENDER_H
#define GPUREADY_CLUSTER_LINKS_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cluster/links.h"

/* The text heat map and the SVG show at most this many nodes. */
#define LINKS_TEXT_MAP_MAX 64
#define LINKS_SVG_MAX 1024

struct links_node {
	char name[64];
	char addr[64];     /* the data listener's numeric address: the rail */
	char ifname[32];   /* the interface holding it ("" unknown) */
	char rdma[32];     /* its RDMA device when a Mellanox (mlx5) NIC ("" none) */
	char rails[160];   /* RDMA rails by GPU affinity (links_rails.h), "" none */
	char rail_ifs[160]; /* their netdevs, in the same order ("-" none), "" none */
	int port;
	int rport;         /* the RDMA data listener's port (the engine of bench net), 0 none */
};

struct links_report {
	int n;
	const struct links_node *nodes;
	const struct links_meas *m;  /* both passes */
	size_t n_m;
	const struct links_stats *st;
	const struct links_verdict *v;
	size_t n_v;
	int rounds, rounds2;         /* first and second pass */
	size_t pairs, pairs2;
	bool sampled;                /* --rounds K */
	uint64_t seed;
	double duration, elapsed;
	/* the rail this report is of: LINKS_RAIL_TCP or 1 + an RDMA rail's
	 * index; block: its place in the output (0: the first, with the run's
	 * summary; later ones a block of their own) */
	int rail, block;
	const char *measured;        /* what the run measures, for the summary: "tcp" (NULL), "tcp and RDMA rails", ... */
};

int links_write_text(const struct links_report *r, FILE *f);
/* The progress line on a terminal: round r of rounds, the time elapsed and
 * about how much is left; end: the last one, with its newline. */
void links_write_progress(FILE *f, int r, int rounds, double elapsed, bool end);
/* The parts of the JSON document (cluster/links_blocks.c writes it): the
 * run and the first block (open: the caller adds "rails" and the exit),
 * and a block of another rail as an element of "rails". */
void links_json_head(const struct links_report *r, FILE *f);
void links_json_rail(const struct links_report *r, FILE *f);
/* The device of the report's RDMA rail on node i into out ("" TCP or
 * none). */
void links_report_device(const struct links_report *r, int i, char *out, size_t len);
int links_write_svg(const struct links_report *r, FILE *f);
/* The hint of a verdict: commands in backticks (malloc'd). */
char *links_hint(const struct links_report *r, const struct links_verdict *v);

#endif
