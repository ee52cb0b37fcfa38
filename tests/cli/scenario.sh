#!/bin/sh
# Scenario fixtures (tests/fixtures/scenarios/NAME: a full fixture plus an
# overlay, tests/fixtures/scenario_gen.py):
#   scenario.sh NAME   builds the tree (tests/fixtures/scenario.sh), runs
#                      `gpuready check` on it (text, JSON, exit code) against
#                      the scenario's expected/, and asserts its `expect`
#                      lines: the findings a failure mode must produce, or
#                      `clean` (no warn or fail at all) for a healthy but
#                      unusual node.
# Environment as tests/cli/run.sh (tests/meson.build). Exit 0 pass, 1 fail.
set -u

. "$(dirname "$0")/lib.sh"

name=${1:?usage: scenario.sh NAME}
dir=$FIX/scenarios/$name
exp=$dir/expected
sh "$FIX/scenario.sh" "$name" "$TMP/root" || { fail "$name: the tree could not be built"; exit 1; }
"$BIN" check --sysroot "$TMP/root" --no-color >"$TMP/check.txt" 2>"$TMP/err"
echo $? >"$TMP/check.exit"
"$BIN" check --sysroot "$TMP/root" --json 2>>"$TMP/err" | normalize_json >"$TMP/check.json"
[ -s "$TMP/err" ] && { echo "stderr:" >&2; cat "$TMP/err" >&2; fail "$name: gpuready wrote to stderr"; }
compare "$exp/check.txt" "$TMP/check.txt" "$name check text"
compare "$exp/check.json" "$TMP/check.json" "$name check json"
compare "$exp/check.exit" "$TMP/check.exit" "$name check exit code"
if python3 "$SRC/tests/cli/scenario_expect.py" "$dir/expect" "$TMP/check.json" >"$TMP/expect.out" 2>&1; then
	pass "$name: every line of expect holds"
else
	fail "$name: expect"; cat "$TMP/expect.out" >&2
fi
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
exit 0
