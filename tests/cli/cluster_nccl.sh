#!/bin/sh
# `gpuready cluster nccl` (docs/cluster.md, "cluster nccl").
#
#   cluster_nccl.sh          on this host: mpirun --backend mpi (five ranks
#                            named by GPUREADY_TEST_RANK_TREES; where the
#                            build has the MPI module) and the socket
#                            backend with --rank/--master over loopback:
#                            every stage's groups, the JSON validates, an
#                            expectation met ends after the all-node run
#                            (exit 0), one no pair can meet splits and says
#                            the pairs are alike (exit 1), two nodes have no
#                            halves; usage errors (exit 2). Loopback rates
#                            vary too much on a shared machine for a timed
#                            assertion: structure only.
#   cluster_nccl.sh netns    root only (else 77): six nodes of the virtual
#                            cluster (tests/cli/vcluster.sh), every link
#                            shaped with tc htb to 1 Gbit/s and node04's to
#                            100 Mbit/s: the MPI backend (mpirun over ssh)
#                            and the socket backend (--rank in each
#                            namespace) both name node04 a bad node. Only
#                            these namespaces are targets; a trap removes
#                            them.
set -u

. "$(dirname "$0")/lib.sh"

# groups_ok FILE N SPLIT: N nodes; the stages present as SPLIT says
groups_ok() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); split = sys.argv[3] == "1"
assert len(d["nodes"]) == n, d["nodes"]
st = [g["stage"] for g in d["groups"]]
assert st[0] == "all" and d["groups"][0]["node_count"] == n, st
assert d["split"] == split, d["split"]
if not split:
    assert st == ["all"], st
else:
    halves = [g for g in d["groups"] if g["stage"] == "halves"]
    assert len(halves) == (2 if n >= 4 else 0), halves
    if halves:
        assert sum(h["node_count"] for h in halves) == n, halves
    pairs = [g for g in d["groups"] if g["stage"] == "pairs"]
    rounds = min(3, n - 1 if n % 2 == 0 else n)
    assert len(pairs) == rounds * (n // 2), (len(pairs), rounds)
    seen = set()
    for p in pairs:
        a, b = p["nodes"]
        assert a != b and (a, b) not in seen and (b, a) not in seen, p
        seen.add((a, b))
for g in d["groups"]:
    assert g["error"] is None and g["busbw"] > 0 and g["wrong"] == 0, g
PY
}

loopback_mpi() {
	module=${GPUREADY_MPI_MODULE:-}
	if ! command -v mpirun >/dev/null || [ ! -f "$module" ]; then
		echo "skip: mpirun --backend mpi (no mpirun or no gpuready-mpi module in this build)"
		return
	fi
	mkdir -p "$TMP/fleet/n01" "$TMP/fleet/n02" "$TMP/fleet/n03" "$TMP/fleet/n04" "$TMP/fleet/n05"
	# Open MPI's own allocations are never freed: no leak check where it is loaded
	mpi() {
		np=$1; shift
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 GPUREADY_TEST_RANK_TREES=$TMP/fleet \
			GPUREADY_MPI_MODULE=$module timeout 120 mpirun --allow-run-as-root --oversubscribe \
			-x GPUREADY_TEST_RANK_TREES -x GPUREADY_MPI_MODULE -x ASAN_OPTIONS -np "$np" \
			"$BIN" cluster nccl --backend mpi --size 1M -n 3 "$@"
	}
	mpi 5 --json >"$TMP/mpi.json" 2>"$TMP/mpi.err"
	rc=$?
	{ [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && pass "mpirun -np 5 --backend mpi: exit $rc" ||
		{ fail "mpirun --backend mpi: exit $rc"; head -20 "$TMP/mpi.err" >&2; }
	schema_ok cluster-nccl.schema.json "cluster nccl --backend mpi" "$TMP/mpi.json"
	groups_ok "$TMP/mpi.json" 5 1 && pass "mpi: all, two halves, three rounds of two pairs" || fail "mpi: groups"
	mpi 5 --expect-busbw 0.000001 >"$TMP/met.txt" 2>"$TMP/met.err"
	rc=$?
	[ "$rc" -eq 0 ] && pass "an expectation met: exit 0" || { fail "expectation met: exit $rc"; cat "$TMP/met.err" >&2; }
	contains "$TMP/met.txt" "meets the expectation: no split" "an expectation met: no split"
	# two nodes: one pair, which cannot be an outlier of itself
	mpi 2 --expect-busbw 100000 >"$TMP/unmet.txt" 2>"$TMP/unmet.err"
	rc=$?
	[ "$rc" -eq 1 ] && pass "an expectation no pair meets: exit 1" || { fail "unmet: exit $rc"; cat "$TMP/unmet.err" >&2; }
	contains "$TMP/unmet.txt" "below the expected 100000.000" "unmet: the all-node line says so"
	contains "$TMP/unmet.txt" "every pair is alike" "unmet: not one node's fault"
	mpi 2 --json >"$TMP/two.json" 2>"$TMP/two.err"
	groups_ok "$TMP/two.json" 2 1 && pass "two nodes: no halves, one pair" || { fail "two nodes"; cat "$TMP/two.err" >&2; }
}

loopback() {
	mkdir -p "$TMP/fleet6/s0" "$TMP/fleet6/s1" "$TMP/fleet6/s2" "$TMP/fleet6/s3" "$TMP/fleet6/s4" "$TMP/fleet6/s5"
	GPUREADY_TEST_RANK_TREES=$TMP/fleet6 run_ranks 6 sock timeout 120 "$BIN" cluster nccl --backend socket --size 1M \
		-n 3 --json
	rc=$?
	{ [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && pass "socket backend, 6 ranks: exit $rc" ||
		{ fail "socket backend: exit $rc"; cat "$TMP"/sockerr.* >&2; }
	schema_ok cluster-nccl.schema.json "cluster nccl --backend socket" "$TMP/sockout.0"
	groups_ok "$TMP/sockout.0" 6 1 && pass "socket: all, two halves, three rounds of three pairs" || fail "socket: groups"
	loopback_mpi
	expect_exit 2 "$BIN" cluster nccl --backend mpi -g 2
	contains "$TMP/err" "-g 2 needs --backend nccl" "-g with the MPI backend is refused"
	expect_exit 2 "$BIN" cluster nccl --backend gloo
	contains "$TMP/err" "nccl, mpi or socket" "an unknown backend is refused"
	expect_exit 2 "$BIN" cluster nccl --backend socket
	contains "$TMP/err" "runs as one process per node under a launcher" "no launcher: said"
}

netns() {
	. "$SRC/tests/cli/vcluster.sh"
	vc_skip_unless_able
	command -v tc >/dev/null || { echo "skip: no tc"; exit 77; }
	V=$TMP/vc
	trap 'vc_down; rm -rf "$TMP"' EXIT INT TERM
	vc_up 6 "$V" "$BIN" || { fail "the virtual cluster could not be set up"; exit 1; }
	for k in 1 2 3 4 5 6; do vc_sshd "$k"; done
	vc_wait_ssh 10 1 2 3 4 5 6 || { fail "sshd did not start"; cat "$V"/log/* >&2; exit 1; }
	k=1
	while [ "$k" -le 6 ]; do
		rate=1gbit
		[ "$k" -eq 4 ] && rate=100mbit
		ns=$VC_NS-$(vc_name "$k")
		ip netns exec "$ns" tc qdisc replace dev eth0 root handle 1: htb default 10 &&
			ip netns exec "$ns" tc class add dev eth0 parent 1: classid 1:10 htb rate "$rate" 2>/dev/null &&
			ip netns exec "$VC_NS-hub" tc qdisc replace dev "v$k" root handle 1: htb default 10 &&
			ip netns exec "$VC_NS-hub" tc class add dev "v$k" parent 1: classid 1:10 htb rate "$rate" 2>/dev/null ||
			{ echo "skip: tc htb unavailable"; exit 77; }
		k=$((k + 1))
	done
	socket_ns sock
	rc=$?
	[ "$rc" -eq 1 ] && pass "socket backend, node04 at 100 Mbit/s: exit 1" ||
		{ fail "socket backend in namespaces: exit $rc"; cat "$TMP"/sock.err.* >&2; }
	verdict_is "$TMP/sock.json" bad_node node04 && pass "socket backend: node04 is a bad node" || fail "socket: verdict"
	hints_ok "$TMP/sock.json" && pass "bad node: the hint's commands are runnable" || fail "bad node: hints"
	# the MPI backend: mpirun over ssh, one process per node
	module=$(dirname "$BIN")/gpuready-mpi.so
	if command -v mpirun >/dev/null && [ -f "$module" ]; then
		for k in 1 2 3 4 5 6; do echo "$(vc_name "$k") slots=1"; done >"$TMP/hostfile"
		cat >"$V/nccl-gpuready" <<EOF2
#!/bin/sh
ASAN_OPTIONS=detect_leaks=0 GPUREADY_JOB_TOKEN=vcluster-$$ GPUREADY_MPI_MODULE=$module exec "$BIN" "\$@"
EOF2
		chmod 755 "$V/nccl-gpuready"
		VC_TIMEOUT=200 vc_mpirun "$TMP/hostfile" "$V/nccl-gpuready" cluster nccl --backend mpi --size 4M -n 5 --json \
			>"$TMP/mpi.json" 2>"$TMP/mpi.err"
		rc=$?
		[ "$rc" -eq 1 ] && pass "MPI backend over ssh, node04 at 100 Mbit/s: exit 1" ||
			{ fail "MPI backend in namespaces: exit $rc"; grep -v '^\[' "$TMP/mpi.err" | head -20 >&2; }
		verdict_is "$TMP/mpi.json" bad_node node04 && pass "MPI backend: node04 is a bad node" || fail "mpi: verdict"
	else
		echo "skip: the MPI backend (no mpirun or no gpuready-mpi module next to $BIN)"
	fi
	# node04 back to 1 Gbit/s; node02 and node05 may not reach each other (a
	# "prohibit" route each way, as a firewall would): their pair cannot
	# form its ring within -T, a failed pair naming both, and the run goes on
	ip netns exec "$VC_NS-node04" tc class change dev eth0 parent 1: classid 1:10 htb rate 1gbit 2>/dev/null
	ip netns exec "$VC_NS-hub" tc class change dev v4 parent 1: classid 1:10 htb rate 1gbit 2>/dev/null
	ip -n "$VC_NS-node02" route add prohibit "$(vc_addr 5)/32" && ip -n "$VC_NS-node05" route add prohibit "$(vc_addr 2)/32" ||
		fail "prohibit routes"
	socket_ns drop -T 8
	rc=$?
	[ "$rc" -eq 1 ] && pass "a pair that cannot connect: exit 1, not a stalled run" ||
		{ fail "failed pair: exit $rc"; cat "$TMP"/drop.err.* >&2; }
	verdict_is "$TMP/drop.json" failed node02 node05 && pass "node02 - node05 is a failed pair" || fail "failed pair"
	grep -q 'making its group' "$TMP/drop.json" && pass "failed pair: why" || fail "failed pair: why"
}

# socket_ns TAG [ARGS]: the socket backend, one rank per namespace, rank 0
# on node01; rank 0's JSON in $TMP/TAG.json
socket_ns() {
	tag=$1; shift
	port=$(($(free_port) % 20000 + 20000))
	pids=""
	k=2
	while [ "$k" -le 6 ]; do
		ip netns exec "$VC_NS-$(vc_name "$k")" timeout 200 "$BIN" cluster nccl --backend socket --size 4M -n 5 \
			--rank $((k - 1)) --nranks 6 --master "$(vc_addr 1):$port" --node-name "$(vc_name "$k")" "$@" \
			>/dev/null 2>"$TMP/$tag.err.$k" &
		pids="$pids $!"
		k=$((k + 1))
	done
	ip netns exec "$VC_NS-node01" timeout 200 "$BIN" cluster nccl --backend socket --size 4M -n 5 --rank 0 --nranks 6 \
		--master "$(vc_addr 1):$port" --node-name node01 --json "$@" >"$TMP/$tag.json" 2>"$TMP/$tag.err.1"
	rc=$?
	for p in $pids; do wait "$p"; done
	return $rc
}


case "${1:-}" in
netns) netns ;;
*) loopback ;;
esac
[ "$FAILS" -eq 0 ] || exit 1
