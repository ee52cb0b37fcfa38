/* `gpuready help [COMMAND [SUBCOMMAND]]`, `gpuready --help`, `gpuready
 * <cmd> --help`. Generated from the command table and the option table:
 * `help bench net` prints what `bench net --help` does. */
#include "cmd.h"
#include "config.h"
#include "core/parse.h"
#include "core/strbuf.h"

#include <string.h>

void print_command_help(FILE *out, const struct command *c)
{
	fprintf(out, "usage: gpuready %s %s\n", c->name, c->usage);
	if (c->alias)
		fprintf(out, "   or: %s %s\n", c->alias, c->usage);
	fprintf(out, "\n%s.\n", c->summary);
	if (c->description)
		fprintf(out, "\n%s\n", c->description);
	fprintf(out, "\nOptions:\n");
	opt_print_help(out, c->opts, c->scope);
	if (c->scope & SCOPE_CHECKS)
		fprintf(out, "\nExit status: 0 no check failed; 1 a check failed (or warned, with --strict); "
			     "2 gpuready could not run.\n");
}

int cmd_help(struct cmd_env *env)
{
	if (env->args.n > 0) {
		_cleanup_strbuf_ struct strbuf name = STRBUF_INIT;
		for (size_t i = 0; i < env->args.n; i++)
			strbuf_addf(&name, "%s%s", i ? " " : "", env->args.v[i]);
		struct str_nearest near = STR_NEAREST_INIT(name.buf);
		for (const struct command *c = command_next(NULL); c; c = command_next(c)) {
			if (!strcmp(c->name, name.buf)) {
				print_command_help(stdout, c);
				return fflush(stdout) == 0 ? EXIT_OK : EXIT_TOOL_ERROR;
			}
			if (!c->hidden)
				str_nearest_offer(&near, c->name);
		}
		fprintf(stderr, "gpuready help: no command '%s'\n", name.buf);
		if (near.best)
			fprintf(stderr, "Did you mean '%s'?\n", near.best);
		return EXIT_TOOL_ERROR;
	}
	printf("gpuready %s: is this GPU node ready for distributed training?\n\n"
	       "usage: gpuready <command> [options]\n\nCommands:\n",
	       GPUREADY_VERSION);
	for (const struct command *c = command_next(NULL); c; c = command_next(c))
		if (!c->hidden)
			printf("  %-14s %s\n", c->name, c->summary);
	printf("\nAliases (installed as links to gpuready):\n");
	for (const struct command *c = command_next(NULL); c; c = command_next(c))
		if (c->alias)
			printf("  %-14s gpuready %s\n", c->alias, c->name);
	printf("\n`gpuready <command> --help` shows a command's options. `man gpuready` has the rest.\n");
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_TOOL_ERROR;
}
