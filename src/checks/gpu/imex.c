/* gpu.imex: a node in a multi-node NVLink domain has an IMEX channel.
 *
 * Memory shared across the OS instances of an NVLink domain (GB200 NVL
 * racks; NCCL's multi-node NVLink) uses CUDA fabric handles, which the
 * driver allows only to processes that can open an IMEX channel,
 * /dev/nvidia-caps-imex-channels/channel<N>. The driver creates channel0
 * only with the module option NVreg_CreateImexChannel0=1; nodes made with
 * mknod vanish at reboot (NVIDIA IMEX Service for NVLink Networks User's
 * Guide, "IMEX Channels"; CUDA Driver API, cuMemCreate). A node is taken
 * to be in such a domain when the IMEX service is installed or configured
 * (nvidia-imex.service, /etc/nvidia-imex/nodes_config.cfg); without
 * either, IMEX is not needed: NVLink within one node uses file-descriptor
 * handles (NVIDIA/nccl#1632). */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <errno.h>
#include <string.h>

#define CHANNELS "/dev/nvidia-caps-imex-channels"

static int run(struct check_ctx *c)
{
	const struct fabric_info *f = &c->inv->fabric;
	bool unit = f->imex.unit_path != NULL, nodes = f->imex_nodes_err == 0;
	if (!unit && !nodes) {
		check_add(c, STATUS_SKIP, CHANNELS, "not in a multi-node NVLink domain (no nvidia-imex.service, "
						    "/etc/nvidia-imex/nodes_config.cfg: %s): IMEX channels are not needed",
			  read_strerror(f->imex_nodes_err));
		return 0;
	}
	const char *why = unit ? f->imex.unit_path : "/etc/nvidia-imex/nodes_config.cfg";
	if (f->imex_channels_err < 0 && f->imex_channels_err != -ENOENT) {
		struct finding *x = check_add(c, STATUS_WARN, CHANNELS, "IMEX is set up (%s) but the channel directory "
									"cannot be read: %s",
					      why, read_strerror(f->imex_channels_err));
		finding_hint(x, "`ls -l " CHANNELS "` must list channel0, readable by the jobs' users");
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < f->imex_channels.n; i++)
		n += strncmp(f->imex_channels.v[i], "channel", 7) == 0;
	if (n == 0) {
		struct finding *x = check_add(c, STATUS_FAIL, CHANNELS, "IMEX is set up (%s) but there is no IMEX "
									"channel (%s): CUDA fabric handles, and with "
									"them multi-node NVLink, fail with "
									"insufficient permission",
					      why, f->imex_channels_err < 0 ? "no " CHANNELS : "the directory is empty");
		finding_hint(x, "`echo 'options nvidia NVreg_CreateImexChannel0=1' > /etc/modprobe.d/nvidia-imex.conf`, "
				"`update-initramfs -u -k all`, then reboot");
		return 0;
	}
	check_add(c, STATUS_OK, CHANNELS, "%zu IMEX channel%s (%s) for the NVLink domain (%s)", n, n == 1 ? "" : "s",
		  f->imex_channels.v[0], why);
	return 0;
}

const struct check_def check_gpu_imex = {
	.id = "gpu.imex",
	.section = "NVSwitch and NVLink",
	.summary = "in a multi-node NVLink domain (IMEX set up): an IMEX channel exists for CUDA fabric handles (NVIDIA "
		   "IMEX guide)",
	.run = run,
	.needs = NEEDS_GPU,
};
