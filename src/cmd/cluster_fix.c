/* `gpuready cluster fix` (docs/cluster.md, "cluster fix"): every node's
 * plan (`gpuready fix --json`), grouped by what it would do; with --apply
 * the changes in canary batches of --batch N nodes, stopping at the first
 * batch where a node's apply failed.
 *
 * The nodes come as for cluster check: --snapshots DIR... (each tree
 * planned in this process; nothing is applied to a snapshot), --hosts
 * HOSTLIST (each host runs `gpuready fix --json [--apply]` through the
 * remote shell, within --host-timeout), or one process per node under a
 * launcher (each plans its own node and sends the plan to rank 0, and
 * applies it when rank 0 says its batch may go). Grouping and output are
 * src/cluster/fixgroup.c and fixrender.c. */
#include "cmd.h"
#include "cmd/cluster_fix.h"
#include "cluster/fixgroup.h"
#include "cluster/hosts.h"
#include "cluster/node.h"
#include "cluster/testhook.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/parse.h"
#include "inventory/inventory.h"
#include "probe/probe.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* With --hosts each host's fix reads its own /etc/gpuready.conf: site
 * expectations given here would not reach it, so they are refused, never
 * ignored. 0 or EXIT_TOOL_ERROR (said). */
static int hosts_site_options(struct cmd_env *env)
{
	if (!env->set->cluster.hosts)
		return 0;
	const char *bad = opt_seen_name(env->cli, "config") ? "config" : NULL;
	for (size_t i = 0; !bad && i < site_opts.n; i++)
		if (opt_seen_name(env->cli, site_opts.rows[i].name))
			bad = site_opts.rows[i].name;
	if (!bad)
		return 0;
	fprintf(stderr, "%s: cluster fix: --%s does not reach the hosts of --hosts: each host's `gpuready fix` reads "
			"its own /etc/gpuready.conf (set it there)\n",
		env->progname, bad);
	return EXIT_TOOL_ERROR;
}

static int usage(struct cmd_env *env)
{
	struct settings *s = env->set;
	const char *bad = NULL;
	if (s->cluster.snapshots && s->cluster.hosts)
		bad = "give --hosts HOSTLIST, --snapshots DIR..., or neither (one process per node under a launcher)";
	else if (s->cluster.snapshots && s->cluster.apply)
		bad = "--snapshots plans the recorded trees and changes none: --apply goes with --hosts or under a "
		      "launcher";
	else if (opt_seen_name(env->cli, "batch") && !s->cluster.apply)
		bad = "--batch goes with --apply";
	if (bad) {
		fprintf(stderr, "%s: cluster fix: %s\n", env->progname, bad);
		return EXIT_TOOL_ERROR;
	}
	int r = cluster_mode_options(env);
	if (r || (r = hosts_site_options(env)))
		return r;
	if (s->cluster.snapshots ? !env->args.n : env->args.n > 0) {
		fprintf(stderr, "usage: gpuready cluster fix --snapshots DIR [DIR...] [options] | "
				"gpuready cluster fix --hosts HOSTLIST [--apply [--batch N]] [options] | "
				"srun --ntasks-per-node=1 gpuready cluster fix [--apply [--batch N]] [options]\n");
		return EXIT_TOOL_ERROR;
	}
	_cleanup_free_ char *err = NULL;
	if (s->config && settings_load_config(s, env->cli, NULL, &err) < 0) {
		fprintf(stderr, "%s: %s\n", env->progname, err);
		return EXIT_TOOL_ERROR;
	}
	return check_patterns_usage(env, NULL, true) || check_patterns_usage(env, NULL, false) ? EXIT_TOOL_ERROR : 0;
}

/* ---- --snapshots ---- */

static void plan_snapshot(struct cmd_env *env, const char *dir, struct fix_node *n)
{
	_cleanup_root_ struct root *root = NULL;
	_cleanup_inventory_ struct inventory *inv = NULL;
	_cleanup_free_ char *fallback = NULL, *why = NULL;
	if (cluster_snapshot_open(dir, env->set->force, &root, &fallback, &why) < 0) {
		fix_node_unreachable(n, fallback, why);
		return;
	}
	struct load_opts lo = { .parts = INV_ALL, .python = env->set->python, .live = probe_live };
	int r = inventory_load(root, &lo, &inv);
	if (r < 0) {
		_cleanup_free_ char *w = xasprintf("unreadable: %s: reading the machine failed: %s", dir, strerror(-r));
		fix_node_unreachable(n, fallback, w);
		return;
	}
	_cleanup_free_ char *name = node_name_clean(inv->kernel.hostname ? inv->kernel.hostname : fallback);
	struct json_object *jo = NULL;
	int exit = fix_json_of(env, root, inv, false, &jo);
	if (!jo) {
		_cleanup_free_ char *w = xasprintf("%s could not be planned (standard error says why)", dir);
		fix_node_unreachable(n, name, w);
		return;
	}
	fix_node_planned(n, name, jo, exit);
}

/* ---- --hosts ---- */

/* The words after the remote gpuready: fix --json [--apply], and the
 * options every host's fix takes as given here. */
static void remote_cmd(struct cmd_env *env, bool apply, const struct strv *selection, struct strv *ret)
{
	strv_add(ret, "fix");
	strv_add(ret, "--json");
	if (apply)
		strv_add(ret, "--apply");
	if (env->set->fix.allow_disruptive)
		strv_add(ret, "--allow-disruptive");
	if (env->set->strict)
		strv_add(ret, "--strict");
	for (size_t i = 0; i < selection->n; i++)
		strv_add(ret, selection->v[i]);
}

/* A host's plan from its answer. */
static void answer_plan(const struct host_answer *a, const char *host, size_t origin, struct fix_node *n)
{
	_cleanup_free_ char *why = NULL, *err = NULL;
	if (a->why)
		why = xstrdup(a->why);
	else if ((a->status != 0 && a->status != 1) || !a->out.len)
		why = host_answer_exited(a, "plan");
	else if (fix_node_parse(n, host, a->out.buf, a->out.len, a->status, &err) < 0)
		why = xstrdup(err);
	if (why)
		fix_node_unreachable(n, host, why);
	n->origin = origin;
}

/* A host's apply from its answer: applied, or failed and why. */
static void answer_apply(const struct host_answer *a, struct fix_node *n)
{
	_cleanup_free_ char *err = NULL;
	struct fix_node r = { 0 };
	if (a->why)
		n->apply_why = xstrdup(a->why);
	else if (a->status != 0 && a->status != 1)
		n->apply_why = host_answer_exited(a, "result");
	else if (fix_node_parse(&r, n->name, a->out.buf ? a->out.buf : "", a->out.len, a->status, &err) < 0)
		n->apply_why = xasprintf("%s%s%s", err, *a->err_line ? ": " : "", a->err_line);
	else
		fix_apply_failed(a->status, r.plan, &n->apply_why);
	n->apply = n->apply_why ? FIXA_FAILED : FIXA_APPLIED;
	n->apply_exit = a->status;
	fix_node_free(&r);
}

static struct hosts_opts hosts_opts_of(const struct settings *s)
{
	return (struct hosts_opts){ .rsh = s->cluster.rsh, .remote = s->cluster.remote,
				    .parallel = s->cluster.parallel, .timeout_s = s->cluster.host_timeout };
}

static int plan_hosts(struct cmd_env *env, struct strv *hosts, const struct strv *sel, struct fix_node **ret,
		      size_t *ret_n)
{
	_cleanup_(strv_freep) struct strv cmd = STRV_INIT;
	remote_cmd(env, false, sel, &cmd);
	struct hosts_opts h = hosts_opts_of(env->set);
	struct host_answer *ans = xcalloc(hosts->n + 1, sizeof(*ans));
	_cleanup_free_ char *err = NULL;
	int r = hosts_run((const char *const *)hosts->v, hosts->n, &h, (const char *const *)cmd.v, ans, &err);
	*ret = xcalloc(hosts->n + 1, sizeof(**ret));
	*ret_n = r < 0 ? 0 : hosts->n;
	for (size_t i = 0; i < hosts->n; i++) {
		if (r == 0)
			answer_plan(&ans[i], hosts->v[i], i, &(*ret)[i]);
		host_answer_free(&ans[i]);
	}
	free(ans);
	if (r < 0)
		fprintf(stderr, "%s: %s\n", env->progname, err);
	return r < 0 ? EXIT_TOOL_ERROR : 0;
}

/* --apply over --hosts: a batch at a time. */
static int apply_hosts(struct cmd_env *env, struct fix_node *v, size_t n, const struct strv *sel,
		       struct fix_rollout *ro)
{
	_cleanup_(strv_freep) struct strv cmd = STRV_INIT;
	remote_cmd(env, true, sel, &cmd);
	struct hosts_opts h = hosts_opts_of(env->set);
	_cleanup_free_ size_t *order = xcalloc(n + 1, sizeof(size_t));
	size_t m = fix_apply_order(v, n, order), b = ro->batch;
	ro->batches = (m + b - 1) / b;
	for (size_t k = 0; k < m && !ro->stopped; k += b) {
		size_t cnt = m - k < b ? m - k : b;
		const char **names = xcalloc(cnt + 1, sizeof(*names));
		struct host_answer *ans = xcalloc(cnt + 1, sizeof(*ans));
		for (size_t i = 0; i < cnt; i++)
			names[i] = v[order[k + i]].name;
		_cleanup_free_ char *err = NULL;
		int r = hosts_run(names, cnt, &h, (const char *const *)cmd.v, ans, &err);
		for (size_t i = 0; i < cnt; i++) {
			struct fix_node *x = &v[order[k + i]];
			x->batch = k / b + 1;
			if (r == 0)
				answer_apply(&ans[i], x);
			ro->stopped |= x->apply == FIXA_FAILED;
			host_answer_free(&ans[i]);
		}
		free(names);
		free(ans);
		if (r < 0) {
			fprintf(stderr, "%s: %s\n", env->progname, err);
			return EXIT_TOOL_ERROR;
		}
		ro->done += !ro->stopped;
		if (ro->stopped)
			fix_nodes_untouched(v, order, k + cnt, m);
	}
	return 0;
}

/* ---- output ---- */

/* Unique names (labels[i]: where node i came from), then name order. */
void cluster_fix_order(struct cmd_env *env, struct fix_node *v, size_t n, const struct strv *labels)
{
	_cleanup_(strv_freep) struct strv notes = STRV_INIT;
	fix_nodes_unique(v, n, (const char *const *)labels->v, &notes);
	for (size_t i = 0; i < notes.n; i++)
		fprintf(stderr, "%s: %s\n", env->progname, notes.v[i]);
	fix_nodes_sort(v, n);
}

int cluster_fix_render(struct cmd_env *env, const struct fix_node *v, size_t n, const struct fix_rollout *ro)
{
	int r = env->set->json ? fix_cluster_json(v, n, ro, stdout) : fix_cluster_text(v, n, ro, stdout);
	return r < 0 ? EXIT_TOOL_ERROR : fix_cluster_exit(v, n, ro);
}

/* --snapshots or --hosts: the nodes' plans, the batches, the output. */
static int fix_offline(struct cmd_env *env)
{
	struct settings *s = env->set;
	struct fix_node *v = NULL;
	size_t n = 0;
	struct fix_rollout ro = { .asked = s->cluster.apply, .batch = (size_t)s->fix.batch };
	_cleanup_(strv_freep) struct strv labels = STRV_INIT, sel = STRV_INIT;
	int ret = 0;
	if (s->cluster.snapshots) {
		n = env->args.n;
		v = xcalloc(n + 1, sizeof(*v));
		for (size_t i = 0; i < n; i++) {
			plan_snapshot(env, env->args.v[i], &v[i]);
			v[i].origin = i;
			strv_add(&labels, env->args.v[i]);
		}
	} else if (!(ret = cluster_read_hosts(env, &labels)) && !(ret = cluster_selection_words(env, &sel))) {
		ret = plan_hosts(env, &labels, &sel, &v, &n);
	}
	if (!ret)
		cluster_fix_order(env, v, n, &labels);
	if (!ret && ro.asked)
		ret = apply_hosts(env, v, n, &sel, &ro);
	if (!ret)
		ret = cluster_fix_render(env, v, n, &ro);
	for (size_t i = 0; i < n; i++)
		fix_node_free(&v[i]);
	free(v);
	return ret;
}

int cmd_cluster_fix(struct cmd_env *env)
{
	int r = usage(env);
	if (r)
		return r;
	if (env->set->cluster.snapshots || env->set->cluster.hosts)
		return fix_offline(env);
	return cluster_fix_launched(env);
}
