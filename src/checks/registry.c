/* The check registry: every check, in the order the report shows them.
 * A check file that is not listed here is caught by test_registry. */
#include "check.h"

extern const struct check_def check_rdma_modules;
extern const struct check_def check_rdma_devices;
extern const struct check_def check_rdma_port_state;
extern const struct check_def check_rdma_netdev;
extern const struct check_def check_rdma_link_rate;
extern const struct check_def check_rdma_mtu;
extern const struct check_def check_rdma_roce_gid;
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
extern const struct check_def check_rdma_sockbuf;
extern const struct check_def check_rdma_memlock;
extern const struct check_def check_rdma_port_errors;
extern const struct check_def check_rdma_hw_counters;
extern const struct check_def check_rdma_firmware;

const struct check_def *const check_registry[] = {
	&check_rdma_modules,
	&check_rdma_devices,
	&check_rdma_port_state,
	&check_rdma_netdev,
	&check_rdma_link_rate,
	&check_rdma_mtu,
	&check_rdma_roce_gid,
	&check_rdma_roce_tos,
	&check_rdma_tos_persist,
	&check_rdma_nccl_env,
	&check_rdma_nccl_ib_disable,
	&check_rdma_nccl_ib_hca,
	&check_rdma_nccl_socket_ifname,
	&check_rdma_nccl_ib_tc,
	&check_rdma_nccl_gid_index,
	&check_rdma_nccl_levels,
	&check_rdma_nccl_ranges,
	&check_rdma_nccl_debug,
	&check_rdma_nccl_names,
	&check_rdma_sockbuf,
	&check_rdma_memlock,
	&check_rdma_port_errors,
	&check_rdma_hw_counters,
	&check_rdma_firmware,
};
const size_t check_registry_n = sizeof(check_registry) / sizeof(check_registry[0]);
