/* The multi-process commands' options: the collective benchmark (nccl-tests'
 * flags), the job (ranks, rendezvous, deadlines) and `nccl`'s own. */
#include "opts/settings.h"
#include "bench/harness.h"
#include "bench/nccl_log.h"

#include <stddef.h>

#define OFF(f) offsetof(struct settings, f)

/* nccl-tests' flags, with its letters, meaning and defaults
 * (docs/nccl-tests-format.md §8); the defaults are bench/harness.h's. -T
 * and -g serve `nccl` too, --json FILE `nccl` and `bench net` (whose -T is
 * perftest's ToS and its timeout --timeout alone, src/opts/net.c). */
static const struct opt bench_rows[] = {
	{ .name = "minbytes", .short_name = 'b', .type = OPT_U64, .offset = OFF(bench.min_bytes), .metavar = "SIZE",
	  .help = "Smallest message size in bytes (K, M, G: powers of 1024).",
	  .def = OPT_DEF_U64(BENCH_DEFAULT_MIN_BYTES), .min = 1, .scope = SCOPE_BENCH },
	{ .name = "maxbytes", .short_name = 'e', .type = OPT_U64, .offset = OFF(bench.max_bytes), .metavar = "SIZE",
	  .help = "Largest message size in bytes.", .def = OPT_DEF_U64(BENCH_DEFAULT_MAX_BYTES), .min = 1,
	  .scope = SCOPE_BENCH },
	{ .name = "stepbytes", .short_name = 'i', .type = OPT_U64, .offset = OFF(bench.step_bytes),
	  .metavar = "SIZE", .help = "Size increment between messages (without -f).",
	  .def = OPT_DEF_U64(BENCH_DEFAULT_STEP_BYTES), .scope = SCOPE_BENCH },
	{ .name = "stepfactor", .short_name = 'f', .type = OPT_INT, .offset = OFF(bench.step_factor), .metavar = "N",
	  .help = "Multiply the size by N between messages (N > 1).", .def = OPT_DEF_INT(BENCH_DEFAULT_STEP_FACTOR),
	  .min = 1, .max = 1024, .scope = SCOPE_BENCH },
	{ .name = "iters", .short_name = 'n', .type = OPT_INT, .offset = OFF(bench.iters), .metavar = "N",
	  .help = "Timed iterations per size.", .def = OPT_DEF_INT(BENCH_DEFAULT_ITERS), .min = 1, .max = 1000000,
	  .scope = SCOPE_BENCH },
	{ .name = "warmup_iters", .short_name = 'w', .type = OPT_INT, .offset = OFF(bench.warmup), .metavar = "N",
	  .help = "Untimed warm-up launches per power-of-two size.", .def = OPT_DEF_INT(BENCH_DEFAULT_WARMUP),
	  .max = 1000000, .scope = SCOPE_BENCH },
	{ .name = "agg_iters", .short_name = 'm', .type = OPT_INT, .offset = OFF(bench.agg), .metavar = "N",
	  .help = "Launches aggregated into each timed iteration (with the NCCL backend and without -z, issued as one NCCL group, as nccl-tests).",
	  .def = OPT_DEF_INT(BENCH_DEFAULT_AGG), .min = 1, .max = 10000, .scope = SCOPE_BENCH },
	{ .name = "check", .short_name = 'c', .type = OPT_INT, .offset = OFF(bench.check), .metavar = "N",
	  .help = "Validation launches per size (0: no validation, #wrong N/A).",
	  .def = OPT_DEF_INT(BENCH_DEFAULT_CHECK), .max = 1000, .scope = SCOPE_BENCH },
	{ .name = "op", .short_name = 'o', .type = OPT_STRING, .offset = OFF(bench.op), .metavar = "OP",
	  .help = "Reduction: sum, prod, max, min, avg, or all (comma-separated).",
	  .def = OPT_DEF_STR(BENCH_DEFAULT_OP), .scope = SCOPE_BENCH },
	{ .name = "datatype", .short_name = 'd', .type = OPT_STRING, .offset = OFF(bench.dtype), .metavar = "TYPE",
	  .help = "Data type: int8, uint8, int32, uint32, int64, uint64, half, bfloat16, float, double, or all.",
	  .def = OPT_DEF_STR(BENCH_DEFAULT_DTYPE), .scope = SCOPE_BENCH },
	{ .name = "root", .short_name = 'r', .type = OPT_INT, .offset = OFF(bench.root), .metavar = "RANK",
	  .help = "Root of broadcast and reduce; -1: every rank in turn.", .def = OPT_DEF_INT(BENCH_DEFAULT_ROOT),
	  .min = -1, .max = 1000000, .scope = SCOPE_BENCH },
	{ .name = "blocking", .short_name = 'z', .type = OPT_INT, .offset = OFF(bench.blocking), .metavar = "0|1|2",
	  .help = "Wait for each collective (1: and a barrier after it; 2: no barrier).", .def = OPT_DEF_INT(0),
	  .max = 2, .scope = SCOPE_BENCH },
	{ .name = "average", .short_name = 'a', .type = OPT_INT, .offset = OFF(bench.average), .metavar = "0-3",
	  .help = "Time reported across processes: 0 rank 0's, 1 mean, 2 minimum, 3 maximum.",
	  .def = OPT_DEF_INT(BENCH_DEFAULT_AVERAGE), .max = 3, .scope = SCOPE_BENCH },
	{ .name = "cudagraph", .short_name = 'G', .type = OPT_INT, .offset = OFF(bench.graph), .metavar = "N",
	  .help = "Capture each size's timed launches into a CUDA graph and launch it N times (NCCL backend).",
	  .def = OPT_DEF_INT(0), .max = 1000000, .scope = SCOPE_BENCH },
	{ .name = "timeout", .short_name = 'T', .type = OPT_DOUBLE, .offset = OFF(bench.timeout), .metavar = "SEC",
	  .help = "Seconds any step may take before the run is stopped and the stalled ranks named (0: 60 s plus the data at 100 MB/s).",
	  .def = OPT_DEF_DOUBLE(0), .max = 1e6, .scope = SCOPE_RUN },
	{ .name = "ngpus", .short_name = 'g', .type = OPT_INT, .offset = OFF(bench.ngpus), .metavar = "N",
	  .help = "GPUs each process drives (NCCL backend).", .def = OPT_DEF_INT(BENCH_DEFAULT_NGPUS), .min = 1,
	  .max = 64, .scope = SCOPE_RUN },
	{ .name = "nthreads", .short_name = 't', .type = OPT_INT, .offset = OFF(bench.nthreads), .metavar = "1",
	  .help = "Threads per process: always 1 (one thread drives all of a process's GPUs, -g).",
	  .def = OPT_DEF_INT(1), .min = 1, .max = 1, .scope = SCOPE_BENCH },
	{ .name = "backend", .type = OPT_STRING, .offset = OFF(backend), .metavar = "NAME",
	  .help = "nccl (GPU memory), mpi (host memory, loads the gpuready-mpi module) or socket (host memory over gpuready's own TCP, for tests).",
	  .def = OPT_DEF_STR("nccl"), .scope = SCOPE_BENCH },
	{ .name = "nccl-lib", .type = OPT_STRING, .offset = OFF(nccl_lib), .metavar = "PATH",
	  .help = "Load NCCL from PATH instead of searching (system, LD_LIBRARY_PATH, pip's nvidia/nccl/lib).",
	  .scope = SCOPE_RUN },
	{ .name = "json", .type = OPT_STRING, .offset = OFF(json_file), .metavar = "FILE",
	  .help = "Also write the run (parameters, devices, hosts, every row, verdict) as JSON to FILE.",
	  .scope = SCOPE_RUN | SCOPE_NET },
	{ .name = "plot", .type = OPT_STRING, .offset = OFF(plot), .metavar = "FILE.svg",
	  .help = "Also draw bus bandwidth and time against size as SVG.", .scope = SCOPE_BENCH },
	{ .name = "expect-busbw", .type = OPT_DOUBLE, .offset = OFF(expect_busbw), .metavar = "GBPS",
	  .help = "Fail when the bus bandwidth at the largest size is below GBPS.", .key = "expect_busbw",
	  .max = 1e6, .scope = SCOPE_BENCH },
};
const struct opt_table bench_opts = OPT_TABLE("bench", bench_rows);

/* Where the ranks come from when no launcher says (job/launch.c). */
static const struct opt job_rows[] = {
	{ .name = "rank", .type = OPT_INT, .offset = OFF(rank), .metavar = "R",
	  .help = "This process's rank (with --nranks; otherwise from the launcher).", .def = OPT_DEF_HIDDEN_INT(-1),
	  .max = 1000000, .scope = SCOPE_RUN },
	{ .name = "nranks", .type = OPT_INT, .offset = OFF(nranks), .metavar = "N",
	  .help = "Number of processes (with --rank).", .min = 1, .max = 1000000, .scope = SCOPE_RUN },
	{ .name = "master", .type = OPT_STRING, .offset = OFF(master), .metavar = "HOST[:PORT]",
	  .help = "Where rank 0 listens for the others (default MASTER_ADDR/MASTER_PORT, the first Slurm node, or this host).",
	  .scope = SCOPE_RUN },
	{ .name = "connect-timeout", .type = OPT_DOUBLE, .offset = OFF(connect_timeout), .metavar = "SEC",
	  .help = "Seconds for every rank to arrive and for communicator setup (bench net: to reach the server).",
	  .def = OPT_DEF_DOUBLE(120), .min = 1, .max = 1e6, .scope = SCOPE_RUN | SCOPE_NET },
	{ .name = "bind", .type = OPT_STRING, .offset = OFF(job_bind), .metavar = "ADDR",
	  .help = "Rank 0: listen for the other ranks on ADDR (0.0.0.0 or :: for every address) instead of the --master address.",
	  .scope = SCOPE_RUN },
	{ .name = "token-file", .type = OPT_STRING, .offset = OFF(token_file), .metavar = "FILE",
	  .help = "Read the job token from FILE instead of $GPUREADY_JOB_TOKEN: every rank (and the bench net server and client) proves it holds the same one.",
	  .scope = SCOPE_RUN | SCOPE_NET },
};
const struct opt_table job_opts = OPT_TABLE("job", job_rows);

/* gpuready nccl (test-nccl). */
static const struct opt nccl_rows[] = {
	{ .name = "require", .type = OPT_STRING, .offset = OFF(require), .metavar = "LIST",
	  .help = "Fail unless NCCL used what LIST names: ib (an RDMA network, not sockets), gdr (GPUDirect RDMA), dmabuf.",
	  .scope = SCOPE_NCCL, .valid = nccl_require_form },
	{ .name = "keep-logs", .type = OPT_STRING, .offset = OFF(keep_logs), .metavar = "DIR",
	  .help = "Keep each rank's NCCL log in DIR.", .scope = SCOPE_NCCL },
	{ .name = "bytes", .type = OPT_U64, .offset = OFF(nccl_bytes), .metavar = "SIZE",
	  .help = "Size of the buffer checked element by element.", .def = OPT_DEF_U64(64ull << 20), .min = 4,
	  .scope = SCOPE_NCCL },
};
const struct opt_table nccl_opts = OPT_TABLE("nccl", nccl_rows);
