/* Everything a run is told: output options, the site's expectations, the
 * benchmarks' and the job's options.
 *
 * Values come from, lowest priority first: the defaults in the option
 * tables, the config file (/etc/gpuready.conf inside the root, or --config
 * FILE), and the command line. Each consumer owns a table (output.c,
 * site.c, bench.c, net.c in this directory); a command lists the tables it
 * reads in its row of the command table, and the tables drive the parser,
 * --help, the man page and the config-file keys. */
#ifndef GPUREADY_SETTINGS_H
#define GPUREADY_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "checks/expect.h"
#include "core/options.h"
#include "core/root.h"

/* Scopes: which commands take an option. A command has one bit; an
 * option's scope is the set of commands that take it. */
enum {
	SCOPE_CHECK = 1u << 0,    /* check: every area */
	SCOPE_SNAPSHOT = 1u << 1,
	SCOPE_OTHER = 1u << 2,    /* help, version, man */
	SCOPE_LIST = 1u << 3,     /* list-checks */
	SCOPE_TOPO = 1u << 4,     /* topo */
	SCOPE_BENCH = 1u << 5,    /* bench (all_reduce_perf ...) */
	SCOPE_NCCL = 1u << 6,     /* nccl (test-nccl) */
	SCOPE_NET = 1u << 7,      /* bench net */
	SCOPE_RDMA = 1u << 8,     /* rdma (verify-rdma) */
	SCOPE_GPU = 1u << 9,      /* gpu (verify-gpu) */
	SCOPE_GPUDIRECT = 1u << 10, /* gpudirect (verify-gpudirect) */
	SCOPE_CLUSTER_CHECK = 1u << 11, /* cluster check */
	SCOPE_CLUSTER_FACTS = 1u << 12, /* cluster facts */
	SCOPE_CLUSTER_LINKS = 1u << 13, /* cluster links */
	SCOPE_CLUSTER_NCCL = 1u << 14, /* cluster nccl */
	SCOPE_NCCL_EXPLAIN = 1u << 15, /* nccl --explain */
	SCOPE_FIX = 1u << 16,     /* fix */
	SCOPE_CLUSTER_FIX = 1u << 17, /* cluster fix */
	SCOPE_BENCH_COPY = 1u << 18, /* bench copy */
	SCOPE_FIXES = SCOPE_FIX | SCOPE_CLUSTER_FIX,
	SCOPE_CLUSTER = SCOPE_CLUSTER_CHECK | SCOPE_CLUSTER_FACTS, /* the cluster commands that run the checks */
	SCOPE_CLUSTER_JOB = SCOPE_CLUSTER_CHECK | SCOPE_CLUSTER_LINKS | SCOPE_CLUSTER_NCCL | SCOPE_CLUSTER_FIX, /* cluster commands under a launcher */
	SCOPE_CHECKS = SCOPE_CHECK | SCOPE_RDMA | SCOPE_GPU | SCOPE_GPUDIRECT, /* the check commands */
	SCOPE_RUN = SCOPE_BENCH | SCOPE_NCCL, /* commands that start ranks */
	SCOPE_ALL = 0x7ffffu,
};


struct settings {
	bool help;
	char *sysroot;
	bool json;
	char *prom;
	struct strv only;
	struct strv skip;
	bool strict;
	bool no_color;
	bool verbose;
	bool quiet;
	bool reason;
	bool force;        /* read a tree marked incomplete */
	char *config;
	/* site expectations */
	int tos;
	int mtu;           /* expected MTU of RDMA netdevs; 0 = any */
	double link_rate;  /* minimum port rate in Gb/s; 0 = none */
	uint64_t min_sockbuf;
	int expect_gpus;   /* 0 = the PCI count is the expectation */
	char *min_cuda;    /* "12.8" */
	char *python;      /* interpreter for the PyTorch check */
	double min_bar1_gib;
	char *config_note;  /* set by settings_load_config: keys it ignored, for the caller to print */
	/* cluster mode (opts/cluster.c) */
	struct {
		bool snapshots;    /* the arguments are snapshot directories */
		char *expect;      /* the golden record (cluster facts' output) */
		char *node_name;   /* cluster facts: this node's name */
		char *hosts;       /* cluster check: the hosts to ask (hostlist or @FILE) */
		char *rsh;         /* the remote-shell template */
		char *remote;      /* gpuready's path on the hosts */
		int parallel;      /* hosts asked at once */
		int host_timeout;  /* seconds per host (under a launcher: per rank) */
		char *bootstrap;   /* under a launcher: "auto", "tcp" or "mpi" */
		bool drain;        /* drain failing nodes (print, or run with apply) */
		bool resume;       /* resume the nodes gpuready drained that pass now */
		bool apply;        /* run the scontrol commands instead of printing them */
		char *scontrol;    /* scontrol's path */
		bool health;       /* check: the health-check mode (cmd/health.c) */
		bool bench;        /* check --bench: measure copy bandwidth (gpu.copy_bandwidth) */
		int budget;        /* check --health: seconds the whole run may take */
		/* cluster links */
		double duration;   /* seconds per direction of a pair */
		int rounds;        /* 0: every pair (the circle method); K: K random matchings */
		uint64_t seed;     /* --rounds' seed; 0: drawn */
		char *svg;         /* the heat map's file */
		double expect_gbps; /* 0: none */
		char *rail;        /* "tcp", "rdma" or "all" */
		/* cluster nccl */
		uint64_t size;     /* all_reduce bytes; 0: by backend */
		int pair_rounds;   /* rounds of node pairs after the halves */
	} cluster;
	/* gpuready fix (opts/fix.c) */
	struct {
		char *script;          /* --script FILE */
		bool allow_disruptive;
		bool revert;
		int batch;             /* cluster fix --apply: nodes per canary batch */
	} fix;
	/* benchmarks: nccl-tests' flags */
	struct {
		uint64_t min_bytes, max_bytes, step_bytes;
		int step_factor, iters, warmup, agg, check, average, blocking, root, ngpus, graph, nthreads;
		/* nccl-tests 2.19.6's other flags (-N -u -C -S -J -I -K honoured;
		 * the rest refused unless off: bench_flags_check) */
		int cycles, unalign, cputime, timestamps, parallel_init, stream_null, local_register, cta_policy,
		    device_impl, device_ctas, memory, per_iter, per_iter_skip;
		double timeout;
		char *dtype, *op, *output_file;
	} bench;
	char *backend;         /* "nccl", "mpi", "socket" */
	char *nccl_lib;
	char *json_file;       /* bench/nccl --json FILE */
	char *plot;
	double expect_busbw;   /* GB/s at the largest size; 0 none */
	int rank, nranks;      /* -1 / 0: from the launcher */
	char *master;
	double connect_timeout;
	char *job_bind;        /* --bind: rank 0's listening address */
	char *token_file;      /* --token-file: the job token, instead of $GPUREADY_JOB_TOKEN */
	char *require;         /* nccl --require ib,gdr,dmabuf */
	char *keep_logs;       /* nccl --keep-logs DIR */
	bool explain;          /* nccl --explain FILE...: selects the command (main.c) */
	uint64_t nccl_bytes;   /* nccl --bytes: the element-by-element check's size */
	/* bench net: perftest's flags where it has them */
	struct {
		bool server, all, bidir, loopback, gbits, cpu_freq, rdma_cm, cuda_dmabuf, warm_up;
		char *bind, *test, *dev, *mem, *connection;
		int port, ib_port, gid, tclass, tos, mtu, sl, qps, clients, use_cuda;
		uint64_t size, iters;
		double duration, expect_gbps, timeout;
	} net;
	/* bench copy (opts/copy.c): nvbandwidth's options where it has them */
	struct {
		struct strv tests;     /* -t: nvbandwidth's names or indexes; empty: every test */
		int size_mib;          /* buffer per copy */
		int loop_count;        /* copies per sample */
		int samples;           /* samples per figure, the median reported */
		char *numa;            /* "auto" or a NUMA node */
		char *devices;         /* "all" or GPU indexes "0,2" */
		double expect_h2d, expect_d2h, expect_p2p; /* GB/s; 0 none */
		double pcie_eff, nvlink_eff; /* protocol efficiency; 0: bench/copy/expect.h's */
		bool list;             /* -l: list the tests and exit */
		bool skip_verify;      /* -s: no data check after the copies */
	} copy;
};

/* The tables, by consumer. */
extern const struct opt_table output_opts; /* every command: help, sysroot, output, selection */
extern const struct opt_table site_opts;   /* the site's expectations (checks/expect.h) */
extern const struct opt_table bench_opts;  /* the collective benchmark: nccl-tests' flags */
extern const struct opt_table job_opts;    /* ranks and rendezvous of the multi-process commands */
extern const struct opt_table nccl_opts;   /* gpuready nccl */
extern const struct opt_table net_opts;    /* bench net: perftest's flags */
extern const struct opt_table cluster_opts; /* cluster check and cluster facts */
extern const struct opt_table fix_opts;     /* fix and cluster fix */
extern const struct opt_table copy_opts;    /* bench copy: nvbandwidth's options */
/* All of them, NULL-terminated: defaults, freeing, config-file keys. */
extern const struct opt_table *const settings_tables[];

void settings_init(struct settings *s);
void settings_free(struct settings *s);

/* Reads the config file: `path` (from --config, a host path) if given,
 * else /etc/gpuready.conf inside the root (absent is fine). Options given
 * on the command line (cli, may be NULL) keep their command-line value.
 * Returns 0 or -errno with *err set. */
int settings_load_config(struct settings *s, const struct opt_seen *cli, const struct root *r, char **err);

/* The site expectations in s, for the checks (pointers into s). */
struct site_expect settings_expect(const struct settings *s);

/* nccl-tests' flags gpuready cannot honour, given with a value that asks
 * for them: NULL, or a message naming the flag and why (malloc'd). */
char *bench_flags_check(const struct settings *s);
/* What is wrong with bench copy's options that their table cannot say
 * (an unknown test name, with the nearest one): NULL, or a message
 * (malloc'd). */
char *copy_opts_check(const struct settings *s);
/* How long one node of cluster check may take (--hosts: each host from its
 * start; under a launcher: each rank after the rendezvous): --host-timeout,
 * and with --bench 180 s more for the copy measurement. */
int cluster_host_timeout(const struct settings *s);
/* The benchmark of collective coll (enum coll) the options ask for, into
 * *p: NULL, or what is wrong with them (malloc'd). */
struct bench_params;
char *bench_params_from(const struct settings *s, int coll, struct bench_params *p);

#endif
