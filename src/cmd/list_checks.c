/* `gpuready list-checks`: every check ID with its one-line summary, for
 * --only/--skip and for the docs. A pattern that selects nothing is a usage
 * error here as in the check commands. */
#include "cmd.h"
#include "checks/check.h"

int cmd_list_checks(struct cmd_env *env)
{
	struct check_select sel = { .only = &env->set->only, .skip = &env->set->skip };

	if (check_patterns_usage(env, NULL, true))
		return EXIT_TOOL_ERROR;

	for (size_t i = 0; i < check_registry_n; i++) {
		const struct check_def *d = check_registry[i];
		if (check_selected(&sel, d->id))
			printf("%-26s %s\n", d->id, d->summary);
	}
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_TOOL_ERROR;
}
