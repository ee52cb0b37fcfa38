#!/bin/sh
# How much does gpuready's harness add on top of MPI itself?
#
# Runs, alternately and REPS times each, a plain MPI_Allreduce loop
# (plain_allreduce.c, the anchor) and `gpuready bench all_reduce --backend
# mpi` over the same sizes, iterations and warm-up, on buffers allocated and
# written the same way, both timed on the host clock around the loop (as
# nccl-tests does), and prints per size the median time of each, the ratio
# of the medians and the median of the run-by-run ratios (each pair of runs
# ran back to back, one size each, so that ratio holds when the machine's
# speed drifts).
# The harness should add under 2% at 1 MiB and above; gpuready's column is
# its out-of-place half, the call the plain loop makes. A third program, the
# plain loop with a thread that wakes as gpuready's control-plane thread
# does (PLAIN_WAKER=1), separates what that thread costs on a machine
# without a free core from what the harness costs: `paired` compares
# gpuready with the plain loop, `vs waker` with the plain loop plus waker.
#
# Each timed loop moves about LOOP_BYTES (iterations = LOOP_BYTES / size, at
# least 20: 1024 at 1 MiB, 64 at 16 MiB), so that a loop lasts long enough
# (about half a second on a 2-core VM) for a moment's interference from
# other work on the machine to average out.
#
# usage: perf/mpi-overhead.sh [BUILD_DIR (build)] [NP (2)] [REPS (5)] [MAX_BYTES (16777216)] [LOOP_BYTES (1073741824)]
# Needs: mpicc, mpirun (Debian: libopenmpi-dev openmpi-bin); a release build
# of gpuready with its MPI module (`make run` or `meson setup build`).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
np=${2:-2}
reps=${3:-5}
max=${4:-16777216}
loop=${5:-1073741824}
min=1048576 warmup=5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mpicc -O2 -o "$tmp/plain" "$here/plain_allreduce.c"
run() { OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun --allow-run-as-root --oversubscribe -np "$np" "$@"; }

# One size per run, the pair back to back: the machine's speed drifts less
# between two runs of a second than over a whole sweep.
i=0
while [ "$i" -lt "$reps" ]; do
	b=$min
	while [ "$b" -le "$max" ]; do
		iters=$((loop / b > 20 ? loop / b : 20))
		run "$tmp/plain" "$b" "$b" "$iters" $warmup | sed "s/^/$i /" >>"$tmp/plain.txt"
		run -x PLAIN_WAKER=1 "$tmp/plain" "$b" "$b" "$iters" $warmup | sed "s/^/$i /" >>"$tmp/waker.txt"
		run "$build/gpuready" bench all_reduce --backend mpi -b "$b" -e "$b" -n "$iters" -w $warmup -c 0 \
			| awk -v i="$i" '!/^#/ && NF == 13 { print i, $1, $6 }' >>"$tmp/gpuready.txt"
		b=$((b * 2))
	done
	i=$((i + 1))
done

python3 - "$tmp/plain.txt" "$tmp/gpuready.txt" "$np" "$reps" "$loop" "$tmp/waker.txt" <<'PY'
import statistics, sys
def load(p):
    d = {}
    for line in open(p):
        i, b, t = line.split()
        d.setdefault(int(b), {})[int(i)] = float(t)
    return d
plain, ours, wk = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[6])
print(f"# MPI_Allreduce float sum, {sys.argv[3]} ranks, median of {sys.argv[4]} alternating runs, "
      f"{int(sys.argv[5]) >> 20} MiB per timed loop")
print(f"{'bytes':>10} {'plain MPI (us)':>15} {'+ waker (us)':>13} {'gpuready (us)':>14} {'ratio':>7} {'paired':>7} "
      f"{'vs waker':>9}")
worst = worst_w = 0.0
def paired(a, b):
    return statistics.median(a[i] / b[i] for i in b if i in a)
for b in sorted(plain):
    p, w, g = (statistics.median(x[b].values()) for x in (plain, wk, ours))
    pr, pw = paired(ours[b], plain[b]), paired(ours[b], wk[b])
    worst, worst_w = max(worst, abs(pr - 1)), max(worst_w, abs(pw - 1))
    print(f"{b:>10} {p:>15.1f} {w:>13.1f} {g:>14.1f} {g / p:>7.3f} {pr:>7.3f} {pw:>9.3f}")
print(f"# largest paired difference {worst * 100:.1f}% against the plain loop, {worst_w * 100:.1f}% against "
      f"the plain loop with the waker thread (target: under 2%)")
PY
