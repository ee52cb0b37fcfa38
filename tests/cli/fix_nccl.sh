#!/bin/sh
# gpuready fix's nccl-conf and memlock remedies on copies of three fixtures:
# the plan answers the expected findings (and leaves the expected ones
# manual, saying why), --apply makes each answered finding ok or gone in
# `check` while no other finding changes status, a second plan has nothing
# left to do, and --revert restores the tree byte for byte (the audit log
# under /var/log/gpuready aside).
# shellcheck shell=sh
. "$(dirname "$0")/lib.sh"

ONLY='rdma.memlock,rdma.nccl_*'

# answered PLAN.json CHECK:SUBJECT...: the plan's remedies answer exactly these findings
answered() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted(f'{t["check"]}:{t["subject"]}' for r in d["remedies"] for t in r["targets"])
want = sorted(sys.argv[2:])
assert got == want, (got, want)
PY
}

# manual_why PLAN.json CHECK SUBJECT TEXT: that finding is a manual step whose reason says TEXT
manual_why() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = [x for x in d["manual"] if x["check"] == sys.argv[2] and x["subject"] == sys.argv[3]]
assert m and sys.argv[4] in (m[0]["why"] or ""), m
PY
}

# same_report BEFORE.json AFTER.json CHECK:SUBJECT...: the named findings are
# ok or gone after; every other finding keeps its worst status, and no new
# subject warns or fails except those named +CHECK:SUBJECT
same_report() {
	python3 - "$@" <<'PY'
import json, sys
rank = {"info": 0, "ok": 1, "skip": 2, "warn": 3, "fail": 4}
def worst(p):
    out = {}
    for f in json.load(open(p))["checks"]:
        k = f'{f["id"]}:{f["subject"]}'
        if k not in out or rank[f["status"]] > rank[out[k]]:
            out[k] = f["status"]
    return out
a, b = worst(sys.argv[1]), worst(sys.argv[2])
fixed = {k for k in sys.argv[3:] if k[0] != "+"}
fixed_or_new = fixed | {k[1:] for k in sys.argv[3:] if k[0] == "+"}
bad = [(k, b[k]) for k in fixed if b.get(k) not in (None, "ok", "info")]
bad += [(k, a.get(k), b.get(k)) for k in set(a) | set(b) if k not in fixed_or_new and
        (a.get(k) in ("warn", "fail") or b.get(k) in ("warn", "fail")) and a.get(k) != b.get(k)]
assert not bad, bad
PY
}

one() {
	name=$1; shift
	T="$TMP/$name"
	cp -a "$FIX/$name/root" "$T"
	"$BIN" check --sysroot "$T" --json >"$TMP/$name.before.json" 2>/dev/null
	"$BIN" fix --sysroot "$T" --only "$ONLY" --json >"$TMP/$name.plan.json" 2>"$TMP/err"
	if answered "$TMP/$name.plan.json" $(echo "$@" | tr ' ' '\n' | grep -v '^+') 2>"$TMP/why"; then pass "$name: the plan answers $*"
	else fail "$name: plan"; cat "$TMP/why" >&2; fi
	# exit 1 when another check still fails: the report below says whether one is ours
	"$BIN" fix --sysroot "$T" --only "$ONLY" --apply >"$TMP/out" 2>&1
	if [ $? -le 1 ] && grep -q ', 0 failed' "$TMP/out"; then pass "$name: --apply applied every remedy"
	else fail "$name: --apply"; tail -20 "$TMP/out" >&2; fi
	"$BIN" check --sysroot "$T" --json >"$TMP/$name.after.json" 2>/dev/null
	if same_report "$TMP/$name.before.json" "$TMP/$name.after.json" "$@" 2>"$TMP/why"; then
		pass "$name: after --apply the answered findings are ok, nothing else changed"
	else fail "$name: report after --apply"; cat "$TMP/why" >&2; fi
	"$BIN" fix --sysroot "$T" --only "$ONLY" --json >"$TMP/$name.again.json" 2>/dev/null
	if answered "$TMP/$name.again.json" 2>"$TMP/why"; then pass "$name: a second plan changes nothing"
	else fail "$name: second plan"; cat "$TMP/why" >&2; fi
	"$BIN" fix --sysroot "$T" --revert >"$TMP/out" 2>&1 || { fail "$name: --revert"; cat "$TMP/out" >&2; }
	rm -rf "$T/var/log/gpuready"
	rmdir "$T/var/log" "$T/var" 2>/dev/null
	if diff -r --no-dereference "$FIX/$name/root" "$T" >"$TMP/diff" 2>&1; then
		pass "$name: --revert restores the tree byte for byte"
	else fail "$name: --revert left:"; head -20 "$TMP/diff" >&2; fi
}

one h100-roce-broken rdma.memlock:memlock rdma.nccl_debug:NCCL_DEBUG rdma.nccl_names:NCCL_IB_GDR_LEVEL \
	rdma.nccl_names:NCCL_SOKCET_IFNAME rdma.nccl_ranges:NCCL_IB_TIMEOUT
contains "$TMP/h100-roce-broken.plan.json" '# disabled by gpuready fix (rdma.nccl_debug): export NCCL_DEBUG=INFO' \
	"h100-roce-broken: NCCL_DEBUG=INFO commented out in /etc/profile.d"
contains "$TMP/h100-roce-broken.plan.json" 'NCCL_IB_DISABLE=0\nNCCL_NET_GDR_LEVEL=PXB\n' \
	"h100-roce-broken: NCCL_NET_GDR_LEVEL=PXB added to /etc/nccl.conf, its other line kept"

# NCCL's class right now, RDMA-CM's still wrong (rdma.roce_tos fails): the check says so, and the plan's note
one v100-cx3pro rdma.memlock:memlock rdma.nccl_ib_tc:NCCL_IB_TC +rdma.nccl_ib_tc:default_roce_tos
contains "$TMP/v100-cx3pro.plan.json" "default_roce_tos until rdma.roce_tos is fixed" \
	"v100-cx3pro: the plan says RDMA-CM's class stays to fix"
if manual_why "$TMP/v100-cx3pro.plan.json" rdma.nccl_debug NCCL_DEBUG 'recorded environment' 2>"$TMP/why"; then
	pass "v100-cx3pro: NCCL_DEBUG from the recorded environment stays manual, saying so"
else fail "v100-cx3pro: NCCL_DEBUG"; cat "$TMP/why" >&2; fi

one ndr-ib-4port rdma.nccl_ranges:NCCL_IB_RETRY_CNT
contains "$TMP/ndr-ib-4port.plan.json" '-NCCL_IB_RETRY_CNT=9' "ndr-ib-4port: the line is deleted from /root/.nccl.conf"

# slurmd's unit without LimitMEMLOCK=infinity: a drop-in beside limits.d, read back from a snapshot that
# keeps only the unit's LimitMEMLOCK= line (a unit may hold secrets)
S="$TMP/slurmd"
cp -a "$FIX/h100-roce-broken/root" "$S"
mkdir -p "$S/lib/systemd/system"
printf '[Service]\nEnvironment=TOKEN=s3cret\nLimitMEMLOCK=64M\n' >"$S/lib/systemd/system/slurmd.service"
"$BIN" snapshot --sysroot "$S" "$TMP/snap" >/dev/null 2>&1 || fail "slurmd: snapshot"
lacks "$TMP/snap/lib/systemd/system/slurmd.service" 's3cret' "slurmd: the snapshot drops the unit's other lines"
"$BIN" fix --sysroot "$TMP/snap" --only rdma.memlock >"$TMP/out" 2>&1
contains "$TMP/out" '+++ /etc/systemd/system/slurmd.service.d/90-gpuready-memlock.conf' \
	"slurmd: the plan adds the drop-in"
contains "$TMP/out" 'runs with LimitMEMLOCK=64M (/lib/systemd/system/slurmd.service:3)' \
	"slurmd: the note names the limit slurmd runs with"
"$BIN" fix --sysroot "$S" --only rdma.memlock --apply >/dev/null 2>&1
"$BIN" fix --sysroot "$S" --only rdma.memlock >"$TMP/out" 2>&1
if grep -q '^0 changes planned' "$TMP/out"; then pass "slurmd: after --apply a second plan changes nothing"; else fail "slurmd: a second plan plans again"; fi

[ "$FAILS" -eq 0 ] || exit 1
