#!/bin/sh
# Fail closed: a file the checks need that is empty, missing or unreadable
# never turns a finding into OK, and the finding that replaces it names the
# file (docs/adding-a-check.md, "Fail closed").
#
#   damaged.sh cases      one damaged file per case below, each of which
#                         read as OK before: the finding stays warn or fail
#                         (or skip) and names the file
#   damaged.sh mutations  tests/cli/failclosed.py: a deterministic sample
#                         of every kind of file the checks read, in four
#                         fixtures, each emptied, removed and made
#                         unreadable (needs root to run checks as nobody:
#                         exit 77 otherwise)
#
# Environment (tests/meson.build): GPUREADY_BIN, GPUREADY_SOURCE_DIR,
# GPUREADY_FIXTURES. Exit 0 pass, 1 fail, 77 skip.
set -u

. "$(dirname "$0")/lib.sh"

# A world-readable copy of fixture $1 at $TMP/$1 (the unreadable cases run
# as nobody, who must still read everything else).
copy() {
	chmod 755 "$TMP"
	rm -rf "${TMP:?}/$1"
	cp -a "$FIX/$1/root" "$TMP/$1" && chmod -R a+rX "$TMP/$1"
}

# finding JSON ID SUBJECT: "status<TAB>message" of each finding of check ID
# about SUBJECT, one per line.
finding() {
	python3 -c '
import json, sys
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["id"] == sys.argv[2] and c.get("subject") == sys.argv[3]:
        print(c["status"] + "\t" + c["message"])
' "$@"
}

# expect JSON ID SUBJECT STATUS TEXT CASE: some finding of ID about SUBJECT
# has STATUS and TEXT in its message.
expect() {
	finding "$1" "$2" "$3" >"$TMP/f"
	if grep "^$4	" "$TMP/f" | grep -qF -- "$5"; then
		pass "$6: $2 $3 is $4 and says '$5'"
	else
		fail "$6: no $4 finding of $2 $3 saying '$5'"; sed 's/^/  | /' "$TMP/f" >&2
	fi
}

check_json() { # TREE OUT [as nobody]
	if [ "${3:-}" = nobody ]; then
		# a copy nobody can run whatever the permissions above the build tree
		[ -x "$TMP/gpuready" ] || install -m 0755 "$BIN" "$TMP/gpuready"
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$TMP/gpuready" check --sysroot "$1" --json >"$2" 2>"$TMP/err"
	else
		"$BIN" check --sysroot "$1" --json >"$2" 2>"$TMP/err"
	fi
	rc=$?
	[ "$rc" -le 1 ] || { fail "check --sysroot $1 exited $rc"; sed 's/^/  stderr: /' "$TMP/err" >&2; }
}

t_cases() {
	# An empty link_layer hid mlx5_6/1's ToS fail and speed warn behind
	# "[OK] unknown link layer".
	copy h100-roce-broken
	ll=$TMP/h100-roce-broken/sys/class/infiniband/mlx5_6/ports/1/link_layer
	: >"$(readlink -f "$ll")"
	check_json "$TMP/h100-roce-broken" "$TMP/ll.json"
	expect "$TMP/ll.json" rdma.roce_tos mlx5_6/1 warn "mlx5_6/ports/1/link_layer: empty" "empty link_layer"
	expect "$TMP/ll.json" rdma.link_rate mlx5_6/1 warn "mlx5_6/ports/1/link_layer: empty" "empty link_layer"

	# An empty /proc/driver/nvidia/version gave "8 GPUs at every layer"
	# while the driver lists 6.
	copy h100-gpu-degraded
	: >"$TMP/h100-gpu-degraded/proc/driver/nvidia/version"
	check_json "$TMP/h100-gpu-degraded" "$TMP/ver.json"
	expect "$TMP/ver.json" gpu.count "gpu count" fail "driver 6" "empty driver version"

	# An empty `information` turned "[FAIL] GPU Excluded" into "[OK] model unknown".
	copy h100-gpu-degraded
	: >"$TMP/h100-gpu-degraded/proc/driver/nvidia/gpus/0000:ba:00.0/information"
	check_json "$TMP/h100-gpu-degraded" "$TMP/info.json"
	expect "$TMP/info.json" gpu.driver_gpus 0000:ba:00.0 warn \
		"/proc/driver/nvidia/gpus/0000:ba:00.0/information: empty" "empty GPU information"

	# An empty `resource` dropped the BAR1 warn of 0000:3a:00.0.
	copy h100-gpu-degraded
	res=$TMP/h100-gpu-degraded/sys/bus/pci/devices/0000:3a:00.0/resource
	: >"$(readlink -f "$res")"
	check_json "$TMP/h100-gpu-degraded" "$TMP/bar.json"
	expect "$TMP/bar.json" gpu.pcie_link 0000:3a:00.0 skip "0000:3a:00.0/resource: empty" "empty resource"

	# An unreadable fw_ver was counted in "8 NICs on firmware X".
	copy h100-8x-cx7-roce
	fw=$TMP/h100-8x-cx7-roce/sys/class/infiniband/mlx5_7/fw_ver
	: >"$(readlink -f "$fw")"
	check_json "$TMP/h100-8x-cx7-roce" "$TMP/fw.json"
	expect "$TMP/fw.json" rdma.firmware ConnectX-7 warn "7 of 8 NICs on firmware" "empty fw_ver"
	expect "$TMP/fw.json" rdma.firmware ConnectX-7 warn "mlx5_7/fw_ver: empty" "empty fw_ver"

	# A profile.d script that a non-root user cannot read read as "not set".
	if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
		echo "SKIP: the unreadable profile.d case needs root and setpriv (util-linux)"
		return
	fi
	copy h100-roce-broken
	chmod 0 "$TMP/h100-roce-broken/etc/profile.d/nccl-rdma.sh"
	check_json "$TMP/h100-roce-broken" "$TMP/prof.json" nobody
	expect "$TMP/prof.json" rdma.nccl_env unreadable warn "/etc/profile.d/nccl-rdma.sh (Permission denied)" \
		"unreadable profile.d"
	expect "$TMP/prof.json" rdma.nccl_ib_hca NCCL_IB_HCA warn "unverified" "unreadable profile.d"
	expect "$TMP/prof.json" rdma.nccl_debug NCCL_DEBUG warn "nccl-rdma.sh (Permission denied)" "unreadable profile.d"
}

t_mutations() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: damaging files and running the checks as nobody needs root"
		exit 77
	fi
	chmod 755 "$TMP"
	if TMPDIR=$TMP python3 "$SRC/tests/cli/failclosed.py" "$BIN" "$FIX"; then
		pass "no damaged file turns a finding ok or hides a subject"
	else
		fail "tests/cli/failclosed.py found violations (above)"
	fi
}

case ${1:-} in
cases | mutations) "t_$1" ;;
*) echo "usage: $0 cases|mutations" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || exit 1
exit 0
