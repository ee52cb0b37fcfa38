# The fleet of the cluster tests (tests/cli/cluster.sh, cluster_launch.sh):
# make_fleet DIR writes machine trees built from the fixtures into DIR.
#
#   gpu01..gpu08   copies of h100-8x-cx7-roce with their own host names;
#                  gpu03 has one NIC on other firmware, gpu05 one RoCE
#                  netdev at MTU 4200, gpu06 NCCL_IB_TC=106 in profile.d,
#                  gpu08 is the scenario F02-fabricmanager-version (a
#                  failing node whose fabric manager differs)
#   gh01           gh200-cx7-64k: another hardware shape, alone in its
#                  group, never flagged
# shellcheck shell=sh

make_fleet() {
	fd=$1
	mkdir -p "$fd"
	for i in 01 02 03 04 05 06 07; do
		cp -a "$FIX/h100-8x-cx7-roce/root" "$fd/gpu$i"
		echo "gpu$i" >"$fd/gpu$i/proc/sys/kernel/hostname"
	done
	sh "$FIX/scenario.sh" F02-fabricmanager-version "$fd/gpu08" || fail "scenario.sh F02"
	echo gpu08 >"$fd/gpu08/proc/sys/kernel/hostname"
	cp -a "$FIX/gh200-cx7-64k/root" "$fd/gh01"
	echo gh01 >"$fd/gh01/proc/sys/kernel/hostname"
	echo 28.36.1010 >"$fd/gpu03/sys/class/infiniband/mlx5_3/fw_ver"
	echo 4200 >"$fd/gpu05/sys/class/net/ens3f0np0/mtu"
	sed -i 's/NCCL_IB_TC=104/NCCL_IB_TC=106/' "$fd/gpu06/etc/profile.d/nccl-rdma.sh"
}
