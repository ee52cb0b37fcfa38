/* The multi-process commands' options: the collective benchmark (nccl-tests'
 * flags), the job (ranks, rendezvous, deadlines) and `nccl`'s own. */
#include "opts/settings.h"
#include "bench/harness.h"
#include "bench/nccl_log.h"

#include "core/cleanup.h"
#include "core/strbuf.h"

#include <stddef.h>
#include <string.h>

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
	  .scope = SCOPE_BENCH | SCOPE_CLUSTER_NCCL },
	{ .name = "warmup_iters", .short_name = 'w', .type = OPT_INT, .offset = OFF(bench.warmup), .metavar = "N",
	  .help = "Untimed warm-up launches per power-of-two size.", .def = OPT_DEF_INT(BENCH_DEFAULT_WARMUP),
	  .max = 1000000, .scope = SCOPE_BENCH | SCOPE_CLUSTER_NCCL },
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
	{ .name = "blocking", .short_name = 'z', .type = OPT_INT, .offset = OFF(bench.blocking), .metavar = "0-3",
	  .help = "Wait for each collective (1: and a barrier after it; 2: no barrier; 3: a barrier after each -n iteration, left out of the time).",
	  .def = OPT_DEF_INT(0), .max = 3, .scope = SCOPE_BENCH },
	{ .name = "average", .short_name = 'a', .type = OPT_INT, .offset = OFF(bench.average), .metavar = "0-3",
	  .help = "Time reported across processes: 0 rank 0's, 1 mean, 2 minimum, 3 maximum.",
	  .def = OPT_DEF_INT(BENCH_DEFAULT_AVERAGE), .max = 3, .scope = SCOPE_BENCH },
	{ .name = "cudagraph", .short_name = 'G', .type = OPT_INT, .offset = OFF(bench.graph), .metavar = "N",
	  .help = "Capture each size's timed launches into a CUDA graph and launch it N times (NCCL backend).",
	  .def = OPT_DEF_INT(0), .max = 1000000, .scope = SCOPE_BENCH },
	{ .name = "timeout", .short_name = 'T', .type = OPT_DOUBLE, .offset = OFF(bench.timeout), .metavar = "SEC",
	  .help = "Seconds any step may take before the run is stopped and the stalled ranks named (0: 60 s plus the data at 100 MB/s).",
	  .def = OPT_DEF_DOUBLE(0), .max = 1e6, .scope = SCOPE_RUN | SCOPE_CLUSTER_NCCL },
	{ .name = "ngpus", .short_name = 'g', .type = OPT_INT, .offset = OFF(bench.ngpus), .metavar = "N",
	  .help = "GPUs each process drives (NCCL backend).", .def = OPT_DEF_INT(BENCH_DEFAULT_NGPUS), .min = 1,
	  .max = 64, .scope = SCOPE_RUN | SCOPE_CLUSTER_NCCL },
	{ .name = "nthreads", .short_name = 't', .type = OPT_INT, .offset = OFF(bench.nthreads), .metavar = "1",
	  .help = "Threads per process: always 1 (one thread drives all of a process's GPUs, -g).",
	  .def = OPT_DEF_INT(1), .min = 1, .max = 1, .scope = SCOPE_BENCH },
	{ .name = "run_cycles", .short_name = 'N', .type = OPT_INT, .offset = OFF(bench.cycles), .metavar = "N",
	  .help = "Run the size sweep N times, printing every cycle's rows (0: until interrupted).",
	  .def = OPT_DEF_INT(1), .max = 1000000, .scope = SCOPE_BENCH },
	{ .name = "unalign", .short_name = 'u', .type = OPT_INT, .offset = OFF(bench.unalign), .metavar = "N",
	  .help = "Start the send and receive buffers N elements past their aligned start.", .def = OPT_DEF_INT(0),
	  .max = 1 << 20, .scope = SCOPE_BENCH },
	{ .name = "report_cputime", .short_name = 'C', .type = OPT_INT, .offset = OFF(bench.cputime), .metavar = "0|1",
	  .help = "Report the host time spent issuing the launches (cputime column) instead of the time to completion.",
	  .def = OPT_DEF_INT(0), .max = 1, .scope = SCOPE_BENCH },
	{ .name = "report_timestamps", .short_name = 'S', .type = OPT_INT, .offset = OFF(bench.timestamps),
	  .metavar = "0|1", .help = "Add a timestamp column (local time each row completed).", .def = OPT_DEF_INT(0),
	  .max = 1, .scope = SCOPE_BENCH },
	{ .name = "output_file", .short_name = 'J', .type = OPT_STRING, .offset = OFF(bench.output_file),
	  .metavar = "FILE.json", .help = "Write nccl-tests' own JSON file (version 3) to FILE.json, or FILE.json.N when it exists, as nccl-tests does (--json writes gpuready's).",
	  .scope = SCOPE_BENCH },
	{ .name = "parallel_init", .short_name = 'p', .type = OPT_INT, .offset = OFF(bench.parallel_init),
	  .metavar = "0", .help = "Only 0: one thread sets up all of a process's communicators (-t 1).",
	  .def = OPT_DEF_INT(0), .max = 1, .scope = SCOPE_BENCH },
	{ .name = "stream_null", .short_name = 'y', .type = OPT_INT, .offset = OFF(bench.stream_null), .metavar = "0",
	  .help = "Only 0: every GPU launches on a stream of its own.", .def = OPT_DEF_INT(0), .max = 1,
	  .scope = SCOPE_BENCH },
	{ .name = "local_register", .short_name = 'R', .type = OPT_INT, .offset = OFF(bench.local_register),
	  .metavar = "0|1|2", .help = "Register the buffers (allocated with ncclMemAlloc) with NCCL: 1 ncclCommRegister (NCCL 2.19+), 2 symmetric windows, ncclCommWindowRegister (2.27+) (NCCL backend).",
	  .def = OPT_DEF_INT(0), .max = 2, .scope = SCOPE_BENCH },
	{ .name = "cta_policy", .short_name = 'x', .type = OPT_INT, .offset = OFF(bench.cta_policy), .metavar = "-1",
	  .help = "Only -1 (NCCL's default): gpuready sets no ncclConfig_t CTA policy.", .def = OPT_DEF_INT(-1),
	  .min = -1, .max = 2, .scope = SCOPE_BENCH },
	{ .name = "device_implementation", .short_name = 'D', .type = OPT_INT, .offset = OFF(bench.device_impl),
	  .metavar = "0", .help = "Only 0: NCCL's own kernels (nccl-tests' device-API kernels are not part of gpuready).",
	  .def = OPT_DEF_INT(0), .max = 4, .scope = SCOPE_BENCH },
	{ .name = "device_cta_count", .short_name = 'V', .type = OPT_INT, .offset = OFF(bench.device_ctas),
	  .metavar = "N", .help = "CTAs of a device implementation (-D); accepted for compatibility, used by none.",
	  .def = OPT_DEF_INT(16), .min = 1, .max = 128, .scope = SCOPE_BENCH },
	{ .name = "memory", .short_name = 'M', .type = OPT_INT, .offset = OFF(bench.memory), .metavar = "0|1",
	  .help = "Add a GPU memory usage line: what communicator setup, the buffers and the collectives took (NCCL backend).",
	  .def = OPT_DEF_INT(0), .max = 1, .scope = SCOPE_BENCH },
	{ .name = "per_iter_timing", .short_name = 'I', .type = OPT_INT, .offset = OFF(bench.per_iter), .metavar = "0|1",
	  .help = "Time each -n iteration and add its minimum, maximum, 99th percentile and variation (i_min i_max i_p99 i_cv%) to each half-row (not with -G).",
	  .def = OPT_DEF_INT(0), .max = 1, .scope = SCOPE_BENCH },
	{ .name = "per_iter_skip", .short_name = 'K', .type = OPT_INT, .offset = OFF(bench.per_iter_skip),
	  .metavar = "N", .help = "Leave the first N iterations out of -I's statistics (needs -I 1; below -n).",
	  .def = OPT_DEF_INT(0), .max = 1000000, .scope = SCOPE_BENCH },
	{ .name = "backend", .type = OPT_STRING, .offset = OFF(backend), .metavar = "NAME",
	  .help = "nccl (GPU memory), mpi (host memory, loads the gpuready-mpi module) or socket (host memory over gpuready's own TCP, for tests).",
	  .def = OPT_DEF_STR("nccl"), .scope = SCOPE_BENCH | SCOPE_CLUSTER_NCCL },
	{ .name = "nccl-lib", .type = OPT_STRING, .offset = OFF(nccl_lib), .metavar = "PATH",
	  .help = "Load NCCL from PATH instead of searching (system, LD_LIBRARY_PATH, pip's nvidia/nccl/lib).",
	  .scope = SCOPE_RUN | SCOPE_CLUSTER_NCCL },
	{ .name = "json", .type = OPT_STRING, .offset = OFF(json_file), .metavar = "FILE",
	  .help = "Also write the run (parameters, devices, hosts, every row, verdict) as JSON to FILE.",
	  .scope = SCOPE_RUN | SCOPE_NET },
	{ .name = "plot", .type = OPT_STRING, .offset = OFF(plot), .metavar = "FILE.svg",
	  .help = "Also draw bus bandwidth and time against size as SVG.", .scope = SCOPE_BENCH },
	{ .name = "expect-busbw", .type = OPT_DOUBLE, .offset = OFF(expect_busbw), .metavar = "GBPS",
	  .help = "Fail when the bus bandwidth at the largest size is below GBPS.", .key = "expect_busbw",
	  .max = 1e6, .scope = SCOPE_BENCH | SCOPE_CLUSTER_NCCL },
};
const struct opt_table bench_opts = OPT_TABLE("bench", bench_rows);

/* The flags gpuready cannot honour, with nccl-tests 2.19.6's meaning
 * (src/common.cu) and why; each is accepted only at its off value, so no
 * flag is taken and then ignored. */
static const struct refusal {
	char flag;
	size_t offset;   /* an int in struct settings */
	int off;
	const char *what, *why;
} refusals[] = {
	{ 'p', OFF(bench.parallel_init), 0, "each thread initialises its communicators",
	  "does not apply: gpuready runs one thread per process (-t 1), which sets up all of its GPUs' communicators" },
	{ 'y', OFF(bench.stream_null), 0, "launch on the default stream",
	  "is not supported: every GPU launches on a stream of its own" },
	{ 'x', OFF(bench.cta_policy), -1, "ncclConfig_t.CTAPolicy",
	  "is not supported: gpuready creates its communicators without a CTA policy" },
	{ 'D', OFF(bench.device_impl), 0, "nccl-tests' device-API kernels",
	  "is not supported: those kernels are nccl-tests' own CUDA code, which gpuready does not ship" },
};

char *bench_flags_check(const struct settings *s)
{
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		int v = *(const int *)((const char *)s + r->offset);
		if (v != r->off)
			return xasprintf("-%c %d (%s) %s", r->flag, v, r->what, r->why);
	}
	const char *backend = s->backend ? s->backend : "nccl";
	if (s->bench.local_register && strcmp(backend, "nccl"))
		return xasprintf("-R %d (buffer registration, 1 local, 2 symmetric) needs --backend nccl: the %s backend "
				 "has no NCCL communicators to register buffers with", s->bench.local_register, backend);
	if (s->bench.memory && strcmp(backend, "nccl"))
		return xasprintf("-M 1 (GPU memory usage by phase) needs --backend nccl: the %s backend moves host memory, "
				 "so there is no GPU memory to report", backend);
	if (s->bench.output_file && s->json_file && !strcmp(s->bench.output_file, s->json_file))
		return xstrdup("-J and --json name the same file: -J writes nccl-tests' JSON and --json gpuready's; "
			       "give each its own file");
	return NULL;
}

/* "float", "all", "float,half" -> list; returns NULL or an error. */
static char *parse_types(const char *s, struct bench_params *p)
{
	p->n_dtypes = 0;
	if (!strcmp(s, "all")) {
		for (int t = 0; t < DT__COUNT; t++)
			p->dtypes[p->n_dtypes++] = (enum dtype)t;
		return NULL;
	}
	_cleanup_free_ char *copy = xstrdup(s);
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int t = dtype_parse(tok);
		if (t < 0)
			return xasprintf("-d %s: unknown type (int8, uint8, int32, uint32, int64, uint64, half, bfloat16, "
					 "float, double, all)", tok);
		if (p->n_dtypes < DT__COUNT)
			p->dtypes[p->n_dtypes++] = (enum dtype)t;
	}
	return p->n_dtypes ? NULL : xstrdup("-d: no type given");
}

static char *parse_ops(const char *s, struct bench_params *p)
{
	p->n_ops = 0;
	if (!strcmp(s, "all")) {
		for (int o = 0; o < OP__COUNT; o++)
			p->ops[p->n_ops++] = (enum redop)o;
		return NULL;
	}
	_cleanup_free_ char *copy = xstrdup(s);
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int o = redop_parse(tok);
		if (o < 0)
			return xasprintf("-o %s: unknown op (sum, prod, max, min, avg, all)", tok);
		if (p->n_ops < OP__COUNT)
			p->ops[p->n_ops++] = (enum redop)o;
	}
	return p->n_ops ? NULL : xstrdup("-o: no op given");
}

char *bench_params_from(const struct settings *s, int coll, struct bench_params *p)
{
	bench_params_default(p, (enum coll)coll);
	p->min_bytes = s->bench.min_bytes;
	p->max_bytes = s->bench.max_bytes;
	p->step_bytes = s->bench.step_bytes;
	p->step_factor = s->bench.step_factor;
	p->iters = s->bench.iters;
	p->warmup = s->bench.warmup;
	p->agg = s->bench.agg;
	p->check = s->bench.check;
	p->average = s->bench.average;
	p->blocking = s->bench.blocking;
	p->root = s->bench.root;
	p->ngpus = s->bench.ngpus;
	p->timeout = s->bench.timeout;
	p->graph = s->bench.graph;
	p->cycles = s->bench.cycles;
	p->unalign = s->bench.unalign;
	p->cputime = s->bench.cputime;
	p->timestamps = s->bench.timestamps;
	p->per_iter = s->bench.per_iter;
	p->per_iter_skip = s->bench.per_iter_skip;
	p->memory = s->bench.memory;
	p->reg = s->bench.local_register;
	char *e = bench_flags_check(s);
	if (!e && s->bench.dtype)
		e = parse_types(s->bench.dtype, p);
	if (!e && s->bench.op)
		e = parse_ops(s->bench.op, p);
	return e ? e : bench_params_check(p);
}

/* Where the ranks come from when no launcher says (job/launch.c). */
static const struct opt job_rows[] = {
	{ .name = "rank", .type = OPT_INT, .offset = OFF(rank), .metavar = "R",
	  .help = "This process's rank (with --nranks; otherwise from the launcher).", .def = OPT_DEF_HIDDEN_INT(-1),
	  .max = 1000000, .scope = SCOPE_RUN | SCOPE_CLUSTER_JOB },
	{ .name = "nranks", .type = OPT_INT, .offset = OFF(nranks), .metavar = "N",
	  .help = "Number of processes (with --rank).", .min = 1, .max = 1000000, .scope = SCOPE_RUN | SCOPE_CLUSTER_JOB },
	{ .name = "master", .type = OPT_STRING, .offset = OFF(master), .metavar = "HOST[:PORT]",
	  .help = "Where rank 0 listens for the others (default MASTER_ADDR/MASTER_PORT, the first Slurm node, or this host).",
	  .scope = SCOPE_RUN | SCOPE_CLUSTER_JOB },
	{ .name = "connect-timeout", .type = OPT_DOUBLE, .offset = OFF(connect_timeout), .metavar = "SEC",
	  .help = "Seconds for every rank to arrive and for communicator setup (bench net: to reach the server).",
	  .def = OPT_DEF_DOUBLE(120), .min = 1, .max = 1e6, .scope = SCOPE_RUN | SCOPE_NET | SCOPE_CLUSTER_JOB },
	{ .name = "bind", .type = OPT_STRING, .offset = OFF(job_bind), .metavar = "ADDR",
	  .help = "Rank 0: listen for the other ranks on ADDR (0.0.0.0 or :: for every address) instead of the --master address.",
	  .scope = SCOPE_RUN | SCOPE_CLUSTER_JOB },
	{ .name = "token-file", .type = OPT_STRING, .offset = OFF(token_file), .metavar = "FILE",
	  .help = "Read the job token from FILE instead of $GPUREADY_JOB_TOKEN: every rank (and the bench net server and client) proves it holds the same one.",
	  .scope = SCOPE_RUN | SCOPE_NET | SCOPE_CLUSTER_JOB },
};
const struct opt_table job_opts = OPT_TABLE("job", job_rows);

/* gpuready nccl (test-nccl). */
static const struct opt nccl_rows[] = {
	{ .name = "require", .type = OPT_STRING, .offset = OFF(require), .metavar = "LIST",
	  .help = "Fail unless NCCL used what LIST names: ib (an RDMA network, not sockets), gdr (GPUDirect RDMA), dmabuf.",
	  .scope = SCOPE_NCCL | SCOPE_NCCL_EXPLAIN, .valid = nccl_require_form },
	{ .name = "explain", .type = OPT_FLAG, .offset = OFF(explain),
	  .help = "Read existing NCCL logs (FILE..., - for standard input, or a directory of them) instead of running "
		  "NCCL, and say what they show.",
	  .scope = SCOPE_NCCL_EXPLAIN },
	{ .name = "keep-logs", .type = OPT_STRING, .offset = OFF(keep_logs), .metavar = "DIR",
	  .help = "Keep each rank's NCCL log in DIR.", .scope = SCOPE_NCCL },
	{ .name = "bytes", .type = OPT_U64, .offset = OFF(nccl_bytes), .metavar = "SIZE",
	  .help = "Size of the buffer checked element by element.", .def = OPT_DEF_U64(64ull << 20), .min = 4,
	  .scope = SCOPE_NCCL },
};
const struct opt_table nccl_opts = OPT_TABLE("nccl", nccl_rows);
