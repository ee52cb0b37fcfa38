/* The options every command shares: help, where to read, what to print and
 * which checks to run. Table rows: core/options.h. */
#include "opts/settings.h"

#include <stddef.h>

#define OFF(f) offsetof(struct settings, f)

/* --sysroot defaults to "/", the live machine; --json is a flag here and
 * a FILE in the benchmarks' table (a name may mean two things in two
 * scopes). */
static const struct opt output_rows[] = {
	{ .name = "help", .short_name = 'h', .type = OPT_FLAG, .offset = OFF(help),
	  .help = "Show help for this command and exit.", .scope = SCOPE_ALL },
	{ .name = "sysroot", .type = OPT_STRING, .offset = OFF(sysroot), .metavar = "DIR",
	  .help = "Read every file under DIR instead of / (a snapshot or a test fixture).", .def = OPT_DEF_STR("/"),
	  .scope = SCOPE_FIX | SCOPE_CLUSTER_FACTS | SCOPE_CHECKS | SCOPE_SNAPSHOT | SCOPE_TOPO | SCOPE_NCCL_EXPLAIN |
		   SCOPE_BENCH_COPY },
	{ .name = "json", .type = OPT_FLAG, .offset = OFF(json),
	  .help = "Print the report as JSON on standard output.",
	  .scope = SCOPE_FIXES | SCOPE_CLUSTER_JOB | SCOPE_CHECKS | SCOPE_TOPO | SCOPE_NCCL_EXPLAIN | SCOPE_BENCH_COPY },
	{ .name = "prom", .type = OPT_STRING, .offset = OFF(prom), .metavar = "FILE",
	  .help = "Also write the report as Prometheus text exposition to FILE (atomically), for node_exporter's textfile collector.",
	  .key = "prom", .scope = SCOPE_CLUSTER_CHECK | SCOPE_CHECKS },
	{ .name = "only", .type = OPT_LIST, .offset = OFF(only), .metavar = "PATTERN",
	  .help = "Run only checks whose ID matches PATTERN (a shell glob, or an area such as rdma for all its checks; comma-separated, repeatable).",
	  .key = "only", .scope = SCOPE_FIXES | SCOPE_CLUSTER | SCOPE_CHECKS | SCOPE_LIST },
	{ .name = "skip", .type = OPT_LIST, .offset = OFF(skip), .metavar = "PATTERN",
	  .help = "Do not run checks whose ID matches PATTERN (a shell glob, or an area such as rdma; comma-separated, repeatable).",
	  .key = "skip", .scope = SCOPE_FIXES | SCOPE_CLUSTER | SCOPE_CHECKS | SCOPE_LIST },
	{ .name = "strict", .type = OPT_FLAG, .offset = OFF(strict),
	  .help = "Count warnings as failures for the exit code.", .key = "strict", .scope = SCOPE_FIXES | SCOPE_CHECKS },
	{ .name = "no-color", .type = OPT_FLAG, .offset = OFF(no_color),
	  .help = "Never color the text report (it is colored only on a terminal, and not when NO_COLOR is set or TERM is dumb).",
	  .scope = SCOPE_FIXES | SCOPE_CHECKS },
	{ .name = "verbose", .short_name = 'v', .type = OPT_FLAG, .offset = OFF(verbose),
	  .help = "Show every finding under its section, passing ones and inventory listings with their details "
		  "(the default prints one line per area that passes, and each warning and failure).",
	  .scope = SCOPE_CHECKS | SCOPE_SNAPSHOT },
	{ .name = "quiet", .short_name = 'q', .type = OPT_FLAG, .offset = OFF(quiet),
	  .help = "Print only warnings and failures, and the summary.", .scope = SCOPE_CHECKS },
	{ .name = "reason", .type = OPT_FLAG, .offset = OFF(reason),
	  .help = "Print one line instead of the report: the failing (else warning) check IDs and subjects, at most "
		  "200 characters of printable ASCII without quotes, for Slurm's drain reason or NHC "
		  "(scontrol update nodename=$(hostname -s) state=drain reason=\"$(gpuready check --reason)\").",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CHECKS },
	{ .name = "force", .type = OPT_FLAG, .offset = OFF(force),
	  .help = "Read a snapshot marked incomplete (.gpuready/incomplete: its writing stopped part-way, so files the "
		  "checks read may be missing) anyway; a snapshot of it is marked incomplete too.",
	  .scope = SCOPE_FIXES | SCOPE_CLUSTER | SCOPE_CHECKS | SCOPE_TOPO | SCOPE_SNAPSHOT },
	{ .name = "config", .type = OPT_STRING, .offset = OFF(config), .metavar = "FILE",
	  .help = "Read site expectations from FILE instead of /etc/gpuready.conf (inside the sysroot).",
	  .scope = SCOPE_FIXES | SCOPE_CLUSTER | SCOPE_CHECKS | SCOPE_BENCH | SCOPE_BENCH_COPY },
};
const struct opt_table output_opts = OPT_TABLE("output", output_rows);
