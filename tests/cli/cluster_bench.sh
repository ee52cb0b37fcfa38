#!/bin/sh
# `cluster check --bench`: every node measures its GPUs' host copies (the
# gpu.copy_bandwidth check and fact), and the node with a slow slot, or
# one whose GPU could not be measured, stands apart in the drift table.
# The nodes are the fixture tree h100-8x-cx7-roce five times over; each
# measures with the test double of libcuda ($GPUREADY_FAKES,
# tests/fakes/fake_cuda*.c; one GPU, 0000:18:00.0, a Gen5 x16 slot in the
# tree) through the test-only hook GPUREADY_TEST_BENCH_TREE=1
# (src/cluster/testhook.h: --bench measures on a tree). Asked two ways:
#   --hosts through tests/cli/fake-rsh.sh, each host's FAKE_CUDA_* from its
#   HOST.env file (gpu03 at 14 GB/s host to device, gpu05's copies never
#   end, so its measurement is given up after GPUREADY_PROBE_TIMEOUT=2 s:
#   within --host-timeout 1 only because --bench adds 180 s), and
#   under a launcher (torchrun's variables, GPUREADY_TEST_RANK_TREES), the
#   slow GPU set by rank.
# Then: without --bench the hosts do not measure; `cluster facts --bench`;
# --bench with --snapshots is refused.
set -u

. "$(dirname "$0")/lib.sh"

fakes=${GPUREADY_FAKES:?}
export LD_LIBRARY_PATH="$fakes${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset FAKE_CUDA_COPY_GBPS FAKE_CUDA_PEER FAKE_CUDA_LOST_AFTER FAKE_CUDA_OOM FAKE_CUDA_HANG GPUREADY_PROBE_TIMEOUT
export FAKE_CUDA_DEVICES=1 GPUREADY_TEST_BENCH_TREE=1

F=$TMP/fleet
mkdir -p "$F"
for h in gpu01 gpu02 gpu03 gpu04 gpu05; do
	ln -s "$FIX/h100-8x-cx7-roce/root" "$F/$h"
done
echo 'FAKE_CUDA_COPY_GBPS=h2d@0=14' >"$F/gpu03.env"
printf 'FAKE_CUDA_HANG=cuStreamSynchronize\nGPUREADY_PROBE_TIMEOUT=2\n' >"$F/gpu05.env"
rsh="sh $SRC/tests/cli/fake-rsh.sh {host}"
export GPUREADY_FAKE_RSH_DIR="$F"

# --hosts: the slow slot and the unmeasured GPU drift from the majority
expect_exit 1 "$BIN" cluster check --hosts 'gpu[01-05]' --rsh "$rsh" --remote-gpuready "$BIN" --host-timeout 1 \
	--bench && pass "--hosts --bench: exit 1"
out=$TMP/out
cp "$out" "$TMP/hosts.txt"
contains "$out" "5 nodes: 3 pass, 1 warn, 1 fail, 0 unreachable" "--hosts --bench: every host answered within --host-timeout 1 + 180 s"
contains "$out" "fail         gpu03: gpuready 1 fail 0 warn: gpu.copy_bandwidth 0000:18:00.0" \
	"--hosts --bench: gpu03's slow slot fails its check"
contains "$out" "gpu.copy_bandwidth  75%+ of PCIe limit (3 of 5)  gpu03: <50% of PCIe limit" \
	"--hosts --bench: gpu03 is the outlier on gpu.copy_bandwidth"
contains "$out" "gpu05: not measured" "--hosts --bench: gpu05, whose GPU could not be measured, votes apart"
"$BIN" cluster check --hosts 'gpu[01-05]' --rsh "$rsh" --remote-gpuready "$BIN" --bench --json >"$TMP/hosts.json" 2>/dev/null
schema_ok cluster.schema.json "cluster check --hosts --bench" "$TMP/hosts.json"
python3 - "$TMP/hosts.json" <<'PY' && pass "--hosts --bench JSON: the drift row" || fail "--hosts --bench JSON: the drift row"
import json, sys
d = json.load(open(sys.argv[1]))
row = [r for r in d["drift"] if r["fact"] == "gpu.copy_bandwidth"][0]
vals = {v["value"]: v["nodes"] for v in row["values"]}
assert vals["75%+ of PCIe limit"] == ["gpu01", "gpu02", "gpu04"], vals
assert vals["<50% of PCIe limit"] == ["gpu03"] and vals["not measured"] == ["gpu05"], vals
PY

# without --bench nothing is measured: no drift, gpu03 passes
expect_exit 0 "$BIN" cluster check --hosts 'gpu[01-04]' --rsh "$rsh" --remote-gpuready "$BIN" &&
	pass "--hosts without --bench: exit 0"
contains "$out" "4 nodes: 4 pass" "--hosts without --bench: the hosts do not measure"
lacks "$out" "gpu.copy_bandwidth" "--hosts without --bench: no gpu.copy_bandwidth drift"

# under a launcher: every rank measures; rank 2 (gpu03) has the slow slot
export GPUREADY_TEST_RANK_TREES="$F"
unset GPUREADY_FAKE_RSH_DIR
rank() { if [ "$RANK" = 2 ]; then FAKE_CUDA_COPY_GBPS=h2d@0=14 "$@"; else "$@"; fi; }
run_ranks 4 la rank "$BIN" cluster check --bench
rc=$?
[ "$rc" -eq 1 ] && pass "launcher --bench: exit 1" || fail "launcher --bench: exit $rc"
contains "$TMP/laout.0" "gpu.copy_bandwidth  75%+ of PCIe limit (3 of 4)  gpu03: <50% of PCIe limit" \
	"launcher --bench: gpu03 is the outlier on gpu.copy_bandwidth"
unset GPUREADY_TEST_RANK_TREES

# cluster facts takes --bench: the record holds the fact
expect_exit 0 "$BIN" cluster facts --bench --node-name n1 --sysroot "$F/gpu01" &&
	contains "$out" '"gpu.copy_bandwidth=75%+ of PCIe limit"' "cluster facts --bench: the fact in the record"
expect_exit 0 "$BIN" cluster facts --node-name n1 --sysroot "$F/gpu01" &&
	lacks "$out" "gpu.copy_bandwidth=" "cluster facts without --bench: no fact"
# a snapshot holds no GPU to measure
expect_exit 2 "$BIN" cluster check --snapshots "$F/gpu01" --bench &&
	contains "$TMP/err" "--bench applies only with --hosts or under a launcher, not --snapshots" \
		"--snapshots --bench: refused"

[ "$FAILS" -eq 0 ] || exit 1
