#!/bin/sh
# How long does rank 0 of `gpuready cluster nccl` take to aggregate 4,096
# nodes? Every stage's parts (all, halves, three rounds of pairs, the
# recheck rounds) collected into groups, the pairs' statistics, the
# suspects and the recheck plan, the verdicts, the text and JSON reports;
# one node at a tenth of the bus bandwidth must come out as the one bad
# node. The all_reduces themselves (seconds each per stage) are what takes
# time in a real run; this shows the rest is not.
#
# Builds perf/cluster-nccl-aggregate.c against BUILD_DIR's libgpuready.a
# and runs it on N nodes (default 4,096). Not a test and not in CI: use a
# release build (`meson setup build-rel --buildtype=release`).
#
# usage: perf/cluster-nccl-aggregate.sh [BUILD_DIR (build)] [N (4096)]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
n=${2:-4096}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/driver.sh"
build_driver cluster-nccl-aggregate "$build" "$tmp/cluster-nccl-aggregate"
/usr/bin/time -f "peak memory: %M KiB, %e s in all" "$tmp/cluster-nccl-aggregate" "$n"
