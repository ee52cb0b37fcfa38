/* The option table and the config file reader (inih). */
#include "opts/settings.h"
#include "bench/harness.h"
#include "core/cleanup.h"
#include "core/readers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ini.h>
#include <stddef.h>
#include <string.h>

#define OFF(f) offsetof(struct settings, f)

const struct opt settings_opts[] = {
	{ "help", 'h', OPT_FLAG, OFF(help), NULL, "Show help for this command and exit.", NULL, NULL, 0, 0, SCOPE_ALL },
	{ "sysroot", 0, OPT_STRING, OFF(sysroot), "DIR",
	  "Read every file under DIR instead of / (a snapshot or a test fixture).", "/", NULL, 0, 0,
	  SCOPE_CHECK | SCOPE_SNAPSHOT | SCOPE_TOPO },
	{ "json", 0, OPT_FLAG, OFF(json), NULL, "Print the report as JSON on standard output.", NULL, NULL, 0, 0,
	  SCOPE_CHECK | SCOPE_TOPO },
	{ "prom", 0, OPT_STRING, OFF(prom), "FILE",
	  "Also write the report as Prometheus text exposition to FILE (atomically), for node_exporter's textfile collector.",
	  NULL, "prom", 0, 0, SCOPE_CHECK },
	{ "only", 0, OPT_LIST, OFF(only), "PATTERN",
	  "Run only checks whose ID matches PATTERN (shell glob, comma-separated, repeatable).", NULL, "only", 0, 0,
	  SCOPE_CHECK | SCOPE_LIST },
	{ "skip", 0, OPT_LIST, OFF(skip), "PATTERN",
	  "Do not run checks whose ID matches PATTERN (shell glob, comma-separated, repeatable).", NULL, "skip", 0, 0,
	  SCOPE_CHECK | SCOPE_LIST },
	{ "strict", 0, OPT_FLAG, OFF(strict), NULL, "Count warnings as failures for the exit code.", NULL, "strict", 0,
	  0, SCOPE_CHECK },
	{ "no-color", 0, OPT_FLAG, OFF(no_color), NULL,
	  "Never color the text report (it is colored only on a terminal).", NULL, NULL, 0, 0, SCOPE_CHECK },
	{ "verbose", 'v', OPT_FLAG, OFF(verbose), NULL, "Show the details of passing checks too.", NULL, NULL, 0, 0,
	  SCOPE_CHECK | SCOPE_SNAPSHOT },
	{ "config", 0, OPT_STRING, OFF(config), "FILE",
	  "Read site expectations from FILE instead of /etc/gpuready.conf (inside the sysroot).", NULL, NULL, 0, 0,
	  SCOPE_CHECK | SCOPE_BENCH },
	{ "tos", 0, OPT_INT, OFF(tos), "TOS",
	  "Expected RoCE traffic class byte (DSCP << 2 | ECN) for RDMA-CM and NCCL_IB_TC; 104 is DSCP 26.", "104",
	  "tos", 0, 255, SCOPE_CHECK },
	{ "mtu", 0, OPT_INT, OFF(mtu), "BYTES", "Expected MTU of every RDMA network interface (0: any).", "0", "mtu",
	  0, 65536, SCOPE_CHECK },
	{ "link-rate", 0, OPT_DOUBLE, OFF(link_rate), "GBPS",
	  "Minimum expected rate of every active RDMA port in Gb/s (0: none).", "0", "link_rate", 0, 100000,
	  SCOPE_CHECK },
	{ "min-sockbuf", 0, OPT_U64, OFF(min_sockbuf), "BYTES",
	  "Smallest acceptable net.core.rmem_max and wmem_max.", "268435456", "min_sockbuf", 0, 0, SCOPE_CHECK },
	{ "expect-gpus", 0, OPT_INT, OFF(expect_gpus), "N",
	  "Number of NVIDIA GPUs this node must have; a different count fails (0: the PCI count is the expectation).",
	  "0", "expect_gpus", 0, 1024, SCOPE_CHECK },
	{ "min-cuda", 0, OPT_STRING, OFF(min_cuda), "X.Y",
	  "Oldest CUDA version the installed driver must support (NVML/CUDA driver version).", DEFAULT_MIN_CUDA,
	  "min_cuda", 0, 0, SCOPE_CHECK },
	{ "python", 0, OPT_STRING, OFF(python), "PATH",
	  "Python interpreter for the PyTorch check (default: $VIRTUAL_ENV/bin/python, /opt/pytorch-venv/bin/python, python3).",
	  NULL, "python", 0, 0, SCOPE_CHECK },
	{ "min-bar1", 0, OPT_DOUBLE, OFF(min_bar1_gib), "GIB",
	  "Smallest acceptable GPU BAR1 (the window GPUDirect RDMA maps GPU memory through), in GiB.", "1",
	  "min_bar1", 0, 1048576, SCOPE_CHECK },
	/* benchmarks: nccl-tests' flags, same letters, meaning and defaults
	 * (docs/nccl-tests-format.md §8) */
	{ "minbytes", 'b', OPT_U64, OFF(bench.min_bytes), "SIZE",
	  "Smallest message size in bytes (K, M, G: powers of 1024).", "32M", NULL, 1, 0, SCOPE_BENCH },
	{ "maxbytes", 'e', OPT_U64, OFF(bench.max_bytes), "SIZE", "Largest message size in bytes.", "32M", NULL, 1, 0,
	  SCOPE_BENCH },
	{ "stepbytes", 'i', OPT_U64, OFF(bench.step_bytes), "SIZE", "Size increment between messages (without -f).",
	  "1M", NULL, 0, 0, SCOPE_BENCH },
	{ "stepfactor", 'f', OPT_INT, OFF(bench.step_factor), "N", "Multiply the size by N between messages (N > 1).",
	  "1", NULL, 1, 1024, SCOPE_BENCH },
	{ "iters", 'n', OPT_INT, OFF(bench.iters), "N", "Timed iterations per size.", "20", NULL, 1, 1000000,
	  SCOPE_BENCH },
	{ "warmup_iters", 'w', OPT_INT, OFF(bench.warmup), "N", "Untimed warm-up launches per power-of-two size.", "1",
	  NULL, 0, 1000000, SCOPE_BENCH },
	{ "agg_iters", 'm', OPT_INT, OFF(bench.agg), "N", "Launches aggregated into each timed iteration (with the NCCL backend and without -z, issued as one NCCL group, as nccl-tests).", "1", NULL, 1,
	  10000, SCOPE_BENCH },
	{ "check", 'c', OPT_INT, OFF(bench.check), "N", "Validation launches per size (0: no validation, #wrong N/A).",
	  "1", NULL, 0, 1000, SCOPE_BENCH },
	{ "op", 'o', OPT_STRING, OFF(bench.op), "OP", "Reduction: sum, prod, max, min, avg, or all (comma-separated).",
	  "sum", NULL, 0, 0, SCOPE_BENCH },
	{ "datatype", 'd', OPT_STRING, OFF(bench.dtype), "TYPE",
	  "Data type: int8, uint8, int32, uint32, int64, uint64, half, bfloat16, float, double, or all.", "float", NULL,
	  0, 0, SCOPE_BENCH },
	{ "root", 'r', OPT_INT, OFF(bench.root), "RANK", "Root of broadcast and reduce; -1: every rank in turn.", "0",
	  NULL, -1, 1000000, SCOPE_BENCH },
	{ "blocking", 'z', OPT_INT, OFF(bench.blocking), "0|1|2",
	  "Wait for each collective (1: and a barrier after it; 2: no barrier).", "0", NULL, 0, 2, SCOPE_BENCH },
	{ "average", 'a', OPT_INT, OFF(bench.average), "0-3",
	  "Time reported across processes: 0 rank 0's, 1 mean, 2 minimum, 3 maximum.", "1", NULL, 0, 3, SCOPE_BENCH },
	{ "cudagraph", 'G', OPT_INT, OFF(bench.graph), "N",
	  "Capture each size's timed launches into a CUDA graph and launch it N times (NCCL backend).",
	  "0", NULL, 0, 1000000, SCOPE_BENCH },
	{ "timeout", 'T', OPT_DOUBLE, OFF(bench.timeout), "SEC",
	  "Seconds any step may take before the run is stopped and the stalled ranks named (0: 60 s plus the data at 100 MB/s).",
	  "0", NULL, 0, 1e6, SCOPE_RUN | SCOPE_NET },
	{ "ngpus", 'g', OPT_INT, OFF(bench.ngpus), "N", "GPUs each process drives (NCCL backend).", "1", NULL, 1, 64,
	  SCOPE_RUN },
	{ "nthreads", 't', OPT_INT, OFF(bench.nthreads), "1",
	  "Threads per process: always 1 (one thread drives all of a process's GPUs, -g).", "1", NULL, 1, 1,
	  SCOPE_BENCH },
	{ "backend", 0, OPT_STRING, OFF(backend), "NAME",
	  "nccl (GPU memory), mpi (host memory, loads the gpuready-mpi module) or socket (host memory over gpuready's own TCP, for tests).",
	  "nccl", NULL, 0, 0, SCOPE_BENCH },
	{ "nccl-lib", 0, OPT_STRING, OFF(nccl_lib), "PATH",
	  "Load NCCL from PATH instead of searching (system, LD_LIBRARY_PATH, pip's nvidia/nccl/lib).", NULL, NULL, 0, 0,
	  SCOPE_RUN },
	{ "json", 0, OPT_STRING, OFF(json_file), "FILE",
	  "Also write the run (parameters, devices, hosts, every row, verdict) as JSON to FILE.", NULL, NULL, 0, 0,
	  SCOPE_RUN | SCOPE_NET },
	{ "plot", 0, OPT_STRING, OFF(plot), "FILE.svg", "Also draw bus bandwidth and time against size as SVG.", NULL,
	  NULL, 0, 0, SCOPE_BENCH },
	{ "expect-busbw", 0, OPT_DOUBLE, OFF(expect_busbw), "GBPS",
	  "Fail when the bus bandwidth at the largest size is below GBPS.", NULL, "expect_busbw", 0, 1e6, SCOPE_BENCH },
	{ "rank", 0, OPT_INT, OFF(rank), "R", "This process's rank (with --nranks; otherwise from the launcher).", NULL,
	  NULL, 0, 1000000, SCOPE_RUN },
	{ "nranks", 0, OPT_INT, OFF(nranks), "N", "Number of processes (with --rank).", NULL, NULL, 1, 1000000,
	  SCOPE_RUN },
	{ "master", 0, OPT_STRING, OFF(master), "HOST[:PORT]",
	  "Where rank 0 listens for the others (default MASTER_ADDR/MASTER_PORT, the first Slurm node, or this host).",
	  NULL, NULL, 0, 0, SCOPE_RUN },
	{ "connect-timeout", 0, OPT_DOUBLE, OFF(connect_timeout), "SEC",
	  "Seconds for every rank to arrive and for communicator setup (bench net: to reach the server).", "120", NULL,
	  1, 1e6, SCOPE_RUN | SCOPE_NET },
	{ "require", 0, OPT_STRING, OFF(require), "LIST",
	  "Fail unless NCCL used what LIST names: ib (an RDMA network, not sockets), gdr (GPUDirect RDMA), dmabuf.",
	  NULL, NULL, 0, 0, SCOPE_NCCL },
	{ "keep-logs", 0, OPT_STRING, OFF(keep_logs), "DIR", "Keep each rank's NCCL log in DIR.", NULL, NULL, 0, 0,
	  SCOPE_NCCL },
	{ "bytes", 0, OPT_U64, OFF(nccl_bytes), "SIZE", "Size of the buffer checked element by element.", "64M", NULL, 4,
	  0, SCOPE_NCCL },
	/* bench net: perftest's letters where it has them (REFERENCE §10) */
	{ "server", 0, OPT_FLAG, OFF(net.server), NULL, "Serve clients, one after another, until stopped.", NULL, NULL,
	  0, 0, SCOPE_NET },
	{ "bind", 0, OPT_STRING, OFF(net.bind), "ADDR", "Server: listen on ADDR only.", NULL, NULL, 0, 0, SCOPE_NET },
	{ "port", 'p', OPT_INT, OFF(net.port), "PORT", "TCP port of the server's control connection.", "18515", NULL, 1,
	  65535, SCOPE_NET },
	{ "clients", 0, OPT_INT, OFF(net.clients), "N",
	  "Server: exit after N clients, with the last one's status (0: serve until stopped).", "0", NULL, 0, 1000000,
	  SCOPE_NET },
	{ "test", 0, OPT_STRING, OFF(net.test), "TEST",
	  "write_bw, write_lat, read_bw, read_lat, send_bw, send_lat (RDMA verbs, RC), tcp_bw or tcp_lat.", "tcp_bw",
	  NULL, 0, 0, SCOPE_NET },
	{ "size", 's', OPT_U64, OFF(net.size), "BYTES", "Message size (default 65536 for bandwidth, 2 for latency).",
	  NULL, NULL, 1, 0, SCOPE_NET },
	{ "all", 'a', OPT_FLAG, OFF(net.all), NULL, "Every power of two from 2 B to 8 MiB.", NULL, NULL, 0, 0,
	  SCOPE_NET },
	{ "iters", 'n', OPT_U64, OFF(net.iters), "N",
	  "Iterations per size and QP or stream (default 5000 for bandwidth, 1000 for latency).",
	  NULL, NULL, 1, 0, SCOPE_NET },
	{ "duration", 'D', OPT_DOUBLE, OFF(net.duration), "SEC", "Run each size for SEC seconds instead of -n.", NULL,
	  NULL, 0, 3600, SCOPE_NET },
	{ "qps", 'q', OPT_INT, OFF(net.qps), "N", "Queue pairs (RDMA) or streams (TCP).", "1", NULL, 1, 64, SCOPE_NET },
	{ "bidirectional", 'b', OPT_FLAG, OFF(net.bidir), NULL, "Both directions at once (bandwidth tests).", NULL,
	  NULL, 0, 0, SCOPE_NET },
	{ "ib-dev", 'd', OPT_STRING, OFF(net.dev), "DEV",
	  "RDMA device (default: the first with an active port); with --loopback, DEV,DEV2 puts the server end on DEV2.", NULL,
	  NULL, 0, 0, SCOPE_NET },
	{ "ib-port", 'i', OPT_INT, OFF(net.ib_port), "PORT", "RDMA port.", "1", NULL, 1, 255, SCOPE_NET },
	{ "gid-index", 'x', OPT_INT, OFF(net.gid), "N",
	  "GID index (default: the RoCE v2 IPv4-mapped GID, chosen as perftest does).", NULL, NULL, 0, 255,
	  SCOPE_NET },
	{ "tclass", 0, OPT_INT, OFF(net.tclass), "TC", "Traffic class of the RDMA packets.", NULL, NULL, 0, 255,
	  SCOPE_NET },
	{ "mtu", 'm', OPT_INT, OFF(net.mtu), "BYTES", "RDMA path MTU: 256 ... 4096 (default: the port's).", NULL, NULL,
	  0, 4096, SCOPE_NET },
	{ "sl", 'S', OPT_INT, OFF(net.sl), "SL", "InfiniBand service level.", "0", NULL, 0, 15, SCOPE_NET },
	{ "mem", 0, OPT_STRING, OFF(net.mem), "host|cuda[:GPU]",
	  "Buffers in host or GPU memory (cuda: the GPU nearest the NIC; registered through DMA-BUF, else peer memory).",
	  "host", NULL, 0, 0, SCOPE_NET },
	{ "loopback", 0, OPT_FLAG, OFF(net.loopback), NULL,
	  "Client and server in this process (one node, no peer needed).", NULL, NULL, 0, 0, SCOPE_NET },
	{ "report-gbits", 0, OPT_FLAG, OFF(net.gbits), NULL, "Bandwidth in Gb/s (10^9 bit/s) instead of MiB/s.", NULL,
	  NULL, 0, 0, SCOPE_NET },
	{ "expect-gbps", 0, OPT_DOUBLE, OFF(net.expect_gbps), "GBPS",
	  "Fail when the bandwidth at the largest size is below GBPS (10^9 bit/s).", NULL, NULL, 0, 1e6, SCOPE_NET },
};
const size_t settings_n_opts = sizeof(settings_opts) / sizeof(settings_opts[0]);

void settings_init(struct settings *s)
{
	memset(s, 0, sizeof(*s));
	s->tos = DEFAULT_TOS;
	s->min_sockbuf = DEFAULT_MIN_SOCKBUF;
	s->min_cuda = xstrdup(DEFAULT_MIN_CUDA);
	/* Below 1 GiB a BAR1 window is too small to map GPU buffers for
	 * GPUDirect RDMA (issue 3; NVIDIA GPUDirect RDMA docs: BAR1 limits how
	 * much GPU memory peers can map). */
	s->min_bar1_gib = 1.0;

	struct bench_params bp;
	bench_params_default(&bp, COLL_ALL_REDUCE);
	s->bench.min_bytes = bp.min_bytes;
	s->bench.max_bytes = bp.max_bytes;
	s->bench.step_bytes = bp.step_bytes;
	s->bench.step_factor = bp.step_factor;
	s->bench.iters = bp.iters;
	s->bench.warmup = bp.warmup;
	s->bench.agg = bp.agg;
	s->bench.check = bp.check;
	s->bench.average = bp.average;
	s->bench.root = bp.root;
	s->bench.ngpus = bp.ngpus;
	s->bench.nthreads = 1;
	s->rank = -1;
	s->connect_timeout = 120;
	s->nccl_bytes = 64u << 20;
	s->net.port = 18515;
	s->net.ib_port = 1;
	s->net.gid = -1;
	s->net.tclass = -1;
	s->net.qps = 1;
}

void settings_free(struct settings *s)
{
	opt_free_values(settings_opts, settings_n_opts, s);
	free(s->config_note);
	s->config_note = NULL;
}

struct ini_ctx {
	struct settings *s;
	const bool *cli_set;
	char *err;
	bool tree;          /* the file came from a recorded tree's /etc */
	struct strbuf ignored;
};

/* A recorded tree (someone else's machine) may state what its site expects,
 * but not where this run writes files, which program it starts or which
 * checks it hides: only these keys are read from a tree's config. */
static const char *const tree_keys[] = { "tos", "mtu", "link_rate", "min_sockbuf", "expect_gpus", "min_cuda",
					 "min_bar1" };

/* inih goes on after an error and reports the first bad line's number, so
 * only the first message is kept. */
static int set_err(struct ini_ctx *k, char *msg)
{
	if (k->err)
		free(msg);
	else
		k->err = msg;
	return 0;
}

static int on_key(void *ud, const char *section, const char *name, const char *value)
{
	struct ini_ctx *k = ud;
	if (section && *section && strcmp(section, "gpuready"))
		return set_err(k, xasprintf("unknown section [%s] (keys go at the top or under [gpuready])", section));
	for (size_t i = 0; i < settings_n_opts; i++) {
		const struct opt *o = &settings_opts[i];
		if (!o->key || strcmp(o->key, name))
			continue;
		if (k->cli_set && k->cli_set[i])
			return 1;
		bool allowed = !k->tree;
		for (size_t t = 0; t < sizeof(tree_keys) / sizeof(tree_keys[0]) && !allowed; t++)
			allowed = !strcmp(tree_keys[t], name);
		if (!allowed) {
			strbuf_addf(&k->ignored, "%s%s", k->ignored.len ? ", " : "", name);
			return 1;
		}
		char *e = NULL;
		if (opt_assign(o, k->s, value, &e) < 0) {
			/* messages say --name; in a file the key is what matters */
			set_err(k, xasprintf("key '%s': %s", name, e));
			free(e);
			return 0;
		}
		return 1;
	}
	return set_err(k, xasprintf("unknown key '%s'", name));
}

/* inih (as Debian builds it) reads lines into a 200-byte buffer and splits
 * longer ones, and stops at a NUL byte: refuse both instead of misreading.
 * Returns the offending 1-based line, or 0. */
#define CONFIG_MAX_LINE 199
static unsigned config_bad_line(const struct strbuf *sb, const char **why)
{
	unsigned line = 1;
	size_t start = 0;
	for (size_t i = 0; i <= sb->len; i++) {
		if (i < sb->len && sb->buf[i] == '\0') {
			*why = "contains a NUL byte (a damaged file?)";
			return line;
		}
		if (i == sb->len || sb->buf[i] == '\n') {
			if (i - start > CONFIG_MAX_LINE) {
				*why = "line longer than 199 characters";
				return line;
			}
			line++;
			start = i + 1;
		}
	}
	return 0;
}

/* A host file given with --config: a regular file of at most 1 MiB (a FIFO
 * or /dev/zero must not hang or eat memory). */
static int read_host_file(const char *path, struct strbuf *out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size > (1 << 20))
		return -EFBIG;
	char buf[4096];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		strbuf_add(out, buf, (size_t)n);
		if (out->len > (1 << 20))
			return -EFBIG;
	}
}

int settings_load_config(struct settings *s, const bool *cli_set, const struct root *r, char **err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *shown;
	int ret;
	if (s->config) {
		ret = read_host_file(s->config, &sb);
		if (ret < 0) {
			*err = xasprintf("cannot read config file %s: %s", s->config, strerror(-ret));
			return ret;
		}
		shown = s->config;
	} else {
		ret = read_all(r, &sb, "/etc/gpuready.conf");
		if (ret == -ENOENT)
			return 0;
		if (ret < 0) {
			*err = xasprintf("cannot read /etc/gpuready.conf: %s", strerror(-ret));
			return ret;
		}
		shown = "/etc/gpuready.conf";
	}
	const char *why = NULL;
	unsigned bad = config_bad_line(&sb, &why);
	if (bad) {
		*err = xasprintf("%s:%u: %s", shown, bad, why);
		return -EINVAL;
	}
	struct ini_ctx k = { .s = s, .cli_set = cli_set, .tree = !s->config && !root_is_live(r), .ignored = STRBUF_INIT };
	int line = ini_parse_string(sb.buf, on_key, &k);
	if (line != 0) {
		*err = xasprintf("%s:%d: %s", shown, line, k.err ? k.err : "syntax error (expected key = value)");
		free(k.err);
		strbuf_release(&k.ignored);
		return -EINVAL;
	}
	free(s->config_note);
	s->config_note = k.ignored.len ? xasprintf("ignoring %s from the recorded tree's %s: only site expectations are "
						   "read from a tree (give them on the command line or with --config)",
						   k.ignored.buf, shown)
				       : NULL;
	strbuf_release(&k.ignored);
	return 0;
}

struct site_expect settings_expect(const struct settings *s)
{
	return (struct site_expect){
		.tos = s->tos, .mtu = s->mtu, .link_rate = s->link_rate, .min_sockbuf = s->min_sockbuf,
		.expect_gpus = s->expect_gpus, .min_cuda = s->min_cuda, .min_bar1_gib = s->min_bar1_gib,
	};
}
