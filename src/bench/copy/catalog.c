/* nvbandwidth's copy tests (catalog.h says where each fact comes from).
 * The description lines are nvbandwidth's output, kept byte for byte so
 * that tools reading nvbandwidth's text read ours; the summaries are our
 * own words. */
#include "bench/copy/catalog.h"
#include "core/parse.h"

#include <string.h>

#define ONE(hdr) .n_matrices = 1, .key_suffix = { "" }, .header = { hdr }
#define BIDIR(eng, k, K) \
	.n_matrices = 3, .key_suffix = { "_" k "1", "_" k "2", "_total" }, \
	.header = { "memcpy " eng " GPU(row) <-> GPU(column) " K "1 bandwidth (GB/s)", \
		    "memcpy " eng " GPU(row) <-> GPU(column) " K "2 bandwidth (GB/s)", \
		    "memcpy " eng " GPU(row) <-> GPU(column) Total bandwidth (GB/s)" }

/* The tests of one engine ("CE" through cuMemcpyAsync, "SM" through a copy
 * kernel), in nvbandwidth's order; x is the name suffix, e the engine and
 * kh, kd, kp the expectations of the unidirectional tests. */
#define ENGINE_TESTS(x, e, kh, kd, kp) \
	{ "host_to_device_memcpy_" x, "host to each GPU, one GPU at a time", COPY_SHAPE_ROW, COPY_FLOW_GPU, kh, \
	  COPY_UNIT_GBPS, false, ONE("memcpy " e " CPU(row) -> GPU(column) bandwidth (GB/s)") }, \
	{ "device_to_host_memcpy_" x, "each GPU to the host, one GPU at a time", COPY_SHAPE_ROW, COPY_FLOW_GPU, kd, \
	  COPY_UNIT_GBPS, false, ONE("memcpy " e " CPU(row) <- GPU(column) bandwidth (GB/s)") }, \
	{ "host_to_device_bidirectional_memcpy_" x, "host to GPU while the GPU also copies to the host; host to GPU reported", \
	  COPY_SHAPE_ROW, COPY_FLOW_GPU, COPY_EXPECT_NONE, COPY_UNIT_GBPS, false, \
	  ONE("memcpy " e " CPU(row) <-> GPU(column) bandwidth (GB/s)") }, \
	{ "device_to_host_bidirectional_memcpy_" x, "GPU to host while the host also copies to the GPU; GPU to host reported", \
	  COPY_SHAPE_ROW, COPY_FLOW_GPU, COPY_EXPECT_NONE, COPY_UNIT_GBPS, false, \
	  ONE("memcpy " e " CPU(row) <-> GPU(column) bandwidth (GB/s)") }, \
	{ "device_to_device_memcpy_read_" x, "every peer pair: the row GPU reads from the column GPU", COPY_SHAPE_SQUARE, \
	  COPY_FLOW_COL_TO_ROW, kp, COPY_UNIT_GBPS, true, ONE("memcpy " e " GPU(row) -> GPU(column) bandwidth (GB/s)") }, \
	{ "device_to_device_memcpy_write_" x, "every peer pair: the row GPU writes to the column GPU", COPY_SHAPE_SQUARE, \
	  COPY_FLOW_ROW_TO_COL, kp, COPY_UNIT_GBPS, true, ONE("memcpy " e " GPU(row) <- GPU(column) bandwidth (GB/s)") }, \
	{ "device_to_device_bidirectional_memcpy_read_" x, "every peer pair, reads in both directions at once", \
	  COPY_SHAPE_SQUARE, COPY_FLOW_PAIR, COPY_EXPECT_NONE, COPY_UNIT_GBPS, true, BIDIR(e, "read", "Read") }, \
	{ "device_to_device_bidirectional_memcpy_write_" x, "every peer pair, writes in both directions at once", \
	  COPY_SHAPE_SQUARE, COPY_FLOW_PAIR, COPY_EXPECT_NONE, COPY_UNIT_GBPS, true, BIDIR(e, "write", "Write") }, \
	{ "all_to_host_memcpy_" x, "each GPU to the host while every other GPU copies to the host too", COPY_SHAPE_ROW, \
	  COPY_FLOW_GPU, COPY_EXPECT_NONE, COPY_UNIT_GBPS, false, \
	  ONE("memcpy " e " CPU(row) <- GPU(column) bandwidth (GB/s)") }, \
	{ "all_to_host_bidirectional_memcpy_" x, "each GPU to the host while every GPU copies both ways", COPY_SHAPE_ROW, \
	  COPY_FLOW_GPU, COPY_EXPECT_NONE, COPY_UNIT_GBPS, false, \
	  ONE("memcpy " e " CPU(row) <-> GPU(column) bandwidth (GB/s)") }, \
	{ "host_to_all_memcpy_" x, "host to each GPU while the host copies to every other GPU too", COPY_SHAPE_ROW, \
	  COPY_FLOW_GPU, COPY_EXPECT_NONE, COPY_UNIT_GBPS, false, \
	  ONE("memcpy " e " CPU(row) -> GPU(column) bandwidth (GB/s)") }, \
	{ "host_to_all_bidirectional_memcpy_" x, "host to each GPU while every GPU copies both ways", COPY_SHAPE_ROW, \
	  COPY_FLOW_GPU, COPY_EXPECT_NONE, COPY_UNIT_GBPS, false, \
	  ONE("memcpy " e " CPU(row) <-> GPU(column) bandwidth (GB/s)") }, \
	{ "all_to_one_write_" x, "every peer writes to the GPU at once; its total inbound", COPY_SHAPE_ROW, COPY_FLOW_GPU, \
	  COPY_EXPECT_NONE, COPY_UNIT_GBPS, true, ONE("memcpy " e " GPU(row) <- GPU(column) bandwidth (GB/s)") }, \
	{ "all_to_one_read_" x, "every peer reads from the GPU at once; its total outbound", COPY_SHAPE_ROW, COPY_FLOW_GPU, \
	  COPY_EXPECT_NONE, COPY_UNIT_GBPS, true, ONE("memcpy " e " GPU(row) -> GPU(column) bandwidth (GB/s)") }, \
	{ "one_to_all_write_" x, "the GPU writes to every peer at once; its total outbound", COPY_SHAPE_ROW, COPY_FLOW_GPU, \
	  COPY_EXPECT_NONE, COPY_UNIT_GBPS, true, ONE("memcpy " e " GPU(row) -> GPU(column) bandwidth (GB/s)") }, \
	{ "one_to_all_read_" x, "the GPU reads from every peer at once; its total inbound", COPY_SHAPE_ROW, COPY_FLOW_GPU, \
	  COPY_EXPECT_NONE, COPY_UNIT_GBPS, true, ONE("memcpy " e " GPU(row) <- GPU(column) bandwidth (GB/s)") }

static const struct copy_test tests[] = {
	ENGINE_TESTS("ce", "CE", COPY_EXPECT_H2D, COPY_EXPECT_D2H, COPY_EXPECT_P2P),
	ENGINE_TESTS("sm", "SM", COPY_EXPECT_NONE, COPY_EXPECT_NONE, COPY_EXPECT_NONE),
	{ "host_device_latency_sm", "pointer chase from each GPU through host memory", COPY_SHAPE_ROW, COPY_FLOW_GPU,
	  COPY_EXPECT_NONE, COPY_UNIT_NS, false, ONE("memory latency SM CPU(row) <-> GPU(column) (ns)") },
	{ "device_to_device_latency_sm", "pointer chase from the row GPU through the column GPU's memory",
	  COPY_SHAPE_SQUARE, COPY_FLOW_PAIR, COPY_EXPECT_NONE, COPY_UNIT_NS, true,
	  ONE("Device to Device Latency SM GPU(row) <-> GPU(column) (ns)") },
	{ "device_local_copy", "a copy within each GPU's memory (bytes counted once; memory moves twice)",
	  COPY_SHAPE_ROW, COPY_FLOW_GPU, COPY_EXPECT_NONE, COPY_UNIT_GBPS, false,
	  ONE("memcpy local GPU(column) bandwidth (GB/s)") },
};

const struct copy_test *copy_tests(size_t *n)
{
	*n = sizeof(tests) / sizeof(tests[0]);
	return tests;
}

int copy_test_index(const struct copy_test *t)
{
	return (int)(t - tests);
}

const struct copy_test *copy_test_find(const char *name)
{
	size_t n = sizeof(tests) / sizeof(tests[0]);
	int i;
	if (!name)
		return NULL;
	/* an index, as nvbandwidth's -t takes one (decimal only) */
	if (name[0] >= '0' && name[0] <= '9')
		return parse_int(name, 10, &i) == 0 && i >= 0 && (size_t)i < n ? &tests[i] : NULL;
	for (size_t k = 0; k < n; k++)
		if (!strcmp(tests[k].name, name))
			return &tests[k];
	return NULL;
}
