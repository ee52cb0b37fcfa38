/* gpudirect.dmabuf: the DMA-BUF prerequisites, each a finding (NVIDIA
 * open-gpu-kernel-modules README: "DMABUF support for CUDA allocations").
 * Where DMA-BUF is impossible — no RDMA NIC that can do GPUDirect RDMA, or
 * a GPU older than Turing, which the open modules cannot drive — every
 * prerequisite is a skip saying so (legacy peer memory is then the method,
 * gpudirect.method). Otherwise:
 *   - the open NVIDIA kernel modules (only they export CUDA memory as
 *     dma-buf) — proprietary is a fail whose fix is the -open package;
 *   - kernel RDMA dma-buf MRs: below 5.12 a fail, below 6.2 a warn (the
 *     release bring-up guides commonly recommend), from 6.2 ok;
 *   - CONFIG_PCI_P2PDMA=y (Linux drivers/pci/Kconfig; warn if not set);
 *   - CONFIG_INFINIBAND_USER_MEM and CONFIG_INFINIBAND_ON_DEMAND_PAGING:
 *     mlx5 refuses dma-buf MRs without them (linux hw/mlx5/mr.c) — fail.
 * Where legacy peer memory is the method in use (nvidia_peermem loaded,
 * DMA-BUF unusable: the proprietary driver or an old kernel), GPUDirect RDMA
 * works without DMA-BUF (NVIDIA GPUDirect RDMA documentation; NCCL
 * src/transport/net_ib/gdr.cc uses either), so the DMA-BUF-only
 * prerequisites (open module, kernel, CONFIG_PCI_P2PDMA, ODP) are
 * information about switching, never a warn or fail of a working node
 * (docs/failure-modes.md T06). CONFIG_INFINIBAND_USER_MEM stays a fail: any
 * user memory registration needs it. */
#include "checks/check.h"
#include "common.h"

#include <string.h>

/* The status of a missing DMA-BUF prerequisite: bad, or information where
 * legacy peer memory is the working method. */
static enum status need(const struct gdr_state *s, enum status bad)
{
	return s->method == GDR_PEERMEM ? STATUS_INFO : bad;
}

/* The note after a message that is information for that reason. */
static const char *peermem_note(const struct gdr_state *s)
{
	return s->method == GDR_PEERMEM ? "; legacy peer memory (nvidia_peermem) is the method in use, "
					  "so this matters only to switch to DMA-BUF"
					: "";
}

static void kconf(struct check_ctx *c, const struct gdr_state *s, const char *name, enum status missing,
		  const char *why)
{
	struct finding *f;
	const char *v = kconfig_get(&c->inv->kconfig, name);
	if (!v) {
		check_add(c, STATUS_SKIP, name, "kernel config not found (/boot/config-%s or /proc/config.gz)",
			  c->inv->kernel.release ? c->inv->kernel.release : "<release>");
		return;
	}
	if (!strcmp(v, "y")) {
		check_add(c, STATUS_OK, name, "=y (%s)", c->inv->kconfig.source);
		return;
	}
	f = check_add(c, missing, name, "%s (%s): %s%s", *v ? v : "not set", c->inv->kconfig.source, why,
		      missing == STATUS_INFO ? peermem_note(s) : "");
	finding_hint(f, "use a kernel built with %s=y (Ubuntu 24.04's 6.8 kernels have it)", name);
	finding_requires(f, "dmabuf_possible");
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct gdr_state s;
	struct finding *f;
	gdr_state_get(inv, &s);
	if (s.gpus == 0 || s.nics == 0) {
		gdr_facts(check_add(c, STATUS_SKIP, "dma-buf", "%s", s.why), &s);
		return 0;
	}
	if (s.pre_turing) {
		f = check_add(c, STATUS_SKIP, "dma-buf", "DMA-BUF is impossible: %s (10de:%04x) is older than Turing, "
							  "and only the open kernel modules (Turing or newer) export GPU "
							  "memory as dma-buf; %s",
			      s.pre_turing->bdf, s.pre_turing->device,
			      s.gdr_possible ? "legacy peer memory (nvidia-peermem) is the method"
					     : "no RDMA NIC here can do GPUDirect RDMA either (see gpudirect.nic)");
		gdr_facts(f, &s);
		return 0;
	}
	if (!s.gdr_possible) {
		gdr_facts(check_add(c, STATUS_SKIP, "dma-buf", "%s", s.why), &s);
		return 0;
	}
	char pkg[48], old[48];
	if (!s.driver_loaded)
		check_add(c, STATUS_SKIP, "nvidia", "the NVIDIA driver is not loaded (see gpu.driver)");
	else if (s.flavour == NV_FLAVOUR_OPEN)
		check_add(c, STATUS_OK, "nvidia", "open kernel module %s: DMA-BUF export supported",
			  inv->nvidia.version ? inv->nvidia.version : "");
	else if (s.flavour == NV_FLAVOUR_PROPRIETARY) {
		f = check_add(c, need(&s, STATUS_FAIL), "nvidia",
			      "proprietary kernel module %s: no DMA-BUF export of GPU memory%s",
			      inv->nvidia.version ? inv->nvidia.version : "", peermem_note(&s));
		finding_hint(f, "`apt remove %s && apt install %s`, then reboot", gpu_driver_package(inv, false, old, sizeof(old)),
			     gpu_driver_package(inv, true, pkg, sizeof(pkg)));
		finding_requires(f, "open_driver_possible");
		finding_requires(f, "dmabuf_possible");
	} else {
		check_add(c, STATUS_SKIP, "nvidia", "driver flavour unknown (no /proc/driver/nvidia/version or taint)");
	}

	if (s.kmaj < 0) {
		check_add(c, STATUS_SKIP, "kernel", "kernel release unknown");
	} else if (!s.kernel_dmabuf) {
		f = check_add(c, need(&s, STATUS_FAIL), "kernel",
			      "%s: RDMA dma-buf memory regions need Linux 5.12 or later%s", inv->kernel.release,
			      peermem_note(&s));
		finding_hint(f, "upgrade the kernel (6.2+; Ubuntu 24.04 ships 6.8)");
		finding_requires(f, "dmabuf_possible");
	} else if (s.kmaj < 6 || (s.kmaj == 6 && s.kmin < 2)) {
		f = check_add(c, need(&s, STATUS_WARN), "kernel",
			      "%s supports dma-buf MRs (5.12+), but 6.2+ is recommended for full DMA-BUF support%s",
			      inv->kernel.release, peermem_note(&s));
		finding_hint(f, "upgrade to a 6.2+ kernel (on Ubuntu 22.04: `apt install linux-generic-hwe-22.04`)");
		finding_requires(f, "dmabuf_possible");
	} else {
		check_add(c, STATUS_OK, "kernel", "%s supports DMA-BUF (6.2+)", inv->kernel.release);
	}
	kconf(c, &s, "CONFIG_PCI_P2PDMA", need(&s, STATUS_WARN),
	      "the kernel's PCI peer-to-peer DMA is off (DMA-BUF GPUDirect RDMA needs it)");
	kconf(c, &s, "CONFIG_INFINIBAND_USER_MEM", STATUS_FAIL, "mlx5 refuses user memory registration without it");
	kconf(c, &s, "CONFIG_INFINIBAND_ON_DEMAND_PAGING", need(&s, STATUS_FAIL),
	      "mlx5 refuses dma-buf memory registration without it");
	return 0;
}

const struct check_def check_gpudirect_dmabuf = {
	.id = "gpudirect.dmabuf",
	.section = "DMA-BUF Support (NVIDIA-Recommended Method)",
	.summary = "open NVIDIA module, kernel >= 5.12 (6.2 recommended), CONFIG_PCI_P2PDMA, IB user memory and ODP",
	.run = run,
	.needs = NEEDS_GPU,
};
