/* NVLink 5 baseboards (HGX/DGX B200): what the inventory knows of them.
 *
 * Their NVSwitches are no PCI functions of the host. The host manages them
 * over InfiniBand, through ConnectX-7 functions with the rails' PCI ID whose
 * Vital Product Data says SW_MNG (the NVSwitch management or "LPF" ports;
 * NVIDIA/gpu-operator#2781, bottlerocket-os/bottlerocket-kernel-kit#142).
 * pci.c reads the `vpd` of every Mellanox physical function
 * (pci_dev.vpd_err, pci_dev.nvswitch_mgmt); the attribute is binary and
 * mode 0600 (Linux drivers/pci/vpd.c), so only root reads it. The NVLink
 * Subnet Manager that runs on those ports comes in the nvlsm package
 * (fabric_info.nvlsm_bin, nvlsm_conf: the paths the fabric manager's start
 * script runs, siderolabs/extensions#893). */
#ifndef GPUREADY_NVL5_H
#define GPUREADY_NVL5_H

#include "inventory.h"

#define VENDOR_MELLANOX 0x15b3
#define NVLSM_BIN "/opt/nvidia/nvlsm/sbin/nvlsm"
#define NVLSM_CONF "/usr/share/nvidia/nvlsm/nvlsm.conf"

/* Do the VPD bytes (binary, len of them; NULL none) contain "SW_MNG", the
 * token the fabric manager's start script and the GPU operator look for? */
bool pci_vpd_sw_mng(const char *vpd, size_t len);
/* Is the PCI function bdf an NVSwitch management port? false for NULL or
 * a function the inventory does not have. */
bool pci_bdf_nvswitch_mgmt(const struct pci_info *p, const char *bdf);

#endif
