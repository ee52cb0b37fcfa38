# Shared by the CLI test scripts (run.sh, bench.sh, ...): paths from the
# environment, a scratch directory, the pass/fail helpers, a free port and
# the ranks of a job.
# shellcheck shell=sh

BIN=${GPUREADY_BIN:?}
SRC=${GPUREADY_SOURCE_DIR:?}
FIX=${GPUREADY_FIXTURES:?}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuready-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
FAILS=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

# expect_exit WANT CMD...: runs CMD, stdout to $TMP/out, stderr to $TMP/err.
expect_exit() {
	want=$1; shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		fail "exit $got (want $want): $*"; sed 's/^/  stderr: /' "$TMP/err" | head -5 >&2
		return 1
	fi
	return 0
}

# contains FILE STRING DESCRIPTION
contains() {
	if grep -qF -- "$2" "$1"; then pass "$3"; else fail "$3: '$2' not in output"; sed 's/^/  | /' "$1" | head -20 >&2; fi
}
lacks() {
	if grep -qF -- "$2" "$1"; then fail "$3: '$2' unexpectedly in output"; else pass "$3"; fi
}

# schema_ok SCHEMA WHAT FILE...: every file validates against docs/SCHEMA
# (Debian's python3-jsonschema is for /usr/bin/python3, which may not be
# the first python3 on PATH).
schema_ok() {
	schema=$1 what=$2; shift 2
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null && "$py" -c 'import jsonschema' 2>/dev/null; then
			"$py" "$SRC/tests/cli/validate_schema.py" "$SRC/docs/$schema" "$@" >"$TMP/schema.out" 2>&1 \
				&& pass "$what: --json validates against docs/$schema" \
				|| { fail "$what: schema"; cat "$TMP/schema.out" >&2; }
			return
		fi
	done
	fail "$what: python3-jsonschema missing (make test installs it)"
}

# Normalises what legitimately differs between runs: the sysroot path,
# the version and the time.
normalize_json() {
	sed -e "s#\"sysroot\": \".*\"#\"sysroot\": \"ROOT\"#" -e "s#\"version\": \".*\"#\"version\": \"VERSION\"#" \
		-e "s#\"timestamp\": \".*\"#\"timestamp\": \"TIME\"#"
}

# compare EXPECTED ACTUAL NAME
compare() {
	if [ "${GPUREADY_UPDATE:-0}" = 1 ]; then
		mkdir -p "$(dirname "$1")"; cp "$2" "$1"; pass "$3 (updated)"; return
	fi
	if [ ! -f "$1" ]; then fail "$3: no expected file $1 (run with GPUREADY_UPDATE=1)"; return; fi
	if diff -u "$1" "$2" >"$TMP/diff"; then pass "$3"; else fail "$3 differs:"; head -80 "$TMP/diff" >&2; fi
}


# free_port: a free TCP port on loopback.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# run_ranks N TAG CMD...: starts N processes of CMD (a program or a shell
# function) with torchrun-style variables on a free port; process R writes
# $TMP/TAGout.R, $TMP/TAGerr.R and its exit status in $TMP/TAGrc.R.
# Returns the largest exit status.
run_ranks() {
	n=$1 tag=$2; shift 2
	port=$(free_port)
	pids=""
	r=0
	while [ "$r" -lt "$n" ]; do
		RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
			"$@" >"$TMP/${tag}out.$r" 2>"$TMP/${tag}err.$r" &
		pids="$pids $!"
		r=$((r + 1))
	done
	worst=0
	r=0
	for p in $pids; do
		wait "$p"; rc=$?
		echo "$rc" >"$TMP/${tag}rc.$r"
		[ "$rc" -gt "$worst" ] && worst=$rc
		r=$((r + 1))
	done
	return "$worst"
}

# hints_ok FILE: every command in backticks of every verdict's hint is
# runnable as written (tests/cli/hints.py's tool table)
hints_ok() {
	python3 - "$SRC/tests/cli" "$BIN" "$1" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import hints
d = json.load(open(sys.argv[3]))
bad = [(seg, why) for v in d["verdicts"] for seg, words in hints.commands(v["hint"])
       for why in [hints.runnable(words, set(), sys.argv[2], {})] if why]
n = sum(1 for v in d["verdicts"] for _ in hints.commands(v["hint"]))
assert n and not bad, (n, bad)
PY
}

# verdict_is FILE KIND NODES...: the only verdict of a cluster links or
# cluster nccl report is KIND about NODES (what was measured is shown when not)
verdict_is() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); kind = sys.argv[2]; nodes = sys.argv[3:]
v = [(x["kind"], x["nodes"]) for x in d["verdicts"]]
seen = d.get("matrix_gbps") or [(g["stage"], g.get("nodes"), g["busbw"]) for g in d.get("groups", [])]
assert v == [(kind, nodes)], (v, d.get("median_gbps"), seen)
PY
}
