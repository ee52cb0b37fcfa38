/* gpudirect.iommu: the IOMMU does not translate GPU and NIC DMA.
 *
 * An IOMMU group of type DMA or DMA-FQ (Linux Documentation/ABI/testing/sysfs-kernel-iommu_groups) translates every
 * DMA; NVIDIA does not support IOMMU-enabled P2P on bare-metal PCIe
 * systems and recommends iommu=pt (CUDA programming guide, "IOMMU on
 * Linux"): warn per GPU/NIC. identity (passthrough) or no IOMMU is ok. An
 * active IOMMU also turns ACS on (pci_request_acs), see gpudirect.acs.
 * The relevant kernel command-line switches are reported. */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

static const char *const switches[] = { "iommu=", "iommu.passthrough=", "iommu.strict=", "intel_iommu=",
					"amd_iommu=", "pci=" };

static void cmdline_switches(const struct inventory *inv, struct strbuf *out)
{
	if (!inv->kernel.cmdline)
		return;
	_cleanup_free_ char *copy = xstrdup(inv->kernel.cmdline);
	char *save = NULL;
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		for (size_t i = 0; i < ARRAY_SIZE(switches); i++)
			if (!strncmp(t, switches[i], strlen(switches[i])))
				strbuf_addf(out, "%s%s", out->len ? " " : "", t);
}

/* Adds p to the translated list (DMA, DMA-FQ) or the fine one. */
static void sort_dev(const struct pci_dev *p, const char *what, struct strv *translated, struct strv *fine)
{
	if (p->iommu_type && (!strcmp(p->iommu_type, "DMA") || !strcmp(p->iommu_type, "DMA-FQ")))
		strv_push(translated, xasprintf("%s %s: group %d, %s", what, p->bdf, p->iommu_group, p->iommu_type));
	else
		strv_push(fine, xasprintf("%s %s: %s", what, p->bdf,
					  p->iommu_type ? p->iommu_type : "no IOMMU group"));
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus);
	struct strbuf sw = STRBUF_INIT;
	struct strv translated = STRV_INIT, fine = STRV_INIT;
	struct finding *f;
	cmdline_switches(inv, &sw);
	if (n == 0) {
		check_add(c, STATUS_SKIP, "iommu", "no NVIDIA GPU on PCI");
		goto out;
	}
	if (!inv->pci.iommu_groups) {
		check_add(c, STATUS_OK, "iommu", "no IOMMU groups: the IOMMU is off%s%s%s", sw.len ? " (kernel command line: " : "",
			  sw.buf, sw.len ? ")" : "");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		sort_dev(gpus[i], "GPU", &translated, &fine);
	for (size_t i = 0; i < inv->rdma.n; i++) {
		const struct pci_dev *p = pci_find(&inv->pci, inv->rdma.v[i].pci_bdf);
		char what[96];
		snprintf(what, sizeof(what), "NIC %s", inv->rdma.v[i].name);
		if (p)
			sort_dev(p, what, &translated, &fine);
	}
	if (translated.n) {
		f = check_add(c, STATUS_WARN, "iommu", "the IOMMU translates DMA of %zu GPU/NIC function%s (DMA/DMA-FQ "
						       "groups): GPUDirect P2P is unsupported or slow this way; kernel "
						       "command line: %s",
			      translated.n, translated.n == 1 ? "" : "s", sw.len ? sw.buf : "no IOMMU switches");
		finding_hint(f, "add iommu=pt to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, "
				"update-grub, reboot)");
		for (size_t i = 0; i < translated.n; i++)
			finding_detail(f, "%s", translated.v[i]);
	} else {
		f = check_add(c, STATUS_OK, "iommu", "IOMMU active (%zu unit%s), GPU and NIC groups in passthrough; kernel "
						     "command line: %s",
			      inv->pci.iommu_units.n, inv->pci.iommu_units.n == 1 ? "" : "s", sw.len ? sw.buf : "no IOMMU switches");
		for (size_t i = 0; i < fine.n; i++)
			finding_detail(f, "%s", fine.v[i]);
	}
out:
	free(gpus);
	strbuf_release(&sw);
	strv_free(&translated);
	strv_free(&fine);
	return 0;
}

const struct check_def check_gpudirect_iommu = {
	.id = "gpudirect.iommu",
	.section = "IOMMU",
	.summary = "GPU and NIC IOMMU groups are identity (passthrough) or there is no IOMMU; DMA/DMA-FQ warns",
	.run = run,
	.needs = NEEDS_GPU,
};
