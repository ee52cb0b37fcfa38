/* gpu.count: every layer sees the same GPUs — PCI, the driver
 * (/proc/driver/nvidia/gpus), NVML, CUDA and PyTorch (the last three
 * live). A layer that sees fewer pinpoints where a GPU got lost. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <stdlib.h>
#include <string.h>

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct pci_dev **gpus = NULL;
	size_t pci = topo_gpus(inv, &gpus);
	free(gpus);
	if (pci == 0) {
		check_add(c, STATUS_SKIP, "gpu count", "no NVIDIA GPU on PCI");
		return 0;
	}
	struct strbuf seen = STRBUF_INIT, short_ = STRBUF_INIT;
	size_t want = c->expect->expect_gpus > 0 ? (size_t)c->expect->expect_gpus : pci;
	strbuf_addf(&seen, "PCI %zu", pci);
	if (pci != want)
		strbuf_addf(&short_, "%sPCI", short_.len ? ", " : "");
	const char *unknown = NULL; /* a layer that should see the GPUs but cannot be read */
	if (inv->nvidia.gpus_listed) {
		size_t ok = 0;
		for (size_t i = 0; i < inv->nvidia.n_gpus; i++)
			ok += inv->nvidia.gpus[i].excluded != 1;
		strbuf_addf(&seen, ", driver %zu", ok);
		if (ok != want)
			strbuf_addf(&short_, "%sdriver", short_.len ? ", " : "");
	} else if (gpu_nvidia_loaded(inv)) {
		unknown = read_strerror(inv->nvidia.gpus_err);
		strbuf_addf(&seen, ", driver unknown (/proc/driver/nvidia/gpus: %s)", unknown);
	}
	if (inv->nvml && inv->nvml->loaded) {
		strbuf_addf(&seen, ", NVML %zu", inv->nvml->n);
		if (inv->nvml->n != want)
			strbuf_addf(&short_, "%sNVML", short_.len ? ", " : "");
	}
	if (inv->cuda && inv->cuda->loaded) {
		strbuf_addf(&seen, ", CUDA %zu", inv->cuda->n);
		if (inv->cuda->n != want)
			strbuf_addf(&short_, "%sCUDA", short_.len ? ", " : "");
	}
	if (inv->torch && inv->torch->ok && inv->torch->device_count >= 0) {
		strbuf_addf(&seen, ", PyTorch %d", inv->torch->device_count);
		if ((size_t)inv->torch->device_count != want)
			strbuf_addf(&short_, "%sPyTorch", short_.len ? ", " : "");
	}
	if (short_.len) {
		struct finding *f = check_add(c, STATUS_FAIL, "gpu count", "expected %zu GPUs; seen: %s (differs: %s)", want,
					      seen.buf, short_.buf);
		char want_s[32];
		snprintf(want_s, sizeof(want_s), "%zu", want);
		finding_compare(f, seen.buf, want_s);
		finding_hint(f, "the first layer that sees fewer is where a GPU is lost: PCI (hardware/BIOS), "
				"driver (dmesg | grep NVRM), NVML/CUDA (reset), PyTorch (CUDA_VISIBLE_DEVICES)");
	} else if (gpu_unidentified(inv, NULL)) {
		struct strbuf files = STRBUF_INIT;
		gpu_unidentified(inv, &files);
		struct finding *f = check_add(c, STATUS_WARN, "gpu count",
					      "expected %zu GPUs; seen: %s; PCI functions that may be GPUs cannot be "
					      "identified (%s)",
					      want, seen.buf, files.buf);
		finding_hint(f, "`lspci -nn -d 10de:` lists NVIDIA's functions; if a file cannot be read, run "
				"gpuready as root");
		strbuf_release(&files);
	} else if (unknown) {
		struct finding *f = check_add(c, STATUS_WARN, "gpu count",
					      "expected %zu GPUs; seen: %s: the driver's count cannot be compared", want,
					      seen.buf);
		finding_hint(f, "`ls /proc/driver/nvidia/gpus` lists the GPUs the driver attached; if it cannot be "
				"read, run gpuready as root");
	} else {
		check_add(c, STATUS_OK, "gpu count", "%zu GPUs at every layer: %s%s", want, seen.buf,
			  inv->live ? "" : " (NVML, CUDA and PyTorch are live-only)");
	}
	strbuf_release(&seen);
	strbuf_release(&short_);
	return 0;
}

const struct check_def check_gpu_count = {
	.id = "gpu.count",
	.section = "NVIDIA GPUs",
	.summary = "PCI, driver, NVML, CUDA and PyTorch all see the expected number of GPUs",
	.run = run,
	.needs = NEEDS_GPU,
};
