/* `gpuready gpudirect` (alias verify-gpudirect): which GPUDirect RDMA
 * method the node can use, and everything that decides it. */
#include "cmd.h"

int cmd_gpudirect(struct cmd_env *env)
{
	return run_check_command(env, "gpudirect");
}
