/* Test-only hooks of the cluster commands under a launcher
 * (docs/cluster.md, "Testing"): GPUREADY_TEST_RANK_TREES=DIR gives process
 * R the R-th directory of DIR (in name order) as its machine tree and its
 * node name, and lifts the one-process-per-node rule;
 * GPUREADY_TEST_RANK_DELAY=R:SEC[,R:SEC...] makes process R's checks take
 * SEC seconds longer; GPUREADY_TEST_BENCH_TREE=1 lets --bench measure on a
 * tree (cluster_test_bench_tree). Nothing else reads them. */
#ifndef GPUREADY_CLUSTER_TESTHOOK_H
#define GPUREADY_CLUSTER_TESTHOOK_H

#include <stdbool.h>

/* $GPUREADY_TEST_RANK_TREES, or NULL when unset or empty. */
const char *cluster_test_trees(void);
/* Process proc's tree: 0 (no test trees), 1 (*dir and *name malloc'd), or
 * -ENOENT with *err (malloc'd) when DIR has no proc-th directory. */
int cluster_test_tree(int proc, char **dir, char **name, char **err);
/* Sleeps as GPUREADY_TEST_RANK_DELAY says for process proc. */
void cluster_test_delay(int proc);
/* GPUREADY_TEST_BENCH_TREE=1: --bench (check, cluster facts, cluster
 * check under a launcher) measures the GPUs here even when the inventory
 * is a --sysroot tree, whose PCIe links then give the limits (as bench
 * copy --sysroot does), so that the fake hosts of tests/cli/fake-rsh.sh
 * and the ranks of GPUREADY_TEST_RANK_TREES, each a tree, measure with the
 * test double of libcuda. Not for use on a node: the tree's checks would
 * judge this machine's GPUs. */
bool cluster_test_bench_tree(void);

#endif
