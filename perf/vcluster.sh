#!/bin/sh
# How long does `gpuready cluster check --hosts` take over real ssh on N
# nodes (default 32)? The virtual cluster of tests/cli/cluster_netns.sh
# (tests/cli/vcluster.sh: N network namespaces with sshd and their own host
# names, a bridge in a namespace of its own) with every node on the
# h100-8x-cx7-roce fixture, node03 on other NIC firmware. Prints the time
# of each step: namespaces and keys, sshd up, `cluster check --hosts` (the
# default --parallel 32), and mpirun over ssh (when installed) starting one
# `hostname` per node, then `cluster check` as one rank per node. Not a test: timings depend on the
# machine and its load. Needs root; leaves nothing behind.
#
# usage: perf/vcluster.sh [BUILD_DIR (build)] [N (32)]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd) || exit 2
n=${2:-32}
case $n in '' | *[!0-9]*) echo "usage: $0 [BUILD_DIR] [N (1..250)]" >&2; exit 2 ;; esac
if [ "$n" -lt 3 ] || [ "$n" -gt 250 ]; then echo "$0: N must be 3..250" >&2; exit 2; fi
# shellcheck source=/dev/null
. "$here/../tests/cli/vcluster.sh"
vc_skip_unless_able
tmp=$(mktemp -d)
trap 'vc_down; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

now() { date +%s.%N; }
took() { echo "$1 $2" | awk -v what="$3" '{ printf "%-44s %7.2f s\n", what, $2 - $1 }'; }

t0=$(now)
vc_up "$n" "$tmp" "$build/gpuready" || { echo "$0: the virtual cluster could not be set up" >&2; exit 1; }
fix=$here/../tests/fixtures/h100-8x-cx7-roce/root
k=1
while [ "$k" -le "$n" ]; do
	ln -s "$fix" "$tmp/trees/$(vc_name "$k")"
	k=$((k + 1))
done
rm "$tmp/trees/node03" && vc_tree 3 "$fix" && vc_tree_set 3 sys/class/infiniband/mlx5_3/fw_ver 28.36.1010 || exit 1
t1=$(now)
all=$(seq 1 "$n")
# shellcheck disable=SC2086
for k in $all; do vc_sshd "$k"; done
# shellcheck disable=SC2086
vc_wait_ssh 30 $all || exit 1
t2=$(now)
last=$(vc_name "$n")
vc_hub "$build/gpuready" cluster check --hosts "node[01-${last#node}]" --rsh "ssh -F $tmp/ssh_config {host}" \
	--remote-gpuready "$tmp/remote-gpuready" --host-timeout 60 >"$tmp/check.txt" 2>"$tmp/check.err"
rc=$?
t3=$(now)
echo "virtual cluster of $n nodes ($(nproc) CPUs, build $build)"
took "$t0" "$t1" "namespaces, bridge, keys, trees"
took "$t1" "$t2" "sshd listening on every node"
took "$t2" "$t3" "cluster check --hosts (exit $rc)"
grep -E "^[0-9]+ nodes:|node03:" "$tmp/check.txt" | sed 's/^/    /'
if command -v mpirun >/dev/null 2>&1; then
	for k in $all; do echo "$(vc_name "$k") slots=1"; done >"$tmp/hostfile"
	VC_TIMEOUT=120 vc_mpirun "$tmp/hostfile" hostname >"$tmp/mpi.out" 2>"$tmp/mpi.err"
	rc=$?
	t4=$(now)
	took "$t3" "$t4" "mpirun hostname over ssh (exit $rc, $(sort -u "$tmp/mpi.out" | wc -l) names)"
	vc_launch_wrapper "$n" || exit 1
	VC_TIMEOUT=120 vc_mpirun "$tmp/hostfile" "$tmp/launch-gpuready" cluster check --host-timeout 60 \
		>"$tmp/launch.txt" 2>"$tmp/launch.err"
	rc=$?
	t5=$(now)
	took "$t4" "$t5" "mpirun cluster check over ssh (exit $rc)"
	grep -E "^[0-9]+ nodes:" "$tmp/launch.txt" | sed 's/^/    /'
fi
