#!/bin/sh
# `gpuready cluster links` (docs/cluster.md, "cluster links").
#
#   cluster_links.sh          five ranks on loopback (odd N: one rests each
#                             round), named by GPUREADY_TEST_RANK_TREES:
#                             the run ends, the matrix is full, the JSON
#                             validates, text and SVG heat maps, --rounds
#                             with a seed, a rank killed mid-run (exit 3,
#                             named), mpirun --bootstrap mpi (where the
#                             build has the module), no launcher (exit 2),
#                             --rail tcp (TCP only), --rail rdma with no RDMA
#                             device (every rail fails with the reason, exit 1). Loopback rates
#                             vary too much on a shared machine for a timed
#                             assertion: structure only.
#   cluster_links.sh netns    root only (else 77): six network namespaces
#                             (gpl-0..gpl-5, 10.231.77.0/24) on a bridge, every
#                             veth shaped with tc htb to 1 Gbit/s; gpl-3's
#                             link at 100 Mbit/s is a bad node; then only the
#                             traffic between gpl-1 and gpl-4 at 100 Mbit/s
#                             (a tc filter on the peer's address) is a bad
#                             path; then gpl-2 and gpl-5 with a route that
#                             prohibits each other is a failed pair. Only these namespaces
#                             are targets; a trap removes them.
set -u

. "$(dirname "$0")/lib.sh"

# links_json FILE N: the report of N nodes has a full first-pass matrix.
full_matrix() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
assert len(d["nodes"]) == n, d["nodes"]
m = d["matrix_gbps"]
assert len(m) == n and all(len(r) == n for r in m), m
for i in range(n):
    for j in range(n):
        assert (m[i][j] is None) == (i == j), (i, j, m[i][j])
        assert i == j or m[i][j] > 0, (i, j)
assert d["schedule"]["kind"] == "circle" and d["schedule"]["pairs"] == n * (n - 1) // 2, d["schedule"]
assert d["schedule"]["rounds"] == (n if n % 2 else n - 1), d["schedule"]
assert not d["failures"], d["failures"]
assert d["exit"] == (1 if d["verdicts"] or d["below_expect"] else 0)
PY
}

loopback() {
	N=5
	T=$TMP/trees
	for i in 0 1 2 3 4; do mkdir -p "$T/node$i"; done
	export GPUREADY_TEST_RANK_TREES="$T"

	# torchrun's variables, JSON
	run_ranks "$N" js timeout 120 "$BIN" cluster links --json --duration 0.3
	rc=$?
	{ [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && pass "5 ranks on loopback: the run ends (exit $rc)" \
		|| { fail "5 ranks on loopback: exit $rc"; sed 's/^/  err0: /' "$TMP/jserr.0" | head >&2; }
	schema_ok cluster-links.schema.json "cluster links" "$TMP/jsout.0"
	full_matrix "$TMP/jsout.0" "$N" && pass "JSON: every pair measured both ways, 5 rounds of 2 pairs" \
		|| fail "JSON: the matrix"
	r=1
	while [ "$r" -lt "$N" ]; do
		[ -s "$TMP/jsout.$r" ] && fail "rank $r printed on standard output"
		r=$((r + 1))
	done

	# --rank/--nranks/--master, text and SVG
	port=$(free_port)
	r=1
	pids=""
	while [ "$r" -lt "$N" ]; do
		timeout 120 "$BIN" cluster links --duration 0.3 --rank "$r" --nranks "$N" --master "127.0.0.1:$port" \
			>"$TMP/txout.$r" 2>"$TMP/txerr.$r" &
		pids="$pids $!"
		r=$((r + 1))
	done
	timeout 120 "$BIN" cluster links --duration 0.3 --rank 0 --nranks "$N" --master "127.0.0.1:$port" \
		--svg "$TMP/map.svg" >"$TMP/txout.0" 2>"$TMP/txerr.0"
	rc=$?
	for p in $pids; do wait "$p"; done
	{ [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && pass "--rank/--nranks: exit $rc" || fail "--rank/--nranks: exit $rc"
	contains "$TMP/txout.0" "cluster links: 5 nodes, 10 pairs in 5 rounds (every pair), tcp" "text: the summary"
	contains "$TMP/txout.0" "heat map (% of the median" "text: the heat map"
	contains "$TMP/txout.0" "    4 node4  " "text: a row per node, by name"
	rects=$(grep -c '<rect x=' "$TMP/map.svg" 2>/dev/null)
	[ "$rects" = 25 ] && pass "SVG: 25 squares" || fail "SVG: $rects squares"

	# --rounds K --seed S: random matchings, the seed printed
	run_ranks "$N" rn timeout 120 "$BIN" cluster links --json --duration 0.2 --rounds 2 --seed 7
	python3 - "$TMP/rnout.0" <<'PY' && pass "--rounds 2 --seed 7: 2 matchings of 2 pairs, seed 7" || fail "--rounds"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schedule"] == {"kind": "random", "rounds": 2, "pairs": 4, "seed": 7}, d["schedule"]
assert sum(v is not None for row in d["matrix_gbps"] for v in row) + 2 * len(d["failures"]) >= 4
PY

	# --rail tcp: the TCP report alone, as before RDMA rails were measured
	run_ranks 3 rt timeout 120 "$BIN" cluster links --rail tcp --duration 0.2
	rc=$?
	{ [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && pass "--rail tcp: exit $rc" || fail "--rail tcp: exit $rc"
	contains "$TMP/rtout.0" "cluster links: 3 nodes, 3 pairs in 3 rounds (every pair), tcp, 0.2 s per direction" \
		"--rail tcp: the summary"
	grep -q "RDMA\|rail 0" "$TMP/rtout.0" && fail "--rail tcp: a word of RDMA rails" || pass "--rail tcp: TCP only"

	# --rail rdma where no node has an RDMA device: every rail measurement
	# fails with the reason, the run ends, exit 1 (failed pairs)
	run_ranks "$N" rd timeout 120 "$BIN" cluster links --json --duration 0.2 --rail rdma
	rc=$?
	[ "$rc" -eq 1 ] && pass "--rail rdma without RDMA devices: exit 1" \
		|| { fail "--rail rdma: exit $rc"; sed 's/^/  err0: /' "$TMP/rderr.0" | head >&2; }
	schema_ok cluster-links.schema.json "cluster links --rail rdma" "$TMP/rdout.0"
	python3 - "$TMP/rdout.0" "$N" <<'PY' && pass "--rail rdma: rail 0 of every direction failed: no RDMA device" \
		|| fail "--rail rdma: the report"
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
assert d["rail"] == 0 and d["rails"] == [] and d["exit"] == 1, (d["rail"], d["rails"], d["exit"])
assert all(v is None for row in d["matrix_gbps"] for v in row)
f = d["failures"]
assert len(f) == n * (n - 1) and all(x["rail"] == 0 and "no RDMA device" in x["error"] for x in f), f
assert len(d["verdicts"]) == n * (n - 1) // 2 and all(v["kind"] == "failed" and v["rail"] == 0 for v in d["verdicts"])
PY
	hints_ok "$TMP/rdout.0" && pass "--rail rdma: the hints' commands are runnable" || fail "--rail rdma: hints"

	# a rank killed mid-run: named, exit 3, within the deadlines
	port=$(free_port)
	pids=""
	for r in 1 3 4; do
		timeout 120 "$BIN" cluster links --duration 1 --rank "$r" --nranks "$N" --master "127.0.0.1:$port" \
			>/dev/null 2>"$TMP/klerr.$r" &
		pids="$pids $!"
	done
	"$BIN" cluster links --duration 1 --rank 2 --nranks "$N" --master "127.0.0.1:$port" >/dev/null 2>"$TMP/klerr.2" &
	victim=$!
	(sleep 3; kill -9 "$victim") &
	killer=$!
	timeout 120 "$BIN" cluster links --duration 1 --rank 0 --nranks "$N" --master "127.0.0.1:$port" \
		>"$TMP/klout.0" 2>"$TMP/klerr.0"
	rc=$?
	wait "$killer"
	for p in $pids; do wait "$p"; done
	wait "$victim" 2>/dev/null
	[ "$rc" -eq 3 ] && pass "a rank killed: exit 3" || fail "a rank killed: exit $rc"
	contains "$TMP/klerr.0" "stopping: rank 2" "a rank killed: named"

	# mpirun with --bootstrap mpi (the gpuready-mpi module tells the ranks
	# where rank 0 listens; each rank listens on this host's first address).
	# LeakSanitizer is off there: Open MPI's library, loaded and unloaded at
	# run time, leaves its own allocations behind.
	if command -v mpirun >/dev/null && [ -n "${GPUREADY_MPI_MODULE:-}" ] && [ -f "$GPUREADY_MPI_MODULE" ]; then
		ASAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS \
			-x GPUREADY_TEST_RANK_TREES -x GPUREADY_MPI_MODULE -np "$N" "$BIN" cluster links --bootstrap mpi \
			--json --duration 0.3 >"$TMP/mpiout" 2>"$TMP/mpierr"
		rc=$?
		{ [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && full_matrix "$TMP/mpiout" "$N" \
			&& pass "mpirun --bootstrap mpi: every pair measured" \
			|| { fail "mpirun --bootstrap mpi: exit $rc"; head -5 "$TMP/mpierr" >&2; }
	fi

	# one node: nothing to measure
	GPUREADY_TEST_RANK_TREES='' expect_exit 2 "$BIN" cluster links --rank 0 --nranks 1 --master "127.0.0.1:$(free_port)" &&
		contains "$TMP/err" "it measures between two nodes or more" "one node: exit 2, said"

	# ranks started with different --rail: refused by rank 0, every rank exit 2
	port=$(free_port)
	timeout 60 "$BIN" cluster links --rail tcp --rank 1 --nranks 2 --master "127.0.0.1:$port" --duration 0.2 \
		>/dev/null 2>"$TMP/railerr.1" &
	p1=$!
	expect_exit 2 timeout 60 "$BIN" cluster links --rail all --rank 0 --nranks 2 --master "127.0.0.1:$port" \
		--duration 0.2 && contains "$TMP/err" "measures --rail tcp where rank 0 measures --rail all" \
		"different --rail on two ranks: refused, exit 2"
	wait "$p1"
	rc=$?
	[ "$rc" -eq 2 ] && pass "different --rail: the other rank exits 2 too" || fail "different --rail: rank 1 exit $rc"

	# no launcher
	GPUREADY_TEST_RANK_TREES='' expect_exit 2 "$BIN" cluster links &&
		contains "$TMP/err" "cluster links runs as one process per node under a launcher" "no launcher: usage"
}

# ---- namespaces ----

NSN=6
NET=10.231.77
netns_cleanup() {
	i=0
	while [ "$i" -lt "$NSN" ]; do
		ip netns del "gpl-$i" 2>/dev/null
		ip link del "gpl-v$i" 2>/dev/null
		i=$((i + 1))
	done
	ip link del gpl-br0 2>/dev/null
	rm -rf "$TMP"
}

# shape NS DEV HOSTDEV RATE: htb at RATE both ways on one namespace's link
shape() {
	ip netns exec "$1" tc qdisc replace dev "$2" root handle 1: htb default 10 &&
		ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:10 htb rate "$4" &&
		tc qdisc replace dev "$3" root handle 1: htb default 10 &&
		tc class add dev "$3" parent 1: classid 1:10 htb rate "$4"
}

netns_up() {
	ip link add gpl-br0 type bridge && ip link set gpl-br0 up || return 1
	i=0
	while [ "$i" -lt "$NSN" ]; do
		ns=gpl-$i
		ip netns add "$ns" && ip link add "gpl-v$i" type veth peer name eth0 netns "$ns" &&
			ip link set "gpl-v$i" master gpl-br0 up &&
			ip -n "$ns" addr add "$NET.$((i + 1))/24" dev eth0 && ip -n "$ns" link set eth0 up &&
			ip -n "$ns" link set lo up || return 1
		i=$((i + 1))
	done
}

# run_ns TAG: every rank in its namespace; rank 0's JSON in $TMP/TAG.json
run_ns() {
	port=$(free_port)
	pids=""
	i=1
	while [ "$i" -lt "$NSN" ]; do
		ip netns exec "gpl-$i" timeout 200 "$BIN" cluster links --rank "$i" --nranks "$NSN" --master "$NET.1:$port" \
			--node-name "gpl-$i" --duration 1 >/dev/null 2>"$TMP/$1err.$i" &
		pids="$pids $!"
		i=$((i + 1))
	done
	ip netns exec gpl-0 timeout 200 "$BIN" cluster links --rank 0 --nranks "$NSN" --master "$NET.1:$port" \
		--node-name gpl-0 --duration 1 --json >"$TMP/$1.json" 2>"$TMP/$1err.0"
	rc=$?
	for p in $pids; do wait "$p"; done
	return $rc
}


netns() {
	[ "$(id -u)" -eq 0 ] || { echo "skip: not root"; exit 77; }
	command -v ip >/dev/null && command -v tc >/dev/null || { echo "skip: no ip or tc"; exit 77; }
	trap netns_cleanup EXIT INT TERM
	netns_cleanup
	mkdir -p "$TMP"
	netns_up || { echo "skip: cannot create namespaces, veths or a bridge here"; exit 77; }
	i=0
	while [ "$i" -lt "$NSN" ]; do
		rate=1gbit
		[ "$i" -eq 3 ] && rate=100mbit
		shape "gpl-$i" eth0 "gpl-v$i" "$rate" || { echo "skip: tc htb unavailable"; exit 77; }
		i=$((i + 1))
	done
	run_ns node
	rc=$?
	[ "$rc" -eq 1 ] && pass "one namespace at 100 Mbit/s: exit 1" || { fail "bad node: exit $rc"; cat "$TMP/nodeerr.0" >&2; }
	schema_ok cluster-links.schema.json "cluster links in namespaces" "$TMP/node.json"
	verdict_is "$TMP/node.json" bad_node gpl-3 && pass "gpl-3 is a bad node or its cable" || fail "bad node"
	grep -q 'ethtool -S eth0' "$TMP/node.json" && pass "bad node: the hint names its interface" || fail "hint"
	hints_ok "$TMP/node.json" && pass "bad node: the hint's commands are runnable" || fail "bad node: hints"

	# gpl-3 back to 1 Gbit/s; only gpl-1 <-> gpl-4 at 100 Mbit/s
	ip netns exec gpl-3 tc class change dev eth0 parent 1: classid 1:10 htb rate 1gbit
	tc class change dev gpl-v3 parent 1: classid 1:10 htb rate 1gbit
	for pair in "1 5" "4 2"; do
		set -- $pair
		ip netns exec "gpl-$1" tc class add dev eth0 parent 1: classid 1:20 htb rate 100mbit
		ip netns exec "gpl-$1" tc filter add dev eth0 parent 1: protocol ip u32 match ip dst "$NET.$2/32" flowid 1:20
	done
	run_ns path
	rc=$?
	[ "$rc" -eq 1 ] && pass "one path at 100 Mbit/s: exit 1" || { fail "bad path: exit $rc"; cat "$TMP/patherr.0" >&2; }
	verdict_is "$TMP/path.json" bad_path gpl-1 gpl-4 && pass "gpl-1 - gpl-4 is a bad path" || fail "bad path"
	hints_ok "$TMP/path.json" && pass "bad path: the hint's commands are runnable" || fail "bad path: hints"

	# the path healed; gpl-2 and gpl-5 may not reach each other (a
	# "prohibit" route each way, as a firewall would): a failed pair naming
	# both, within the connect deadline, and the run goes on
	for i in 1 4; do ip netns exec "gpl-$i" tc filter del dev eth0 parent 1:; done
	ip -n gpl-2 route add prohibit "$NET.6/32" && ip -n gpl-5 route add prohibit "$NET.3/32" || fail "prohibit routes"
	run_ns drop
	rc=$?
	[ "$rc" -eq 1 ] && pass "a pair that cannot connect: exit 1" || { fail "failed pair: exit $rc"; cat "$TMP/droperr.0" >&2; }
	verdict_is "$TMP/drop.json" failed gpl-2 gpl-5 && pass "gpl-2 - gpl-5 is a failed pair" || fail "failed pair"
	grep -q 'did not connect within\|could not connect to' "$TMP/drop.json" && pass "failed pair: why" || fail "failed pair: why"
}

case "${1:-}" in
netns) netns ;;
*) loopback ;;
esac
[ "$FAILS" -eq 0 ] || exit 1
