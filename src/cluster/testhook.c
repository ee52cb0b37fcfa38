/* Test-only hooks of the cluster commands under a launcher
 * (docs/cluster.md, "Testing"): many ranks on one host act as many nodes.
 * See testhook.h. */
#define _GNU_SOURCE
#include "cluster/testhook.h"
#include "core/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cluster_test_trees(void)
{
	const char *v = getenv("GPUREADY_TEST_RANK_TREES");
	return v && *v ? v : NULL;
}

int cluster_test_tree(int proc, char **dir, char **name, char **err)
{
	const char *base = cluster_test_trees();
	if (!base)
		return 0;
	struct dirent **ents = NULL;
	int n = scandir(base, &ents, NULL, alphasort), k = 0, r = -ENOENT;
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' && (ents[i]->d_type == DT_DIR || ents[i]->d_type == DT_LNK) &&
		    k++ == proc) {
			*dir = xasprintf("%s/%s", base, ents[i]->d_name);
			*name = xstrdup(ents[i]->d_name);
			r = 1;
		}
		free(ents[i]);
	}
	free(ents);
	if (r < 0)
		*err = xasprintf("GPUREADY_TEST_RANK_TREES=%s holds no tree for process %d", base, proc);
	return r;
}

/* Test-only, with GPUREADY_TEST_RANK_TREES: GPUREADY_TEST_RANK_DELAY=R:SEC[,R:SEC...]
 * makes process R take SEC seconds longer over its checks, as a node whose
 * checks hang. */
void cluster_test_delay(int proc)
{
	const char *v = getenv("GPUREADY_TEST_RANK_DELAY");
	int r, n;
	unsigned sec;
	while (v && sscanf(v, "%d:%u%n", &r, &sec, &n) == 2) {
		while (r == proc && sec > 0)
			sec = sleep(sec);
		v = v[n] == ',' ? v + n + 1 : NULL;
	}
}

bool cluster_test_bench_tree(void)
{
	const char *v = getenv("GPUREADY_TEST_BENCH_TREE");
	return v && !strcmp(v, "1");
}
