/* The check registry: every check, in the order the report shows them.
 * A check file that is not listed here is caught by test_registry. */
#include "check.h"

/* Order: GPU first (an operator runs nvidia-smi before anything else),
 * then RDMA, opened by whose view the report is (rdma.container: a
 * container's or the host's), then GPUDirect RDMA, which needs both. */
extern const struct check_def check_rdma_modules;
extern const struct check_def check_rdma_devices;
extern const struct check_def check_rdma_port_state;
extern const struct check_def check_rdma_netdev;
extern const struct check_def check_rdma_roce_lag;
extern const struct check_def check_rdma_bond_links;
extern const struct check_def check_rdma_bond_lacp;
extern const struct check_def check_rdma_nccl_ib_qps;
extern const struct check_def check_rdma_link_rate;
extern const struct check_def check_rdma_mtu;
extern const struct check_def check_rdma_roce_gid;
extern const struct check_def check_rdma_roce_subnets;
extern const struct check_def check_rdma_roce_tos;
extern const struct check_def check_rdma_tos_persist;
extern const struct check_def check_rdma_nccl_env;
extern const struct check_def check_rdma_nccl_ib_disable;
extern const struct check_def check_rdma_nccl_ib_hca;
extern const struct check_def check_rdma_nccl_socket_ifname;
extern const struct check_def check_rdma_nccl_ib_tc;
extern const struct check_def check_rdma_nccl_gid_index;
extern const struct check_def check_rdma_nccl_levels;
extern const struct check_def check_rdma_nccl_ranges;
extern const struct check_def check_rdma_nccl_debug;
extern const struct check_def check_rdma_nccl_names;
extern const struct check_def check_rdma_nccl_p2p;
extern const struct check_def check_rdma_nccl_shm;
extern const struct check_def check_rdma_nccl_gdr;
extern const struct check_def check_rdma_nccl_tuning;
extern const struct check_def check_rdma_nccl_topo_file;
extern const struct check_def check_rdma_sockbuf;
extern const struct check_def check_rdma_memlock;
extern const struct check_def check_rdma_container;
extern const struct check_def check_rdma_dev_shm;
extern const struct check_def check_rdma_port_errors;
extern const struct check_def check_rdma_link_flaps;
extern const struct check_def check_rdma_roce_ecn;
extern const struct check_def check_rdma_roce_pfc;
extern const struct check_def check_rdma_verbs_provider;
extern const struct check_def check_rdma_nccl_mnnvl;
extern const struct check_def check_rdma_hw_counters;
extern const struct check_def check_rdma_firmware;
extern const struct check_def check_gpu_pci;
extern const struct check_def check_gpu_count;
extern const struct check_def check_gpu_driver;
extern const struct check_def check_gpu_driver_gpus;
extern const struct check_def check_gpu_pcie_link;
extern const struct check_def check_gpu_xid;
extern const struct check_def check_gpu_fabricmanager;
extern const struct check_def check_gpu_nvlsm;
extern const struct check_def check_gpu_imex;
extern const struct check_def check_gpu_mig;
extern const struct check_def check_gpu_vbios;
extern const struct check_def check_gpu_nvml;
extern const struct check_def check_gpu_nvml_p2p;
extern const struct check_def check_gpu_compute_mode;
extern const struct check_def check_gpu_power_clocks;
extern const struct check_def check_gpu_fabric;
extern const struct check_def check_gpu_cuda;
extern const struct check_def check_gpu_copy_bandwidth;
extern const struct check_def check_gpu_pytorch;
extern const struct check_def check_gpudirect_method;
extern const struct check_def check_gpudirect_nic;
extern const struct check_def check_gpudirect_dmabuf;
extern const struct check_def check_gpudirect_peermem;
extern const struct check_def check_gpudirect_path;
extern const struct check_def check_gpudirect_acs;
extern const struct check_def check_gpudirect_iommu;
extern const struct check_def check_gpudirect_cuda_attrs;
extern const struct check_def check_gpudirect_registration;
extern const struct check_def check_gpudirect_next_steps;

const struct check_def *const check_registry[] = {
	&check_gpu_pci,
	&check_gpu_count,
	&check_gpu_driver,
	&check_gpu_driver_gpus,
	&check_gpu_vbios,
	&check_gpu_mig,
	&check_gpu_pcie_link,
	&check_gpu_xid,
	&check_gpu_fabricmanager,
	&check_gpu_nvlsm,
	&check_gpu_imex,
	&check_gpu_nvml,
	&check_gpu_nvml_p2p,
	&check_gpu_fabric,
	&check_gpu_compute_mode,
	&check_gpu_power_clocks,
	&check_gpu_cuda,
	&check_gpu_copy_bandwidth,
	&check_gpu_pytorch,
	&check_rdma_container,
	&check_rdma_modules,
	&check_rdma_devices,
	&check_rdma_verbs_provider,
	&check_rdma_port_state,
	&check_rdma_netdev,
	&check_rdma_roce_lag,
	&check_rdma_bond_links,
	&check_rdma_bond_lacp,
	&check_rdma_link_rate,
	&check_rdma_mtu,
	&check_rdma_roce_gid,
	&check_rdma_roce_subnets,
	&check_rdma_roce_tos,
	&check_rdma_roce_ecn,
	&check_rdma_roce_pfc,
	&check_rdma_tos_persist,
	&check_rdma_nccl_env,
	&check_rdma_nccl_ib_disable,
	&check_rdma_nccl_ib_hca,
	&check_rdma_nccl_ib_qps,
	&check_rdma_nccl_socket_ifname,
	&check_rdma_nccl_ib_tc,
	&check_rdma_nccl_gid_index,
	&check_rdma_nccl_levels,
	&check_rdma_nccl_ranges,
	&check_rdma_nccl_debug,
	&check_rdma_nccl_names,
	&check_rdma_nccl_p2p,
	&check_rdma_nccl_shm,
	&check_rdma_nccl_gdr,
	&check_rdma_nccl_tuning,
	&check_rdma_nccl_mnnvl,
	&check_rdma_nccl_topo_file,
	&check_rdma_sockbuf,
	&check_rdma_dev_shm,
	&check_rdma_memlock,
	&check_rdma_port_errors,
	&check_rdma_link_flaps,
	&check_rdma_hw_counters,
	&check_rdma_firmware,
	&check_gpudirect_method,
	&check_gpudirect_nic,
	&check_gpudirect_dmabuf,
	&check_gpudirect_peermem,
	&check_gpudirect_path,
	&check_gpudirect_acs,
	&check_gpudirect_iommu,
	&check_gpudirect_cuda_attrs,
	&check_gpudirect_registration,
	&check_gpudirect_next_steps,
};
const size_t check_registry_n = sizeof(check_registry) / sizeof(check_registry[0]);
