/* `gpuready version` / `--version`. */
#include "cmd.h"
#include "config.h"

int cmd_version(struct cmd_env *env)
{
	(void)env;
	printf("gpuready %s\n", GPUREADY_VERSION);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_TOOL_ERROR;
}
