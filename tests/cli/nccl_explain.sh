#!/bin/sh
# `gpuready nccl --explain` on the NCCL logs of tests/nccl-logs: the text
# and the JSON of each against tests/cli/expected/nccl-explain/ (the JSON
# validated against docs/nccl-explain.schema.json), standard input, a
# directory of per-rank logs, --explain after the files, --require, the
# node's side (--sysroot), every next check's command runnable
# (tests/cli/hints.py), and the inputs that cannot be read (exit 2).
# GPUREADY_UPDATE=1 rewrites the expected files.
set -u

. "$(dirname "$0")/lib.sh"

LOGS=$SRC/tests/nccl-logs
EXP=$SRC/tests/cli/expected/nccl-explain
# a host name no log carries, so that no test compares with this machine
HOSTNAME_GUARD=$(hostname)

per_log() {
	for f in "$LOGS"/*.log; do
		name=$(basename "$f" .log)
		if grep -q "^$HOSTNAME_GUARD:" "$f"; then fail "$name: the log names this host"; continue; fi
		"$BIN" nccl --explain "$f" >"$TMP/$name.txt" 2>"$TMP/$name.err"
		echo "exit $?" >>"$TMP/$name.txt"
		compare "$EXP/$name.txt" "$TMP/$name.txt" "$name: text"
		"$BIN" nccl --explain --json "$f" >"$TMP/$name.raw" 2>>"$TMP/$name.err"
		normalize_json <"$TMP/$name.raw" >"$TMP/$name.json"
		compare "$EXP/$name.json" "$TMP/$name.json" "$name: JSON"
		schema_ok nccl-explain.schema.json "$name" "$TMP/$name.raw"
		[ -s "$TMP/$name.err" ] && { fail "$name: stderr"; head -5 "$TMP/$name.err" >&2; }
	done
}

# Every command in backticks of every signature's next checks.
next_runnable() {
	python3 - "$SRC/tests/cli" "$BIN" "$@" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import hints
bad, n = [], 0
for path in sys.argv[3:]:
    d = json.load(open(path))
    for m in d["matches"]:
        for seg, words in hints.commands(m["next"] or ""):
            n += 1
            why = hints.runnable(words, set(), sys.argv[2], {})
            if why:
                bad.append((m["id"], seg, why))
assert n and not bad, (n, bad)
PY
}

other_inputs() {
	f=$LOGS/socket-fallback.log
	"$BIN" nccl --explain "$f" >"$TMP/file.out" 2>&1
	expect_exit 1 "$BIN" nccl --explain - <"$f" && cmp -s "$TMP/out" "$TMP/file.out" \
		&& pass "stdin (-) reads as the file does" || fail "stdin differs from the file"
	expect_exit 1 "$BIN" nccl "$f" --explain && cmp -s "$TMP/out" "$TMP/file.out" \
		&& pass "--explain after the file selects the command" || fail "--explain after the file"

	# a directory of per-rank logs: every regular file, sorted; subdirectories passed over
	mkdir -p "$TMP/ranks/sub"
	grep '^vm-train-1:' "$f" >"$TMP/ranks/rank1.log"
	grep -v '^vm-train-1:' "$f" >"$TMP/ranks/rank0.log"
	cp "$f" "$TMP/ranks/sub/ignored.log"
	expect_exit 1 "$BIN" nccl --explain --json "$TMP/ranks"
	python3 - "$TMP/out" <<'PY' && pass "a directory: two files, two processes" || fail "a directory"
import json, sys
d = json.load(open(sys.argv[1]))
assert [p["key"] for p in d["processes"]] == ["vm-train-0:2231", "vm-train-1:2198"], d["processes"]
assert d["network"] == "Socket" and d["signatures"] == ["ib-no-device", "socket-closed"], d
PY

	expect_exit 2 "$BIN" nccl --explain "$TMP/no-such.log" && contains "$TMP/err" "no-such.log" "a missing file: exit 2, named"
	mkdir -p "$TMP/empty"
	expect_exit 2 "$BIN" nccl --explain "$TMP/empty" && contains "$TMP/err" "no regular file" "an empty directory: exit 2"
	printf 'Traceback (most recent call last):\nhello\n' >"$TMP/not-nccl.log"
	expect_exit 2 "$BIN" nccl --explain "$TMP/not-nccl.log" && contains "$TMP/err" "no NCCL output in the input (2 lines)" \
		"a file without NCCL's lines: exit 2, not 'nothing wrong'"
	if [ "$(id -u)" != 0 ]; then
		cp "$f" "$TMP/secret.log"; chmod 000 "$TMP/secret.log"
		expect_exit 2 "$BIN" nccl --explain "$f" "$TMP/secret.log" && contains "$TMP/err" "Permission denied" \
			"an unreadable file among readable ones: exit 2"
	fi
	expect_exit 2 "$BIN" nccl --explain && pass "no file: usage, exit 2"
	expect_exit 0 "$BIN" help nccl --explain && cp "$TMP/out" "$TMP/help.txt"
	expect_exit 0 "$BIN" nccl --explain --help && cmp -s "$TMP/out" "$TMP/help.txt" \
		&& pass "help nccl --explain is nccl --explain --help" || fail "help nccl --explain"
	expect_exit 2 "$BIN" nccl --explain --require ib,bogus "$f" && pass "--require with an unknown word: exit 2"
	expect_exit 1 "$BIN" nccl --explain --require ib "$f" && contains "$TMP/out" "FAIL: --require ib: ib: NCCL used the Socket network" \
		"--require ib on a socket fallback: exit 1, why"
	expect_exit 0 "$BIN" nccl --explain --require ib,gdr,dmabuf "$LOGS/h100-2node-roce-gdr.log" && pass "--require met: exit 0"
	expect_exit 1 "$BIN" nccl --explain --json --require gdr "$LOGS/ib-gdr-disabled-hca1.log" \
		&& python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["result"]=="fail" and d["unmet"], d["unmet"]' "$TMP/out" \
		&& pass "--require gdr in JSON: result fail, unmet"
}

node_side() {
	b200=$FIX/hgx-b200-8x-cx7-ib/root
	expect_exit 0 "$BIN" nccl --explain --sysroot "$b200" "$LOGS/h100-2node-roce-gdr.log" \
		&& contains "$TMP/out" "the log used mlx5_9:1, mlx5_10:1, mlx5_11:1, but this node's NCCL_IB_HCA==mlx5_0" \
			"--sysroot: HCAs the node's NCCL_IB_HCA leaves out"
	expect_exit 1 "$BIN" nccl --explain --sysroot "$b200" "$LOGS/ib-gdr-disabled-hca1.log" \
		&& contains "$TMP/out" "GPU Direct RDMA Disabled for mlx5_1, but this node can do it through DMA-BUF" \
			"--sysroot: GDR off in the log, possible on the node"
	expect_exit 0 "$BIN" nccl --explain --sysroot "$FIX/plain-no-rdma/root" "$LOGS/h100-2node-roce-gdr.log" \
		&& lacks "$TMP/out" "This node:" "--sysroot of a node without NCCL_IB_HCA or GPUDirect: nothing to say"
	expect_exit 0 "$BIN" nccl --explain "$LOGS/h100-2node-roce-gdr.log" && lacks "$TMP/out" "This node:" \
		"a log of other hosts, no --sysroot: this node is not compared"
	# a log of this host: this node is read (what it says depends on the machine the test runs on)
	h=$(hostname | cut -d. -f1)
	printf '%s:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n%s:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 '"'"'mlx5_0'"'"'\n' \
		"$h" "$h" >"$TMP/here.log"
	expect_exit 0 "$BIN" nccl --explain "$TMP/here.log" && contains "$TMP/out" "NCCL log: 2 lines, 1 process on 1 host" \
		"a log of this host: read with this node's side"
}

per_log
"$BIN" nccl --explain --json "$LOGS"/*.log >"$TMP/all.json" 2>/dev/null
next_runnable "$TMP/all.json" "$TMP"/*.raw && pass "every next check's command is runnable (hints.py)" \
	|| fail "next checks' commands"
other_inputs
node_side
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
