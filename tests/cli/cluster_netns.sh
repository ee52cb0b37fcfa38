#!/bin/sh
# Cluster mode over real ssh on a virtual cluster (tests/cli/vcluster.sh):
# ten network namespaces joined by a bridge, each node with its own host
# name (UTS namespace) and OpenSSH sshd, asked by
# `gpuready cluster check --hosts` through `ssh -F CONFIG {host}`; host
# names resolve through the ssh config, never /etc/hosts.
#
#   node01..node08  answer with their own machine tree, a copy of
#                   h100-8x-cx7-roce: node03 has one NIC on other firmware,
#                   node05 one RoCE netdev at MTU 4200, node06 NCCL_IB_TC=106
#                   in /etc/profile.d/nccl-rdma.sh, the others are equal
#   node09          its sshd answers, its gpuready never does
#   node10          down: no sshd, connections are refused
#
# It asserts that each broken node is a row with its reason within the
# --host-timeout, that every drifted fact and node is named and no healthy
# node is, in the text and in the JSON; then (mpi_over_ssh) that OpenMPI's
# mpirun with a hostfile and ssh as its agent starts one process in each of
# the eight namespaces, which print eight distinct host names.
#
# Needs root, ip netns, unshare and sshd/ssh (Debian's openssh-server and
# openssh-client): otherwise exit 77, meson's skip. Every wait is bounded;
# a trap removes every namespace and process it made, also on failure.
set -u

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vcluster.sh"

vc_skip_unless_able
launch=
trap '[ -n "$launch" ] && kill "$launch" 2>/dev/null; vc_down; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

V=$TMP/vc
vc_up 10 "$V" "$BIN" || { fail "the virtual cluster could not be set up"; exit 1; }
H100=$FIX/h100-8x-cx7-roce/root
# the equal nodes read the fixture itself (gpuready only reads a tree)
for n in node01 node02 node04 node07 node08 node09; do ln -s "$H100" "$V/trees/$n"; done
for k in 3 5 6; do
	vc_tree "$k" "$H100" && vc_tree_set "$k" proc/sys/kernel/hostname "$(vc_name "$k")" ||
		{ fail "node0$k's tree"; exit 1; }
done
vc_tree_set 3 sys/class/infiniband/mlx5_3/fw_ver 28.36.1010
vc_tree_set 5 sys/class/net/ens3f0np0/mtu 4200
vc_tree_set 6 etc/profile.d/nccl-rdma.sh "$(sed 's/NCCL_IB_TC=104/NCCL_IB_TC=106/' "$H100/etc/profile.d/nccl-rdma.sh")"
: >"$V/hang/node09"
for k in 1 2 3 4 5 6 7 8 9; do vc_sshd "$k"; done
vc_wait_ssh 10 1 2 3 4 5 6 7 8 9 || { fail "sshd did not start"; cat "$V"/log/* >&2; exit 1; }
pass "nine sshd listening in their namespaces"
RSH="ssh -F $V/ssh_config {host}"

# drift_ok WHAT JSON TEXT N: N nodes, node01..node08 pass or warn, and the
# drift names node03's firmware, node05's MTU, node06's NCCL_IB_TC and no
# other node, in the JSON and the text.
drift_ok() {
	what=$1
	python3 - "$2" "$4" <<'EOF' && pass "$what: JSON: states and drift" || fail "$what: JSON: states and drift"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"]["nodes"] == int(sys.argv[2]), d["summary"]
nodes = {n["node"]: n for n in d["nodes"]}
for k in range(1, 9):
    assert nodes["node%02d" % k]["state"] in ("pass", "warn"), nodes["node%02d" % k]
named = {}
for r in d["drift"]:
    for v in r["values"][1:]:
        for n in v["nodes"]:
            named.setdefault(n, set()).add((r["fact"], v["value"]))
assert named.get("node03") == {("nic.fw.ConnectX-7", "28.36.1010,28.39.1002")}, named
assert ("nccl_var.NCCL_IB_TC", "106") in named.get("node06", set()), named
assert any(f.startswith("rdma.mtu.") and v == "4200,9000" for f, v in named.get("node05", set())), named
assert set(named) == {"node03", "node05", "node06"}, named
assert {n for n in nodes if nodes[n].get("drift")} == set(named), nodes
EOF
	contains "$3" "$4 nodes: " "$what: text: $4 nodes"
	contains "$3" "node03: 28.36.1010,28.39.1002" "$what: text: node03's firmware named"
	contains "$3" "node05: 4200,9000" "$what: text: node05's MTU named"
	contains "$3" "node06: 106" "$what: text: node06's NCCL_IB_TC named"
	for healthy in node01 node02 node04 node07 node08; do
		lacks "$3" "$healthy:" "$what: text: $healthy is not named"
	done
}

cluster_over_ssh() {
	t0=$(date +%s)
	# the text and the JSON at once: each waits the 10 s for node09
	vc_hub "$BIN" cluster check --hosts 'node[01-10]' --rsh "$RSH" --remote-gpuready "$V/remote-gpuready" \
		--host-timeout 10 >"$TMP/check.txt" 2>/dev/null &
	text=$!
	vc_hub "$BIN" cluster check --hosts 'node[01-10]' --rsh "$RSH" --remote-gpuready "$V/remote-gpuready" \
		--host-timeout 10 --json >"$TMP/check.json" 2>"$TMP/check.err"
	rc=$?
	wait "$text"
	t1=$(date +%s)
	[ "$rc" -eq 1 ] && pass "--hosts over ssh: exit 1" || fail "--hosts over ssh: exit $rc (want 1)"
	[ $((t1 - t0)) -le 20 ] && pass "--hosts: the run ends within the deadline ($((t1 - t0)) s)" ||
		fail "--hosts: the run took $((t1 - t0)) s (host timeout 10 s)"
	schema_ok cluster.schema.json "--hosts over ssh" "$TMP/check.json"
	drift_ok "--hosts" "$TMP/check.json" "$TMP/check.txt" 10
	python3 - "$TMP/check.json" <<'EOF' && pass "--hosts: JSON: the broken nodes' reasons" ||
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"]["unreachable"] == 2, d["summary"]
nodes = {n["node"]: n for n in d["nodes"]}
assert sorted(nodes) == ["node%02d" % k for k in range(1, 11)], sorted(nodes)
assert nodes["node09"]["state"] == "unreachable" and "no answer within 10 s" in nodes["node09"]["unreachable"], nodes["node09"]
assert nodes["node10"]["state"] == "unreachable" and "Connection refused" in nodes["node10"]["unreachable"], nodes["node10"]
EOF
		fail "--hosts: JSON: the broken nodes' reasons"
	contains "$TMP/check.txt" "10 nodes: 6 pass, 2 warn, 0 fail, 2 unreachable" "--hosts: text: summary"
	contains "$TMP/check.txt" "unreachable  node09: no answer within 10 s" "--hosts: text: a node that never answers is a row"
	contains "$TMP/check.txt" \
		"unreachable  node10: remote shell exited with 255: ssh: connect to host $(vc_addr 10) port 22: Connection refused" \
		"--hosts: text: a node that is down is a row with ssh's words"
}

# mpirun in the hub starts one process per namespace through ssh; the orted
# on each node connects back to mpirun at the bridge's address: eight
# distinct host names from `hostname`.
mpi_hostname() {
	VC_TIMEOUT=30 vc_mpirun "$TMP/hostfile" hostname >"$TMP/mpi.out" 2>"$TMP/mpi.err"
	rc=$?
	[ "$rc" -eq 0 ] && pass "mpirun over ssh: exit 0" || { fail "mpirun over ssh: exit $rc"; head -20 "$TMP/mpi.err" >&2; }
	sort -u "$TMP/mpi.out" >"$TMP/mpi.names"
	for k in 1 2 3 4 5 6 7 8; do vc_name "$k"; done >"$TMP/mpi.want"
	cmp -s "$TMP/mpi.want" "$TMP/mpi.names" && [ "$(wc -l <"$TMP/mpi.out")" -eq 8 ] &&
		pass "mpirun over ssh: eight distinct host names, one process each" ||
		{ fail "mpirun over ssh: host names"; cat "$TMP/mpi.out" >&2; }
}

# Then `gpuready cluster check` under the launcher, one rank per namespace:
# rank 0 gathers the records over gpuready's control plane (its address
# from MPI: --bootstrap auto and the gpuready-mpi module next to the
# binary, else --master; VC_TEST_MASTER=1 forces --master); each rank reads
# its node's tree (vc_launch_wrapper).
# mpi_launch_run runs it (JSON, then text) while --hosts waits for node09;
# mpi_launch_ok asserts.
mpi_launch_run() {
	vc_launch_wrapper 8 || { echo 2 >"$TMP/launch.rc"; return; }
	# a build without the module: rank 0 (node01) named by --master, a port
	# that is free in node01's own network namespace
	boot=
	[ -f "$(dirname "$BIN")/gpuready-mpi.so" ] && [ -z "${VC_TEST_MASTER:-}" ] || boot="--master $(vc_addr 1):29400"
	# shellcheck disable=SC2086
	VC_TIMEOUT=30 vc_mpirun "$TMP/hostfile" "$V/launch-gpuready" cluster check --host-timeout 10 --json $boot \
		>"$TMP/launch.json" 2>"$TMP/launch.err"
	echo $? >"$TMP/launch.rc"
	# shellcheck disable=SC2086
	VC_TIMEOUT=30 vc_mpirun "$TMP/hostfile" "$V/launch-gpuready" cluster check --host-timeout 10 $boot \
		>"$TMP/launch.txt" 2>"$TMP/launch.txt.err"
}

mpi_launch_ok() {
	rc=$(cat "$TMP/launch.rc")
	[ "$rc" -eq 1 ] && pass "mpirun cluster check: exit 1" ||
		{ fail "mpirun cluster check: exit $rc (want 1)"; grep -v '^\[' "$TMP/launch.err" | head -20 >&2; }
	schema_ok cluster.schema.json "mpirun cluster check" "$TMP/launch.json"
	drift_ok "mpirun cluster check" "$TMP/launch.json" "$TMP/launch.txt" 8
	contains "$TMP/launch.txt" "8 nodes: 6 pass, 2 warn, 0 fail, 0 unreachable" "mpirun cluster check: every rank's record"
	sed -n '/^Drift/,$p' "$TMP/check.txt" >"$TMP/hosts.drift"
	sed -n '/^Drift/,$p' "$TMP/launch.txt" >"$TMP/launch.drift"
	cmp -s "$TMP/hosts.drift" "$TMP/launch.drift" && pass "mpirun cluster check: the drift equals --hosts'" ||
		{ fail "mpirun cluster check: the drift differs from --hosts'"; diff "$TMP/hosts.drift" "$TMP/launch.drift" >&2; }
}

# pdsh as the remote shell (docs/cluster.md: -N drops pdsh's "HOST: "
# prefix, which would be no record); its ssh module takes our ssh config
# from PDSH_SSH_ARGS_APPEND, which gpuready passes on in the environment
pdsh_run() {
	if ! command -v pdsh >/dev/null 2>&1; then
		echo "SKIP: pdsh missing (Debian's pdsh): the pdsh part"
		return
	fi
	PDSH_SSH_ARGS_APPEND="-F $V/ssh_config" vc_hub "$BIN" cluster check --hosts 'node[01-06]' \
		--rsh 'pdsh -N -R ssh -w {host}' --remote-gpuready "$V/remote-gpuready" --host-timeout 10 \
		>"$TMP/pdsh.txt" 2>"$TMP/pdsh.err"
	rc=$?
	[ "$rc" -eq 1 ] && pass "--rsh 'pdsh -N -R ssh -w {host}': exit 1" || { fail "pdsh: exit $rc"; head -5 "$TMP/pdsh.err" >&2; }
	contains "$TMP/pdsh.txt" "6 nodes: 4 pass, 2 warn, 0 fail, 0 unreachable" "pdsh -N: every node's record"
	contains "$TMP/pdsh.txt" "node03: 28.36.1010,28.39.1002" "pdsh -N: node03's firmware named"
}
pdsh_run

if command -v mpirun >/dev/null 2>&1; then
	for k in 1 2 3 4 5 6 7 8; do echo "$(vc_name "$k") slots=1"; done >"$TMP/hostfile"
	mpi_hostname
	mpi_launch_run &
	launch=$!
	cluster_over_ssh
	wait "$launch"
	launch=
	mpi_launch_ok
else
	echo "SKIP: mpirun missing (Debian's openmpi-bin): the MPI part"
	cluster_over_ssh
fi

[ "$FAILS" -eq 0 ] || exit 1
