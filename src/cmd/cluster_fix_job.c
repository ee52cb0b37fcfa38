/* `gpuready cluster fix` under a launcher (docs/cluster.md, "cluster
 * fix"): one process per node, as `cluster check` (cmd/cluster_job.c).
 * Every process plans its own node (`fix --json`'s object) and sends it
 * to rank 0 with its name and fix's exit status. With --apply, rank 0
 * then sends a word per round: which ranks apply now (a batch of --batch
 * N nodes with changes, in name order), or the end; those ranks apply
 * their own plan (`fix --apply`: planned again, backups, audit log, the
 * checks again) and send the result. The first batch with a failure is
 * the last. Nothing a rank sends is trusted: a part is bounded by the
 * control plane, parsed by fixgroup.c's strict plan parser, and a rank
 * that sends nothing by --host-timeout is a row of its own. */
#include "cmd.h"
#include "cmd/cluster_fix.h"
#include "cluster/cluster.h"
#include "cluster/fixgroup.h"
#include "cluster/node.h"
#include "cluster/testhook.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/parse.h"
#include "inventory/inventory.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* A part on the control plane: the kind, fix's exit status, the node's
 * name and a NUL, then fix --json's object (or why there is none). */
#define PART_PLAN 'P'
#define PART_ERROR 'E'
#define PART_NONE 'N'
/* Rank 0's word for each apply round: a batch goes, or the end. */
#define ROUND_BATCH 'B'
#define ROUND_END 'S'

/* This process's node planned (apply_it: and applied): its part. */
static void my_part(struct cmd_env *env, int proc, bool apply_it, struct strbuf *out)
{
	struct settings *s = env->set;
	_cleanup_free_ char *dir = NULL, *tname = NULL, *err = NULL, *name = cluster_job_node_name(env, proc);
	int r = cluster_test_tree(proc, &dir, &tname, &err);
	if (r > 0) {
		free(s->sysroot);
		s->sysroot = xstrdup(dir);
		/* GPUREADY_TEST_RANK_DELAY: a node whose apply hangs */
		if (apply_it)
			cluster_test_delay(proc);
	}
	_cleanup_root_ struct root *root = NULL;
	_cleanup_inventory_ struct inventory *inv = NULL;
	struct json_object *jo = NULL;
	int exit = r < 0 ? EXIT_TOOL_ERROR
		   : load_for_command(env, INV_ALL, &root, &inv) ? EXIT_TOOL_ERROR
								 : fix_json_of(env, root, inv, apply_it, &jo);
	const char *text = jo ? json_object_to_json_string_ext(jo, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
			      : NULL;
	bool fits = text && strlen(text) <= RECORD_MAX_BYTES;
	strbuf_addch(out, fits ? PART_PLAN : PART_ERROR);
	strbuf_addch(out, (char)exit);
	strbuf_adds(out, name);
	strbuf_addch(out, '\0');
	if (fits)
		strbuf_adds(out, text);
	else if (r < 0)
		strbuf_adds(out, err);
	else
		strbuf_adds(out, text ? "its plan is larger than a plan may be" : "could not plan its node (its standard "
										   "error says why)");
	json_object_put(jo);
}

/* Part p as rank 0 got it: *kind, *exit, *name and the rest (text, len),
 * or why it is none (malloc'd). */
static char *part_split(struct session *ss, int p, const struct job_part *x, int timeout, char *kind, int *exit,
			char **name, const char **text, size_t *len)
{
	char who[160];
	job_describe(ss->cl, p, who, sizeof(who));
	*name = node_name_clean(job_members(ss->cl)[p].host);
	if (!x->buf && x->timed_out)
		return xasprintf("%s sent nothing within %d s (--host-timeout)", who, timeout);
	if (!x->buf)
		return xasprintf("%s %s", who, x->err);
	const char *nul = x->len > 2 ? memchr(x->buf + 2, '\0', x->len - 2) : NULL;
	if (!nul || !strchr("PEN", x->buf[0]))
		return xasprintf("%s sent no fix plan", who);
	*kind = x->buf[0];
	*exit = (unsigned char)x->buf[1];
	if (nul > x->buf + 2) {
		free(*name);
		*name = node_name_clean(x->buf + 2);
	}
	*text = nul + 1;
	*len = x->len - (size_t)(nul + 1 - x->buf);
	if (*kind == PART_ERROR) {
		_cleanup_free_ char *t = xstrndup(*text, *len > 200 ? 200 : *len);
		return xasprintf("%s: %s", who, str_printable(t, false));
	}
	return NULL;
}

/* Rank 0: the node of each plan part. */
static void parts_to_nodes(struct session *ss, struct job_part *parts, int timeout, struct fix_node *v,
			   struct strv *labels)
{
	for (int p = 0; p < ss->nprocs; p++) {
		char who[160], kind = 0;
		int exit = 0;
		const char *text = NULL;
		size_t len = 0;
		_cleanup_free_ char *name = NULL, *err = NULL;
		job_describe(ss->cl, p, who, sizeof(who));
		strv_add(labels, who);
		_cleanup_free_ char *why = part_split(ss, p, &parts[p], timeout, &kind, &exit, &name, &text, &len);
		if (!why && fix_node_parse(&v[p], name, text, len, exit, &err) < 0)
			why = xasprintf("%s: %s", who, err);
		if (why)
			fix_node_unreachable(&v[p], name, why);
		v[p].origin = (size_t)p;
		free(parts[p].buf);
		free(parts[p].err);
	}
}

/* Rank 0: the result of an apply part of node x. */
static void part_apply(struct session *ss, struct job_part *part, int timeout, struct fix_node *x)
{
	char kind = 0;
	int exit = 0;
	const char *text = NULL;
	size_t len = 0;
	_cleanup_free_ char *name = NULL, *err = NULL;
	x->apply_why = part_split(ss, (int)x->origin, part, timeout, &kind, &exit, &name, &text, &len);
	struct fix_node r = { 0 };
	if (!x->apply_why && fix_node_parse(&r, x->name, text, len, exit, &err) < 0)
		x->apply_why = xstrdup(err);
	else if (!x->apply_why)
		fix_apply_failed(exit, r.plan, &x->apply_why);
	x->apply = x->apply_why ? FIXA_FAILED : FIXA_APPLIED;
	x->apply_exit = exit;
	fix_node_free(&r);
}

/* One exchange: rank 0's word (round, nprocs + 1 bytes), then every
 * process's part; returns the parts on rank 0. */
static struct job_part *exchange(struct cmd_env *env, struct session *ss, char *round, bool plan)
{
	struct settings *s = env->set;
	_cleanup_free_ char *err = NULL;
	int r;
	if (!plan && (r = job_bcast(ss->cl, round, (size_t)ss->nprocs + 1, clock_now() + s->cluster.host_timeout + 60.0,
				    &err)) < 0)
		session_fail(ss, err, r);
	if (!plan && round[0] != ROUND_BATCH)
		return NULL;
	double deadline = clock_now() + s->cluster.host_timeout;
	job_phase(ss->cl, plan ? "planning the changes" : "applying a batch", deadline);
	_cleanup_strbuf_ struct strbuf mine = STRBUF_INIT;
	if (plan || round[1 + ss->proc])
		my_part(env, ss->proc, !plan, &mine);
	else
		strbuf_addch(&mine, PART_NONE);
	struct job_part *parts = ss->proc == 0 ? xcalloc((size_t)ss->nprocs, sizeof(*parts)) : NULL;
	r = job_gatherv(ss->cl, mine.buf, mine.len, parts, deadline, &err);
	job_phase_done(ss->cl);
	if (r < 0)
		session_fail(ss, err, r);
	return parts;
}

/* Rank 0 under a launcher: the batches of --apply. */
static void launched_batches(struct cmd_env *env, struct session *ss, struct fix_node *v, size_t n,
			     struct fix_rollout *ro)
{
	_cleanup_free_ size_t *order = xcalloc(n + 1, sizeof(size_t));
	_cleanup_free_ char *round = xcalloc((size_t)ss->nprocs + 1, 1);
	size_t m = fix_apply_order(v, n, order), b = ro->batch;
	ro->batches = (m + b - 1) / b;
	for (size_t k = 0; k < m && !ro->stopped; k += b) {
		size_t cnt = m - k < b ? m - k : b;
		memset(round, 0, (size_t)ss->nprocs + 1);
		round[0] = ROUND_BATCH;
		for (size_t i = 0; i < cnt; i++)
			round[1 + v[order[k + i]].origin] = 1;
		struct job_part *parts = exchange(env, ss, round, false);
		for (size_t i = 0; i < cnt; i++) {
			struct fix_node *x = &v[order[k + i]];
			x->batch = k / b + 1;
			part_apply(ss, &parts[x->origin], env->set->cluster.host_timeout, x);
			ro->stopped |= x->apply == FIXA_FAILED;
		}
		for (int p = 0; p < ss->nprocs; p++) {
			free(parts[p].buf);
			free(parts[p].err);
		}
		free(parts);
		ro->done += !ro->stopped;
		if (ro->stopped)
			fix_nodes_untouched(v, order, k + cnt, m);
	}
	round[0] = ROUND_END;
	exchange(env, ss, round, false);
}

int cluster_fix_launched(struct cmd_env *env)
{
	struct settings *s = env->set;
	struct session ss;
	int ret = cluster_job_open(env, &ss, "cluster fix", NULL, 1);
	if (ret)
		return ret;
	struct fix_rollout ro = { .asked = s->cluster.apply, .batch = (size_t)s->fix.batch };
	struct job_part *parts = exchange(env, &ss, NULL, true);
	if (ss.proc == 0) {
		size_t n = (size_t)ss.nprocs;
		struct fix_node *v = xcalloc(n + 1, sizeof(*v));
		_cleanup_(strv_freep) struct strv labels = STRV_INIT;
		parts_to_nodes(&ss, parts, s->cluster.host_timeout, v, &labels);
		free(parts);
		cluster_fix_order(env, v, n, &labels);
		if (ro.asked)
			launched_batches(env, &ss, v, n, &ro);
		ret = cluster_fix_render(env, v, n, &ro);
		for (size_t i = 0; i < n; i++)
			fix_node_free(&v[i]);
		free(v);
	} else if (ro.asked) {
		char *round = xcalloc((size_t)ss.nprocs + 1, 1);
		while (exchange(env, &ss, round, false) || round[0] == ROUND_BATCH)
			;
		free(round);
	}
	return session_close(&ss, ret);
}

