/* `gpuready rdma` (alias verify-rdma): the RDMA stack and NCCL's view of it. */
#include "cmd.h"

int cmd_rdma(struct cmd_env *env)
{
	return run_check_command(env, "rdma");
}
