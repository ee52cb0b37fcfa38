/* gpu.nvlsm: on an NVLink 5 baseboard (HGX/DGX B200), the NVLink Subnet
 * Manager and the InfiniBand modules it needs are there.
 *
 * Fourth-generation NVSwitch systems do not show their NVSwitches on PCI:
 * the host manages them over InfiniBand, through ConnectX-7 functions whose
 * VPD says SW_MNG (the NVSwitch management or "LPF" ports). The fabric
 * manager's start script runs nvlsm, NVIDIA's subnet manager derived from
 * OpenSM, on one of them; without the nvlsm package the fabric manager fails
 * (NV_WARN_NOTHING_TO_DO), the GPUs' fabric state stays "In Progress" and
 * CUDA fails with error 802 (NVIDIA Fabric Manager User Guide, "What is
 * NVLink Subnet Manager?"; siderolabs/extensions#717). Without mlx5_ib the
 * management ports get no InfiniBand device, and without ib_umad nvlsm has
 * no /dev/infiniband/umad* to send its management datagrams through
 * (NVIDIA/gpu-operator#2781; spectrocloud/CanvOS#700). Whether the fabric
 * manager's service runs is gpu.fabricmanager's to judge. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"
#include "inventory/nvl5.h"

#define NVLSM_SUBJECT "nvlsm"

/* mlx5_ib gives the management ports their InfiniBand devices; ib_umad
 * their management-datagram device nodes (Linux drivers/infiniband/core/user_mad.c). */
static const struct {
	const char *name, *why;
} nvl5_modules[] = {
	{ "mlx5_ib", "the management ports get no InfiniBand device" },
	{ "ib_umad", "nvlsm has no /dev/infiniband/umad* to reach the NVSwitches through" },
};

static void judge_module(struct check_ctx *c, const char *name, const char *why, size_t n)
{
	const struct modules_info *m = &c->inv->modules;
	switch (modules_state(m, name)) {
	case MODULE_LOADED:
	case MODULE_BUILTIN:
		check_add(c, STATUS_OK, name, "present (%s)", modules_source(m, name));
		break;
	case MODULE_ABSENT: {
		struct finding *f = check_add(c, STATUS_FAIL, name, "not loaded on a node with %zu NVSwitch management "
								  "port%s: %s, so the NVLink fabric is not brought up "
								  "and CUDA fails with error 802",
					      n, n == 1 ? "" : "s", why);
		finding_hint(f, "`modprobe %s && echo %s > /etc/modules-load.d/%s.conf`, then "
				"`systemctl restart nvidia-fabricmanager`",
			     name, name, name);
		break;
	}
	case MODULE_UNKNOWN:
		check_add(c, STATUS_SKIP, name, "cannot tell: neither /proc/modules nor /sys/module could be read "
						"under the root");
		break;
	}
}

static void judge_package(struct check_ctx *c, size_t n)
{
	const struct fabric_info *f = &c->inv->fabric;
	if (f->nvlsm_bin && f->nvlsm_conf) {
		check_add(c, STATUS_OK, NVLSM_SUBJECT, "installed (%s, %s)", NVLSM_BIN, NVLSM_CONF);
		return;
	}
	const char *missing = !f->nvlsm_bin && !f->nvlsm_conf ? NVLSM_BIN " and " NVLSM_CONF
			      : !f->nvlsm_bin ? NVLSM_BIN : NVLSM_CONF;
	struct finding *fi = check_add(c, STATUS_FAIL, NVLSM_SUBJECT, "%s missing on a node with %zu NVSwitch "
								      "management port%s: without the NVLink Subnet "
								      "Manager the fabric manager cannot bring up "
								      "the NVLink 5 fabric, and CUDA fails with error "
								      "802",
				       missing, n, n == 1 ? "" : "s");
	finding_hint(fi, "`apt install nvlsm` (from the fabric manager's repository), then "
			 "`systemctl restart nvidia-fabricmanager`");
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	size_t n = nvswitch_mgmt_count(inv);
	if (n == 0) {
		const struct pci_dev *u = nvswitch_mgmt_unknown(inv);
		if (u && gpu_first_blackwell(inv) && nvswitch_count(inv) == 0)
			check_add(c, STATUS_SKIP, NVLSM_SUBJECT, "cannot tell whether this Blackwell node has NVSwitch "
								 "management ports: %s/vpd: %s (only root reads "
								 "PCI VPD)",
				  u->path, read_strerror(u->vpd_err));
		else
			check_add(c, STATUS_SKIP, NVLSM_SUBJECT, "no NVSwitch management port (no Mellanox function "
								 "whose VPD says SW_MNG): not an NVLink 5 baseboard");
		return 0;
	}
	for (size_t i = 0; i < sizeof(nvl5_modules) / sizeof(nvl5_modules[0]); i++)
		judge_module(c, nvl5_modules[i].name, nvl5_modules[i].why, n);
	judge_package(c, n);
	return 0;
}

const struct check_def check_gpu_nvlsm = {
	.id = "gpu.nvlsm",
	.section = "NVSwitch and NVLink",
	.summary = "on an NVLink 5 baseboard (NVSwitch management ports whose VPD says SW_MNG): nvlsm installed, "
		   "mlx5_ib and ib_umad loaded (NVIDIA Fabric Manager User Guide)",
	.run = run,
	.needs = NEEDS_GPU,
};
