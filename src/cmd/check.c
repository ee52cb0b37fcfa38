/* `gpuready check`: every area on this node. */
#include "cmd.h"

int cmd_check(struct cmd_env *env)
{
	return run_check_command(env, NULL);
}
