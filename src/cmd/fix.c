/* gpuready fix: the checks, then the plan of remedies for their warn and
 * fail findings (src/fix/, docs/fix.md); --apply makes the changes and
 * runs the checks again, --revert undoes them, --script writes them as a
 * shell script. */
#include "cmd.h"

#include "checks/check.h"
#include "config.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/fileio.h"
#include "core/report.h"
#include "fix/fix.h"
#include "inventory/inventory.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The checks on inv: 0, or EXIT_TOOL_ERROR (said). */
static int run_checks(struct cmd_env *env, const struct inventory *inv, const char *dir, struct report *rep)
{
	struct settings *s = env->set;
	report_init(rep, GPUREADY_VERSION, inv->kernel.hostname ? inv->kernel.hostname : "unknown", dir);
	report_set_run(rep, "fix", clock_unix());
	struct site_expect expect = settings_expect(s);
	struct check_select sel = { .only = &s->only, .skip = &s->skip };
	if (checks_run(NULL, inv, &expect, &sel, rep) < 0) {
		fprintf(stderr, "%s: a check failed internally; not planning changes on its findings\n", env->progname);
		return EXIT_TOOL_ERROR;
	}
	return 0;
}

/* The checks on the configured root: 0, or EXIT_TOOL_ERROR (said). */
static int checks_here(struct cmd_env *env, struct root **root, struct inventory **inv, struct report *rep)
{
	if (load_for_command(env, INV_ALL, root, inv))
		return EXIT_TOOL_ERROR;
	return run_checks(env, *inv, env->set->sysroot ? env->set->sysroot : "/", rep);
}

static int write_script(struct cmd_env *env, const struct fix_plan *p)
{
	const char *path = env->set->fix.script;
	FILE *f = strcmp(path, "-") ? fopen(path, "we") : stdout;
	if (!f) {
		fprintf(stderr, "%s: cannot write %s: %s\n", env->progname, path, strerror(errno));
		return EXIT_TOOL_ERROR;
	}
	int r = fix_plan_script(p, f);
	if (f != stdout && fclose(f) < 0 && !r)
		r = -errno;
	if (r < 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", env->progname, path, strerror(-r));
		return EXIT_TOOL_ERROR;
	}
	return 0;
}

static const struct finding *find(const struct report *rep, const char *id, const char *subject)
{
	for (size_t i = 0; i < rep->n; i++)
		if (!strcmp(rep->v[i]->id, id) && !strcmp(rep->v[i]->subject, subject))
			return rep->v[i];
	return NULL;
}

/* Each answered finding's status before and after. */
static void before_after(const struct fix_plan *p, const struct fix_result *res, const struct report *before,
			 const struct report *after, FILE *out, struct json_object *arr)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct fix_remedy *r = &p->v[i];
		for (size_t t = 0; t < r->n_targets; t++) {
			const struct fix_target *x = &r->targets[t];
			const struct finding *f = find(after, x->check_id, x->subject);
			const char *now = f ? status_name(f->status) : "gone (ok)";
			const char *state = r->held			      ? "held"
					    : res->remedy_failed && res->remedy_failed[i] ? "failed"
					    : r->pending || (f && f->pending)		      ? "pending"
											      : "applied";
			const struct finding *b = find(before, x->check_id, x->subject);
			if (out)
				fprintf(out, "  %-24s %-28s %s -> %s%s%s%s\n", x->check_id, x->subject,
					b ? status_name(b->status) : "?", now, strcmp(state, "applied") ? " (" : "",
					strcmp(state, "applied") ? state : "", strcmp(state, "applied") ? ")" : "");
			if (arr) {
				struct json_object *o = json_object_new_object();
				json_object_object_add(o, "check", json_object_new_string(x->check_id));
				json_object_object_add(o, "subject", utf8_json_string(x->subject));
				json_object_object_add(o, "before", json_object_new_string(b ? status_name(b->status) : "ok"));
				json_object_object_add(o, "after", json_object_new_string(f ? status_name(f->status) : "ok"));
				json_object_object_add(o, "state", json_object_new_string(state));
				json_object_array_add(arr, o);
			}
		}
	}
	if (out)
		fflush(out);
}

/* --apply: changes, then the checks again. */
static int apply(struct cmd_env *env, struct root *root, struct fix_plan *p, const struct report *before,
		 struct json_object *jo)
{
	struct fix_result res = { 0 };
	int r = fix_apply(root, p, clock_unix(), &res), ret = 0;
	FILE *out = jo ? NULL : stdout;
	if (r < 0) {
		fprintf(stderr, "%s: cannot apply: %s\n", env->progname, strerror(-r));
		fix_result_free(&res);
		return EXIT_TOOL_ERROR;
	}
	if (out) {
		fputs("Applied:\n", out);
		for (size_t i = 0; i < res.lines.n; i++)
			fprintf(out, "  %s\n", res.lines.v[i]);
	}
	_cleanup_root_ struct root *root2 = NULL;
	_cleanup_inventory_ struct inventory *inv2 = NULL;
	struct report after;
	if ((ret = checks_here(env, &root2, &inv2, &after)) == 0) {
		struct json_object *arr = jo ? json_object_new_array() : NULL;
		if (out)
			fputs("\nChecked again:\n", out);
		before_after(p, &res, before, &after, out, arr);
		if (jo) {
			json_object_object_add(jo, "after", arr);
			struct json_object *lines = json_object_new_array();
			for (size_t i = 0; i < res.lines.n; i++)
				json_object_array_add(lines, utf8_json_string(res.lines.v[i]));
			json_object_object_add(jo, "applied", lines);
			json_object_object_add(jo, "failed", json_object_new_int64((int64_t)res.failed));
		}
		ret = res.failed ? 1 : report_exit_code(&after, env->set->strict);
		if (out)
			fprintf(out, "\n%zu remed%s applied, %zu failed\n", res.applied, res.applied == 1 ? "y" : "ies",
				res.failed);
		report_free(&after);
	}
	fix_result_free(&res);
	return ret;
}

static int revert(struct cmd_env *env)
{
	_cleanup_root_ struct root *root = NULL;
	const char *dir = env->set->sysroot ? env->set->sysroot : "/";
	int r = root_open(dir, &root);
	if (r < 0) {
		fprintf(stderr, "%s: cannot open sysroot %s: %s\n", env->progname, dir, strerror(-r));
		return EXIT_TOOL_ERROR;
	}
	struct fix_result res = { 0 };
	r = fix_revert(root, clock_unix(), &res);
	for (size_t i = 0; i < res.lines.n; i++)
		printf("%s\n", res.lines.v[i]);
	if (res.applied && root_is_live(root))
		printf("the values already in effect (sysctl, MTU, RDMA-CM ToS) stay until a reboot or until set back by "
		       "hand\n");
	fix_result_free(&res);
	return r == -EIO ? 1 : r < 0 ? EXIT_TOOL_ERROR : 0;
}

/* The plan for rep's findings on root, as text on stdout or (jo) as JSON;
 * with apply the changes and the checks again. fix's exit code. */
static int plan_run(struct cmd_env *env, struct root *root, const struct inventory *inv, const struct report *rep,
		    bool apply_it, struct json_object **jo)
{
	struct settings *s = env->set;
	if (apply_it && root_is_live(root) && geteuid() != 0) {
		fprintf(stderr, "%s: fix --apply changes files under /etc and the running system: run it as root "
				"(without --apply it only plans)\n",
			env->progname);
		return EXIT_TOOL_ERROR;
	}
	_cleanup_free_ char *busy = apply_it ? fix_busy(root) : NULL, *err = NULL;
	struct fix_opts o = { .allow_disruptive = s->fix.allow_disruptive,
			      .only = opt_seen_name(env->cli, "only") ? &s->only : NULL, .busy = busy };
	struct site_expect expect = settings_expect(s);
	struct check_select sel = { .only = &s->only, .skip = &s->skip };
	struct fix_plan plan;
	if (fix_plan_make(root, inv, rep, &expect, &sel, &o, &plan, &err) < 0) {
		fprintf(stderr, "%s: %s\n", env->progname, err);
		fix_plan_free(&plan);
		return EXIT_TOOL_ERROR;
	}
	if (jo) {
		*jo = fix_plan_json(&plan);
		json_object_object_add(*jo, "host", utf8_json_string(rep->host));
		json_object_object_add(*jo, "timestamp", json_object_new_double(rep->timestamp));
	} else if (!s->fix.script || strcmp(s->fix.script, "-")) {
		fix_plan_text(&plan, stdout, false); /* not into a script on standard output */
	}
	int ret = fix_plan_changes(&plan) || report_exit_code(rep, s->strict) ? 1 : 0;
	if (s->fix.script && write_script(env, &plan))
		ret = EXIT_TOOL_ERROR;
	else if (apply_it) {
		if (!jo)
			fputc('\n', stdout);
		ret = apply(env, root, &plan, rep, jo ? *jo : NULL);
	}
	fix_plan_free(&plan);
	return ret;
}

int fix_json_of(struct cmd_env *env, struct root *root, const struct inventory *inv, bool apply_it,
		struct json_object **ret)
{
	struct report rep;
	*ret = NULL;
	int r = run_checks(env, inv, root_dir(root), &rep);
	if (!r)
		r = plan_run(env, root, inv, &rep, apply_it, ret);
	report_free(&rep);
	return r;
}

int cmd_fix(struct cmd_env *env)
{
	struct settings *s = env->set;
	if (s->fix.revert)
		return revert(env);
	if (check_patterns_usage(env, NULL, true))
		return EXIT_TOOL_ERROR;
	_cleanup_root_ struct root *root = NULL;
	_cleanup_inventory_ struct inventory *inv = NULL;
	struct report rep;
	int ret = checks_here(env, &root, &inv, &rep);
	if (ret) {
		if (inv)
			report_free(&rep);
		return ret;
	}
	struct json_object *jo = NULL;
	ret = plan_run(env, root, inv, &rep, s->cluster.apply, s->json ? &jo : NULL);
	if (jo) {
		if (fputs(json_object_to_json_string_ext(jo, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							   JSON_C_TO_STRING_NOSLASHESCAPE),
			  stdout) < 0 || fputc('\n', stdout) < 0)
			ret = EXIT_TOOL_ERROR;
		json_object_put(jo);
	}
	report_free(&rep);
	return ret;
}
