/* gpudirect.acs: no PCIe bridge between a GPU and its NIC redirects
 * peer-to-peer traffic.
 *
 * ACS Control (extended capability 0x000D, register +6; Linux include/uapi/linux/pci_regs.h) with
 * ReqRedir (0x04), CmpltRedir (0x08) or EgressCtrl (0x20) sends P2P
 * requests up to the root complex/IOMMU instead of across the switch:
 * GPUDirect RDMA breaks or crawls (NCCL's hint for IBV_WC_LOC_PROT_ERR:
 * "often ACS enabled"). The fix is NCCL's troubleshooting command
 * `setpci -s <bdf> ECAP_ACS+0x6.w=0000`, or the kernel's
 * `pci=disable_acs_redir=<bdf>`. Reading past byte 64 of config space
 * needs root: a short read is a skip that says so. */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACS_RR 0x04
#define ACS_CR 0x08
#define ACS_EC 0x20

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct gpu_pair *pairs = NULL;
	size_t n = gpu_pairs(inv, &pairs);
	struct strv bridges = STRV_INIT, who = STRV_INIT;
	for (size_t i = 0; i < n; i++) {
		if (!pairs[i].nic_pci)
			continue;
		size_t before = bridges.n;
		pci_path_class(pairs[i].gpu, pairs[i].nic_pci, &bridges);
		for (size_t k = before; k < bridges.n; k++)
			strv_push(&who, xasprintf("%s <-> %s", pairs[i].gpu->bdf, pairs[i].nic->name));
	}
	free(pairs);
	if (bridges.n == 0) {
		check_add(c, STATUS_SKIP, "acs", "%s", n == 0 ? "no NVIDIA GPU on PCI" : "no bridge on any GPU<->NIC path "
											 "(no RDMA NIC, or PCI hierarchy not recorded)");
		goto out;
	}
	size_t short_reads = 0;
	for (size_t i = 0; i < bridges.n; i++) {
		const struct pci_dev *b = pci_find(&inv->pci, bridges.v[i]);
		if (!b)
			continue;
		if (b->config_len == 0) {
			check_add(c, STATUS_SKIP, b->bdf, "config space not readable (on the path %s)", who.v[i]);
			continue;
		}
		if (b->config_len <= 0x100) {
			short_reads++;
			continue;
		}
		if (!b->acs_off) {
			check_add(c, STATUS_OK, b->bdf, "no ACS capability (on the path %s)", who.v[i]);
			continue;
		}
		unsigned bad = b->acs_ctrl & (ACS_RR | ACS_CR | ACS_EC);
		if (bad) {
			char bits[64];
			snprintf(bits, sizeof(bits), "%s%s%s%s%s", bad & ACS_RR ? "ReqRedir" : "",
				 (bad & ACS_RR) && (bad & (ACS_CR | ACS_EC)) ? "+" : "", bad & ACS_CR ? "CmpltRedir" : "",
				 (bad & ACS_CR) && (bad & ACS_EC) ? "+" : "", bad & ACS_EC ? "EgressCtrl" : "");
			struct finding *f = check_add(c, STATUS_FAIL, b->bdf, "ACS Control 0x%04x has %s set: P2P on the path "
									      "%s is redirected upstream",
						      b->acs_ctrl, bits, who.v[i]);
			finding_hint(f, "`setpci -s %s ECAP_ACS+0x6.w=0000` (until reboot; NCCL troubleshooting), or boot with "
					"pci=disable_acs_redir=%s; in a VM keep ACS and use ATS instead",
				     b->bdf, b->bdf);
		} else {
			check_add(c, STATUS_OK, b->bdf, "ACS Control 0x%04x: no P2P redirect (on the path %s)", b->acs_ctrl,
				  who.v[i]);
		}
	}
	if (short_reads)
		check_add(c, STATUS_SKIP, "acs", "%zu bridge%s on GPU<->NIC paths: only 64 bytes of config space readable; "
						 "reading ACS needs root (run gpuready as root)",
			  short_reads, short_reads == 1 ? "" : "s");
out:
	strv_free(&bridges);
	strv_free(&who);
	return 0;
}

const struct check_def check_gpudirect_acs = {
	.id = "gpudirect.acs",
	.section = "PCIe ACS",
	.summary = "no bridge on a GPU<->NIC path has ACS ReqRedir, CmpltRedir or EgressCtrl set (needs root)",
	.run = run,
	.needs = NEEDS_GPU,
};
