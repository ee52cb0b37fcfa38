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
 * handles (NVIDIA/nccl#1632).
 *
 * The IMEX daemon exchanges the memory mappings between the domain's OS
 * instances; a node whose nodes_config.cfg lists the domain needs it
 * installed, enabled and running (IMEX guide, "Getting Started with
 * IMEX"). Running is systemd's invocation link, as gpu.fabricmanager reads
 * it (src/inventory/fabric.c). */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHANNELS "/dev/nvidia-caps-imex-channels"
#define IMEX_SERVICE "nvidia-imex.service"

/* F07: the IMEX service of a node configured for an NVLink domain */
static void judge_service(struct check_ctx *c)
{
	const struct fabric_info *f = &c->inv->fabric;
	const struct service_info *s = &f->imex;
	struct finding *x;
	if (f->imex_nodes_err < 0) {
		check_add(c, STATUS_SKIP, IMEX_SERVICE, "no NVLink domain configured (" IMEX_NODES_CONFIG ": %s)%s: the "
							"IMEX service is not needed",
			  read_strerror(f->imex_nodes_err), s->unit_path ? ", although the service is installed" : "");
		return;
	}
	if (!s->unit_path) {
		const char *v = c->inv->nvidia.version;
		int major = v ? atoi(v) : 0;
		char pkg[32];
		snprintf(pkg, sizeof(pkg), major > 0 ? "nvidia-imex-%d" : "nvidia-imex", major);
		x = check_add(c, STATUS_FAIL, IMEX_SERVICE, IMEX_NODES_CONFIG " lists the NVLink domain's nodes, but "
							"the IMEX service is not installed: CUDA fabric handles, and "
							"with them multi-node NVLink, fail between the domain's nodes");
		finding_hint(x, "`apt install %s` (the driver's branch), then `systemctl enable --now nvidia-imex`", pkg);
	} else if (!s->enabled || s->active == 0) {
		char why[192];
		x = check_add(c, STATUS_FAIL, IMEX_SERVICE, "%s (%s), on a node configured for an NVLink domain ("
							IMEX_NODES_CONFIG "): fabric-handle imports from the other "
							"nodes fail",
			      unit_not_running(s, IMEX_SERVICE, why, sizeof(why)), s->unit_path);
		finding_hint(x, "`systemctl enable --now nvidia-imex`; `systemctl status nvidia-imex` says why it "
				"stopped");
	} else if (s->active < 0) {
		unit_state_unrecorded(c, IMEX_SERVICE, s);
	} else {
		check_add(c, STATUS_OK, IMEX_SERVICE, "installed (%s), enabled and running for the NVLink domain ("
						      IMEX_NODES_CONFIG ")", s->unit_path);
	}
}

static int run(struct check_ctx *c)
{
	const struct fabric_info *f = &c->inv->fabric;
	const char *why = imex_domain(c->inv);
	judge_service(c);
	if (!why) {
		check_add(c, STATUS_SKIP, CHANNELS, "not in a multi-node NVLink domain (no nvidia-imex.service, "
						    IMEX_NODES_CONFIG ": %s): IMEX channels are not needed",
			  read_strerror(f->imex_nodes_err));
		return 0;
	}
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
	.summary = "in a multi-node NVLink domain (IMEX set up): the IMEX service runs and an IMEX channel exists for "
		   "CUDA fabric handles (NVIDIA IMEX guide)",
	.run = run,
	.needs = NEEDS_GPU,
};
