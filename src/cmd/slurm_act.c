/* --drain and --resume of `cluster check` and `check --health`
 * (docs/cluster.md, "Slurm: drain and resume"): per node, what Slurm is
 * told. Without --apply the commands are printed as a shell script (one
 * `scontrol` line per action, `#` comments for the nodes left alone);
 * with --apply each is run (cluster/slurm.c: no shell, a deadline) and a
 * comment says how it went. As LBNL NHC does (node-mark-offline,
 * node-mark-online), a node Slurm shows drained for another reason is
 * neither drained again (which would replace that reason) nor resumed. */
#include "cmd.h"
#include "cluster/cluster.h"
#include "cluster/slurm.h"
#include "core/cleanup.h"

#include <stdlib.h>
#include <string.h>

/* s for a comment line: printable ASCII, at most 200 bytes. */
static char *clean(const char *s)
{
	char *c = xstrndup(s ? s : "", 200);
	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	return c;
}

/* Prints argv and, with apply, runs it; 0, or -1 when it failed (said). */
static int act(const struct slurm_act_opts *o, const char *node, const struct strv *argv, const char *done,
	       FILE *out)
{
	_cleanup_free_ char *line = slurm_command_line(argv), *err = NULL;
	fprintf(out, "%s\n", line);
	if (!o->apply)
		return 0;
	if (slurm_run(argv, NULL, &err) < 0) {
		fprintf(out, "# %s: FAILED: %s\n", node, err);
		return -1;
	}
	fprintf(out, "# %s: %s\n", node, done);
	return 0;
}

static int drain(const struct slurm_act_opts *o, const struct node_record *rec, FILE *out)
{
	_cleanup_free_ char *reason = slurm_reason(rec->reason), *err = NULL;
	_cleanup_(strv_freep) struct strv argv = STRV_INIT;
	slurm_drain_argv(o->scontrol, rec->node, reason, &argv);
	if (o->apply) {
		struct slurm_node st;
		if (slurm_query(o->scontrol, rec->node, &st, &err) < 0) {
			fprintf(out, "# %s: FAILED: not drained: cannot read its Slurm state: %s\n", rec->node, err);
			return -1;
		}
		bool other = st.drain && !st.by_gpuready;
		_cleanup_free_ char *why = clean(st.reason);
		slurm_node_free(&st);
		if (other) {
			fprintf(out, "# %s: fails, left alone: already drained for another reason (%s)\n", rec->node, why);
			return 0;
		}
	}
	return act(o, rec->node, &argv, "drained", out);
}

static int resume(const struct slurm_act_opts *o, const struct node_record *rec, FILE *out)
{
	_cleanup_free_ char *err = NULL;
	struct slurm_node st;
	if (slurm_query(o->scontrol, rec->node, &st, &err) < 0) {
		fprintf(out, "# %s: FAILED: cannot read its Slurm state: %s\n", rec->node, err);
		return -1;
	}
	_cleanup_free_ char *why = clean(st.reason), *state = clean(st.state);
	bool mine = st.by_gpuready, drained = st.drain;
	bool reboot = strstr(st.state, "REBOOT") != NULL;
	slurm_node_free(&st);
	if (!drained)
		return 0;
	if (!mine) {
		fprintf(out, "# %s: %s, left alone: drained for another reason (%s)\n", rec->node,
			node_state_name(record_state(rec)), why);
		return 0;
	}
	if (reboot) {
		/* resuming would cancel the pending reboot (NHC's node-mark-online) */
		fprintf(out, "# %s: left drained: a reboot is pending (%s)\n", rec->node, state);
		return 0;
	}
	if (o->no_resume) {
		/* a pass that could not run every check is no reason to resume:
		 * a hung probe is often the very fault the node was drained for */
		fprintf(out, "# %s: left drained: %s\n", rec->node, o->no_resume);
		return 0;
	}
	_cleanup_(strv_freep) struct strv argv = STRV_INIT;
	slurm_resume_argv(o->scontrol, rec->node, &argv);
	return act(o, rec->node, &argv, "resumed", out);
}

int slurm_act(const struct slurm_act_opts *o, const struct node_record *rec, FILE *out)
{
	enum node_state s = record_state(rec);
	if (s == NODE_UNREACHABLE) {
		_cleanup_free_ char *why = clean(rec->why);
		fprintf(out, "# %s: unreachable, not drained (slurmctld sets a node whose slurmd does not answer DOWN "
			     "itself): %s\n",
			rec->node, why);
		return 0;
	}
	if (s == NODE_FAIL)
		return o->drain ? drain(o, rec, out) : 0;
	if (s == NODE_WARN && o->drain) {
		_cleanup_free_ char *why = clean(rec->reason);
		fprintf(out, "# %s: warns, not drained: %s\n", rec->node, why);
	}
	return o->resume ? resume(o, rec, out) : 0;
}

/* --drain, --resume: a shell script of scontrol commands instead of the
 * report, its first line the summary as a comment. An scontrol command
 * that failed makes the exit status 2. */
int slurm_script(struct cmd_env *env, const struct node_record *recs, size_t n, int ret)
{
	const struct settings *s = env->set;
	struct slurm_act_opts o = { .scontrol = s->cluster.scontrol, .drain = s->cluster.drain,
				    .resume = s->cluster.resume, .apply = s->cluster.apply };
	unsigned c[NODE_UNREACHABLE + 1] = { 0 };
	for (size_t i = 0; i < n; i++)
		c[record_state(&recs[i])]++;
	printf("# %zu node%s: %u pass, %u warn, %u fail, %u unreachable\n", n, n == 1 ? "" : "s", c[NODE_PASS],
	       c[NODE_WARN], c[NODE_FAIL], c[NODE_UNREACHABLE]);
	size_t failed = 0;
	for (size_t i = 0; i < n; i++)
		if (slurm_act(&o, &recs[i], stdout) < 0)
			failed++;
	if (failed)
		fprintf(stderr, "%s: %zu node%s: the scontrol command failed (see the # lines)\n", env->progname, failed,
			failed == 1 ? "" : "s");
	if (fflush(stdout) == EOF || ferror(stdout))
		return EXIT_TOOL_ERROR;
	return failed ? EXIT_TOOL_ERROR : ret;
}

int slurm_usage(struct cmd_env *env, bool cluster)
{
	const struct settings *s = env->set;
	const char *bad = NULL;
	if (s->cluster.apply && !s->cluster.drain && !s->cluster.resume)
		bad = "--apply runs the commands of --drain or --resume: give one of them";
	else if ((s->cluster.drain || s->cluster.resume) && (s->json || s->reason))
		bad = "--drain and --resume print scontrol commands: not with --json or --reason";
	else if (!cluster && !s->cluster.health && (s->cluster.drain || s->cluster.resume))
		bad = "--drain and --resume on this node need --health (or use `gpuready cluster check`)";
	else if (!cluster && !s->cluster.health &&
		 (opt_seen_name(env->cli, "budget") || opt_seen_name(env->cli, "node-name")))
		bad = "--budget and --node-name are for check --health";
	else if (cluster && s->cluster.snapshots && s->cluster.resume)
		bad = "--resume returns nodes to service from what they show now: not from --snapshots, which may be older "
		      "than the drain (run it under a launcher, with --hosts, or as check --health on the node)";
	else if (!cluster && s->cluster.health && opt_seen_name(env->cli, "strict"))
		bad = "check --health counts warnings as healthy (NHC's convention): not with --strict";
	if (bad)
		fprintf(stderr, "%s: %s\n", env->progname, bad);
	return bad ? EXIT_TOOL_ERROR : 0;
}
