/* cluster fix's parts shared by its offline (cmd/cluster_fix.c) and
 * launched (cmd/cluster_fix_job.c) ways. */
#ifndef GPUREADY_CMD_CLUSTER_FIX_H
#define GPUREADY_CMD_CLUSTER_FIX_H

#include "cmd/cmd.h"
#include "cluster/fixgroup.h"

/* Unique names (labels[i]: where node i came from, a rename said on
 * standard error), then name order. */
void cluster_fix_order(struct cmd_env *env, struct fix_node *v, size_t n, const struct strv *labels);
/* The output (text or --json); the exit code. */
int cluster_fix_render(struct cmd_env *env, const struct fix_node *v, size_t n, const struct fix_rollout *ro);
/* Under a launcher: the whole run; the exit code. */
int cluster_fix_launched(struct cmd_env *env);

#endif
