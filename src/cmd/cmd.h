/* The commands. One file per command under src/cmd/, one entry point each;
 * the table in main.c lists them.
 *
 * Adding a command: write src/cmd/<name>.c with `int cmd_<name>(struct
 * cmd_env *env)`, declare it here, add one row to `commands[]` in main.c
 * (name, handler, option scope, argument bounds, one-line summary, busybox
 * alias if any), add it to meson.build, and add a CLI test. Handlers return
 * the process exit code: 0 ok, 1 a check failed, 2 the tool could not run
 * (EXIT_* below); they print their own output and errors. */
#ifndef GPUREADY_CMD_H
#define GPUREADY_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "core/exitcodes.h"
#include "job/session.h"
#include "core/strv.h"
#include "opts/settings.h"

struct command;

struct cmd_env {
	const struct command *cmd;
	struct settings *set;
	const struct opt_seen *cli; /* the options given on the command line */
	struct strv args;        /* positional arguments */
	const char *progname;
	int argc;                /* the whole command line, for nccl-tests' JSON (-J) */
	char *const *argv;
};

struct command {
	const char *name;
	int (*fn)(struct cmd_env *env);
	const struct opt_table *const *opts; /* the option tables it reads, NULL-terminated */
	unsigned scope;          /* which of their rows it takes */
	int min_args, max_args;
	const char *usage;       /* argument synopsis */
	const char *summary;
	const char *alias;       /* busybox-style program name, or NULL */
	bool (*alias_match)(const char *progname); /* more program names (all_reduce_perf ...) */
	const char *description; /* longer help text for --help and the man page */
	bool hidden;
	const struct command *subs; /* commands under this one ("bench net": name is the whole path) */
	size_t n_subs;
};

extern const struct command commands[];
extern const size_t n_commands;
/* Every command, each followed by its subcommands: prev NULL gives the
 * first, NULL comes after the last. */
const struct command *command_next(const struct command *prev);

int cmd_check(struct cmd_env *env);
int cmd_rdma(struct cmd_env *env);
int cmd_gpu(struct cmd_env *env);
int cmd_gpudirect(struct cmd_env *env);
int cmd_topo(struct cmd_env *env);
int cmd_snapshot(struct cmd_env *env);
int cmd_help(struct cmd_env *env);
int cmd_version(struct cmd_env *env);
int cmd_list_checks(struct cmd_env *env);
int cmd_man(struct cmd_env *env);
int cmd_bench(struct cmd_env *env);
int cmd_nccl(struct cmd_env *env);
int cmd_nccl_explain(struct cmd_env *env);
int cmd_bench_net(struct cmd_env *env);
int cmd_bench_copy(struct cmd_env *env);
int cmd_cluster(struct cmd_env *env);
int cmd_cluster_check(struct cmd_env *env);
int cmd_cluster_facts(struct cmd_env *env);
int cmd_cluster_links(struct cmd_env *env);
int cmd_cluster_nccl(struct cmd_env *env);
int cmd_fix(struct cmd_env *env);
int cmd_cluster_fix(struct cmd_env *env);
struct json_object;
struct inventory;
struct root;
/* `fix --json`'s object for root (its checks, the plan, and with apply_it
 * the changes and the checks again): fix's exit code, *ret NULL when it
 * could not plan (said). cmd/fix.c */
int fix_json_of(struct cmd_env *env, struct root *root, const struct inventory *inv, bool apply_it,
		struct json_object **ret);
/* This node's record (cluster facts, launched cluster check, check
 * --health; cmd/cluster_job.c): the configured root's checks, named by
 * --node-name, $SLURMD_NODENAME (live) or the host name.
 * 0, or EXIT_TOOL_ERROR (said on standard error). */
struct node_record;
int cluster_record_here(struct cmd_env *env, struct node_record *ret);
/* The same from a loaded inventory; slurm: $SLURMD_NODENAME where it names
 * this node (NULL otherwise). */
struct inventory;
struct root;
int cluster_record_of(struct cmd_env *env, const struct inventory *inv, const struct root *root, const char *slurm,
		      struct node_record *ret);
/* cluster check under a launcher (cmd/cluster_job.c). Open: this process
 * joins the run (0, or the exit code after saying why). Collect: every process sends
 * its record; process 0 gets them all (*ret, *ret_n, labels: which rank
 * each came from), the others none. Ends the run itself when this process
 * cannot send. */
int cluster_job_open(struct cmd_env *env, struct session *ss, const char *cmdname, const char *backend, int local);
/* The name of process proc's node: its GPUREADY_TEST_RANK_TREES tree,
 * --node-name, $SLURMD_NODENAME or the host name (malloc'd). */
char *cluster_job_node_name(struct cmd_env *env, int proc);
/* Process proc's GPUREADY_TEST_RANK_TREES tree (malloc'd), or NULL. */
char *cluster_job_tree(int proc);
int cluster_job_collect(struct cmd_env *env, struct session *ss, struct node_record **ret, size_t *ret_n,
			struct strv *labels);
/* Shared by cluster check and cluster fix (cmd/cluster.c), each 0 or
 * EXIT_TOOL_ERROR (said): options of another way of finding the nodes
 * are refused; the hosts of --hosts, each once; --only and --skip as
 * words for the hosts' command (check IDs and areas only). */
int cluster_mode_options(struct cmd_env *env);
int cluster_read_hosts(struct cmd_env *env, struct strv *ret);
int cluster_selection_words(struct cmd_env *env, struct strv *ret);
/* all_reduce_perf, all_gather_perf, ...: the collective benchmarks' names. */
bool bench_alias(const char *progname);

/* Shared by the check commands: runs the checks of `area` (NULL = all) on
 * the configured root and prints the report. */
int run_check_command(struct cmd_env *env, const char *area);

/* --only and --skip: a pattern that selects no check is a usage error.
 * With cli, those given on the command line must select a check of area
 * (any when NULL); without, those read from the config file (which every
 * command reads) a check of any area. Prints why; returns 0 or
 * EXIT_TOOL_ERROR. */
int check_patterns_usage(struct cmd_env *env, const char *area, bool cli);

/* Opens the configured root, reads the config file and loads the
 * inventory parts; prints its own errors. Returns 0 or EXIT_TOOL_ERROR. */
struct root;
struct inventory;
int load_for_command(struct cmd_env *env, unsigned parts, struct root **ret_root, struct inventory **ret_inv);
/* The same; live false runs none of the live probes (probe_live). */
int load_for_command_live(struct cmd_env *env, unsigned parts, bool live, struct root **ret_root,
			  struct inventory **ret_inv);

/* --drain and --resume (cmd/slurm_act.c, docs/cluster.md). */
struct slurm_act_opts {
	const char *scontrol;
	bool drain, resume, apply;
	const char *no_resume;  /* why a node that passes is still not resumed (check --health: its live
				 * probes were cut off or failed), or NULL */
};
struct node_record;
/* What Slurm is told about one node: a failing node drained, a passing
 * or warning one that gpuready drained resumed, comments for the others;
 * printed to out as shell lines, run with apply. 0, or -1 when a command
 * failed or the node's Slurm state could not be read (said in out). */
int slurm_act(const struct slurm_act_opts *o, const struct node_record *rec, FILE *out);
/* `cluster check --drain/--resume`: the shell script of scontrol commands
 * (run with --apply) instead of the report, the summary its first comment;
 * ret is the aggregate's exit code, 2 when an scontrol command failed. */
int slurm_script(struct cmd_env *env, const struct node_record *recs, size_t n, int ret);
/* The options' combinations (cluster: `cluster check`, else `check`);
 * prints why; 0 or EXIT_TOOL_ERROR. */
int slurm_usage(struct cmd_env *env, bool cluster);
/* `check --health` (cmd/health.c). */
int run_health(struct cmd_env *env);

/* Prints `gpuready <cmd> --help`. */
void print_command_help(FILE *out, const struct command *c);

/* The session plan of the multi-process commands (bench, nccl) from
 * their options (cmd/bench.c). */
struct session_plan cmd_session_plan(const struct settings *s);

#endif
