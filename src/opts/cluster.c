/* The options of `cluster check` and `cluster facts` (docs/cluster.md).
 * Table rows: core/options.h. */
#include "opts/settings.h"

#include <stddef.h>

#define OFF(f) offsetof(struct settings, f)

static const struct opt cluster_rows[] = {
	{ .name = "snapshots", .type = OPT_FLAG, .offset = OFF(cluster.snapshots),
	  .help = "Read the nodes from the snapshot directories given as arguments (each taken with `gpuready "
		  "snapshot DIR` on its node, e.g. through srun), in this one process.",
	  .scope = SCOPE_CLUSTER_CHECK },
	{ .name = "expect", .type = OPT_STRING, .offset = OFF(cluster.expect), .metavar = "FILE",
	  .help = "Compare every node of its hardware shape with the record in FILE (`gpuready cluster facts` "
		  "on a known-good node) as well as by majority vote; groups of one or two nodes are then judged too.",
	  .scope = SCOPE_CLUSTER_CHECK },
	{ .name = "node-name", .type = OPT_STRING, .offset = OFF(cluster.node_name), .metavar = "NAME",
	  .help = "This node's name in the record (default: $SLURMD_NODENAME under Slurm, else the host name).",
	  .scope = SCOPE_CLUSTER_FACTS },
};
const struct opt_table cluster_opts = OPT_TABLE("cluster", cluster_rows);
