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
 * own; a rank that disconnects ends the run naming it (src/job/). */
#define _GNU_SOURCE
#include "cmd.h"
#include "cluster/node.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "core/tcp.h"
#include "job/launch.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* A part on the wire: one kind byte, then the record's JSON or the text
 * of why this rank has none. */
#define PART_RECORD 'R'
#define PART_ERROR 'E'

static const char *getenv_fn(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

/* The test-only tree of process `proc` (docs/cluster.md, "Testing"): the
 * proc-th directory, in name order, of $GPUREADY_TEST_RANK_TREES, which
 * also names the node. 0 (nothing set), 1 (*dir and *name set, malloc'd),
 * or -ENOENT with *err. */
static const char *test_trees(void)
{
	const char *v = getenv("GPUREADY_TEST_RANK_TREES");
	return v && *v ? v : NULL;
}

static int test_tree(int proc, char **dir, char **name, char **err)
{
	const char *base = test_trees();
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

char *cluster_job_tree(int proc)
{
	_cleanup_free_ char *dir = NULL, *name = NULL, *err = NULL;
	return test_tree(proc, &dir, &name, &err) > 0 ? TAKE_PTR(dir) : NULL;
}

char *cluster_job_node_name(struct cmd_env *env, int proc)
{
	_cleanup_free_ char *dir = NULL, *name = NULL, *err = NULL;
	if (test_tree(proc, &dir, &name, &err) > 0)
		return TAKE_PTR(name);
	if (env->set->cluster.node_name)
		return xstrdup(env->set->cluster.node_name);
	const char *slurm = getenv("SLURMD_NODENAME");
	if (slurm && *slurm)
		return xstrdup(slurm);
	char host[256];
	tcp_hostname(host, sizeof(host));
	return xstrdup(host);
}

/* This process's part: its record, or why it has none. */
static void my_part(struct cmd_env *env, int proc, struct strbuf *out)
{
	struct settings *s = env->set;
	_cleanup_free_ char *dir = NULL, *name = NULL, *err = NULL, *buf = NULL;
	int r = test_tree(proc, &dir, &name, &err);
	if (r < 0) {
		strbuf_addf(out, "%c%s", PART_ERROR, err);
		return;
	}
	if (r > 0) {
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
	else {
		strbuf_addch(out, PART_RECORD);
		strbuf_add(out, buf, len);
	}
	record_free(&rec);
}

/* Process 0: the record of each part, or an unreachable row saying why
 * not; labels[p] says which rank it came from. */
static void parts_to_records(struct session *ss, struct job_part *parts, struct node_record *recs,
			     struct strv *labels)
{
	const struct job_member *m = job_members(ss->cl);
	for (int p = 0; p < ss->nprocs; p++) {
		char who[160];
		job_describe(ss->cl, p, who, sizeof(who));
		strv_add(labels, who);
		_cleanup_free_ char *name = node_name_clean(m[p].host), *err = NULL, *why = NULL;
		struct job_part *x = &parts[p];
		if (!x->buf)
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
}

int cluster_job_collect(struct cmd_env *env, struct session *ss, struct node_record **ret, size_t *ret_n,
			struct strv *labels)
{
	struct settings *s = env->set;
	_cleanup_strbuf_ struct strbuf mine = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;
	/* no deadline of the watchdog's: process 0 reports a rank that sends
	 * nothing by --host-timeout as a row; the phase names a rank that
	 * disconnects */
	double deadline = clock_now() + s->cluster.host_timeout;
	job_phase(ss->cl, "the node checks", 0);
	my_part(env, ss->proc, &mine);
	struct job_part *parts = ss->proc == 0 ? xcalloc((size_t)ss->nprocs, sizeof(*parts)) : NULL;
	int r = job_gatherv(ss->cl, mine.buf, mine.len, parts, deadline, &err);
	job_phase_done(ss->cl);
	if (r < 0)
		session_fail(ss, err, r);
	*ret_n = ss->proc == 0 ? (size_t)ss->nprocs : 0;
	*ret = xcalloc(*ret_n + 1, sizeof(**ret));
	if (ss->proc == 0)
		parts_to_records(ss, parts, *ret, labels);
	free(parts);
	return 0;
}

/* Under Open MPI, MPICH or PMIx with nothing naming rank 0's address, only
 * MPI can tell the processes where rank 0 listens. */
static bool mpi_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

/* The backend that brings the processes together (--bootstrap): "socket"
 * (gpuready's control plane over the launcher's variables) or "mpi"; NULL
 * after saying why when this is no launched run. */
static const char *bootstrap(struct cmd_env *env, const char *cmdname)
{
	struct settings *s = env->set;
	if (!strcmp(s->cluster.bootstrap, "mpi"))
		return "mpi";
	struct launch_cli cli = { .rank = s->rank, .nranks = s->nranks, .master = s->master };
	struct launch l;
	_cleanup_free_ char *err = NULL;
	if (launch_detect(&cli, getenv_fn, NULL, &l, &err) < 0) {
		if (!strcmp(s->cluster.bootstrap, "auto") && mpi_launched())
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
	if (local > 1 && !test_trees()) {
		fprintf(stderr, "%s: the launcher started %d processes on this node: %s runs one per node "
				"(`srun --ntasks-per-node=1`, `mpirun --map-by ppr:1:node`, `torchrun "
				"--nproc-per-node=1`)\n",
			env->progname, local, cmdname);
		return NULL;
	}
	return "socket";
}

/* Rank 0 holds one connection per process: the soft limit on open files
 * (1024 on most distributions) goes up to the hard one, which a launcher
 * on a large cluster usually sets high (`ulimit -Hn`). */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int cluster_job_open(struct cmd_env *env, struct session *ss, const char *cmdname)
{
	const char *backend = bootstrap(env, cmdname);
	if (!backend)
		return EXIT_TOOL_ERROR;
	raise_nofile();
	struct session_plan plan = cmd_session_plan(env->set);
	/* a part is one record and its kind byte; the data header and slack */
	plan.max_frame = RECORD_MAX_BYTES + 4096;
	return session_open(ss, &plan, cmdname, backend, 1, NULL, NULL);
}
