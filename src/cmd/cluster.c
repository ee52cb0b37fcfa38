/* `gpuready cluster facts` and `gpuready cluster check` (docs/cluster.md):
 * options to a plan, the aggregate to an exit code. The record, the vote
 * and the renderers are src/cluster/'s. */
#include "cmd.h"
#include "cluster/hosts.h"
#include "cluster/node.h"
#include "config.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cmd_cluster(struct cmd_env *env)
{
	fprintf(stderr,
		"usage: gpuready cluster facts [options] | gpuready cluster check --snapshots DIR... [options] | "
		"gpuready cluster check --hosts HOSTLIST [options]\n"
		"(see `gpuready help cluster check`)\n");
	(void)env;
	return EXIT_TOOL_ERROR;
}

int cmd_cluster_facts(struct cmd_env *env)
{
	struct node_record rec;
	if (cluster_record_here(env, &rec))
		return EXIT_TOOL_ERROR;
	int r = record_write_json(&rec, stdout);
	record_free(&rec);
	return r < 0 ? EXIT_TOOL_ERROR : EXIT_OK;
}

/* The golden record of --expect; 0 or EXIT_TOOL_ERROR (said). */
static int read_expect(struct cmd_env *env, struct node_record *ret)
{
	const char *path = env->set->cluster.expect;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;
	int r = file_read_host(path, RECORD_MAX_BYTES + 1, &sb);
	if (r < 0) {
		fprintf(stderr, "%s: cannot read %s: %s\n", env->progname, path, strerror(-r));
		return EXIT_TOOL_ERROR;
	}
	if (record_parse(sb.buf, sb.len, ret, &err) < 0) {
		fprintf(stderr, "%s: %s is no node record (`gpuready cluster facts` writes one): %s\n", env->progname,
			path, err);
		return EXIT_TOOL_ERROR;
	}
	return 0;
}

/* Options of one way of finding the nodes, given with another: refused,
 * never silently ignored. 0 or EXIT_TOOL_ERROR (said). */
int cluster_mode_options(struct cmd_env *env)
{
	static const char *const launcher[] = { "rank", "nranks", "master", "bind", "token-file", "connect-timeout",
						"bootstrap", "node-name", NULL };
	static const char *const hosts[] = { "rsh", "parallel", "remote-gpuready", NULL };
	const struct settings *s = env->set;
	const char *mode = s->cluster.snapshots ? "--snapshots" : s->cluster.hosts ? "--hosts" : NULL;
	const char *bad = NULL, *where = NULL;
	for (size_t i = 0; mode && launcher[i] && !bad; i++)
		if (opt_seen_name(env->cli, launcher[i]))
			bad = launcher[i], where = "under a launcher (without --snapshots and --hosts)";
	for (size_t i = 0; !s->cluster.hosts && hosts[i] && !bad; i++)
		if (opt_seen_name(env->cli, hosts[i]))
			bad = hosts[i], where = "with --hosts";
	/* a snapshot holds no GPU to measure */
	for (size_t i = 0; s->cluster.snapshots && !bad && i < 2; i++)
		if (opt_seen_name(env->cli, i ? "bench" : "host-timeout"))
			bad = i ? "bench" : "host-timeout", where = "with --hosts or under a launcher";
	if (!bad)
		return 0;
	fprintf(stderr, "%s: --%s applies only %s, not %s\n", env->progname, bad, where,
		mode ? mode : "under a launcher");
	return EXIT_TOOL_ERROR;
}

/* Site expectations: the command line and --config only, the same for
 * every node (a snapshot's own /etc/gpuready.conf is not read). */
static int check_usage(struct cmd_env *env)
{
	struct settings *s = env->set;
	int r;
	if (s->cluster.snapshots && s->cluster.hosts) {
		fprintf(stderr, "%s: cluster check reads its nodes from --hosts HOSTLIST (through a remote shell), "
				"--snapshots DIR... (each taken with `gpuready snapshot DIR` on its node), or, with "
				"neither, from one process per node under a launcher: give one\n",
			env->progname);
		return EXIT_TOOL_ERROR;
	}
	if ((r = cluster_mode_options(env)) || (r = slurm_usage(env, true)))
		return r;
	if (s->cluster.snapshots ? !env->args.n : env->args.n > 0) {
		fprintf(stderr, "usage: gpuready cluster check --snapshots DIR [DIR...] [options] | "
				"gpuready cluster check --hosts HOSTLIST [options] | "
				"srun --ntasks-per-node=1 gpuready cluster check [options]\n");
		return EXIT_TOOL_ERROR;
	}
	_cleanup_free_ char *err = NULL;
	if (s->config && settings_load_config(s, env->cli, NULL, &err) < 0) {
		fprintf(stderr, "%s: %s\n", env->progname, err);
		return EXIT_TOOL_ERROR;
	}
	if (s->config_note)
		fprintf(stderr, "%s: %s\n", env->progname, s->config_note);
	return check_patterns_usage(env, NULL, true) || check_patterns_usage(env, NULL, false) ? EXIT_TOOL_ERROR : 0;
}

static int render(struct cmd_env *env, const struct node_record *recs, size_t n, const struct drift *d,
		  const struct node_record *golden, double now)
{
	struct settings *s = env->set;
	int ret = cluster_exit_code(recs, n, d), r;
	if (s->prom && (r = cluster_write_prom(recs, n, d, s->prom, now)) < 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", env->progname, s->prom, strerror(-r));
		ret = EXIT_TOOL_ERROR;
	}
	if (s->cluster.drain || s->cluster.resume)
		return slurm_script(env, recs, n, ret);
	if (s->json)
		r = cluster_write_json(recs, n, d, golden ? golden->node : NULL, stdout);
	else if (s->reason)
		r = cluster_write_reasons(recs, n, stdout);
	else
		r = cluster_write_text(recs, n, d, stdout);
	return r < 0 ? EXIT_TOOL_ERROR : ret;
}

/* The hosts of --hosts, each once; 0 or EXIT_TOOL_ERROR (said). */
int cluster_read_hosts(struct cmd_env *env, struct strv *ret)
{
	const char *v = env->set->cluster.hosts;
	_cleanup_free_ char *err = NULL;
	int r;
	if (v[0] == '@') {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		if ((r = file_read_host(v + 1, HOSTLIST_MAX_TEXT + 1, &sb)) < 0) {
			fprintf(stderr, "%s: --hosts: cannot read %s: %s\n", env->progname, v + 1, strerror(-r));
			return EXIT_TOOL_ERROR;
		}
		r = hostlist_parse_file(sb.buf, sb.len, ret, &err);
	} else {
		r = hostlist_expand(v, strlen(v), ret, &err);
	}
	if (r < 0 || !ret->n) {
		fprintf(stderr, "%s: --hosts: %s\n", env->progname, r < 0 ? err : "no host");
		return EXIT_TOOL_ERROR;
	}
	_cleanup_(strv_freep) struct strv dup = STRV_INIT;
	hostlist_unique(ret, &dup);
	for (size_t i = 0; i < dup.n; i++)
		fprintf(stderr, "%s: --hosts names %s more than once: asked once\n", env->progname, dup.v[i]);
	return 0;
}

/* --only and --skip as words for the hosts' `cluster facts`: check IDs
 * and areas only, since a remote shell (ssh) would expand glob characters
 * on the host; 0 or EXIT_TOOL_ERROR (said). */
int cluster_selection_words(struct cmd_env *env, struct strv *ret)
{
	const struct strv *lists[] = { &env->set->only, &env->set->skip };
	const char *names[] = { "--only", "--skip" };
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n; i++) {
			const char *p = lists[l]->v[i];
			if (!*p || strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._,-") != strlen(p) ||
			    p[0] == '-') {
				fprintf(stderr, "%s: %s %s: with --hosts, give check IDs and areas (rdma, gpu.fabric; "
						"comma-separated): a remote shell would expand glob characters on the host\n",
					env->progname, names[l], p);
				return EXIT_TOOL_ERROR;
			}
			strv_add(ret, names[l]);
			strv_add(ret, p);
		}
	return 0;
}

/* The records of the nodes: each snapshot read here, or each host asked
 * through the remote shell. *ret_labels: where each came from. */
static int collect(struct cmd_env *env, const struct cluster_node_opts *o, struct node_record **ret, size_t *ret_n,
		   struct strv *labels)
{
	struct settings *s = env->set;
	if (s->cluster.snapshots) {
		*ret_n = env->args.n;
		*ret = xcalloc(*ret_n + 1, sizeof(**ret));
		for (size_t i = 0; i < *ret_n; i++) {
			cluster_node_snapshot(env->args.v[i], o, &(*ret)[i]);
			strv_add(labels, env->args.v[i]);
		}
		return 0;
	}
	int r = cluster_read_hosts(env, labels);
	if (r)
		return r;
	_cleanup_(strv_freep) struct strv extra = STRV_INIT;
	if ((r = cluster_selection_words(env, &extra)))
		return r;
	/* each host measures its own GPUs, given the time to */
	if (s->cluster.bench)
		strv_add(&extra, "--bench");
	struct hosts_opts h = { .rsh = s->cluster.rsh, .remote = s->cluster.remote, .parallel = s->cluster.parallel,
				.timeout_s = cluster_host_timeout(s), .extra = (const char *const *)extra.v };
	_cleanup_free_ char *err = NULL;
	*ret_n = labels->n;
	*ret = xcalloc(*ret_n + 1, sizeof(**ret));
	if (hosts_collect((const char *const *)labels->v, labels->n, &h, *ret, &err) < 0) {
		fprintf(stderr, "%s: %s\n", env->progname, err);
		free(*ret);
		*ret = NULL;
		return EXIT_TOOL_ERROR;
	}
	return 0;
}

/* Unique names, sorted, the vote and the output; the exit code. */
static int aggregate(struct cmd_env *env, struct node_record *recs, size_t n, const struct strv *labels,
		     const struct node_record *golden, double now)
{
	_cleanup_(strv_freep) struct strv notes = STRV_INIT;
	cluster_nodes_unique(recs, n, (const char *const *)labels->v, &notes);
	for (size_t i = 0; i < notes.n; i++)
		fprintf(stderr, "%s: %s\n", env->progname, notes.v[i]);
	cluster_nodes_sort(recs, n);
	struct drift d;
	drift_compute(recs, n, golden, &d);
	int ret = render(env, recs, n, &d, golden, now);
	drift_free(&d);
	return ret;
}

int cmd_cluster_check(struct cmd_env *env)
{
	struct settings *s = env->set;
	struct node_record golden = { 0 };
	int ret = check_usage(env), bad_expect = 0;
	bool launched = !s->cluster.snapshots && !s->cluster.hosts;
	struct session ss;
	if (ret || (launched && (ret = cluster_job_open(env, &ss, "cluster check", NULL, 1))))
		return ret;
	/* only rank 0 reads --expect; under a launcher a bad file still lets
	 * every rank take part in the exchange before the run ends */
	bool root = !launched || ss.proc == 0;
	if (root && s->cluster.expect && (bad_expect = read_expect(env, &golden)) && !launched)
		return bad_expect;
	struct site_expect expect = settings_expect(s);
	double now = clock_unix();
	struct cluster_node_opts o = { .version = GPUREADY_VERSION, .now = now, .expect = &expect, .only = &s->only,
				       .skip = &s->skip, .python = s->python, .force = s->force };
	size_t n = 0;
	struct node_record *recs = NULL;
	_cleanup_(strv_freep) struct strv labels = STRV_INIT;
	ret = launched ? cluster_job_collect(env, &ss, &recs, &n, &labels) : collect(env, &o, &recs, &n, &labels);
	if (!ret && bad_expect)
		ret = bad_expect;
	else if (!ret && root)
		ret = aggregate(env, recs, n, &labels, s->cluster.expect ? &golden : NULL, now);
	if (launched)
		ret = session_close(&ss, ret);
	for (size_t i = 0; i < n; i++)
		record_free(&recs[i]);
	free(recs);
	record_free(&golden);
	return ret;
}
