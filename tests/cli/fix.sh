#!/bin/sh
# gpuready fix (docs/fix.md).
#   fixtures: every fixture with a remedy: apply, check, plan again, script,
#             revert (tests/cli/fix_fixtures.py)
#   cmdline:  the plan changes nothing, exit codes, the JSON schema, --script
#             to standard output, disruptive remedies held while GPU work runs,
#             usage errors
# shellcheck shell=sh
. "$(dirname "$0")/lib.sh"

mode=${1:?usage: fix.sh fixtures|cmdline}

# A copy of fixture $1's tree at $2 (in memory where there is /dev/shm).
copy() {
	cp -a "$FIX/$1/root" "$2"
}

case $mode in
fixtures)
	for py in python3 /usr/bin/python3; do
		command -v "$py" >/dev/null && break
	done
	"$py" "$SRC/tests/cli/fix_fixtures.py" "$BIN" "$FIX" || FAILS=$((FAILS + 1))
	;;
cmdline)
	# a healthy node: nothing to change, exit 0
	if expect_exit 0 "$BIN" fix --sysroot "$FIX/h100-8x-cx7-roce/root"; then
		contains "$TMP/out" "0 changes planned, 0 manual steps" "healthy node: nothing planned"
	fi
	# planning changes nothing in the tree
	t=$TMP/t1
	copy h100-roce-broken "$t"
	ls -lR "$t" >"$TMP/ls.before" 2>/dev/null
	if expect_exit 1 "$BIN" fix --sysroot "$t"; then
		contains "$TMP/out" "+++ /etc/sysctl.d/90-gpuready.conf" "broken node: the sysctl drop-in as a diff"
		contains "$TMP/out" "now (in the tree): /proc/sys/net/core/rmem_max = 268435456" "the value sysctl -w sets, in the tree"
		contains "$TMP/out" "Manual steps (no safe mechanical change):" "manual steps listed"
		contains "$TMP/out" "rdma.port_state mlx5_3/1" "a cable problem is a manual step"
	fi
	ls -lR "$t" >"$TMP/ls.after" 2>/dev/null
	if cmp -s "$TMP/ls.before" "$TMP/ls.after" && [ ! -e "$t/var/log/gpuready" ]; then
		pass "a plan without --apply changes nothing"
	else
		fail "a plan without --apply changed the tree"
	fi
	# JSON and its schema, before and after --apply
	if expect_exit 1 "$BIN" fix --json --sysroot "$t"; then
		cp "$TMP/out" "$TMP/plan.json"
		schema_ok fix.schema.json "fix --json (plan)" "$TMP/plan.json"
	fi
	"$BIN" fix --apply --json --sysroot "$t" >"$TMP/applied.json" 2>"$TMP/err"
	schema_ok fix.schema.json "fix --apply --json" "$TMP/applied.json"
	contains "$TMP/applied.json" '"state": "applied"' "--apply --json reports each answered finding"
	contains "$t/var/log/gpuready/fix.log" "	apply	rdma.sockbuf	/etc/sysctl.d/90-gpuready.conf	created	-	sha256:" \
		"the audit log names the check, the file and its digests"
	# the script on standard output
	if expect_exit 1 "$BIN" fix --script - --sysroot "$FIX/v100-cx3pro/root"; then
		contains "$TMP/out" 'ROOT="${ROOT:-}"' "--script -: the script on standard output"
		contains "$TMP/out" "	sysctl -w net.core.rmem_max=268435456" "--script runs sysctl -w on the node"
	fi
	"$BIN" fix --script - --sysroot "$FIX/v100-cx3pro/root" >"$TMP/s.sh" 2>"$TMP/err"
	sh -n "$TMP/s.sh" && pass "--script -: standard output is a shell script and nothing else" ||
		fail "--script - does not parse as a script"
	# a file sysctl reads later that lowers the value: a manual step naming it
	t3=$TMP/t3
	copy v100-cx3pro "$t3"
	mkdir -p "$t3/usr/lib/sysctl.d"
	echo "net/core/rmem_max=4096" >"$t3/usr/lib/sysctl.d/95-vendor.conf"
	if expect_exit 1 "$BIN" fix --sysroot "$t3" --only rdma.sockbuf; then
		contains "$TMP/out" "not automatic: /usr/lib/sysctl.d/95-vendor.conf:1 sets net.core.rmem_max = 4096 and is read after /etc/sysctl.d/90-gpuready.conf" \
			"a later sysctl.d file (another directory, '/' separators) that lowers the value is named"
	fi
	# the file to write cannot be read (a directory there): a manual step, the rest planned
	rm -rf "$t3/usr/lib/sysctl.d"
	mkdir -p "$t3/etc/sysctl.d/90-gpuready.conf"
	if expect_exit 1 "$BIN" fix --sysroot "$t3"; then
		contains "$TMP/out" "not automatic: cannot read /etc/sysctl.d/90-gpuready.conf" \
			"a file the remedy cannot read makes its findings manual steps"
		contains "$TMP/out" "/etc/security/limits.d/90-gpuready.conf" "the other remedies are still planned"
	fi
	# a snapshot keeps only the NCCL lines of /etc/profile.d: never planned as the whole file
	"$BIN" snapshot --sysroot "$FIX/h100-roce-broken/root" "$TMP/snap" >/dev/null 2>&1
	contains "$TMP/snap/.gpuready/partial" "/etc/profile.d/nccl-rdma.sh" "snapshot: the partly recorded files are listed"
	if expect_exit 0 "$BIN" fix --sysroot "$TMP/snap" --only rdma.nccl_debug; then
		contains "$TMP/out" "not automatic: /etc/profile.d/nccl-rdma.sh is recorded in this snapshot only as far as the checks read it" \
			"fix on a snapshot: a partly recorded file is a manual step"
		lacks "$TMP/out" "+++ /etc/profile.d/nccl-rdma.sh" "fix on a snapshot: no diff of a partly recorded file"
	fi
	# usage errors
	expect_exit 2 "$BIN" fix --only no.such_check --sysroot "$FIX/v100-cx3pro/root" &&
		contains "$TMP/err" "no.such_check" "--only naming no check: exit 2"
	expect_exit 2 "$BIN" fix --batch 2 --sysroot "$FIX/v100-cx3pro/root" &&
		pass "--batch is cluster fix's: exit 2"
	expect_exit 2 "$BIN" fix extra-argument && pass "an argument: exit 2"
	# nothing to revert
	t2=$TMP/t2
	copy v100-cx3pro "$t2"
	if expect_exit 0 "$BIN" fix --revert --sysroot "$t2"; then
		contains "$TMP/out" "nothing to revert" "--revert without an audit log: nothing to revert"
	fi
	# a pending change is said with its finding; after a reboot, that it did not take
	mkdir -p "$t2/var/lib/gpuready" "$t2/proc/sys/kernel/random"
	echo 11111111-2222-3333-4444-555555555555 >"$t2/proc/sys/kernel/random/boot_id"
	printf 'rdma.port_state\tmlx4_0/1\t11111111-2222-3333-4444-555555555555\t2026-01-02T03:04:05Z\tload a module at boot\n' \
		>"$t2/var/lib/gpuready/fix-pending"
	if expect_exit 1 "$BIN" check --sysroot "$t2" --only rdma.port_state; then
		contains "$TMP/out" "pending: \`gpuready fix\` wrote \"load a module at boot\" at 2026-01-02T03:04:05Z; it takes effect at the next module reload or reboot" \
			"check: a pending change is said with its finding"
	fi
	"$BIN" check --json --sysroot "$t2" --only rdma.port_state >"$TMP/pending.json"
	schema_ok report.schema.json "check --json with a pending finding" "$TMP/pending.json"
	echo 99999999-2222-3333-4444-555555555555 >"$t2/proc/sys/kernel/random/boot_id"
	if expect_exit 1 "$BIN" check --sysroot "$t2" --only rdma.port_state; then
		contains "$TMP/out" "and the node has booted since: it did not take effect" \
			"check: after a reboot a pending change that did not take is said"
	fi
	rm -rf "$t2/var/lib/gpuready" "$t2/proc/sys/kernel/random"
	# GPU work running: the busy detection names the process
	mkdir -p "$t2/proc/31337/fd"
	ln -s /dev/nvidia0 "$t2/proc/31337/fd/5"
	echo python3 >"$t2/proc/31337/comm"
	"$BIN" fix --apply --allow-disruptive --json --sysroot "$t2" >"$TMP/busy.json" 2>"$TMP/err"
	if grep -q '"held": "disruptive, and GPU or RDMA work is running: pid 31337 (python3) holds /dev/nvidia0"' "$TMP/busy.json"; then
		pass "a disruptive remedy is held while a process holds /dev/nvidia0"
	elif grep -q '"disruptive": true' "$TMP/busy.json"; then
		fail "a disruptive remedy was not held while GPU work runs"; head -c 2000 "$TMP/busy.json" >&2
	else
		pass "no disruptive remedy on this tree to hold (busy detection: unit/fix)"
	fi
	;;
*)
	echo "fix.sh: unknown mode $mode" >&2
	exit 2
	;;
esac
[ "$FAILS" -eq 0 ]
