/* gpu.pci: the NVIDIA GPUs on PCI, each bound to the nvidia driver.
 *
 * GPUs are vendor 0x10de functions of class 0x0302xx (3D controller, data
 * centre GPUs) or 0x0300xx (VGA); NVSwitches (0x0680xx) are not GPUs
 * (pci.ids; Linux include/linux/pci_ids.h). A GPU bound to nothing, to nouveau or to vfio-pci cannot
 * run CUDA on this host. --expect-gpus turns a count mismatch into a fail;
 * without it, the PCI count is what the later layers must all see. No GPU
 * at all is a fail: this tool verifies GPU nodes. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <stdlib.h>
#include <string.h>

/* How to give a GPU to the nvidia driver, by what holds it now (the
 * kernel's sysfs-bus-pci ABI document: a driver's bind and unbind files
 * take the function's address). */
static void binding_hint(struct finding *f, const struct pci_dev *p)
{
	if (!p->driver)
		finding_hint(f, "install and load the NVIDIA driver: `apt install nvidia-driver-570-open`, then "
				"`modprobe nvidia`");
	else if (!strcmp(p->driver, "nouveau"))
		finding_hint(f, "blacklist nouveau (`echo 'blacklist nouveau' > "
				"/etc/modprobe.d/blacklist-nouveau.conf && update-initramfs -u`, then reboot) and "
				"install the NVIDIA driver");
	else if (!strcmp(p->driver, "vfio-pci"))
		finding_hint(f, "this GPU is reserved for VM passthrough: remove its ID from vfio-pci.ids (kernel "
				"command line or /etc/modprobe.d) and rebind it to nvidia, or reboot");
	else
		finding_hint(f, "unbind it and bind the nvidia driver (`echo %s > /sys/bus/pci/devices/%s/driver/unbind "
				"&& echo %s > /sys/bus/pci/drivers/nvidia/bind`)",
			     p->bdf, p->bdf, p->bdf);
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus), nvswitch = 0;
	char model[128];
	struct finding *f;

	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		if (!p->ids_err && !p->class_err && p->vendor == VENDOR_NVIDIA && (p->class_code >> 8) == 0x0680)
			nvswitch++;
	}
	if (n == 0) {
		f = check_add(c, STATUS_FAIL, "gpu", "no NVIDIA GPU on PCI (%zu PCI functions read%s)", inv->pci.n,
			      inv->pci.err ? "; /sys/bus/pci/devices unreadable" : "");
		finding_hint(f, "check that the GPUs are seated and enabled in the BIOS (`lspci -d 10de:`); on a "
				"VM, that they are passed through");
	}
	for (size_t i = 0; i < n; i++) {
		const struct pci_dev *p = gpus[i];
		gpu_model(inv, p, model, sizeof(model));
		if (p->driver && !strcmp(p->driver, "nvidia")) {
			f = check_add(c, STATUS_OK, p->bdf, "%s (%04x:%04x), driver nvidia, NUMA node %d", model, p->vendor,
				      p->device, p->numa_node);
			continue;
		}
		if (!p->driver && nvproc_for(inv, p->bdf)) {
			/* the driver link was not recorded, but the driver lists the GPU */
			check_add(c, STATUS_OK, p->bdf, "%s, driven by nvidia (listed in /proc/driver/nvidia/gpus; the "
							"driver link is not recorded)",
				  model);
			continue;
		}
		f = check_add(c, STATUS_FAIL, p->bdf, "%s is bound to %s, not nvidia: CUDA cannot use it", model,
			      p->driver ? p->driver : "no driver");
		binding_hint(f, p);
	}
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		const char *attr = pci_maybe_gpu(inv, p);
		if (!attr)
			continue;
		f = check_add(c, STATUS_WARN, p->bdf,
			      "PCI function of unknown %s (/sys/bus/pci/devices/%s/%s: %s): it may be a GPU, and is not "
			      "counted as one",
			      attr, p->bdf, attr, read_strerror(!strcmp(attr, "class") ? p->class_err : p->ids_err));
		finding_hint(f, "`lspci -nn -s %s` names the function; if the file cannot be read, run gpuready as "
				"root",
			     p->bdf);
	}
	if (c->expect->expect_gpus > 0 && (int)n != c->expect->expect_gpus) {
		f = check_add(c, STATUS_FAIL, "gpu count", "%zu NVIDIA GPUs on PCI, expected %d (--expect-gpus)", n,
			      c->expect->expect_gpus);
		finding_hint(f, "a missing GPU is a hardware or BIOS problem (`lspci -d 10de:`, BMC event log, "
				"reseat); `dmesg | grep -i nvrm` for driver errors");
	} else if (n > 0 && c->expect->expect_gpus > 0) {
		check_add(c, STATUS_OK, "gpu count", "%zu NVIDIA GPU%s on PCI, as expected (--expect-gpus)", n,
			  n == 1 ? "" : "s");
	}
	if (n > 0 && nvswitch)
		check_add(c, STATUS_OK, "nvswitch", "%zu NVSwitch function%s on PCI (not GPUs)", nvswitch,
			  nvswitch == 1 ? "" : "s");
	free(gpus);
	return 0;
}

const struct check_def check_gpu_pci = {
	.id = "gpu.pci",
	.section = "NVIDIA GPUs",
	.summary = "NVIDIA GPUs on PCI (not NVSwitches), each bound to the nvidia driver; --expect-gpus count",
	.run = run,
};
