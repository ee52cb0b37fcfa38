/* `gpuready cluster check` as one process per node under a launcher
 * (docs/cluster.md, "Under a launcher"): srun, mpirun, torchrun or a
 * Kubernetes Indexed Job start one process per node; they meet over the
 * job's control plane (src/job/), whose HELLO carries gpuready's version
 * (a run with mixed versions is refused, naming the odd ranks). Every
 * process runs the node checks and sends its record to process 0, which
 * aggregates them exactly like --snapshots and --hosts do.
 *
 * Nothing a rank sends is trusted: its part is bounded by the control
 * plane (RECORD_MAX_BYTES and a header), parsed by the strict record
 * parser, and a rank that sends nothing by --host-timeout is a row of its
 * own; a rank that disconnects ends the run naming it (src/job/).
 *
 * This node's own record (cluster_record_here, cluster_record_of) is here
 * too: `cluster facts`, each process under a launcher and `check --health`
 * build it the same way. */
#define _GNU_SOURCE
#include "cmd.h"
#include "cluster/node.h"
#include "cluster/testhook.h"
#include "config.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "core/tcp.h"
#include "inventory/inventory.h"
#include "job/launch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* A part on the wire: one kind byte, then the record's JSON or the text
 * of why this rank has none. */
#define PART_RECORD 'R'
#define PART_ERROR 'E'

static const char *getenv_fn(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

char *cluster_job_tree(int proc)
{
	_cleanup_free_ char *dir = NULL, *name = NULL, *err = NULL;
	return cluster_test_tree(proc, &dir, &name, &err) > 0 ? TAKE_PTR(dir) : NULL;
}

/* As cluster check names its node: --node-name, the test tree's name,
 * $SLURMD_NODENAME, the host name. */
char *cluster_job_node_name(struct cmd_env *env, int proc)
{
	_cleanup_free_ char *dir = NULL, *name = NULL, *err = NULL;
	if (env->set->cluster.node_name)
		return xstrdup(env->set->cluster.node_name);
	if (cluster_test_tree(proc, &dir, &name, &err) > 0)
		return TAKE_PTR(name);
	const char *slurm = getenv("SLURMD_NODENAME");
	if (slurm && *slurm)
		return xstrdup(slurm);
	char host[256];
	tcp_hostname(host, sizeof(host));
	return xstrdup(host);
}

int cluster_record_of(struct cmd_env *env, const struct inventory *inv, const struct root *root, const char *slurm,
		      struct node_record *ret)
{
	struct settings *s = env->set;
	struct site_expect expect = settings_expect(s);
	struct cluster_node_opts o = {
		.version = GPUREADY_VERSION, .now = clock_unix(), .expect = &expect, .only = &s->only, .skip = &s->skip,
		.python = s->python, .node_name = s->cluster.node_name ? s->cluster.node_name : slurm && *slurm ? slurm : NULL,
		.fallback_name = "unknown", .root_dir = root_dir(root),
	};
	_cleanup_free_ char *err = NULL;
	if (cluster_node_record(inv, &o, ret, &err) < 0) {
		fprintf(stderr, "%s: %s\n", env->progname, err);
		return EXIT_TOOL_ERROR;
	}
	return 0;
}

int cluster_record_here(struct cmd_env *env, struct node_record *ret)
{
	_cleanup_root_ struct root *root = NULL;
	_cleanup_inventory_ struct inventory *inv = NULL;
	if (check_patterns_usage(env, NULL, true) || load_for_command(env, INV_ALL, &root, &inv) ||
	    check_patterns_usage(env, NULL, false))
		return EXIT_TOOL_ERROR;
	/* Slurm's name for the node where Slurm runs it (srun sets
	 * SLURMD_NODENAME in the job's environment), else the host name */
	return cluster_record_of(env, inv, root, root_is_live(root) ? getenv("SLURMD_NODENAME") : NULL, ret);
}

/* This process's part: its record, or why it has none. */
static void my_part(struct cmd_env *env, int proc, struct strbuf *out)
{
	struct settings *s = env->set;
	_cleanup_free_ char *dir = NULL, *name = NULL, *err = NULL, *buf = NULL;
	int r = cluster_test_tree(proc, &dir, &name, &err);
	if (r < 0) {
		strbuf_addf(out, "%c%s", PART_ERROR, err);
		return;
	}
	if (r > 0) {
		cluster_test_delay(proc);
		free(s->sysroot);
		s->sysroot = xstrdup(dir);
		if (!s->cluster.node_name)
			s->cluster.node_name = xstrdup(name);
	}
	struct node_record rec = { 0 };
	size_t len = 0;
	FILE *f = NULL;
	if (cluster_record_here(env, &rec) != 0)
		strbuf_addf(out, "%ccould not run the node checks (its standard error says why)", PART_ERROR);
	else if (!(f = open_memstream(&buf, &len)))
		strbuf_addf(out, "%ccould not write its record: %s", PART_ERROR, strerror(errno));
	else if (record_write_json(&rec, f) < 0 || fclose(f))
		strbuf_addf(out, "%ccould not write its record", PART_ERROR);
	else if (len > RECORD_MAX_BYTES)
		strbuf_addf(out, "%cits record is %zu bytes, more than the %u a record may have", PART_ERROR, len,
			    RECORD_MAX_BYTES);
	else {
		strbuf_addch(out, PART_RECORD);
		strbuf_add(out, buf, len);
	}
	record_free(&rec);
}

/* Process 0: the record of each part, or an unreachable row saying why
 * not; labels[p] says which rank it came from. */
static void parts_to_records(struct session *ss, struct job_part *parts, int timeout, struct node_record *recs,
			     struct strv *labels)
{
	const struct job_member *m = job_members(ss->cl);
	for (int p = 0; p < ss->nprocs; p++) {
		char who[160];
		job_describe(ss->cl, p, who, sizeof(who));
		strv_add(labels, who);
		_cleanup_free_ char *name = node_name_clean(m[p].host), *err = NULL, *why = NULL;
		struct job_part *x = &parts[p];
		if (!x->buf && x->timed_out)
			why = xasprintf("%s sent no record within %d s of the rendezvous (--host-timeout)", who, timeout);
		else if (!x->buf)
			why = xasprintf("%s %s", who, x->err);
		else if (!x->len || (x->buf[0] != PART_RECORD && x->buf[0] != PART_ERROR))
			why = xasprintf("%s sent no node record", who);
		else if (x->buf[0] == PART_ERROR)
			why = xasprintf("%s: %s", who, str_printable(strndupa(x->buf + 1, x->len > 201 ? 200 : x->len - 1), false));
		else if (record_parse(x->buf + 1, x->len - 1, &recs[p], &err) < 0)
			why = xasprintf("%s sent no node record: %s", who, err);
		if (why)
			record_unreachable(&recs[p], name, why);
		free(x->buf);
		free(x->err);
	}
	cluster_nodes_refuse_shared(recs, (size_t)ss->nprocs, (const char *const *)labels->v);
}

int cluster_job_collect(struct cmd_env *env, struct session *ss, struct node_record **ret, size_t *ret_n,
			struct strv *labels)
{
	struct settings *s = env->set;
	_cleanup_strbuf_ struct strbuf mine = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;
	/* process 0 reports a rank that sends nothing by --host-timeout as a
	 * row and leaves the phase then; its watchdog names process 0 itself
	 * if its own checks outlast the deadline, and the phase names a rank
	 * that disconnects */
	double deadline = clock_now() + cluster_host_timeout(s);
	job_phase(ss->cl, "the node checks", deadline);
	my_part(env, ss->proc, &mine);
	struct job_part *parts = ss->proc == 0 ? xcalloc((size_t)ss->nprocs, sizeof(*parts)) : NULL;
	int r = job_gatherv(ss->cl, mine.buf, mine.len, parts, deadline, &err);
	job_phase_done(ss->cl);
	if (r < 0)
		session_fail(ss, err, r);
	*ret_n = ss->proc == 0 ? (size_t)ss->nprocs : 0;
	*ret = xcalloc(*ret_n + 1, sizeof(**ret));
	if (ss->proc == 0)
		parts_to_records(ss, parts, cluster_host_timeout(s), *ret, labels);
	free(parts);
	return 0;
}

#define ONE_PER_NODE                                                                                                   \
	"runs one process per node (`srun --ntasks-per-node=1`, `mpirun --map-by ppr:1:node`, "                      \
	"`torchrun --nproc-per-node=1`)"

/* Under Open MPI, MPICH or PMIx with nothing naming rank 0's address, only
 * MPI can tell the processes where rank 0 listens. */
static bool mpi_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

/* The backend that brings the processes together (--bootstrap): "socket"
 * (gpuready's control plane over the launcher's variables) or "mpi"; NULL
 * after saying why when this is no launched run. */
static const char *bootstrap(struct cmd_env *env, const char *cmdname, const char *want)
{
	struct settings *s = env->set;
	if (want && strcmp(want, "mpi") && !strcmp(s->cluster.bootstrap, "mpi"))
		fprintf(stderr, "%s: --bootstrap mpi goes with --backend mpi\n", env->progname);
	if (!strcmp(s->cluster.bootstrap, "mpi") || (want && !strcmp(want, "mpi")))
		return want && strcmp(want, "mpi") ? NULL : "mpi";
	struct launch_cli cli = { .rank = s->rank, .nranks = s->nranks, .master = s->master };
	struct launch l;
	_cleanup_free_ char *err = NULL;
	if (launch_detect(&cli, getenv_fn, NULL, &l, &err) < 0) {
		if (!strcmp(s->cluster.bootstrap, "auto") && mpi_launched() && !want)
			return "mpi";
		fprintf(stderr, "%s: %s\n", env->progname, err);
		return NULL;
	}
	bool single = !strcmp(l.source, "single");
	int local = l.local_size;
	launch_free(&l);
	if (single) {
		if (!strcmp(cmdname, "cluster check"))
			fprintf(stderr, "%s: cluster check needs its nodes: --hosts HOSTLIST (through a remote shell), "
					"--snapshots DIR..., or one process per node under a launcher (`srun "
					"--ntasks-per-node=1 gpuready cluster check`, `mpirun --map-by ppr:1:node ...`, "
					"torchrun, a Kubernetes Indexed Job)\n",
				env->progname);
		else
			fprintf(stderr, "%s: %s runs as one process per node under a launcher (`srun "
					"--ntasks-per-node=1 gpuready %s`, `mpirun --map-by ppr:1:node ...`, torchrun, a "
					"Kubernetes Indexed Job, or --rank R --nranks N --master HOST[:PORT] on each node)\n",
				env->progname, cmdname, cmdname);
		return NULL;
	}
	if (local > 1 && !cluster_test_trees()) {
		fprintf(stderr, "%s: the launcher started %d processes on this node: %s " ONE_PER_NODE "\n",
			env->progname, local, cmdname);
		return NULL;
	}
	return want ? want : "socket";
}

/* Rank 0 holds one connection per process: the soft limit on open files (1024 on most
 * distributions) goes up to the hard one, which launchers usually set high (`ulimit -Hn`). */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Process 0, when the run ends early (a rank missing, lost or of another version):
 * --prom FILE must not keep the last result, which would read as current. */
static void on_fatal(void *ctx, const char *why)
{
	const struct cmd_env *env = ctx;
	(void)why;
	if (env->set->prom)
		(void)cluster_write_prom_failed(env->set->prom, clock_unix());
}

int cluster_job_open(struct cmd_env *env, struct session *ss, const char *cmdname, const char *want, int local)
{
	const char *backend = bootstrap(env, cmdname, want);
	if (!backend)
		return EXIT_TOOL_ERROR;
	raise_nofile();
	struct session_plan plan = cmd_session_plan(env->set);
	/* a part is one record and its kind byte; the data header and slack */
	plan.max_frame = RECORD_MAX_BYTES + 4096;
	/* the others wait for process 0's verdict while it waits for records */
	plan.verdict_wait = cluster_host_timeout(env->set) + 60.0;
	int r = session_open(ss, &plan, cmdname, backend, local, on_fatal, env);
	if (r)
		return r;
	/* the launcher's count of processes per node may be missing (srun -n
	 * without --ntasks-per-node) or not asked (MPI): the roster says
	 * which processes are a node's second */
	const struct job_member *m = job_members(ss->cl);
	_cleanup_strbuf_ struct strbuf extra = STRBUF_INIT;
	for (int p = 0; p < ss->nprocs && !cluster_test_trees(); p++)
		if (m[p].local_rank > 0)
			strbuf_addf(&extra, "%srank %d (%s, local rank %d)", extra.len ? ", " : "", p, m[p].host,
				    m[p].local_rank);
	if (extra.len) {
		if (ss->proc == 0)
			session_error(ss, "more than one process on a node: %s; %s " ONE_PER_NODE, extra.buf, cmdname);
		session_close(ss, EXIT_TOOL_ERROR);
		return EXIT_TOOL_ERROR;
	}
	return 0;
}
