#!/bin/sh
# gpuready bench net's TCP tests against the tools operators already trust,
# on loopback, each as a server process and a client process like the
# anchors, same sizes and durations, run alternately REPS times:
#   tcp_bw  vs iperf3 -c (one stream, 128 KiB writes, receiver's rate:
#           bytes the server received over the server's time, in Gb/s =
#           10^9 bit/s on both sides; iperf3's end.sum_received, tcp_bw's
#           bw_avg_gbps; the ratio is also given pair by pair)
#   tcp_lat vs sockperf ping-pong --tcp (14-byte messages, sockperf's
#           smallest; median and mean of the one-way latency)
# Targets: tcp_bw at least 0.95x iperf3; tcp_lat within 10% of sockperf.
#
# usage: perf/net-vs-iperf3-sockperf.sh [BUILD_DIR (build)] [REPS (5)] [SECONDS (5)]
# Needs iperf3 and sockperf (Debian packages) and a release build.
set -eu
build=${1:-build}
reps=${2:-5}
secs=${3:-5}
bin=$build/gpuready
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

i=0
while [ "$i" -lt "$reps" ]; do
	p=$(port)
	iperf3 -s -1 -B 127.0.0.1 -p "$p" >/dev/null 2>&1 &
	sleep 0.5
	iperf3 -c 127.0.0.1 -p "$p" -t "$secs" -l 128K -J >"$tmp/iperf.json"
	wait
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e9)' \
		"$tmp/iperf.json" >>"$tmp/iperf3.txt"
	p=$(port)
	"$bin" bench net --server --clients 1 --bind 127.0.0.1 -p "$p" 2>/dev/null &
	sleep 0.5
	"$bin" bench net "127.0.0.1:$p" --test tcp_bw -s 128K -D "$secs" --json "$tmp/g.json" >/dev/null
	wait
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"][0]["bw_avg_gbps"])' "$tmp/g.json" \
		>>"$tmp/gbw.txt"

	p=$(port)
	sockperf server --tcp -i 127.0.0.1 -p "$p" >/dev/null 2>&1 &
	sp=$!
	sleep 0.5
	sockperf ping-pong --tcp -i 127.0.0.1 -p "$p" -m 14 -t "$secs" >"$tmp/sp.txt" 2>&1
	kill "$sp"; wait "$sp" 2>/dev/null || true
	awk '/percentile 50.000 =/ { p = $NF } /avg-latency=/ { sub(/.*avg-latency=/, ""); sub(/ .*/, ""); a = $0 } END { print p, a }' \
		"$tmp/sp.txt" >>"$tmp/sockperf.txt"
	p=$(port)
	"$bin" bench net --server --clients 1 --bind 127.0.0.1 -p "$p" 2>/dev/null &
	sleep 0.5
	"$bin" bench net "127.0.0.1:$p" --test tcp_lat -s 14 -D "$secs" --json "$tmp/l.json" >/dev/null
	wait
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"][0]; print(r["t_typical_us"], r["t_avg_us"])' \
		"$tmp/l.json" >>"$tmp/glat.txt"
	i=$((i + 1))
done

python3 - "$tmp" "$reps" "$secs" <<'PY'
import statistics, sys
d, reps, secs = sys.argv[1], sys.argv[2], sys.argv[3]
col = lambda f, i=0: [float(l.split()[i]) for l in open(f"{d}/{f}") if l.strip()]
iperf, gbw = statistics.median(col("iperf3.txt")), statistics.median(col("gbw.txt"))
paired = statistics.median(g / a for g, a in zip(col("gbw.txt"), col("iperf3.txt")))
sp50, spavg = statistics.median(col("sockperf.txt", 0)), statistics.median(col("sockperf.txt", 1))
g50, gavg = statistics.median(col("glat.txt", 0)), statistics.median(col("glat.txt", 1))
print(f"# loopback, medians of {reps} alternating runs of {secs} s each")
print(f"{'':28}{'anchor':>12}{'gpuready':>12}{'ratio':>8}")
print(f"{'TCP bandwidth (Gb/s)':28}{iperf:12.2f}{gbw:12.2f}{gbw / iperf:8.3f}   iperf3 -l 128K / tcp_bw -s 128K")
print(f"{'  pair by pair (median)':28}{'':24}{paired:8.3f}   " +
      " ".join(f"{g / a:.2f}" for g, a in zip(col("gbw.txt"), col("iperf3.txt"))))
print(f"{'TCP latency, median (us)':28}{sp50:12.2f}{g50:12.2f}{g50 / sp50:8.3f}   sockperf ping-pong -m 14 / tcp_lat -s 14")
print(f"{'TCP latency, mean (us)':28}{spavg:12.2f}{gavg:12.2f}{gavg / spavg:8.3f}")
ok_bw, ok_lat = gbw / iperf >= 0.95, abs(g50 / sp50 - 1) <= 0.10
print(f"# tcp_bw >= 0.95x iperf3: {'met' if ok_bw else 'NOT MET'}; "
      f"tcp_lat median within 10% of sockperf's: {'met' if ok_lat else 'NOT MET'}")
sys.exit(0 if ok_bw and ok_lat else 1)
PY
