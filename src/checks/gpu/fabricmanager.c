/* gpu.fabricmanager: on a node with NVSwitches, the fabric manager is
 * installed, enabled, running, and of the driver's exact version.
 *
 * On HGX/DGX baseboards with NVSwitch the GPUs must be registered with the
 * NVLink fabric before CUDA may use them; until nv-fabricmanager has done
 * so, CUDA fails with error 802 "system not yet initialized". The fabric
 * manager refuses to run against any driver but its own version (NVIDIA
 * Fabric Manager User Guide). NVSwitch functions are NVIDIA PCI functions
 * of class 0x0680 (bridge, other); a node without them has nothing for the
 * fabric manager to manage (GB200 compute trays, PCIe cards with NVLink
 * bridges), and the check is skipped there. NVLink 5 baseboards (HGX/DGX
 * B200) show no NVSwitch on PCI: their switches are reached through
 * management ports whose VPD says SW_MNG, and they need the fabric manager
 * too (NVIDIA Fabric Manager User Guide, "Systems Using Fourth Generation
 * NVSwitches"; the service also starts nvlsm there, see gpu.nvlsm). */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FM_SERVICE "nvidia-fabricmanager.service"

/* The Debian/Ubuntu package for this driver branch: the installed one, else
 * "nvidia-fabricmanager-570" (up to branch 575) or "nvidia-fabricmanager". */
static void fm_package(const struct inventory *inv, char *buf, size_t size)
{
	const struct fabric_info *f = &inv->fabric;
	if (f->fm_pkg) {
		snprintf(buf, size, "%s", f->fm_pkg);
		return;
	}
	const char *v = inv->nvidia.version;
	int major = v ? atoi(v) : 0;
	/* from branch 580 on the package is "nvidia-fabricmanager" and
	 * nvidia-fabricmanager-580 a virtual name it provides
	 * (NVIDIA/gpu-driver-container#451) */
	if (major >= 580)
		snprintf(buf, size, "nvidia-fabricmanager");
	else
		snprintf(buf, size, "nvidia-fabricmanager-%d", major > 0 ? major : 570);
}

/* "8 NVSwitches" or "4 NVSwitch management ports", into buf. */
static const char *switches(size_t nsw, size_t nmg, char *buf, size_t size)
{
	if (nsw)
		snprintf(buf, size, "%zu NVSwitch%s", nsw, nsw == 1 ? "" : "es");
	else
		snprintf(buf, size, "%zu NVSwitch management port%s", nmg, nmg == 1 ? "" : "s");
	return buf;
}

static void judge_service(struct check_ctx *c, const char *what)
{
	const struct service_info *s = &c->inv->fabric.fm;
	char pkg[64];
	fm_package(c->inv, pkg, sizeof(pkg));
	struct finding *f;
	if (!s->unit_path) {
		f = check_add(c, STATUS_FAIL, FM_SERVICE, "not installed on a node with %s: CUDA fails with "
							  "error 802 (system not yet initialized) until the fabric "
							  "manager has set up the NVLink fabric",
			      what);
		finding_hint(f, "`apt install %s` (the driver's own version), then "
				"`systemctl enable --now nvidia-fabricmanager`",
			     pkg);
	} else if (!s->enabled || s->active == 0) {
		char why[192];
		f = check_add(c, STATUS_FAIL, FM_SERVICE, "%s (%s): CUDA fails with error 802 while it does not run",
			      unit_not_running(s, FM_SERVICE, why, sizeof(why)), s->unit_path);
		finding_hint(f, "`systemctl enable --now nvidia-fabricmanager`; `systemctl status nvidia-fabricmanager` "
				"and /var/log/fabricmanager.log say why it stopped");
	} else if (s->active < 0) {
		unit_state_unrecorded(c, FM_SERVICE, s);
	} else {
		check_add(c, STATUS_OK, FM_SERVICE, "installed (%s), enabled and running", s->unit_path);
	}
}

static void judge_version(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct fabric_info *fi = &inv->fabric;
	const char *drv = inv->nvidia.version;
	if (!fi->fm_pkg) {
		if (fi->pkg_err < 0)
			check_add(c, STATUS_SKIP, "nvidia-fabricmanager version", "cannot compare with the driver: "
				  "/var/lib/dpkg/status: %s%s",
				  read_strerror(fi->pkg_err),
				  fi->rpm_db ? " (an RPM system: its package database is not text; compare "
					       "`rpm -q nvidia-fabric-manager` with the driver)" : "");
		else if (fi->fm.unit_path)
			check_add(c, STATUS_SKIP, "nvidia-fabricmanager version", "no nvidia-fabricmanager package in "
				  "/var/lib/dpkg/status (installed another way): its version is unknown");
		return;
	}
	if (!drv) {
		check_add(c, STATUS_SKIP, fi->fm_pkg, "%s %s; the driver's version is unknown (no "
			  "/proc/driver/nvidia/version or /sys/module/nvidia/version)", fi->fm_pkg, fi->fm_pkg_version);
		return;
	}
	if (strcmp(fi->fm_pkg_version, drv)) {
		struct finding *f = check_add(c, STATUS_FAIL, fi->fm_pkg, "version %s differs from the driver %s: the "
							    "fabric manager runs only with its own driver version",
					      fi->fm_pkg_version, drv);
		finding_compare(f, fi->fm_pkg_version, drv);
		finding_hint(f, "`apt install %s=%s-1` (the driver's version), then "
				"`systemctl restart nvidia-fabricmanager`",
			     fi->fm_pkg, drv);
		return;
	}
	check_add(c, STATUS_OK, fi->fm_pkg, "version %s, the driver's", fi->fm_pkg_version);
}

static int run(struct check_ctx *c)
{
	size_t nsw = nvswitch_count(c->inv), nmg = nvswitch_mgmt_count(c->inv);
	if (nsw == 0 && nmg == 0) {
		check_add(c, STATUS_SKIP, FM_SERVICE, "no NVSwitch on PCI (NVIDIA class 0x0680) and no NVSwitch "
						      "management port (VPD SW_MNG): the fabric manager has "
						      "nothing to manage here");
		return 0;
	}
	char what[64];
	judge_service(c, switches(nsw, nmg, what, sizeof(what)));
	judge_version(c);
	return 0;
}

const struct check_def check_gpu_fabricmanager = {
	.id = "gpu.fabricmanager",
	.section = "NVSwitch and NVLink",
	.summary = "on a node with NVSwitches: nvidia-fabricmanager installed, enabled, running, and of the driver's "
		   "version (NVIDIA Fabric Manager User Guide)",
	.run = run,
	.needs = NEEDS_GPU,
};
