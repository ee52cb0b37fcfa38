#!/bin/sh
# Cluster mode offline (docs/cluster.md): `gpuready cluster check --snapshots`
# on a fleet of snapshot-like trees built from the fixtures (tests/cli/fleet.sh:
# gpu01..gpu08 with drift on gpu03, gpu05, gpu06 and a failing gpu08, and a
# GH200 node gh01), and two more rows:
#   missing, empty a directory that does not exist and one that is no tree
#
# It asserts: the text equals tests/cli/expected/cluster/check.txt; each
# drifted fact and node is named and no healthy node is; the JSON validates
# against docs/cluster.schema.json; --expect with a `cluster facts` record
# judges a group of two; an incomplete snapshot is a row unless --force;
# --reason, --prom, duplicate host names, exit
# codes. GPUREADY_UPDATE=1 rewrites the expected file.
#
# --hosts (no launcher) runs the same fleet through tests/cli/fake-rsh.sh,
# a remote shell that gives each host its tree with --sysroot, beside hosts
# that refuse the connection, never answer, print garbage or answer with
# another node's record: each is a row naming why, the run ends within the
# deadline, and the drift is the same as --snapshots finds.
set -u

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet.sh"

F=$TMP/fleet
make_fleet "$F"
mkdir "$F/empty"

ALL="$F/gpu01 $F/gpu02 $F/gpu03 $F/gpu04 $F/gpu05 $F/gpu06 $F/gpu07 $F/gpu08 $F/gh01 $F/missing $F/empty"

# shellcheck disable=SC2086
expect_exit 1 "$BIN" cluster check --snapshots $ALL && pass "drift and a failing node: exit 1"
sed "s#$F#FLEET#g" "$TMP/out" >"$TMP/check.txt"
compare "$SRC/tests/cli/expected/cluster/check.txt" "$TMP/check.txt" "cluster check text"
out=$TMP/check.txt
contains "$out" "11 nodes: 6 pass, 2 warn, 1 fail, 2 unreachable" "summary line"
contains "$out" "gpu03: 28.36.1010,28.39.1002" "gpu03's firmware named"
contains "$out" "gpu05: 4200,9000" "gpu05's MTU named"
contains "$out" "gpu06: 106" "gpu06's NCCL_IB_TC named"
contains "$out" "gpu08: 570.86.15" "gpu08's fabric manager named"
contains "$out" "fail         gpu08: gpuready" "gpu08's reason line"
contains "$out" "unreachable  missing: unreadable: cannot open snapshot" "a missing directory is a row"
contains "$out" "unreachable  empty: unreadable:" "a directory that is no tree is a row"
contains "$out" "(1 node): too few nodes to vote" "the GH200 node is alone in its shape"
for healthy in gpu01 gpu02 gpu04 gpu07 gh01; do
	lacks "$out" "$healthy:" "$healthy is not named"
done

# shellcheck disable=SC2086
"$BIN" cluster check --snapshots $ALL --json >"$TMP/check.json" 2>/dev/null
schema_ok cluster.schema.json "cluster check" "$TMP/check.json"
python3 - "$TMP/check.json" <<'EOF' && pass "JSON: drift rows and nodes" || fail "JSON: drift rows and nodes"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["fact"], v["value"]): v["nodes"] for r in d["drift"] for v in r["values"][1:]}
assert rows[("nic.fw.ConnectX-7", "28.36.1010,28.39.1002")] == ["gpu03"], rows
assert rows[("nccl_var.NCCL_IB_TC", "106")] == ["gpu06"], rows
states = {n["node"]: n["state"] for n in d["nodes"]}
assert states["gpu08"] == "fail" and states["missing"] == "unreachable" and states["gpu01"] == "pass", states
assert d["summary"] == {"nodes": 11, "pass": 6, "warn": 2, "fail": 1, "unreachable": 2}, d["summary"]
EOF

# --reason: one line per failing, warning and unreachable node
# shellcheck disable=SC2086
expect_exit 1 "$BIN" cluster check --snapshots $ALL --reason
[ "$(wc -l <"$TMP/out")" -eq 5 ] && pass "--reason: five lines" || fail "--reason: $(cat "$TMP/out")"
contains "$TMP/out" "gpu08: gpuready 1 fail" "--reason names gpu08"

# --prom: series per node, written atomically
# shellcheck disable=SC2086
"$BIN" cluster check --snapshots $ALL --prom "$TMP/cluster.prom" >/dev/null 2>&1
contains "$TMP/cluster.prom" 'gpuready_cluster_drift{scope="cluster",node="gpu05",fact="rdma.mtu.ConnectX-7",kind="majority"} 1' "prom: drift series"
contains "$TMP/cluster.prom" 'gpuready_cluster_node_state{scope="cluster",node="empty",state="unreachable"} 1' "prom: unreachable node"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/cluster.prom" >"$TMP/promtool.out" 2>&1 && pass "prom: promtool check metrics" ||
		{ fail "prom: promtool check metrics"; cat "$TMP/promtool.out" >&2; }
fi

# A healthy group: exit 0
expect_exit 0 "$BIN" cluster check --snapshots "$F/gpu01" "$F/gpu02" "$F/gpu04" && pass "three equal nodes: exit 0"
contains "$TMP/out" "every fact agrees" "three equal nodes agree"

# --expect: the record of a known-good node judges a group of two
expect_exit 0 "$BIN" cluster facts --sysroot "$F/gpu01" --node-name golden && cp "$TMP/out" "$TMP/golden.json"
contains "$TMP/golden.json" '"node": "golden"' "cluster facts: --node-name"
# the record validates against $defs/record of docs/cluster.schema.json
for py in python3 /usr/bin/python3; do
	command -v "$py" >/dev/null && "$py" -c 'import jsonschema' 2>/dev/null || continue
	"$py" - "$SRC/docs/cluster.schema.json" "$TMP/golden.json" <<'EOF' && pass "cluster facts: the record validates" ||
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
record = {"$schema": schema["$schema"], "$ref": "#/$defs/record", "$defs": schema["$defs"]}
jsonschema.Draft202012Validator(record).validate(json.load(open(sys.argv[2])))
EOF
		fail "cluster facts: the record does not validate against \$defs/record"
	break
done
expect_exit 1 "$BIN" cluster check --snapshots "$F/gpu01" "$F/gpu03" "$F/gh01" --expect "$TMP/golden.json" &&
	pass "--expect: exit 1"
contains "$TMP/out" "compared with the expected record" "--expect: a group of two is compared"
contains "$TMP/out" "28.39.1002 (expected)" "--expect: the golden value"
contains "$TMP/out" "gpu03: 28.36.1010,28.39.1002" "--expect: gpu03 named"
lacks "$TMP/out" "gpu01:" "--expect: gpu01 agrees"
lacks "$TMP/out" "gh01:" "--expect: another shape is not compared"
"$BIN" cluster check --snapshots "$F/gpu01" "$F/gpu03" --expect "$TMP/golden.json" --json >"$TMP/expect.json" 2>/dev/null
schema_ok cluster.schema.json "cluster check --expect" "$TMP/expect.json"
"$BIN" cluster facts --sysroot "$F/gh01" >"$TMP/gh.json" 2>/dev/null
expect_exit 0 "$BIN" cluster check --snapshots "$F/gpu01" "$F/gpu02" --expect "$TMP/gh.json"
contains "$TMP/out" "No node has the expected record's shape" "--expect: a record of another shape is said to match none"
echo '{"node": "x"}' >"$TMP/bad.json"
expect_exit 2 "$BIN" cluster check --snapshots "$F/gpu01" --expect "$TMP/bad.json" &&
	contains "$TMP/err" "is no node record" "--expect: a bad record is refused"

# An incomplete snapshot is an unreachable row unless --force
cp -a "$F/gpu02" "$F/partial" && mkdir -p "$F/partial/.gpuready" && : >"$F/partial/.gpuready/incomplete"
expect_exit 1 "$BIN" cluster check --snapshots "$F/gpu01" "$F/partial" "$F/gpu04"
contains "$TMP/out" "unreachable  partial: unreadable: $F/partial is an incomplete snapshot" "incomplete snapshot: a row"
expect_exit 0 "$BIN" cluster check --snapshots "$F/gpu01" "$F/partial" "$F/gpu04" --force &&
	contains "$TMP/out" "3 nodes: 3 pass" "incomplete snapshot: read with --force"

# Duplicate host names are told apart and said
cp -a "$F/gpu01" "$F/again"
expect_exit 0 "$BIN" cluster check --snapshots "$F/gpu01" "$F/again" "$F/gpu02"
contains "$TMP/err" "both record the host name gpu01: the second is named gpu01_2" "duplicate host names"

# --hosts: the nodes asked through a remote shell
hosts_fleet() {
	rsh="sh '$SRC/tests/cli/fake-rsh.sh' {host}"
	t0=$(date +%s)
	GPUREADY_FAKE_RSH_DIR=$F expect_exit 1 "$BIN" cluster check --hosts 'gpu[01-06],refused1,hang1,garbage1,liar1' \
		--rsh "$rsh" --remote-gpuready "$BIN" --host-timeout 3 --parallel 4 && pass "--hosts: exit 1"
	t1=$(date +%s)
	[ $((t1 - t0)) -lt 30 ] && pass "--hosts: a host that never answers ends the run ($((t1 - t0)) s)" ||
		fail "--hosts: the run took $((t1 - t0)) s"
	out=$TMP/hosts.txt
	cp "$TMP/out" "$out"
	contains "$out" "10 nodes: 4 pass, 2 warn, 0 fail, 4 unreachable" "--hosts: summary"
	contains "$out" "unreachable  refused1: remote shell exited with 255: ssh: connect to host refused1 port 22: Connection refused" \
		"--hosts: a refused connection is a row with ssh's words"
	contains "$out" "unreachable  hang1: no answer within 3 s" "--hosts: a host that never answers is a row"
	contains "$out" "unreachable  garbage1: no node record: " "--hosts: garbage is a row"
	contains "$out" "unreachable  liar1: answered with the record of another node, 'gpu01'" \
		"--hosts: a record with another node's name is refused"
	contains "$out" "gpu03: 28.36.1010,28.39.1002" "--hosts: gpu03's firmware named"
	contains "$out" "gpu05: 4200,9000" "--hosts: gpu05's MTU named"
	contains "$out" "gpu06: 106" "--hosts: gpu06's NCCL_IB_TC named"
	lacks "$out" "gpu01:" "--hosts: gpu01 is not named"
	# the same nodes as snapshots: the same drift, by the same code
	"$BIN" cluster check --snapshots "$F/gpu01" "$F/gpu02" "$F/gpu03" "$F/gpu04" "$F/gpu05" "$F/gpu06" \
		>"$TMP/snap6.txt" 2>/dev/null
	sed -n '/^Drift/,$p' "$TMP/snap6.txt" >"$TMP/snap6.drift"
	sed -n '/^Drift/,$p' "$out" >"$TMP/hosts.drift"
	cmp -s "$TMP/snap6.drift" "$TMP/hosts.drift" && pass "--hosts: the drift equals --snapshots'" ||
		{ fail "--hosts: drift differs from --snapshots"; diff "$TMP/snap6.drift" "$TMP/hosts.drift" >&2; }
	GPUREADY_FAKE_RSH_DIR=$F "$BIN" cluster check --hosts 'gpu[01-02],hang1' --rsh "$rsh" --remote-gpuready "$BIN" \
		--host-timeout 2 --json >"$TMP/hosts.json" 2>/dev/null
	schema_ok cluster.schema.json "cluster check --hosts" "$TMP/hosts.json"
	# a hosts file: comments, blank lines, a name given twice
	printf '# rack 1\ngpu[01-02]  # two\n\ngpu04,gpu01\n' >"$TMP/hosts"
	GPUREADY_FAKE_RSH_DIR=$F expect_exit 0 "$BIN" cluster check --hosts "@$TMP/hosts" --rsh "$rsh" \
		--remote-gpuready "$BIN" && contains "$TMP/out" "3 nodes: 3 pass" "--hosts @FILE: three nodes"
	contains "$TMP/err" "--hosts names gpu01 more than once: asked once" "--hosts: a duplicate is said"
	# --only and --skip go to the hosts: gpu05's MTU warning is not checked there
	GPUREADY_FAKE_RSH_DIR=$F expect_exit 1 "$BIN" cluster check --hosts 'gpu[03-05]' --rsh "$rsh" \
		--remote-gpuready "$BIN" --skip rdma.mtu,gpu && contains "$TMP/out" "3 nodes: 2 pass, 1 warn" \
		"--hosts --skip: applied on the hosts"
	lacks "$TMP/out" "warn         gpu05" "--hosts --skip rdma.mtu: gpu05 does not warn"
	# refused before anything starts
	expect_exit 2 "$BIN" cluster check --hosts gpu01 --only 'rdma.*' && contains "$TMP/err" \
		"with --hosts, give check IDs and areas" "--hosts --only with a glob: refused"
	expect_exit 2 "$BIN" cluster check --hosts 'gpu[01-' && contains "$TMP/err" "unbalanced" "--hosts: a bad hostlist"
	expect_exit 2 "$BIN" cluster check --hosts '-oProxyCommand=x' &&
		contains "$TMP/err" "is no host name" "--hosts: an option is no host name"
	expect_exit 2 "$BIN" cluster check --hosts 'n[0-999999]' && contains "$TMP/err" "more than 100000 hosts" \
		"--hosts: the bound on hosts"
	expect_exit 2 "$BIN" cluster check --hosts gpu01 --rsh 'ssh gpu01' && contains "$TMP/err" "no {host}" \
		"--rsh without {host}"
	expect_exit 2 "$BIN" cluster check --hosts "@$TMP/nonexistent" && contains "$TMP/err" "cannot read" \
		"--hosts @FILE: a missing file"
	expect_exit 2 "$BIN" cluster check --hosts gpu01 --snapshots "$F/gpu01" && pass "--hosts with --snapshots: usage"
	expect_exit 2 "$BIN" cluster check --hosts gpu01 "$F/gpu01" && pass "--hosts with arguments: usage"
}
hosts_fleet

# Usage
expect_exit 2 "$BIN" cluster check "$F/gpu01" && contains "$TMP/err" "usage: gpuready cluster check --snapshots DIR" "arguments without --snapshots: usage"
expect_exit 2 "$BIN" cluster check && contains "$TMP/err" "cluster check needs its nodes" "no nodes and no launcher: usage"
expect_exit 2 "$BIN" cluster && pass "cluster alone: usage"

[ "$FAILS" -eq 0 ] || exit 1
