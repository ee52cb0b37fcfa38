/* gpu.driver: the NVIDIA kernel driver is loaded, and which one.
 *
 * `nvidia` must be loaded; `nvidia_uvm` is what CUDA needs for its
 * allocations (loaded on demand by nvidia-modprobe, so its absence is a
 * warning). The version and the flavour (open vs proprietary) come from
 * /proc/driver/nvidia/version, cross-checked with /sys/module/nvidia/taint:
 * the proprietary module taints with P, the open one does not (
 * Linux Documentation/admin-guide/tainted-kernels.rst; NVIDIA
 * open-gpu-kernel-modules, kernel-open/nvidia/nv-procfs.c). Blackwell
 * and later GPUs work only with the open modules (NVIDIA Linux driver
 * README, "Open Linux Kernel Modules"): the proprietary one fails there. */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

/* The proprietary flavour on a Blackwell or later GPU (F11). */
static void judge_blackwell(struct check_ctx *c, const char *flavour)
{
	const struct pci_dev *bw = gpu_first_blackwell(c->inv);
	if (!bw || !flavour || strcmp(flavour, "proprietary"))
		return;
	char pkg[48];
	struct finding *f = check_add(c, STATUS_FAIL, "nvidia", "the proprietary kernel module cannot drive %s "
								"(10de:%04x, Blackwell or later): NVIDIA supports "
								"these GPUs only with the open kernel modules",
				      bw->bdf, bw->device);
	finding_hint(f, "`apt install %s` (the open flavour of this branch), then reboot",
		     gpu_driver_package(c->inv, true, pkg, sizeof(pkg)));
	finding_requires(f, "open_driver_possible");
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nvidia_info *nv = &inv->nvidia;
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus);
	free(gpus);
	struct finding *f;
	enum module_state st = modules_state(&inv->modules, "nvidia");
	const struct pci_dev *old = gpu_first_pre_turing(inv);
	char pkg[48], pkg_other[48];
	gpu_driver_package(inv, !old, pkg, sizeof(pkg));

	if (n == 0 && st != MODULE_LOADED && !nv->proc_present) {
		check_add(c, STATUS_SKIP, "nvidia", "no NVIDIA GPU on PCI: no driver to check");
		return 0;
	}
	if (st != MODULE_LOADED && !nv->proc_present) {
		f = check_add(c, STATUS_FAIL, "nvidia", "the NVIDIA kernel module is not loaded (%s)",
			      st == MODULE_UNKNOWN ? "no module list in this tree" : modules_source(&inv->modules, "nvidia"));
		finding_hint(f, "apt install %s%s and reboot, or `modprobe nvidia`; `dmesg | grep -i nvrm` shows why "
				"it failed to load",
			     pkg, old ? " (not -open: the open kernel modules need Turing or newer)" : "");
		finding_fact_bool(f, "open_driver_possible", !old);
		return 0;
	}
	bool taint_p = nv->taint && strchr(nv->taint, 'P');
	const char *flav = nv->flavour_proc == NV_FLAVOUR_OPEN ? "open" :
			   nv->flavour_proc == NV_FLAVOUR_PROPRIETARY ? "proprietary" : NULL;
	const char *by_taint = nv->taint ? (taint_p ? "proprietary" : "open") : NULL;
	if (flav && by_taint && strcmp(flav, by_taint)) {
		f = check_add(c, STATUS_WARN, "nvidia", "driver %s: /proc/driver/nvidia/version reads %s but the "
							"module taint '%s' says %s",
			      nv->version ? nv->version : "?", flav, nv->taint, by_taint);
		finding_hint(f, "compare `cat /proc/driver/nvidia/version /sys/module/nvidia/taint`; reinstall one "
				"flavour (%s%s%s)",
			     gpu_driver_package(inv, false, pkg_other, sizeof(pkg_other)), old ? "" : " or ", old ? "" : pkg);
		if (!old)
			finding_requires(f, "open_driver_possible");
	} else if (!nv->version && !flav && !by_taint) {
		f = check_add(c, STATUS_OK, "nvidia", "loaded (%s); version and flavour not recorded in this tree (no "
						      "/proc/driver/nvidia/version or /sys/module/nvidia)",
			      modules_source(&inv->modules, "nvidia"));
	} else {
		f = check_add(c, STATUS_OK, "nvidia", "driver %s, %s kernel module%s", nv->version ? nv->version : "version unknown",
			      flav ? flav : by_taint ? by_taint : "flavour unknown",
			      flav && by_taint ? " (version string and taint agree)" : "");
	}
	if (nv->version_line)
		finding_detail(f, "%s", nv->version_line);
	finding_fact_bool(f, "open_driver_possible", !old);
	if (old)
		finding_detail(f, "the open kernel modules cannot drive %s (10de:%04x, older than Turing)", old->bdf,
			       old->device);
	judge_blackwell(c, flav ? flav : by_taint);
	if (nv->module_version && nv->version && strcmp(nv->module_version, nv->version)) {
		f = check_add(c, STATUS_WARN, "nvidia", "/sys/module/nvidia/version %s differs from %s: user space "
							"and kernel module may not match",
			      nv->module_version, nv->version);
		finding_hint(f, "reboot after a driver upgrade so the loaded module matches the installed one");
	}
	enum module_state uvm = modules_state(&inv->modules, "nvidia_uvm");
	if (uvm == MODULE_LOADED || uvm == MODULE_BUILTIN) {
		check_add(c, STATUS_OK, "nvidia_uvm", "loaded (CUDA memory management)");
	} else if (uvm == MODULE_ABSENT) {
		f = check_add(c, STATUS_WARN, "nvidia_uvm", "not loaded: CUDA loads it on first use through "
							    "nvidia-modprobe; without that helper CUDA fails");
		finding_hint(f, "`modprobe nvidia_uvm` (and keep nvidia-modprobe installed)");
	} else {
		check_add(c, STATUS_SKIP, "nvidia_uvm", "cannot tell: no module list in this tree");
	}
	return 0;
}

const struct check_def check_gpu_driver = {
	.id = "gpu.driver",
	.section = "NVIDIA Driver",
	.summary = "nvidia and nvidia_uvm loaded; driver version and open/proprietary flavour (version string vs taint)",
	.run = run,
};
