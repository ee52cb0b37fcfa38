/* Times cluster mode's aggregation on N synthetic node records (default
 * 10,000): each record is written as JSON, parsed back (record_parse, as
 * rank 0 will parse what nodes send), then all are aggregated
 * (drift_compute) and rendered as text to /dev/null. Prints the time of
 * each step. Records: 40 facts each, two hardware shapes (90% and 10% of
 * the nodes), 1% of the nodes with other firmware, 0.5% without an MTU
 * fact, one NCCL_IB_TC split in the small shape. Built and run by
 * perf/cluster-aggregate.sh. */
#include "cluster/cluster.h"
#include "core/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void synth(struct node_record *r, size_t i)
{
	bool small = i % 10 == 9;
	*r = (struct node_record){ .node = xasprintf("node%05zu", i), .version = xstrdup("0.1.0"),
				   .reason = xstrdup("gpuready ok: 230 ok, 24 skip"), .reachable = true };
	r->counts[STATUS_OK] = 230;
	r->counts[STATUS_SKIP] = 24;
	strv_push(&r->facts, xasprintf("gpu.model=%s", small ? "NVIDIA GH200 480GB" : "NVIDIA H100 80GB HBM3"));
	strv_push(&r->facts, xasprintf("gpu.count=%d", small ? 1 : 8));
	strv_push(&r->facts, xasprintf("gpu.ids=%s", small ? "10de:2342" : "10de:2330"));
	strv_push(&r->facts, xstrdup("nic.models=ConnectX-7"));
	strv_push(&r->facts, xasprintf("nic.fw.ConnectX-7=%s", i % 100 == 3 ? "28.36.1010" : "28.39.1002"));
	if (i % 200 != 7)
		strv_push(&r->facts, xstrdup("rdma.mtu.ConnectX-7=9000"));
	strv_push(&r->facts, xasprintf("nccl_var.NCCL_IB_TC=%s", small && i % 20 == 9 ? "106" : "104"));
	for (int k = 0; k < 34; k++)
		strv_push(&r->facts, xasprintf("synthetic.key%02d=value-%d", k, k));
	strv_sort(&r->facts);
	r->shape = facts_shape(&r->facts);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	struct node_record *recs = xcalloc(n, sizeof(*recs));
	char **texts = xcalloc(n, sizeof(*texts));
	for (size_t i = 0; i < n; i++) {
		struct node_record r;
		synth(&r, i);
		size_t len;
		FILE *f = open_memstream(&texts[i], &len);
		record_write_json(&r, f);
		fclose(f);
		record_free(&r);
	}
	double t0 = now();
	for (size_t i = 0; i < n; i++) {
		char *err = NULL;
		if (record_parse(texts[i], strlen(texts[i]), &recs[i], &err) < 0) {
			fprintf(stderr, "record %zu: %s\n", i, err);
			return 2;
		}
	}
	double t1 = now();
	struct drift d;
	drift_compute(recs, n, NULL, &d);
	double t2 = now();
	FILE *null = fopen("/dev/null", "w");
	cluster_write_text(recs, n, &d, null);
	fclose(null);
	double t3 = now();
	printf("%zu records: parse %.3f s, aggregate %.3f s, text %.3f s; %zu groups, %zu drift rows\n", n, t1 - t0,
	       t2 - t1, t3 - t2, d.n_groups, d.n_rows);
	drift_free(&d);
	for (size_t i = 0; i < n; i++) {
		record_free(&recs[i]);
		free(texts[i]);
	}
	free(recs);
	free(texts);
	return t2 - t1 < 2.0 ? 0 : 1;
}
