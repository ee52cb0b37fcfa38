/* The shared body of the check commands (check, rdma, ...): open the root,
 * read the config file, load the inventory, run the selected checks,
 * render. Only here and in main.c are errors printed. */
#include "cmd.h"
#include "bench/copy/node.h"
#include "cluster/testhook.h"
#include "core/clock.h"
#include "probe/probe.h"
#include "checks/check.h"
#include "config.h"
#include "core/cleanup.h"
#include "core/report.h"
#include "inventory/inventory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Which inventory parts an area's checks read. */
static unsigned parts_for(const char *area)
{
	if (!area)
		return INV_ALL;
	if (!strcmp(area, "rdma"))
		return INV_RDMA;
	if (!strcmp(area, "gpu"))
		return INV_GPU | INV_LIVE_GPU;
	return INV_ALL; /* gpudirect needs everything */
}

int load_for_command(struct cmd_env *env, unsigned parts, struct root **ret_root, struct inventory **ret_inv)
{
	return load_for_command_live(env, parts, true, ret_root, ret_inv);
}

int load_for_command_live(struct cmd_env *env, unsigned parts, bool live, struct root **ret_root,
			  struct inventory **ret_inv)
{
	struct settings *s = env->set;
	const char *dir = s->sysroot ? s->sysroot : "/";
	struct root *root = NULL;
	char *err = NULL;
	int r;

	if ((r = root_open(dir, &root)) < 0) {
		fprintf(stderr, "%s: cannot open sysroot %s: %s\n", env->progname, dir, strerror(-r));
		return EXIT_TOOL_ERROR;
	}
	if (root_incomplete(root)) {
		if (!s->force) {
			fprintf(stderr, "%s: %s is an incomplete snapshot (%s%s: its writing stopped part-way, so "
					"files the checks read may be missing): take it again, or read it anyway with "
					"--force\n",
				env->progname, dir, dir, ROOT_INCOMPLETE);
			root_free(root);
			return EXIT_TOOL_ERROR;
		}
		fprintf(stderr, "%s: reading %s although it is an incomplete snapshot (--force)\n", env->progname, dir);
	}
	if (!root_is_live(root) && !root_exists(root, "/sys") && !root_exists(root, "/proc")) {
		fprintf(stderr, "%s: %s has neither sys/ nor proc/: not a machine tree (see `gpuready snapshot`)\n",
			env->progname, dir);
		root_free(root);
		return EXIT_TOOL_ERROR;
	}
	if (settings_load_config(s, env->cli, root, &err) < 0) {
		fprintf(stderr, "%s: %s\n", env->progname, err);
		free(err);
		root_free(root);
		return EXIT_TOOL_ERROR;
	}
	if (s->config_note)
		fprintf(stderr, "%s: %s\n", env->progname, s->config_note);
	struct load_opts o = { .parts = parts, .python = s->python, .live = live ? probe_live : NULL };
	if ((r = inventory_load(root, &o, ret_inv)) < 0) {
		fprintf(stderr, "%s: reading the machine failed: %s\n", env->progname, strerror(-r));
		root_free(root);
		return EXIT_TOOL_ERROR;
	}
	if (s->cluster.bench && live && (root_is_live(root) || cluster_test_bench_tree()))
		copy_bw_measure(*ret_inv, &(*ret_inv)->copy_bw);
	*ret_root = root;
	return 0;
}

/* Color only on a terminal, and never with --no-color or a non-empty
 * NO_COLOR (https://no-color.org) or TERM=dumb. */
static bool use_color(const struct settings *s)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
	if (s->no_color || (no_color && *no_color) || (term && !strcmp(term, "dumb")))
		return false;
	return isatty(STDOUT_FILENO);
}

int check_patterns_usage(struct cmd_env *env, const char *area, bool cli)
{
	static const char *const names[] = { "only", "skip" };
	const struct strv *pats[] = { &env->set->only, &env->set->skip };
	for (size_t i = 0; i < 2; i++) {
		if ((opt_seen_name(env->cli, names[i]) != NULL) != cli || !pats[i]->n)
			continue;
		_cleanup_free_ char *what = xasprintf(cli ? "--%s" : "%s (config file)", names[i]), *err = NULL;
		if (check_patterns_validate(pats[i], what, cli ? area : NULL, &err) < 0) {
			fprintf(stderr, "%s: %s\n", env->progname, err);
			return EXIT_TOOL_ERROR;
		}
	}
	return 0;
}

int run_check_command(struct cmd_env *env, const char *area)
{
	struct settings *s = env->set;
	const char *dir = s->sysroot ? s->sysroot : "/";
	_cleanup_root_ struct root *root = NULL;
	_cleanup_inventory_ struct inventory *inv = NULL;
	int r;

	if (slurm_usage(env, false))
		return EXIT_TOOL_ERROR;
	if (!area && s->cluster.health)
		return run_health(env);
	if (check_patterns_usage(env, area, true) || load_for_command(env, parts_for(area), &root, &inv) ||
	    check_patterns_usage(env, area, false))
		return EXIT_TOOL_ERROR;

	struct report rep;
	report_init(&rep, GPUREADY_VERSION, inv->kernel.hostname ? inv->kernel.hostname : "unknown", dir);
	report_set_run(&rep, area ? area : "check", clock_unix());
	struct site_expect expect = settings_expect(s);
	struct check_select sel = { .only = &s->only, .skip = &s->skip };
	int internal = checks_run(area, inv, &expect, &sel, &rep);
	if (rep.n == 0) {
		fprintf(stderr, "%s: no check matches --only/--skip (see `gpuready list-checks`)\n", env->progname);
		report_free(&rep);
		return EXIT_TOOL_ERROR;
	}

	int ret = report_exit_code(&rep, s->strict);
	if (internal < 0)
		ret = EXIT_TOOL_ERROR;
	if (s->prom) {
		r = report_write_prom(&rep, s->prom, rep.timestamp);
		if (r < 0) {
			fprintf(stderr, "%s: cannot write %s: %s\n", env->progname, s->prom, strerror(-r));
			ret = EXIT_TOOL_ERROR;
		}
	}
	if (s->json) {
		r = report_write_json(&rep, stdout);
	} else if (s->reason) {
		char line[REPORT_REASON_MAX + 1];
		report_reason(&rep, line, sizeof(line));
		r = printf("%s\n", line) < 0 ? -EIO : 0;
	} else {
		struct render_opts o = { .color = use_color(s), .verbose = s->verbose, .quiet = s->quiet };
		r = report_write_text(&rep, stdout, &o);
	}
	report_free(&rep);
	/* a report that did not reach stdout is named by main() */
	return r < 0 ? EXIT_TOOL_ERROR : ret;
}
