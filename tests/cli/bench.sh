#!/bin/sh
# CLI tests of the collective benchmarks: the real binary, several real
# processes on loopback, the socket backend (no MPI, no GPU needed; the MPI
# backend has its own tests under mpirun).
#
#   bench.sh table     the nccl-tests table, read by an nccl-tests-style
#                      awk parser: columns, #wrong 0, busbw = algbw x factor
#   bench.sh ranks     1, 3 and 4 processes with torchrun's, Open MPI's and
#                      explicit rank variables; every collective
#   bench.sh files     --json (schema-checked), --plot (well-formed SVG)
#   bench.sh verdict   NCCL_TESTS_MIN_BW, --expect-busbw, usage errors
#   bench.sh failures  a killed rank, a stopped rank, a rank that never comes:
#                      named, and every process gone within the deadline
#   bench.sh nogpu     the NCCL backend without a GPU: a clear reason, exit 2
#   bench.sh mpi       the MPI backend under mpirun -np 4: the table, every
#                      collective, -I -z 3 -J read back, and a rank killed mid-run
#   bench.sh nccltests a parser written from nccl-tests' published format
#                      (nccltests_parse.py) reads every row of 3 ranks' tables,
#                      which match the JSON, gpuready's (--json) and nccl-tests'
#                      own (-J, read by a parser of its version 3 format);
#                      nccl-tests 2.19.6's -N -u -C -S -J -I -K -z 3 honoured,
#                      the flags gpuready cannot honour refused
#   bench.sh fakegpu   the NCCL path end to end against test doubles of
#                      libcuda and libnccl ($GPUREADY_FAKES, tests/fakes): -g 2,
#                      CUDA graphs (-G), grouped -m, -I through CUDA events, -M, -R 1|2,
#                      `gpuready nccl` and its log verdicts, a hung collective
set -u

. "$(dirname "$0")/lib.sh"

# ranks N ARGS...: N processes of `gpuready ARGS` (run_ranks, lib.sh);
# process R writes $TMP/out.R and $TMP/err.R.
ranks() {
	n=$1; shift
	run_ranks "$n" "" "$BIN" "$@"
}

# parse_table FILE NRANKS FACTOR: what scripts written for nccl-tests do with
# its output. Prints "rows N bad M avg X".
parse_table() {
	awk -v f="$3" '
	/^#/ { if ($0 ~ /Avg bus bandwidth/) avg = $NF; next }
	NF == 0 { next }
	{
		rows++
		if (NF != 13) { bad++; next }
		# out-of-place: time $6 algbw $7 busbw $8 #wrong $9; in-place $10..$13
		for (o = 6; o <= 10; o += 4) {
			alg = $(o + 1); bus = $(o + 2); wrong = $(o + 3)
			if (wrong != "0" && wrong != "N/A") bad++
			d = bus - alg * f; if (d < 0) d = -d
			if (d > 0.011 * (f > 1 ? f : 1) + 0.011) bad++
		}
	}
	END { printf "rows %d bad %d avg %s\n", rows, bad, avg }' "$1"
}

t_table() {
	expect_exit 0 "$BIN" bench all_reduce --backend socket -b 8 -e 1M -f 2 -n 5 || return
	out=$TMP/out
	contains "$out" "# Collective test starting: all_reduce_perf" "starting line"
	contains "$out" "# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 1 iters: 5 agg iters: 1 validation: 1 graph: 0 unalign: 0" "parameter line"
	contains "$out" "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong " "column names"
	contains "$out" "# Out of bounds values : 0 OK" "out of bounds line"
	contains "$out" "# Collective test concluded: all_reduce_perf" "concluded line"
	grep -q '^# Avg bus bandwidth    : [0-9.e+-]* $' "$out" && pass "average line with nccl-tests' trailing space" \
		|| fail "average line format"
	set -- $(parse_table "$out" 1 0)
	[ "$2" -eq 18 ] && [ "$4" -eq 0 ] && pass "18 rows, all valid (1 rank: busbw 0)" || fail "table: $*"
	# row format: the first row, byte for byte up to the time column
	grep -q '^           8             2     float     sum      -1  ' "$out" && pass "row preamble columns" \
		|| { fail "row preamble"; grep -v '^#' "$out" | head -2 >&2; }

	ranks 4 bench all_reduce --backend socket -b 8 -e 64K -f 4 -n 3 || { fail "4 ranks (exit $?)"; cat "$TMP/err.0" >&2; return; }
	set -- $(parse_table "$TMP/out.0" 4 1.5)
	[ "$2" -eq 7 ] && [ "$4" -eq 0 ] && pass "4 ranks: busbw = algbw x 2(n-1)/n, #wrong 0 in 7 rows" || fail "4 ranks: $*"
	for r in 1 2 3; do
		[ -s "$TMP/out.$r" ] && fail "rank $r printed a table" || true
	done
	pass "only rank 0 prints"
}

t_ranks() {
	for c in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
		ranks 3 bench "$c" --backend socket -b 8 -e 8K -f 8 -n 2 -d all -o all -r -1
		rc=$?
		set -- $(parse_table "$TMP/out.0" 3 1)
		# the factor differs per collective: only the row count and #wrong are read here
		bad=$(awk '!/^#/ && NF == 13 && (($9 != "0" && $9 != "N/A") || ($13 != "0" && $13 != "N/A"))' "$TMP/out.0" | wc -l)
		[ "$rc" -eq 0 ] && [ "$2" -gt 0 ] && [ "$bad" -eq 0 ] && pass "3 ranks: $c, every type and op: $2 rows, #wrong 0" \
			|| { fail "3 ranks $c (exit $rc, $bad bad rows)"; head -5 "$TMP/err.0" >&2; }
	done
	# Open MPI's variables (as mpirun sets them), without mpirun
	port=$(free_port)
	pids=""
	for r in 0 1; do
		OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=$r OMPI_COMM_WORLD_LOCAL_SIZE=2 \
			"$BIN" bench all_gather --backend socket -b 1K -e 1K -n 2 --master "127.0.0.1:$port" \
			>"$TMP/out.$r" 2>"$TMP/err.$r" &
		pids="$pids $!"
	done
	rc=0; for p in $pids; do wait "$p" || rc=$?; done
	[ "$rc" -eq 0 ] && grep -q "Rank  1 Group  0" "$TMP/out.0" && pass "Open MPI variables and --master" \
		|| { fail "Open MPI variables (exit $rc)"; cat "$TMP/err.0" "$TMP/err.1" >&2; }
	# torchrun: its agent holds MASTER_PORT (a listener stands in for it here)
	python3 -c '
import socket, sys, time
for _ in range(50):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); a.listen(); p = a.getsockname()[1]
    try:
        b = socket.socket(); b.bind(("127.0.0.1", p + 1)); b.close(); break
    except OSError:
        a.close()
print(p, flush=True); sys.stdout.close(); time.sleep(30)' >"$TMP/agent.port" &
	agent=$!
	i=0; while [ ! -s "$TMP/agent.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	port=$(cat "$TMP/agent.port")
	pids=""
	for r in 0 1; do
		RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
			TORCHELASTIC_RUN_ID=test "$BIN" bench all_reduce --backend socket -b 1K -e 1K -n 2 \
			>"$TMP/out.$r" 2>"$TMP/err.$r" &
		pids="$pids $!"
	done
	rc=0; for p in $pids; do wait "$p" || rc=$?; done
	kill "$agent" 2>/dev/null
	[ "$rc" -eq 0 ] && grep -q "Rank  1 Group  0" "$TMP/out.0" \
		&& pass "torchrun's variables: gpuready meets on MASTER_PORT+1 beside the agent" \
		|| { fail "torchrun variables (exit $rc)"; cat "$TMP/err.0" >&2; }
	# explicit --rank/--nranks
	port=$(free_port)
	"$BIN" bench broadcast --backend socket -b 1K -e 1K -n 2 -r 1 --rank 1 --nranks 2 --master "127.0.0.1:$port" \
		>"$TMP/out.1" 2>"$TMP/err.1" &
	p1=$!
	"$BIN" bench broadcast --backend socket -b 1K -e 1K -n 2 -r 1 --rank 0 --nranks 2 --master "127.0.0.1:$port" \
		>"$TMP/out.0" 2>"$TMP/err.0"
	rc=$?; wait "$p1" || rc=$?
	[ "$rc" -eq 0 ] && grep -q "broadcast_perf" "$TMP/out.0" && pass "--rank/--nranks/--master" \
		|| { fail "--rank (exit $rc)"; cat "$TMP/err.0" >&2; }
	# ranks that disagree about the benchmark are stopped before it starts
	port=$(free_port)
	RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$BIN" bench all_reduce --backend socket -b 1K -e 2K \
		>"$TMP/out.1" 2>"$TMP/err.1" &
	p1=$!
	RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$BIN" bench all_reduce --backend socket -b 1K -e 1K \
		>"$TMP/out.0" 2>"$TMP/err.0"
	rc=$?; wait "$p1"
	[ "$rc" -eq 2 ] && contains "$TMP/err.0" "rank 1 (" "a rank with other options is named" \
		|| { fail "mismatched options (exit $rc)"; cat "$TMP/err.0" >&2; }
}

t_files() {
	expect_exit 0 "$BIN" bench reduce_scatter --backend socket -b 1K -e 64K -f 2 -n 2 -d float,bfloat16 \
		--json "$TMP/r.json" --plot "$TMP/r.svg" || return
	schema_ok bench.schema.json "reduce_scatter" "$TMP/r.json"
	python3 - "$TMP/r.json" <<'EOF' >"$TMP/json.out" 2>&1 && pass "--json: verdict, rows, types, devices" || { fail "bench JSON content"; cat "$TMP/json.out" >&2; }
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["verdict"]["result"] == "pass", doc["verdict"]
assert len(doc["rows"]) == 14, len(doc["rows"])
assert doc["rows"][0]["type"] == "float" and doc["rows"][7]["type"] == "bfloat16"
assert all(r["out_of_place"]["wrong"] == 0 for r in doc["rows"])
assert doc["devices"][0]["host"]
EOF
	python3 -c 'import sys, xml.etree.ElementTree as E; t = E.parse(sys.argv[1]); r = t.getroot(); assert r.tag.endswith("svg"); assert len([e for e in r.iter() if e.tag.endswith("polyline")]) >= 2' "$TMP/r.svg" \
		&& pass "--plot writes an SVG with the curves" || fail "--plot SVG"
}

t_verdict() {
	NCCL_TESTS_MIN_BW=100000 "$BIN" bench all_reduce --backend socket -b 1K -e 1K -n 2 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 1 ] && grep -q '^# Avg bus bandwidth    : .* FAILED$' "$TMP/out" && pass "NCCL_TESTS_MIN_BW fails the run (exit 1)" \
		|| { fail "NCCL_TESTS_MIN_BW (exit $rc)"; tail -5 "$TMP/out" >&2; }
	NCCL_TESTS_MIN_BW=0 "$BIN" bench all_reduce --backend socket -b 1K -e 1K -n 2 >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 0 ] && grep -q '^# Avg bus bandwidth    : .* OK$' "$TMP/out" && pass "NCCL_TESTS_MIN_BW met" || fail "NCCL_TESTS_MIN_BW=0"
	expect_exit 1 "$BIN" bench all_gather --backend socket -b 1K -e 4K -f 2 -n 2 --expect-busbw 5000 && \
		contains "$TMP/out" "# gpuready: FAILED: bus bandwidth at 4096 B is" "--expect-busbw below: failed with the measured value"
	expect_exit 0 "$BIN" bench broadcast --backend socket -b 1K -e 4K -f 2 -n 2 --expect-busbw 0.000001 && \
		contains "$TMP/out" "# gpuready: OK: bus bandwidth at 4096 B" "--expect-busbw met"
	printf 'expect_busbw = 5000\n' >"$TMP/site.conf"
	expect_exit 1 "$BIN" bench all_gather --backend socket -b 1K -e 1K -n 2 --config "$TMP/site.conf" && \
		contains "$TMP/out" "(expect_busbw in the config file)" "expect_busbw from the config file"
	expect_exit 2 "$BIN" bench all_reduce --backend socket -b 0 && contains "$TMP/err" "below the smallest allowed, 1" "-b 0 refused (it never ends in nccl-tests)"
	expect_exit 2 "$BIN" bench all_reduce --backend socket -b 2K -e 1K && contains "$TMP/err" "larger than -e" "-b > -e refused"
	expect_exit 2 "$BIN" bench allreduce --backend socket && contains "$TMP/err" "unknown collective" "unknown collective"
	expect_exit 2 "$BIN" bench all_reduce --backend socket -d fp8 && contains "$TMP/err" "unknown type" "unknown type"
	expect_exit 2 "$BIN" bench all_reduce --backend socket -G 2 && contains "$TMP/err" "need --backend nccl" "-G without CUDA graphs: refused with the reason"
	expect_exit 2 "$BIN" bench all_reduce --backend carrier-pigeon && contains "$TMP/err" "unknown backend" "unknown backend"
	expect_exit 2 "$BIN" bench broadcast --backend socket -r 3 && contains "$TMP/err" "only 1 ranks" "root beyond the ranks"
	expect_exit 2 env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=x "$BIN" bench --backend socket \
		&& contains "$TMP/err" "MASTER_PORT=x" "bad launcher variable named"
}

# start_long N ARGS...: N ranks of a long run in the background ($LONG), once
# rank 0 has printed its devices.
start_long() {
	n=$1; shift
	ranks "$n" bench all_reduce --backend socket -b 64K -e 64K -n 1000000 "$@" &
	LONG=$!
	i=0
	# up to 60 s: on a loaded runner the ranks may take long to print their table
	while ! grep -q "Rank  $((n - 1)) " "$TMP/out.0" 2>/dev/null; do
		sleep 0.2; i=$((i + 1)); [ $i -gt 300 ] && break
	done
	sleep 1
}

pid_of_rank() {
	awk -v r="$1" '$2 == "Rank" && $3 == r { print $7 }' "$TMP/out.0"
}

t_failures() {
	# a killed rank: named by every survivor at once, exit 3
	start_long 4 -T 60
	victim=$(pid_of_rank 2)
	[ -n "$victim" ] || { fail "no pid for rank 2"; cat "$TMP/err.0" >&2; return; }
	t0=$(date +%s)
	kill -9 "$victim"
	wait "$LONG"; rc=$?
	t1=$(date +%s)
	[ "$rc" -eq 137 ] || [ "$rc" -eq 3 ] || fail "killed rank: worst exit $rc"
	[ $((t1 - t0)) -lt 10 ] && pass "survivors gone $((t1 - t0)) s after the kill (deadline 60 s)" || fail "survivors took $((t1 - t0)) s"
	for r in 0 1 3; do
		grep -q "rank 2 (.*pid $victim) .*all_reduce 65536 B" "$TMP/err.$r" && pass "rank $r names the killed rank 2" \
			|| { fail "rank $r did not name rank 2"; cat "$TMP/err.$r" >&2; }
	done

	# a stopped (frozen) rank: named at the deadline as silent
	start_long 3 -T 6
	victim=$(pid_of_rank 1)
	[ -n "$victim" ] || { fail "no pid for rank 1"; cat "$TMP/err.0" >&2; kill "$LONG"; wait "$LONG"; return; }
	kill -STOP "$victim"
	t0=$(date +%s)
	i=0; while kill -0 "$(pid_of_rank 0)" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	t1=$(date +%s)
	kill -CONT "$victim"
	wait "$LONG"
	[ $((t1 - t0)) -le 14 ] && pass "stopped rank: rank 0 ended $((t1 - t0)) s later (-T 6)" || fail "rank 0 took $((t1 - t0)) s"
	contains "$TMP/err.0" "rank 1 (" "the frozen rank is named"
	contains "$TMP/err.0" "has been silent for" "and called silent"

	# a rank stopped by a signal (a launcher, an operator) says so, and
	# rank 0 passes it on
	start_long 3 -T 60
	victim=$(pid_of_rank 1)
	[ -n "$victim" ] || { fail "no pid for rank 1"; cat "$TMP/err.0" >&2; kill "$LONG"; wait "$LONG"; return; }
	kill -TERM "$victim"
	wait "$LONG"
	contains "$TMP/err.0" "rank 1 (" "SIGTERM: rank 0 names the rank"
	contains "$TMP/err.0" "stopped by Terminated during 'all_reduce" "and the signal and phase"
	contains "$TMP/err.2" "stopped by Terminated" "the other ranks hear it too"

	# a rank that never comes: the rendezvous names it
	port=$(free_port)
	t0=$(date +%s)
	RANK=0 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$BIN" bench --backend socket --connect-timeout 3 \
		>"$TMP/out.0" 2>"$TMP/err.0" &
	p0=$!
	RANK=1 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$BIN" bench --backend socket --connect-timeout 3 \
		>"$TMP/out.1" 2>"$TMP/err.1"
	rc1=$?
	wait "$p0"; rc0=$?
	t1=$(date +%s)
	[ "$rc0" -eq 3 ] && [ "$rc1" -eq 3 ] && [ $((t1 - t0)) -lt 10 ] && pass "missing rank: both exit 3 in $((t1 - t0)) s" \
		|| fail "missing rank: exits $rc0 $rc1 after $((t1 - t0)) s"
	contains "$TMP/err.0" "rank 2 did not arrive" "rank 0 names the rank that never came"
	contains "$TMP/err.1" "rank 2 did not arrive" "and tells the ranks that did"
}

t_nogpu() {
	# the real environment of a machine without the NVIDIA libraries
	if ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
		echo "this machine has the NVIDIA driver's libcuda: nothing to test"; exit 77
	fi
	expect_exit 2 "$BIN" bench all_reduce -b 8 -e 1K
	if grep -q "libnccl.so.2\|libcuda.so.1" "$TMP/err"; then
		pass "bench --backend nccl without a GPU says which library is missing"
	else
		fail "no library named"; cat "$TMP/err" >&2
	fi
	expect_exit 2 "$BIN" nccl --json "$TMP/nogpu.json" && schema_ok nccl.schema.json "test-nccl without a GPU" "$TMP/nogpu.json"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["result"]=="error" and ("libcuda" in d["error"] or "libnccl" in d["error"]), d' \
		"$TMP/nogpu.json" && pass "test-nccl's JSON says which library is missing" || fail "test-nccl JSON without a GPU"
}

# mpirun as root in a container: Open MPI wants both flags; its shared-memory
# transport's single-copy mode needs ptrace rights containers lack. Open MPI
# leaks at exit by design, so leak reports are off for these runs.
mpi_run() {
	np=$1; shift
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 OMPI_MCA_btl_vader_single_copy_mechanism=none \
		mpirun --allow-run-as-root --oversubscribe -np "$np" "$BIN" "$@"
}

t_mpi() {
	command -v mpirun >/dev/null || { echo "no mpirun"; exit 77; }
	[ -e "$(dirname "$BIN")/gpuready-mpi.so" ] || { echo "the MPI module was not built"; exit 77; }
	mpi_run 4 bench all_reduce --backend mpi -b 8 -e 4M -f 2 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	set -- $(parse_table "$TMP/out" 4 1.5)
	[ "$rc" -eq 0 ] && [ "$2" -eq 20 ] && [ "$4" -eq 0 ] \
		&& pass "mpirun -np 4 all_reduce: 20 rows, #wrong 0, busbw = algbw x 2(n-1)/n" \
		|| { fail "mpirun -np 4 all_reduce (exit $rc): $*"; head -5 "$TMP/err" >&2; }
	contains "$TMP/out" "backend mpi: Open MPI" "the MPI library is reported"
	for c in all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
		mpi_run 3 bench "$c" --backend mpi -b 8 -e 8K -f 8 -n 2 -d all -o all -r -1 >"$TMP/out" 2>"$TMP/err"
		rc=$?
		bad=$(awk '!/^#/ && NF == 13 && (($9 != "0" && $9 != "N/A") || ($13 != "0" && $13 != "N/A"))' "$TMP/out" | wc -l)
		rows=$(grep -vc '^#' "$TMP/out")
		[ "$rc" -eq 0 ] && [ "$rows" -gt 1 ] && [ "$bad" -eq 0 ] && pass "mpirun -np 3 $c: every type and op, #wrong 0" \
			|| { fail "mpirun -np 3 $c (exit $rc, $bad bad)"; head -5 "$TMP/err" >&2; }
	done
	# -I (the host clock per iteration), -z 3 and -J under mpirun
	rm -f "$TMP/nt.json"
	mpi_run 3 bench all_reduce --backend mpi -b 8 -e 8K -f 8 -n 5 -I 1 -K 1 -z 3 -J "$TMP/nt.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	res=$(python3 "$(dirname "$0")/nccltests_parse.py" "$TMP/out" "$TMP/nt.json" 2>&1)
	case "$rc $res" in
	"0 rows "[1-9]*) pass "mpirun -np 3 -I 1 -K 1 -z 3 -J: the table and nccl-tests' JSON agree ($res)" ;;
	*) fail "mpirun -np 3 -I -z 3 -J (exit $rc): $res"; head -5 "$TMP/err" >&2 ;;
	esac
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]["out_of_place_per_iter"]; assert len(r["per_process_max_times_us"]) == 3 and len(r["times_us"]) == 5, r' \
		"$TMP/nt.json" && pass "-I under mpirun: every process's times in per_process_max_times_us" || fail "per_process_max_times_us"
	# a rank killed mid-run: the survivors name it before mpirun ends the job
	mpi_run 4 bench all_reduce --backend mpi -b 64K -e 64K -n 1000000 -T 60 >"$TMP/out" 2>"$TMP/err" &
	job=$!
	i=0
	while ! grep -q "Rank  3 " "$TMP/out" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
	sleep 1
	victim=$(awk '$2 == "Rank" && $3 == 2 { print $7 }' "$TMP/out")
	[ -n "$victim" ] || { fail "the run under mpirun did not start"; cat "$TMP/err" >&2; kill "$job"; return; }
	t0=$(date +%s)
	kill -9 "$victim"
	wait "$job"; rc=$?
	t1=$(date +%s)
	[ "$rc" -ne 0 ] && [ $((t1 - t0)) -lt 15 ] && pass "killed rank under mpirun: the job ended in $((t1 - t0)) s" \
		|| fail "killed rank under mpirun: exit $rc after $((t1 - t0)) s"
	grep -q "rank 2 (.*pid $victim) disconnected" "$TMP/err" && pass "a survivor names rank 2 and its pid" \
		|| { fail "rank 2 not named"; cat "$TMP/err" >&2; }
}

t_nccltests() {
	parse=$(dirname "$0")/nccltests_parse.py
	for run in "all_reduce -d all -o sum,max" "all_gather -d float,int8" "reduce_scatter -o all" "broadcast -r -1" \
		"reduce -r 1" "alltoall" "sendrecv" "all_reduce -N 2 -u 3 -C 1 -S 1" "reduce_scatter -u 1 -S 1 -c 0"; do
		set -- $run
		c=$1; shift
		ranks 3 bench "$c" --backend socket -b 8 -e 4K -f 4 -n 2 --json "$TMP/run.json" "$@" \
			|| { fail "3 ranks $run (exit $?)"; cat "$TMP/err.0" >&2; continue; }
		res=$(python3 "$parse" "$TMP/out.0" "$TMP/run.json")
		case $res in
		"rows "[1-9]*) pass "$run: every row parses as nccl-tests' and matches the JSON ($res)" ;;
		*) fail "$run: $res"; cat "$TMP/out.0" >&2 ;;
		esac
	done
	# the last all_reduce run had -N 2 -u 3 -C 1 -S 1
	ranks 3 bench all_reduce --backend socket -b 8 -e 64 -f 2 -n 2 -N 3 -u 5 -C 1 -S 1 || { fail "-N -u -C -S"; return; }
	out=$TMP/out.0
	contains "$out" "warmup iters: 1 iters: 2 agg iters: 1 validation: 1 graph: 0 unalign: 5" "-u 5 printed as unalign: 5"
	[ "$(grep -c '^ *8 ' "$out")" -eq 3 ] && pass "-N 3 prints the sweep three times" || fail "-N 3: $(grep -c '^ *8 ' "$out") sweeps"
	contains "$out" "#       size         count      type   redop    root  cputime   algbw   busbw  #wrong  cputime   algbw   busbw  #wrong           timestamp" "-C and -S column names (nccl-tests 2.19.6)"
	contains "$out" "(GB/s)           %Y-%m-%d %H:%M:%S" "-S unit line"
	grep -Eq '^ +64 +16 +float +sum +-1 .* 0 +[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}$' "$out" && pass "-S: each row ends with its timestamp" \
		|| { fail "-S row"; grep -v '^#' "$out" | head -2 >&2; }
	nccltests_json "$parse" || return
	expect_exit 0 "$BIN" bench all_reduce --backend socket -b 8 -e 8 -n 1 --run_cycles 2 --unalign 1 --report_cputime 1 \
		--report_timestamps 1 --output_file "$TMP/k.json" -p 0 -y 0 -R 0 -x -1 -D 0 -V 32 -M 0 -I 0 -K 0 \
		&& pass "every nccl-tests 2.19.6 long form, and the refusable flags at their off values, are accepted"
	for f in "-p 1:-p 1" "-y 1:-y 1" "-x 1:-x 1" "-D 2:-D 2"; do
		flag=${f%%:*}; name=${f#*:}
		expect_exit 2 "$BIN" bench all_reduce --backend socket -b 8 -e 8 $flag || continue
		grep -q "^gpuready bench: $name (.*) .*\(not\|does not apply\|applies only\)" "$TMP/err" && pass "$flag is refused with its reason" \
			|| { fail "$flag: no clear refusal"; cat "$TMP/err" >&2; }
	done
	expect_exit 2 "$BIN" bench all_reduce --backend socket -V 129 && pass "-V 129 is out of range (1..128)"
	expect_exit 2 "$BIN" bench all_reduce --backend socket -J "$TMP/a.json" --json "$TMP/a.json" \
		&& contains "$TMP/err" "-J and --json name the same file" "-J and --json naming one file is refused"
	expect_exit 2 "$BIN" bench all_reduce --backend socket -M 1 \
		&& contains "$TMP/err" "-M 1 (GPU memory usage by phase) needs --backend nccl: the socket backend moves host memory" \
		"-M with a host-memory backend is refused with the reason"
	for r in 1 2; do
		expect_exit 2 "$BIN" bench all_reduce --backend socket --local_register $r \
			&& contains "$TMP/err" "-R $r (buffer registration, 1 local, 2 symmetric) needs --backend nccl" \
				"-R $r with a host-memory backend is refused with the reason"
	done
	expect_exit 2 "$BIN" bench all_reduce --backend socket -K 1 && contains "$TMP/err" "-K needs -I 1" "-K without -I is refused"
	expect_exit 2 "$BIN" bench all_reduce --backend socket -I 1 -n 3 -K 3 \
		&& contains "$TMP/err" "-K 3: it must leave at least one of the -n 3 iterations" "-K as large as -n is refused"
	expect_exit 2 "$BIN" bench all_reduce --backend socket -I 1 -G 2 && contains "$TMP/err" "-I 1 with -G" "-I with -G is refused"
}

# -J: nccl-tests' own JSON, read by a parser of its format and matched with
# the table; -I's columns and per-iteration objects; -z 3.
nccltests_json() {
	parser=$1
	for run in "all_reduce -n 6 -I 1 -K 2 -S 1" "reduce_scatter -n 3 -z 3 -I 1 -C 1" "broadcast -r -1 -z 3" \
		"alltoall -c 0 -N 2" "sendrecv -I 1 -n 2 -m 3"; do
		set -- $run
		c=$1; shift
		rm -f "$TMP/nt.json"
		ranks 3 bench "$c" --backend socket -b 8 -e 4K -f 4 -J "$TMP/nt.json" "$@" \
			|| { fail "3 ranks -J $run (exit $?)"; cat "$TMP/err.0" >&2; continue; }
		res=$(python3 "$parser" "$TMP/out.0" "$TMP/nt.json" 2>&1)
		case $res in
		"rows "[1-9]*) pass "-J $run: nccl-tests' JSON parses and matches every row of the table ($res)" ;;
		*) fail "-J $run: $res"; cat "$TMP/out.0" >&2 ;;
		esac
	done
	out=$TMP/out.0
	contains "$out" "# Writing JSON output to $TMP/nt.json" "-J names its file first, as nccl-tests"
	ranks 3 bench all_reduce --backend socket -b 8 -e 64 -f 2 -n 4 -I 1 -K 1 -z 3 || { fail "-I -K -z 3"; return 1; }
	contains "$out" "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier " "-z 3 header line (nccl-tests 2.19.6)"
	contains "$out" "# Per-Iteration Report: host clock timing; i_* uses max over process rows; summary skips first 1 iterations " "-I -K header line"
	contains "$out" "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv% " "-I column names (nccl-tests 2.19.6)"
	[ "$(awk '!/^#/ && NF == 21' "$out" | wc -l)" -eq 4 ] && pass "-I: 4 rows of 21 columns" || fail "-I rows"
	"$BIN" bench all_reduce --backend socket -b 8 -e 8 -n 1 -J "$TMP/nt.json" >"$TMP/out" 2>"$TMP/err"
	contains "$TMP/out" "# Writing JSON output to $TMP/nt.json.0" "-J on an existing file takes FILE.0, as nccl-tests"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"] == 3 and len(d["results"]) == 1' \
		"$TMP/nt.json.0" && pass "FILE.0 holds the run" || fail "FILE.0"
}

t_fakegpu() {
	fakes=${GPUREADY_FAKES:?}
	export LD_LIBRARY_PATH="$fakes${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	for c in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
		"$BIN" bench "$c" -g 2 -b 8 -e 8K -f 8 -n 2 -d all -o all -r -1 >"$TMP/out" 2>"$TMP/err"
		rc=$?
		bad=$(awk '!/^#/ && NF == 13 && (($9 != "0" && $9 != "N/A") || ($13 != "0" && $13 != "N/A"))' "$TMP/out" | wc -l)
		[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && pass "NCCL backend (fake GPUs) -g 2 $c: #wrong 0" \
			|| { fail "NCCL backend $c (exit $rc)"; head -5 "$TMP/err" >&2; }
	done
	contains "$TMP/out" "device  1 [0000:29:00] NVIDIA Fake GPU" "device lines name the GPU and its bus"
	contains "$TMP/out" "backend nccl: NCCL 2.21.5 ($fakes/libnccl.so.2)" "the NCCL version and file are reported"

	# The JSON names the NCCL it loaded, also when communicator setup then
	# fails; the failure keeps NCCL's own reason (ncclGetLastError).
	"$BIN" bench all_reduce -g 2 -b 8 -e 8 --json "$TMP/lib.json" >"$TMP/out" 2>"$TMP/err"
	python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["library"]; assert l=="NCCL 2.21.5 (%s/libnccl.so.2)" % sys.argv[2], l' \
		"$TMP/lib.json" "$fakes" && pass "bench JSON: library names NCCL's version and file" || fail "bench JSON library"
	schema_ok bench.schema.json "bench (fake GPUs)" "$TMP/lib.json"
	rm -f "$TMP/failnt.json"
	FAKE_NCCL_INIT_FAIL="Bootstrap : no socket interface found" "$BIN" bench all_reduce -g 2 -b 8 -e 8 \
		--json "$TMP/fail.json" -J "$TMP/failnt.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 2 ] && contains "$TMP/err" "ncclCommInitRankConfig: unhandled system error (run with NCCL_DEBUG=INFO for details) (2); NCCL's last error: Bootstrap : no socket interface found" \
		"failed communicator setup: exit 2 with NCCL's own reason" || { fail "failed communicator setup (exit $rc)"; cat "$TMP/err" >&2; }
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["library"]=="NCCL 2.21.5 (%s/libnccl.so.2)" % sys.argv[2] and d["verdict"]["result"]=="error", d' \
		"$TMP/fail.json" "$fakes" && pass "bench JSON of a failed start still names the NCCL loaded" || fail "bench JSON library after a failed start"
	schema_ok bench.schema.json "bench (communicator setup failed)" "$TMP/fail.json"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "Bootstrap : no socket interface found" in d["errors"][0] and "results" not in d, d["errors"]' \
		"$TMP/failnt.json" && pass "-J of a failed start: nccl-tests' JSON with the reason in errors" || fail "-J after a failed start"

	# -G: the loop captured once into a CUDA graph per GPU, replayed 3 times
	for c in all_reduce alltoall; do
		"$BIN" bench "$c" -g 2 -b 8 -e 64K -f 8 -n 4 -G 3 -d all -c 1 >"$TMP/out" 2>"$TMP/err"
		rc=$?
		bad=$(awk '!/^#/ && NF == 13 && (($9 != "0" && $9 != "N/A") || ($13 != "0" && $13 != "N/A"))' "$TMP/out" | wc -l)
		rows=$(awk '!/^#/ && NF == 13' "$TMP/out" | wc -l)
		[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$rows" -gt 0 ] \
			&& pass "CUDA graphs (-G 3) through the NCCL backend, $c: $rows rows, #wrong 0" \
			|| { fail "-G 3 $c (exit $rc, $rows rows, $bad wrong)"; head -5 "$TMP/err" >&2; }
	done
	contains "$TMP/out" "graph: 3" "the header says how many graph launches"
	for g in 0 2; do
		"$BIN" bench all_reduce -g 2 -b 8 -e 64K -f 8 -n 3 -m 4 -G $g -c 1 >"$TMP/out" 2>"$TMP/err"
		rc=$?
		bad=$(awk '!/^#/ && NF == 13 && ($9 != "0" || $13 != "0")' "$TMP/out" | wc -l)
		[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && pass "-m 4 (grouped launches) with -G $g: #wrong 0" \
			|| { fail "-m 4 -G $g (exit $rc, $bad wrong)"; head -5 "$TMP/err" >&2; }
	done
	expect_exit 2 "$BIN" bench all_reduce -g 2 -G 2 -z 1 && contains "$TMP/err" "-G with -z" "-G with -z refused"
	# -M: cuMemGetInfo before and after each phase (two 1 MiB + 64 B buffers a GPU)
	"$BIN" bench all_reduce -g 2 -b 1M -e 1M -n 2 -M 1 >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 0 ] && grep -A1 "^# Collective test concluded" "$TMP/out" | grep -qx "# GPU memory usage     : Initialization 0.00 B | User-Allocated 2.00 MB | Collective 0.00 B | Total  2.00 MB" \
		&& pass "-M: nccl-tests' GPU memory usage line after the concluding line" || { fail "-M line"; tail -5 "$TMP/out" >&2; }
	# -R: buffers from ncclMemAlloc, registered (1) or as symmetric windows
	# (2) in one group, deregistered before the communicators go (the fake
	# WARNs about registrations left)
	for r in 1 2; do
		FAKE_NCCL_VERSION=22809 NCCL_DEBUG=WARN "$BIN" bench all_reduce -g 2 -b 8 -e 1M -f 32 -n 2 -R $r -M 1 -d all \
			>"$TMP/out" 2>"$TMP/err"
		rc=$?
		bad=$(awk '!/^#/ && NF == 13 && ($9 != "0" || $13 != "0")' "$TMP/out" | wc -l)
		if [ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && ! grep -q "registrations left" "$TMP/err" \
			&& grep -q "User-Allocated 2.00 MB" "$TMP/out"; then
			pass "-R $r: registered ncclMemAlloc buffers, #wrong 0, deregistered, counted by -M"
		else
			fail "-R $r (exit $rc, $bad wrong)"; cat "$TMP/err" >&2
		fi
	done
	FAKE_NCCL_VERSION=22603 "$BIN" bench all_reduce -g 2 -b 8 -e 8 -R 2 >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 2 ] && contains "$TMP/err" "-R 2 (symmetric buffer registration) needs ncclMemAlloc and ncclCommWindowRegister, NCCL 2.27 or newer; this is NCCL 2.26.3" \
		"-R 2 with NCCL 2.26: refused naming the NCCL needed" || fail "-R 2 with NCCL 2.26"
	FAKE_NCCL_VERSION=21803 "$BIN" bench all_reduce -g 2 -b 8 -e 8 -R 1 >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 2 ] && contains "$TMP/err" "-R 1 (local buffer registration) needs ncclMemAlloc and ncclCommRegister, NCCL 2.19 or newer; this is NCCL 2.18.3" \
		"-R 1 with NCCL 2.18: refused naming the NCCL needed" || fail "-R 1 with NCCL 2.18"
	grep -q "nThread" "$TMP/out" && fail "-R refused only after the table began" || pass "-R refused before the table starts"
	# -I through CUDA events on every GPU's stream, with -z 3 and -J
	rm -f "$TMP/nt.json"
	"$BIN" bench all_reduce -g 2 -b 8 -e 64K -f 8 -n 4 -I 1 -z 3 -J "$TMP/nt.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	res=$(python3 "$(dirname "$0")/nccltests_parse.py" "$TMP/out" "$TMP/nt.json" 2>&1)
	case "$rc $res" in
	"0 rows "[1-9]*) pass "NCCL backend -I 1 -z 3 -J: the table and nccl-tests' JSON agree ($res)" ;;
	*) fail "NCCL backend -I -z 3 -J (exit $rc): $res"; cat "$TMP/err" >&2 ;;
	esac
	contains "$TMP/out" "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows " "-I with NCCL times with CUDA events"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["nccl_version"] == 22105 and d["config"]["devices"][1]["device_hex"] == "0000:29:00", d["config"]' \
		"$TMP/nt.json" && pass "-J: nccl_version and device_hex as nccl-tests writes them" || fail "-J nccl_version/devices"
	LD_LIBRARY_PATH="$fakes/nographs:$LD_LIBRARY_PATH" "$BIN" bench all_reduce -g 2 -b 1K -e 1K -G 2 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 2 ] && contains "$TMP/err" "lacks cuStreamBeginCapture_v2" "a driver without CUDA graphs: -G cannot run, and says which call is missing" \
		|| { fail "-G on a driver without graphs (exit $rc)"; cat "$TMP/err" >&2; }
	grep -q "nThread" "$TMP/out" && fail "-G refused only after the table began" || pass "-G refused before the table starts"
	FAKE_NCCL_VERSION=2804 "$BIN" bench all_reduce -g 2 -b 1K -e 1K -G 2 >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 2 ] && contains "$TMP/err" "need NCCL 2.9 or newer" "-G with NCCL 2.8: refused with the version" \
		|| fail "-G with an old NCCL"


	FAKE_NCCL_SCENARIO=ib-gdr "$BIN" nccl -g 2 --bytes 1M --require ib,gdr,dmabuf --keep-logs "$TMP/logs" \
		--json "$TMP/n.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 0 ] && pass "test-nccl with IB and GPUDirect: exit 0" || { fail "test-nccl ib-gdr (exit $rc)"; cat "$TMP/err" >&2; }
	contains "$TMP/out" "Rank 1: OK (result=1, expected=1)" "each rank's sum of rank numbers"
	contains "$TMP/out" "Rank 0: OK: 1048576 bytes all-reduced, every element checked" "the large buffer checked"
	contains "$TMP/out" "network: IB (mlx5_0:1/RoCE, mlx5_1:1/RoCE)" "network verdict from NCCL's log"
	contains "$TMP/out" "GPUDirect RDMA: on for mlx5_0, mlx5_1" "GPUDirect verdict"
	ls "$TMP/logs"/nccl.*.log >/dev/null 2>&1 && pass "--keep-logs keeps NCCL's log" || fail "--keep-logs"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["processes"][0]; assert d["result"]=="pass" and p["network"]=="IB" and [h["gdr"] for h in p["hcas"]]==[True,True] and p["dmabuf"], d' \
		"$TMP/n.json" && pass "test-nccl --json: network, GPUDirect per HCA, DMA-BUF as fields" || fail "test-nccl --json"
	schema_ok nccl.schema.json "test-nccl (IB, GDR)" "$TMP/n.json"

	FAKE_NCCL_SCENARIO=socket "$BIN" nccl -g 2 --bytes 4K --require ib --json "$TMP/s.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 1 ] && contains "$TMP/out" "FAIL: --require ib: ib: NCCL used the Socket network" "a socket fallback fails --require ib" \
		|| { fail "socket fallback (exit $rc)"; cat "$TMP/out" >&2; }
	schema_ok nccl.schema.json "test-nccl (Socket, --require ib unmet)" "$TMP/s.json"
	FAKE_NCCL_SCENARIO=socket "$BIN" nccl -g 2 --bytes 4K >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 0 ] && contains "$TMP/out" "network: Socket" "without --require, a fallback is reported, not failed" || fail "socket without --require"

	t0=$(date +%s)
	FAKE_NCCL_HANG=coll "$BIN" bench all_reduce -g 2 -b 1K -e 1K -T 2 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	t1=$(date +%s)
	[ "$rc" -eq 3 ] && [ $((t1 - t0)) -lt 10 ] && pass "a hung collective ends the run at -T (exit 3, $((t1 - t0)) s)" \
		|| fail "hung collective: exit $rc after $((t1 - t0)) s"
	contains "$TMP/err" "rank 1 (local 1, GPU 1)" "the stalled GPUs are named"
	FAKE_CUDA_DEVICES=1 "$BIN" bench all_reduce -g 2 -b 1K -e 1K >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 2 ] && contains "$TMP/err" "GPU" "-g 2 on one GPU: a clear error" || fail "-g 2 with one GPU"
}

case "${1:-}" in
table|ranks|files|verdict|failures|nogpu|mpi|nccltests|fakegpu) "t_$1" ;;
*) echo "usage: $0 table | ranks | files | verdict | failures | nogpu | mpi | fakegpu" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
exit 0
