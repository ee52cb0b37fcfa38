#!/bin/sh
# How long does cluster mode take to aggregate 10,000 node records? The
# target: well under 2 s for parsing, voting and rendering together
# (docs/cluster.md: the vote is one sort per hardware shape, O(N·K log)).
#
# Builds perf/cluster-aggregate.c against BUILD_DIR's libgpuready.a and runs
# it on N synthetic records (default 10,000); exit 1 when the aggregation
# alone takes 2 s or more. Not a test: timings depend on the machine; use a
# release build (`meson setup build-rel --buildtype=release`), since a
# sanitizer build is several times slower (its flags are taken over here).
#
# usage: perf/cluster-aggregate.sh [BUILD_DIR (build)] [N (10000)]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
n=${2:-10000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/driver.sh"
build_driver cluster-aggregate "$build" "$tmp/cluster-aggregate"
"$tmp/cluster-aggregate" "$n"
