#!/bin/sh
# How much does gpuready's harness add on top of MPI itself?
#
# Runs, alternately and REPS times each, a plain MPI_Allreduce loop
# (plain_allreduce.c, the anchor) and `gpuready bench all_reduce --backend
# mpi` over the same sizes, iterations and warm-up, both timed on the host
# clock around the loop (as nccl-tests does), and prints per size the
# median time of each and their ratio. The harness must add under 2% at
# 1 MiB and above.
#
# usage: perf/mpi-overhead.sh [BUILD_DIR (default build)] [NP (2)] [REPS (5)]
# Needs: mpicc, mpirun (Debian: libopenmpi-dev openmpi-bin); a release build
# of gpuready with its MPI module (`make run` or `meson setup build`).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
np=${2:-2}
reps=${3:-5}
min=1048576 max=67108864 iters=100 warmup=5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mpicc -O2 -o "$tmp/plain" "$here/plain_allreduce.c"
run() { OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun --allow-run-as-root --oversubscribe -np "$np" "$@"; }

i=0
while [ "$i" -lt "$reps" ]; do
	run "$tmp/plain" $min $max $iters $warmup >>"$tmp/plain.txt"
	run "$build/gpuready" bench all_reduce --backend mpi -b $min -e $max -f 2 -n $iters -w $warmup -c 0 \
		| awk '!/^#/ && NF == 13 { print $1, $6 }' >>"$tmp/gpuready.txt"
	i=$((i + 1))
done

python3 - "$tmp/plain.txt" "$tmp/gpuready.txt" "$np" "$reps" <<'PY'
import statistics, sys
def load(p):
    d = {}
    for line in open(p):
        b, t = line.split()
        d.setdefault(int(b), []).append(float(t))
    return d
plain, ours = load(sys.argv[1]), load(sys.argv[2])
print(f"# MPI_Allreduce float sum, {sys.argv[3]} ranks, median of {sys.argv[4]} alternating runs, 100 iterations")
print(f"{'bytes':>10} {'plain MPI (us)':>15} {'gpuready (us)':>14} {'ratio':>7}")
worst = 0.0
for b in sorted(plain):
    p, g = statistics.median(plain[b]), statistics.median(ours[b])
    worst = max(worst, g / p)
    print(f"{b:>10} {p:>15.1f} {g:>14.1f} {g / p:>7.3f}")
print(f"# worst ratio {worst:.3f} ({(worst - 1) * 100:+.1f}%)")
PY
