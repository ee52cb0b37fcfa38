#!/bin/sh
# How long do `gpuready cluster links`' schedule and rank 0's aggregation
# take for 4,096 nodes? The circle schedule (4,095 rounds, every pair
# checked once), 40 random rounds, and rank 0's side of a whole run:
# 16.8 million results parsed from the ranks' lines, the statistics, the
# suspects, the second pass, the verdicts, the JSON and text reports.
# The measurement itself (2 s per direction, about 5 s per round) is what
# takes time in a real run; this shows the rest is not.
#
# Builds perf/cluster-links-schedule.c against BUILD_DIR's libgpuready.a and
# runs it on N nodes (default 4,096). Not a test and not in CI: timings
# depend on the machine; use a release build (`meson setup build-rel
# --buildtype=release`), since a sanitizer build is several times slower
# (its flags are taken over here). A release build on a 2-core VM: the
# schedule 0.2 s, 16.8 million results written and parsed 7 s (the ranks
# write theirs in parallel; rank 0 parses), the analysis 1 s, the JSON
# (16.8 million numbers) 3.5 s; 0.67 GB peak on rank 0. A real run of
# 4,096 nodes measures for 4,095 rounds of about 5 s (5.7 hours): use
# --rounds K there.
#
# usage: perf/cluster-links-schedule.sh [BUILD_DIR (build)] [N (4096)]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
n=${2:-4096}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/driver.sh"
build_driver cluster-links-schedule "$build" "$tmp/cluster-links-schedule"
/usr/bin/time -f "peak memory: %M KiB, %e s in all" "$tmp/cluster-links-schedule" "$n"
