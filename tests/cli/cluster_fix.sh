#!/bin/sh
# `gpuready cluster fix` (docs/cluster.md, "cluster fix"): every node's
# `fix --json` plan, grouped by what it would do.
#   --snapshots over copies of fixtures: two identical h100-roce-broken
#     nodes (other host names) are one group, v100-cx3pro another, an empty
#     directory cannot be planned; --apply is refused there;
#   --hosts through the fake remote shell (tests/cli/fake-rsh.sh) running
#     this build on a copy per host: the same grouping, broken hosts named
#     with why, then --apply in batches of 1 with one host made to fail:
#     the batches before it applied, the ones after untouched;
#   under a launcher (torchrun's variables, GPUREADY_TEST_RANK_TREES): rank 0
#     prints what --hosts prints for the same trees; --apply in batches of
#     2, and a rank whose apply outlasts --host-timeout stops the rollout.
set -u

. "$(dirname "$0")/lib.sh"

# copy DIR NAME FIXTURE: a copy of FIXTURE's tree named NAME (its host name)
copy() {
	cp -a "$FIX/$3/root" "$1/$2"
	echo "$2" >"$1/$2/proc/sys/kernel/hostname"
	echo "$2" >"$1/$2/etc/hostname"
}

# ---- --snapshots ----
S=$TMP/snap
mkdir -p "$S" "$S/empty"
copy "$S" gpu01 h100-roce-broken
copy "$S" gpu02 h100-roce-broken
copy "$S" old01 v100-cx3pro
before=$(cd "$S" && find . -type f | sort | xargs md5sum | md5sum)
expect_exit 1 "$BIN" cluster fix --snapshots "$S/gpu01" "$S/gpu02" "$S/old01" "$S/empty"
contains "$TMP/out" "4 nodes: 3 planned (2 distinct plans), 1 could not be planned" "snapshots: the summary"
contains "$TMP/out" "nodes gpu[01-02]: same " "snapshots: the identical nodes are one group"
contains "$TMP/out" "node old01: other plan: " "snapshots: the V100 node has a plan of its own"
contains "$TMP/out" "empty: unreadable: $S/empty has neither sys/ nor proc/" "snapshots: the empty directory, with why"
[ "$(grep -c 'raise the socket buffer ceilings' "$TMP/out")" -eq 2 ] && pass "snapshots: each plan shown once" \
	|| fail "snapshots: each plan once"
[ "$(cd "$S" && find . -type f | sort | xargs md5sum | md5sum)" = "$before" ] && pass "snapshots: nothing changed" \
	|| fail "snapshots: a snapshot was changed"
expect_exit 1 "$BIN" cluster fix --json --snapshots "$S/gpu01" "$S/gpu02" "$S/old01" "$S/empty"
cp "$TMP/out" "$TMP/snap.json"
schema_ok cluster-fix.schema.json "snapshots" "$TMP/snap.json"
python3 - "$TMP/snap.json" <<'PY' && pass "snapshots: JSON groups" || fail "snapshots: JSON groups"
import json, sys
d = json.load(open(sys.argv[1]))
g = d["groups"]
assert d["nodes"] == 4 and d["planned"] == 3 and d["apply"] is None and d["exit"] == 1, d
assert g[0]["nodes"] == ["gpu01", "gpu02"] and g[0]["hostlist"] == "gpu[01-02]", g[0]
assert g[1]["nodes"] == ["old01"] and g[0]["digest"] != g[1]["digest"]
assert "host" not in g[0]["plan"] and g[0]["plan"]["remedies"][0]["id"] == "sysctl"
assert d["unplanned"][0]["node"] == "empty"
PY
expect_exit 2 "$BIN" cluster fix --snapshots --apply "$S/gpu01" \
	&& contains "$TMP/err" "--apply goes with --hosts or under a launcher" "snapshots: --apply refused"
expect_exit 2 "$BIN" cluster fix --snapshots --rsh x "$S/gpu01" && contains "$TMP/err" "--rsh applies only with --hosts" \
	"snapshots: --rsh refused"
expect_exit 2 "$BIN" cluster fix --snapshots "$S/gpu01" --batch 2 && contains "$TMP/err" "--batch goes with --apply" \
	"--batch without --apply refused"
expect_exit 2 "$BIN" cluster fix --sysroot "$S/gpu01" --hosts gpu01 && contains "$TMP/err" "option '--sysroot' does not apply to this command" \
	"--sysroot refused"

expect_exit 2 "$BIN" cluster fix --hosts gpu01 --tos 96 \
	&& contains "$TMP/err" "--tos does not reach the hosts of --hosts" "hosts: a site expectation refused"

# ---- --hosts ----
H=$TMP/hosts
mkdir -p "$H"
for h in node01 node02 node03 node04; do copy "$H" $h h100-roce-broken; done
copy "$H" old01 v100-cx3pro
export GPUREADY_FAKE_RSH_DIR="$H"
# a remote shell that breaks node03's tree when it is asked to apply (marked
# an incomplete snapshot, its `fix --apply` cannot run: exit 2), else
# tests/cli/fake-rsh.sh
cat >"$TMP/rsh.sh" <<EOF
#!/bin/sh
case "\$1 \$*" in
"node03 "*--apply*) mkdir -p "$H/node03/.gpuready"; : >"$H/node03/.gpuready/incomplete" ;;
esac
exec sh "$SRC/tests/cli/fake-rsh.sh" "\$@"
EOF
RSH="sh $TMP/rsh.sh {host}"
expect_exit 1 "$BIN" cluster fix --hosts 'node[01-04],old01,refused1,garbage1,hang1' --host-timeout 20 --rsh "$RSH" \
	--remote-gpuready "$BIN"
cp "$TMP/out" "$TMP/hosts.txt"
contains "$TMP/out" "8 nodes: 5 planned (2 distinct plans), 3 could not be planned" "hosts: the summary"
contains "$TMP/out" "nodes node[01-04]: same " "hosts: one group"
contains "$TMP/out" "node old01: other plan: " "hosts: the other plan"
contains "$TMP/out" "refused1: remote shell exited with 255: ssh: connect to host refused1 port 22: Connection refused" \
	"hosts: a refused host, with why"
contains "$TMP/out" "garbage1: no fix plan" "hosts: an answer that is no plan"
contains "$TMP/out" "hang1: no answer within 20 s" "hosts: a host that never answers"
[ ! -e "$H/node01/etc/sysctl.d/90-gpuready.conf" ] && pass "hosts: planning changed nothing" \
	|| fail "hosts: planning wrote a file"
# the same nodes as snapshots group the same way
expect_exit 1 "$BIN" cluster fix --snapshots "$H/node01" "$H/node02" "$H/node03" "$H/node04" "$H/old01"
sed -n '/^nodes node/,/^$/p' "$TMP/out" >"$TMP/a"
sed -n '/^nodes node/,/^$/p' "$TMP/hosts.txt" >"$TMP/b"
cmp -s "$TMP/a" "$TMP/b" && pass "hosts: the same group and plan as --snapshots" || fail "hosts and snapshots differ"

expect_exit 1 "$BIN" cluster fix --hosts 'node[01-04],old01,refused1' --rsh "$RSH" --remote-gpuready "$BIN" --apply \
	--batch 1
cp "$TMP/out" "$TMP/apply.txt"
contains "$TMP/out" "--apply in batches of 1: 2 of 5 batches done, stopped at the first batch with a failure" \
	"apply: stopped at the failing batch"
contains "$TMP/out" "  batch 1: node01 applied" "apply: the canary"
contains "$TMP/out" "  batch 2: node02 applied" "apply: the second batch"
contains "$TMP/out" "  batch 3: node03 FAILED" "apply: the failing node"
contains "$TMP/out" "failed node03: remote shell exited with 2: " "apply: why it failed"
contains "$TMP/out" "not touched: node04,old01" "apply: the nodes not touched"
for h in node01 node02; do
	grep -q 'net.core.rmem_max = 268435456' "$H/$h/etc/sysctl.d/90-gpuready.conf" 2>/dev/null \
		&& pass "apply: $h has the drop-in" || fail "apply: $h has no drop-in"
done
for h in node04 old01; do
	[ ! -e "$H/$h/etc/sysctl.d/90-gpuready.conf" ] && [ ! -e "$H/$h/var/log/gpuready/fix.log" ] \
		&& pass "apply: $h untouched" || fail "apply: $h was changed"
done
# once applied, node01 and node02 plan nothing for it: the next run
# applies on the others only (node03 stays broken: it cannot be planned)
expect_exit 1 "$BIN" cluster fix --json --hosts 'node[01-04],old01' --rsh "$RSH" --remote-gpuready "$BIN" --apply --batch 2
cp "$TMP/out" "$TMP/apply.json"
schema_ok cluster-fix.schema.json "apply" "$TMP/apply.json"
python3 - "$TMP/apply.json" <<'PY' && pass "apply: JSON, batches of 2" || fail "apply: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
a = d["apply"]
assert a["batch_size"] == 2 and a["batches"] == 1 and a["done"] == 1 and not a["stopped"], a
assert [(n["node"], n["state"], n["batch"]) for n in a["nodes"]] == [("node04", "applied", 1), ("old01", "applied", 1)], a
assert [u["node"] for u in d["unplanned"]] == ["node03"], d["unplanned"]
g = {x["hostlist"]: x["changes"] for x in d["groups"]}
assert g["node[01-02]"] == 0, g
PY

# ---- under a launcher ----
L=$TMP/launch
mkdir -p "$L"
for h in node01 node02 node03 node04; do copy "$L" $h h100-roce-broken; done
copy "$L" old01 v100-cx3pro
run_ranks 5 pl env GPUREADY_TEST_RANK_TREES="$L" "$BIN" cluster fix
rc=$?
[ "$rc" -eq 1 ] && pass "launcher: exit 1 (changes planned)" || fail "launcher: exit $rc"
"$BIN" cluster fix --snapshots "$L/node01" "$L/node02" "$L/node03" "$L/node04" "$L/old01" >"$TMP/want" 2>/dev/null
if cmp -s "$TMP/want" "$TMP/plout.0"; then pass "launcher: rank 0 prints what --snapshots prints"
else fail "launcher: rank 0's output differs"; diff "$TMP/want" "$TMP/plout.0" | head -20 >&2; cat "$TMP/plerr.0" >&2; fi
for r in 1 2 3 4; do
	[ -s "$TMP/plout.$r" ] && fail "launcher: rank $r printed"
	[ "$(cat "$TMP/plrc.$r")" = 1 ] || fail "launcher: rank $r exited $(cat "$TMP/plrc.$r")"
done
# --apply in batches of 2: rank 3 (node04) hangs in its apply past --host-timeout
run_ranks 5 ap env GPUREADY_TEST_RANK_TREES="$L" GPUREADY_TEST_RANK_DELAY=3:30 "$BIN" cluster fix --apply --batch 2 \
	--host-timeout 10
contains "$TMP/apout.0" "--apply in batches of 2: 1 of 3 batches done, stopped at the first batch with a failure" \
	"launcher: stopped at the slow batch"
contains "$TMP/apout.0" "  batch 1: node01 applied" "launcher: the canary batch"
contains "$TMP/apout.0" "failed node04: rank 3" "launcher: the slow rank named"
contains "$TMP/apout.0" "not touched: old01" "launcher: the last batch untouched"
for h in node01 node02; do
	[ -e "$L/$h/etc/sysctl.d/90-gpuready.conf" ] && pass "launcher: $h applied" || fail "launcher: $h not applied"
done
[ ! -e "$L/old01/etc/sysctl.d/90-gpuready.conf" ] && pass "launcher: old01 untouched" || fail "launcher: old01 changed"
[ "$(cat "$TMP/aprc.0")" = 1 ] && pass "launcher: rank 0 exits 1" || fail "launcher: rank 0 exited $(cat "$TMP/aprc.0")"

[ "$FAILS" -eq 0 ] || exit 1
