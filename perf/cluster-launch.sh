#!/bin/sh
# How many processes can `gpuready cluster check` gather under a launcher on
# one machine? Starts N processes (default 512) with torchrun-style
# variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), each reading its
# own tree through the test-only GPUREADY_TEST_RANK_TREES (links to one
# fixture, every 50th one with another MTU so the vote has drift to find), and
# prints the time from the first start to rank 0's result, rank 0's
# summary and the drift it found. Exit 1 when rank 0 does not end with the
# expected summary or a process exits with another status than rank 0's.
#
# Not a test: timings depend on the machine; use a release build. Each
# process runs every node check (the fixture's ~70 checks), so the time is
# mostly N times one check run, spread over the CPUs; the rendezvous and the
# gather are a small part (compare with N=2).
#
# usage: perf/cluster-launch.sh [BUILD_DIR (build-rel)] [N (512)]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-build-rel}/gpuready
n=${2:-512}
tmp=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT INT TERM
fix=$here/tests/fixtures/h100-8x-cx7-roce/root
cp -a "$fix" "$tmp/odd"
echo 4200 >"$tmp/odd/sys/class/net/ens3f0np0/mtu"
mkdir "$tmp/trees"
i=0
while [ "$i" -lt "$n" ]; do
	name=$(printf 'node%05d' "$i")
	if [ $((i % 50)) -eq 49 ]; then ln -s "$tmp/odd" "$tmp/trees/$name"; else ln -s "$fix" "$tmp/trees/$name"; fi
	i=$((i + 1))
done
ulimit -n 4096 2>/dev/null || true
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export GPUREADY_TEST_RANK_TREES="$tmp/trees" WORLD_SIZE="$n" MASTER_ADDR=127.0.0.1 MASTER_PORT="$port"
start=$(date +%s.%N)
r=1
while [ "$r" -lt "$n" ]; do
	RANK=$r "$bin" cluster check --connect-timeout 600 --host-timeout 600 >/dev/null 2>"$tmp/err.$r" &
	pids="$pids $!"
	r=$((r + 1))
done
set +e
RANK=0 "$bin" cluster check --connect-timeout 600 --host-timeout 600 >"$tmp/out" 2>"$tmp/err.0"
rc0=$?
end=$(date +%s.%N)
bad=0
for p in $pids; do
	wait "$p"
	[ $? -eq "$rc0" ] || bad=$((bad + 1))
done
pids=""
set -e
echo "$n processes: rank 0 exit $rc0 after $(echo "$end - $start" | bc) s; $bad other processes exited otherwise"
head -1 "$tmp/out"
grep -A3 "FACT" "$tmp/out" || true
odd=$((n / 50))
grep -q "^$n nodes: $((n - odd)) pass, $odd warn, 0 fail, 0 unreachable" "$tmp/out" && [ "$bad" -eq 0 ] || {
	echo "unexpected result; rank 0's standard error:" >&2
	head -5 "$tmp/err.0" >&2
	exit 1
}
