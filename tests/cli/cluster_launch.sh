#!/bin/sh
# `gpuready cluster check` under a launcher (docs/cluster.md, "Under a
# launcher"): one process per node, each given its own tree and name by the
# test-only GPUREADY_TEST_RANK_TREES (the fleet of tests/cli/fleet.sh, nine
# nodes), started three ways:
#   torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR, ...; lib.sh run_ranks),
#   --rank/--nranks/--master, and
#   mpirun (Open MPI's variables; and --bootstrap mpi through the gpuready-mpi
#   module where the build has it).
# Each time rank 0 prints exactly what `cluster check --snapshots` prints for
# the same trees, the other ranks print nothing, and every rank exits with
# rank 0's status. Then what goes wrong: a rank that never comes (named,
# within --connect-timeout), a rank without a tree (an unreachable row with
# the reason), slow ranks (GPUREADY_TEST_RANK_DELAY: one in time past 30 s,
# one a row), one node name on every rank, a launcher that starts two
# processes on one node, options of another mode, --prom after a failed run,
# 64 processes at once, and no launcher at all (usage errors).
set -u

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet.sh"

F=$TMP/fleet
make_fleet "$F"
N=9
export GPUREADY_TEST_RANK_TREES="$F"

# the reference: the same trees read as snapshots
# shellcheck disable=SC2046
"$BIN" cluster check --snapshots $(ls -d "$F"/*) >"$TMP/want.txt" 2>/dev/null
[ $? -eq 1 ] || fail "--snapshots reference: exit 1 expected"
contains "$TMP/want.txt" "9 nodes: 6 pass, 2 warn, 1 fail, 0 unreachable" "reference: the fleet's summary"

# same_as_snapshots TAG DESCRIPTION: rank 0's output ($TMP/TAGout.0) is the
# reference, every other rank printed nothing.
same_as_snapshots() {
	if diff -u "$TMP/want.txt" "$TMP/${1}out.0" >"$TMP/diff"; then pass "$2: rank 0 prints what --snapshots prints"
	else fail "$2: rank 0's output differs"; head -30 "$TMP/diff" >&2; sed 's/^/  err: /' "$TMP/${1}err.0" | head >&2; fi
	r=1
	while [ "$r" -lt "$N" ]; do
		[ -s "$TMP/${1}out.$r" ] && fail "$2: rank $r printed on standard output"
		[ "$(cat "$TMP/${1}rc.$r")" = "$(cat "$TMP/${1}rc.0")" ] || fail "$2: rank $r exited $(cat "$TMP/${1}rc.$r")"
		r=$((r + 1))
	done
}

run_ranks "$N" tr "$BIN" cluster check
rc=$?
[ "$rc" -eq 1 ] && pass "torchrun variables: exit 1 (a failing node, drift)" || fail "torchrun variables: exit $rc"
same_as_snapshots tr "torchrun variables"
"$BIN" cluster check --snapshots "$F/gpu01" "$F/gpu02" >/dev/null 2>&1 # (warm the page cache)

# --rank/--nranks/--master, JSON on rank 0
port=$(free_port)
pids=""
r=1
while [ "$r" -lt "$N" ]; do
	"$BIN" cluster check --json --rank "$r" --nranks "$N" --master "127.0.0.1:$port" >"$TMP/cliout.$r" 2>"$TMP/clierr.$r" &
	pids="$pids $!"
	r=$((r + 1))
done
"$BIN" cluster check --json --rank 0 --nranks "$N" --master "127.0.0.1:$port" >"$TMP/cliout.0" 2>"$TMP/clierr.0"
rc0=$?
worst=0
for p in $pids; do wait "$p"; rc=$?; [ "$rc" -ne 1 ] && worst=$rc; done
[ "$rc0" -eq 1 ] && [ "$worst" -eq 0 ] && pass "--rank/--nranks: every rank exits 1" || fail "--rank/--nranks: exits $rc0, $worst"
schema_ok cluster.schema.json "cluster check under a launcher" "$TMP/cliout.0"
python3 - "$TMP/cliout.0" <<'PY' && pass "JSON: the drift and the failing node" || fail "JSON: the drift and the failing node"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"] == {"nodes": 9, "pass": 6, "warn": 2, "fail": 1, "unreachable": 0}, d["summary"]
rows = {(r["fact"], v["value"]): v["nodes"] for r in d["drift"] for v in r["values"][1:]}
assert rows[("nic.fw.ConnectX-7", "28.36.1010,28.39.1002")] == ["gpu03"], rows
assert rows[("rdma.mtu.ConnectX-7", "4200,9000")] == ["gpu05"], rows
assert rows[("nccl_var.NCCL_IB_TC", "106")] == ["gpu06"], rows
states = {n["node"]: n["state"] for n in d["nodes"]}
assert states["gpu08"] == "fail" and states["gh01"] == "pass", states
PY

# mpirun: Open MPI's variables, every process on this host
if command -v mpirun >/dev/null; then
	mpi() { mpirun --allow-run-as-root --oversubscribe -x GPUREADY_TEST_RANK_TREES -np "$@"; }
	# Open MPI's own allocations are never freed: no leak check where it is loaded (as tests/cli/bench.sh)
	mpileaks() {
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 mpirun --allow-run-as-root --oversubscribe \
			-x GPUREADY_TEST_RANK_TREES -x ASAN_OPTIONS -np "$@"
	}
	mpi "$N" "$BIN" cluster check >"$TMP/mpiout.0" 2>"$TMP/mpierr.0"
	rc=$?
	[ "$rc" -eq 1 ] && pass "mpirun -np 9: exit 1" || { fail "mpirun -np 9: exit $rc"; head -5 "$TMP/mpierr.0" >&2; }
	if diff -u "$TMP/want.txt" "$TMP/mpiout.0" >"$TMP/diff"; then pass "mpirun: prints what --snapshots prints, once"
	else fail "mpirun: output differs"; head -30 "$TMP/diff" >&2; fi
	if [ -n "${GPUREADY_MPI_MODULE:-}" ] && [ -f "$GPUREADY_MPI_MODULE" ]; then
		mpileaks "$N" -x GPUREADY_MPI_MODULE "$BIN" cluster check --bootstrap mpi >"$TMP/mpiout.0" 2>"$TMP/mpierr.0"
		rc=$?
		[ "$rc" -eq 1 ] && diff -q "$TMP/want.txt" "$TMP/mpiout.0" >/dev/null \
			&& pass "mpirun --bootstrap mpi: the same result through MPI_Init" \
			|| { fail "mpirun --bootstrap mpi: exit $rc"; head -5 "$TMP/mpierr.0" >&2; }
	else
		echo "skip: --bootstrap mpi (no gpuready-mpi module in this build)"
	fi
	# two processes on one node without test trees: refused on both
	GPUREADY_TEST_RANK_TREES='' mpi 2 "$BIN" cluster check >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 2 ] && pass "mpirun -np 2 on one node: exit 2" || fail "mpirun -np 2 on one node: exit $rc"
	contains "$TMP/err" "started 2 processes on this node: cluster check runs one process per node" \
		"two processes on one node: said"
	if [ -n "${GPUREADY_MPI_MODULE:-}" ] && [ -f "$GPUREADY_MPI_MODULE" ]; then
		# through MPI the launcher's count is not asked: the roster's local ranks say it
		GPUREADY_TEST_RANK_TREES='' mpileaks 2 -x GPUREADY_MPI_MODULE "$BIN" cluster check --bootstrap mpi \
			>"$TMP/out" 2>"$TMP/err"
		rc=$?
		[ "$rc" -eq 2 ] && contains "$TMP/err" "more than one process on a node: rank 1" \
			"--bootstrap mpi, two processes on one node: refused" || fail "--bootstrap mpi -np 2: exit $rc"
	fi
else
	echo "skip: mpirun (not installed)"
fi

# a rank that never comes: named, within --connect-timeout; exit 3 (stalled)
port=$(free_port)
"$BIN" cluster check --rank 1 --nranks 3 --master "127.0.0.1:$port" --connect-timeout 5 >"$TMP/o1" 2>"$TMP/e1" &
p1=$!
expect_exit 3 "$BIN" cluster check --rank 0 --nranks 3 --master "127.0.0.1:$port" --connect-timeout 5
wait "$p1"
contains "$TMP/err" "rank 2 did not arrive" "a rank that never comes is named"
lacks "$TMP/out" "nodes:" "no result without every rank"

# a rank without a tree: a row of its own, named by rank and host
mkdir "$TMP/two" && ln -s "$F/gpu01" "$TMP/two/gpu01" && ln -s "$F/gpu02" "$TMP/two/gpu02"
GPUREADY_TEST_RANK_TREES=$TMP/two run_ranks 3 miss "$BIN" cluster check
rc=$?
[ "$rc" -eq 1 ] && pass "a rank without its tree: exit 1" || fail "a rank without its tree: exit $rc"
contains "$TMP/missout.0" "3 nodes: 2 pass, 0 warn, 0 fail, 1 unreachable" "a rank without its tree: counted"
contains "$TMP/missout.0" "rank 2 (" "a rank without its tree: its row names the rank"
contains "$TMP/missout.0" "holds no tree for process 2" "a rank without its tree: the reason"

# slow nodes: rank 1 sends its record after 32 s, within --host-timeout 34
# (the others wait for rank 0's verdict as long as rank 0 waits for them),
# rank 2 never within it: a row naming rank 2; it exits 3 (too slow), the
# others with rank 0's status
ln -s "$F/gpu04" "$TMP/two/gpu04"
GPUREADY_TEST_RANK_TREES=$TMP/two GPUREADY_TEST_RANK_DELAY=1:32,2:100 run_ranks 3 slow "$BIN" cluster check --host-timeout 34
contains "$TMP/slowout.0" "3 nodes: 2 pass, 0 warn, 0 fail, 1 unreachable" "slow ranks: rank 1 in time, rank 2 not"
contains "$TMP/slowout.0" "sent no record within 34 s of the rendezvous (--host-timeout)" "slow ranks: the row says why"
[ "$(cat "$TMP/slowrc.0")" = 1 ] && [ "$(cat "$TMP/slowrc.1")" = 1 ] && pass "slow ranks: ranks 0 and 1 exit 1" ||
	fail "slow ranks: ranks 0 and 1 exit $(cat "$TMP/slowrc.0") and $(cat "$TMP/slowrc.1")"
[ "$(cat "$TMP/slowrc.2")" = 3 ] && contains "$TMP/slowerr.2" "ended the run while this process was still in" \
	"slow ranks: the rank left out says so" || fail "slow ranks: rank 2 exited $(cat "$TMP/slowrc.2")"

# one node name on every rank: no rank can take another's row
GPUREADY_TEST_RANK_TREES=$TMP/two run_ranks 3 same "$BIN" cluster check --node-name gpu03
contains "$TMP/sameout.0" "3 nodes: 0 pass, 0 warn, 0 fail, 3 unreachable" "one name on three ranks: three rows refused"
contains "$TMP/sameout.0" "which another rank gave too" "one name on three ranks: the reason"

# options of another way of finding nodes are refused, not ignored
expect_exit 2 "$BIN" cluster check --snapshots "$F/gpu01" --rank 0 && \
	contains "$TMP/err" "--rank applies only under a launcher" "--snapshots with --rank: refused"
expect_exit 2 "$BIN" cluster check --rsh 'ssh {host}' && \
	contains "$TMP/err" "--rsh applies only with --hosts" "--rsh under a launcher: refused"
expect_exit 2 "$BIN" cluster check --snapshots "$F/gpu01" --host-timeout 5 && \
	contains "$TMP/err" "--host-timeout applies only with --hosts or under a launcher" "--snapshots with --host-timeout: refused"

# a failed run leaves no stale --prom result
echo "gpuready_cluster_node_state 1" >"$TMP/c.prom"
port=$(free_port)
"$BIN" cluster check --rank 0 --nranks 2 --master "127.0.0.1:$port" --connect-timeout 3 --prom "$TMP/c.prom" \
	>/dev/null 2>&1
contains "$TMP/c.prom" 'gpuready_cluster_run_failed{scope="cluster"} 1' "a run that ends early says so in --prom"
lacks "$TMP/c.prom" "gpuready_cluster_node_state" "a run that ends early: the old result is gone"

# 64 processes (the scale CI runs; perf/cluster-launch.sh goes to 512): every
# one a node of its own tree, all passing
mkdir "$TMP/many"
i=0
while [ "$i" -lt 64 ]; do ln -s "$F/gpu01" "$TMP/many/$(printf 'n%02d' "$i")"; i=$((i + 1)); done
GPUREADY_TEST_RANK_TREES=$TMP/many run_ranks 64 many "$BIN" cluster check --connect-timeout 240 --host-timeout 240
rc=$?
[ "$rc" -eq 0 ] && pass "64 processes: every rank exits 0" || { fail "64 processes: exit $rc"; head -3 "$TMP/manyerr.0" >&2; }
contains "$TMP/manyout.0" "64 nodes: 64 pass, 0 warn, 0 fail, 0 unreachable" "64 processes: every record"

# no launcher and no nodes
GPUREADY_TEST_RANK_TREES='' expect_exit 2 "$BIN" cluster check && contains "$TMP/err" "cluster check needs its nodes" \
	"no launcher, no --hosts, no --snapshots: usage"

[ "$FAILS" -eq 0 ] || exit 1
