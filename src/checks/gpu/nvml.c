/* gpu.nvml: what the driver's management library says about each GPU
 * (live only; NVIDIA's NVML API reference).
 *
 * Per GPU: bus ID matched to PCI, persistence mode (off: the driver state
 * is torn down between jobs, slow starts and lost settings — warn), ECC
 * (off on a data-centre GPU — warn), volatile uncorrected ECC errors (fail),
 * row remapping pending (fail: needs a GPU reset) or failed (fail: RMA),
 * retired pages pending (fail), clock-throttle reasons for hardware/thermal
 * slowdown (warn), NVLinks that are down on a GPU that has NVLinks (fail),
 * except the links bridged PCIe cards leave inactive by design: on a node
 * without NVSwitch, GPUs of one model that all have the same number of
 * links up (nvlink_partial_by_design; T11).
 * Node: the CUDA version the driver supports against --min-cuda (default
 * 12.8). NVML that cannot be used at all, with GPUs on PCI, fails with the
 * cause and fix of its class of failure (gpu_lib_advise); without GPUs on
 * PCI it is a skip that keeps NVML's error. A call that did not return
 * within the probe's deadline (probe/deadline.c) fails, naming the call,
 * whatever PCI lists (gpu_lib_unusable). */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nvmlClocksEventReasons bits (nvml.h): SW thermal 0x20, HW slowdown 0x08,
 * HW thermal 0x40, HW power brake 0x80. */
#define THROTTLE_HW_SLOWDOWN 0x08ull
#define THROTTLE_SW_THERMAL 0x20ull
#define THROTTLE_HW_THERMAL 0x40ull
#define THROTTLE_HW_POWER_BRAKE 0x80ull

static void one(struct check_ctx *c, const struct nvml_gpu *g)
{
	struct finding *f;
	char buf[32], idb[32];
	const char *s = nvml_subject(g, buf, sizeof(buf)), *idx = nvml_smi_id(g, idb, sizeof(idb));
	bool any = false;
	if (g->error[0]) {
		f = check_add(c, STATUS_WARN, s, "NVML could not read everything: %s", g->error);
		finding_hint(f, "`nvidia-smi -q -i %s` shows the same data; a GPU NVML cannot query may need a reset", idx);
		any = true;
	}
	if (g->persistence == 0) {
		f = check_add(c, STATUS_WARN, s, "persistence mode off: the driver unloads GPU state between jobs "
						 "(slow starts, settings lost)");
		finding_hint(f, "`systemctl enable --now nvidia-persistenced` (or `nvidia-smi -pm 1`)");
		any = true;
	}
	if (g->ecc_current == 0) {
		f = check_add(c, STATUS_WARN, s, "ECC disabled%s", g->ecc_pending == 1 ? " (enabled after the next reset)" : "");
		finding_hint(f, "`nvidia-smi -e 1 -i %s`, then reset the GPU or reboot", idx);
		any = true;
	}
	if (g->ecc_uncorrected_volatile > 0) {
		f = check_add(c, STATUS_FAIL, s, "%lld uncorrected ECC errors since the driver loaded",
			      g->ecc_uncorrected_volatile);
		finding_hint(f, "drain the node; check remapped rows (`nvidia-smi -q -d ROW_REMAPPER -i %s`) and reset "
				"the GPU; RMA if errors recur",
			     idx);
		any = true;
	}
	if (g->remap_failure == 1) {
		f = check_add(c, STATUS_FAIL, s, "a row remapping failed: the GPU has run out of spare rows");
		finding_hint(f, "RMA the GPU (NVIDIA's memory error management guide)");
		any = true;
	} else if (g->remap_pending == 1) {
		f = check_add(c, STATUS_FAIL, s, "row remapping pending: takes effect only after a GPU reset");
		finding_hint(f, "drain the node and reset the GPU (`nvidia-smi -r -i %s`) or reboot", idx);
		any = true;
	}
	if (g->retired_pending == 1) {
		f = check_add(c, STATUS_FAIL, s, "retired pages pending: takes effect only after a GPU reset");
		finding_hint(f, "drain the node and reset the GPU (`nvidia-smi -r -i %s`) or reboot", idx);
		any = true;
	}
	unsigned long long hw = g->throttle_reasons &
				(THROTTLE_HW_SLOWDOWN | THROTTLE_SW_THERMAL | THROTTLE_HW_THERMAL | THROTTLE_HW_POWER_BRAKE);
	if (g->throttle_known && hw) {
		f = check_add(c, STATUS_WARN, s, "clocks throttled: %s%s%s%s(reasons 0x%llx, %d C)",
			      hw & THROTTLE_HW_SLOWDOWN ? "HW slowdown " : "", hw & THROTTLE_HW_THERMAL ? "HW thermal " : "",
			      hw & THROTTLE_SW_THERMAL ? "SW thermal " : "", hw & THROTTLE_HW_POWER_BRAKE ? "power brake " : "",
			      g->throttle_reasons, g->temperature);
		finding_hint(f, "check cooling and power (`nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i %s`)", idx);
		any = true;
	}
	bool by_design = g->nvlink_down > 0 && nvlink_partial_by_design(c->inv, g);
	if (g->nvlink_links > 0 && g->nvlink_down > 0 && !by_design) {
		f = check_add(c, STATUS_FAIL, s, "%d of %d NVLinks are down", g->nvlink_down, g->nvlink_links);
		finding_hint(f, "`nvidia-smi nvlink -s -i %s`; check the fabric manager (`systemctl status "
				"nvidia-fabricmanager`) and reset the GPU",
			     idx);
		any = true;
	}
	if (!any) {
		char links[256] = "";
		if (by_design)
			snprintf(links, sizeof(links), ", %d of %d NVLinks up as on every %s of this node (NVLink "
						       "bridges connect only part of the links)",
				 g->nvlink_links - g->nvlink_down, g->nvlink_links, g->name);
		else if (g->nvlink_links > 0)
			snprintf(links, sizeof(links), ", NVLinks up");
		check_add(c, STATUS_OK, s, "%s, %llu MiB, %s, persistence %s, ECC %s, %d C%s", g->name,
			  (unsigned long long)(g->mem_total >> 20), g->uuid, g->persistence == 1 ? "on" : "unknown",
			  g->ecc_current == 1 ? "on" : "not supported", g->temperature, links);
	}
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nvml_info *n = inv->nvml;
	const struct pci_dev **gpus = NULL;
	size_t ng = topo_gpus(inv, &gpus);
	struct finding *f;
	if (!inv->live || !n) {
		check_add(c, STATUS_SKIP, "nvml", "NVML needs the live machine (not a recorded tree)");
		goto out;
	}
	if (!n->loaded) {
		gpu_lib_unusable(c, GPU_LIB_NVML, n->fail, n->error, ng);
		goto out;
	}
	int min = cuda_version_parse(c->expect->min_cuda ? c->expect->min_cuda : DEFAULT_MIN_CUDA);
	char have[16], want[16];
	cuda_version_string(n->cuda_driver_version, have, sizeof(have));
	cuda_version_string(min, want, sizeof(want));
	if (n->cuda_driver_version > 0 && min > 0 && n->cuda_driver_version < min) {
		f = check_add(c, STATUS_FAIL, "driver", "driver %s supports CUDA %s, older than the required %s",
			      n->driver_version, have, want);
		finding_hint(f, "upgrade the driver (e.g. `apt install nvidia-driver-570-open` for CUDA 12.8)");
	} else {
		check_add(c, STATUS_OK, "driver", "driver %s, CUDA %s (at least %s)", n->driver_version, have, want);
	}
	for (size_t i = 0; i < n->n; i++)
		one(c, &n->v[i]);
	for (size_t i = 0; i < ng; i++)
		if (gpus[i]->driver && !strcmp(gpus[i]->driver, "nvidia") && !nvml_for(inv, gpus[i]->bdf)) {
			f = check_add(c, STATUS_FAIL, gpus[i]->bdf, "on PCI and bound to nvidia, but NVML does not list it");
			finding_hint(f, "dmesg | grep -i nvrm; the GPU may need a reset or be excluded (gpu.driver_gpus)");
		}
out:
	free(gpus);
	return 0;
}

const struct check_def check_gpu_nvml = {
	.id = "gpu.nvml",
	.section = "NVML (live)",
	.summary = "live: CUDA version >= --min-cuda; per GPU persistence, ECC, uncorrected errors, row remapping, "
		   "retired pages, throttling, NVLinks",
	.run = run,
	.needs = NEEDS_LIVE,
};
