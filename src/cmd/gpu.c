/* `gpuready gpu` (alias verify-gpu): the GPUs, their driver, links, Xid
 * errors, and live NVML, CUDA and PyTorch. */
#include "cmd.h"

int cmd_gpu(struct cmd_env *env)
{
	return run_check_command(env, "gpu");
}
