#!/bin/sh
# `gpuready bench copy` end to end against the test double of libcuda
# ($GPUREADY_FAKES, tests/fakes/fake_cuda*.c: FAKE_CUDA_DEVICES,
# FAKE_CUDA_COPY_GBPS, FAKE_CUDA_PEER, FAKE_CUDA_LOST_AFTER, FAKE_CUDA_OOM,
# FAKE_CUDA_HANG), with a fixture tree for the GPU's PCIe link (--sysroot):
# the rate the double is set to in nvbandwidth's matrix, --expect-h2d
# above it, pairs without peer access, the latency tests
# (FAKE_CUDA_LATENCY_NS), a GPU lost part-way, allocation
# failure, a GPU that stops answering, no libcuda, and --json against
# docs/bench-copy.schema.json.
set -u

. "$(dirname "$0")/lib.sh"

fakes=${GPUREADY_FAKES:?}
ROOT="$FIX/h100-8x-cx7-roce/root"
export LD_LIBRARY_PATH="$fakes${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset FAKE_CUDA_COPY_GBPS FAKE_CUDA_PEER FAKE_CUDA_LOST_AFTER FAKE_CUDA_OOM FAKE_CUDA_HANG FAKE_CUDA_PEER_ENABLE_FAIL \
	FAKE_CUDA_SHARED_HOST FAKE_CUDA_CLOCK_KHZ FAKE_CUDA_LATENCY_NS
export FAKE_CUDA_DEVICES=1
copy() { "$BIN" bench copy -b 4 -i 3 "$@"; }

# One GPU (0000:18:00.0, a Gen5 x16 slot in the fixture), host to device
# at 50 GB/s: nvbandwidth's block, and the share of the link.
FAKE_CUDA_COPY_GBPS=h2d=50,d2h=45 expect_exit 0 copy -t host_to_device_memcpy_ce,1 --sysroot "$ROOT" &&
	pass "one GPU: exit 0"
contains "$TMP/out" "Running host_to_device_memcpy_ce." "the test's Running line"
contains "$TMP/out" "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)" "nvbandwidth's description line"
contains "$TMP/out" " 0     50.00" "h2d=50 shows as 50.00 in the matrix"
contains "$TMP/out" " 0     45.00" "d2h=45 shows as 45.00"
contains "$TMP/out" "SUM host_to_device_memcpy_ce 50.00" "the SUM line"
contains "$TMP/out" "# host_to_device_memcpy_ce: 50.0 GB/s, 79% of PCIe Gen5 x16" "the verdict: share of the Gen5 x16 link"
contains "$TMP/out" "(link now Gen1 x16)" "the idle link's current speed is named"

# --expect-h2d above the figure: exit 1 and the verdict says so.
FAKE_CUDA_COPY_GBPS=h2d=50 expect_exit 1 copy -t 0 --expect-h2d 55 --sysroot "$ROOT" &&
	pass "--expect-h2d 55 against 50 GB/s: exit 1"
contains "$TMP/out" "FAIL: 1 of 1 below --expect-h2d 55.0 GB/s: GPU 0 50.0" "the failing verdict names the GPU"
FAKE_CUDA_COPY_GBPS=h2d=50 expect_exit 0 copy -t 0 --expect-h2d 45 && pass "--expect-h2d 45: exit 0"

# Four GPUs, one slow slot; every pair reaches its peers.
FAKE_CUDA_DEVICES=4 FAKE_CUDA_COPY_GBPS=h2d=50,h2d@2=14,p2p=300 expect_exit 0 copy -t 0,4,12,34 &&
	pass "four GPUs: exit 0"
contains "$TMP/out" "           0         1         2         3" "four columns"
contains "$TMP/out" " 0     50.00     50.00     14.00     50.00" "the slow GPU 2 in the host-to-device row"
contains "$TMP/out" " 1    300.00       N/A    300.00    300.00" "device-to-device read: the diagonal is N/A"
contains "$TMP/out" "Running all_to_one_write_ce." "all_to_one_write_ce runs"
contains "$TMP/out" "Running device_local_copy." "device_local_copy runs"

# Peer access only between 0 and 1: the other pairs are N/A, and the
# verdict says why; none at all: waived.
FAKE_CUDA_DEVICES=4 FAKE_CUDA_PEER=0-1,1-0 expect_exit 0 copy -t device_to_device_memcpy_write_ce &&
	pass "partial peer access: exit 0"
contains "$TMP/out" " 2       N/A       N/A       N/A       N/A" "a GPU without peer access: its row is N/A"
contains "$TMP/out" "without peer access (cuDeviceCanAccessPeer)" "the verdict says why cells are N/A"
FAKE_CUDA_DEVICES=2 FAKE_CUDA_PEER=none expect_exit 0 copy -t 4 && pass "no peer access: exit 0"
contains "$TMP/out" "Waived" "no peer pair: the test is waived as nvbandwidth does"
contains "$TMP/out" "no GPU pair with peer access" "and the verdict says why"
# an expectation that nothing measured cannot be met: lost peer access fails --expect-p2p
FAKE_CUDA_DEVICES=2 FAKE_CUDA_PEER=none expect_exit 1 copy -t 4 --expect-p2p 300 &&
	contains "$TMP/out" "FAIL: --expect-p2p 300.0 GB/s not met: nothing measured" "no peer access with --expect-p2p: exit 1"
FAKE_CUDA_DEVICES=4 FAKE_CUDA_PEER=0-1,1-0 expect_exit 1 copy -t 5 --expect-p2p 1 &&
	contains "$TMP/out" "10 not measured (N/A)" "pairs without peer access fail --expect-p2p"
# -d picks GPUs by CUDA index, and the output names them by it
FAKE_CUDA_DEVICES=4 FAKE_CUDA_COPY_GBPS=h2d=50,h2d@3=14 expect_exit 1 copy -t 0 -d 1,3 --expect-h2d 40 &&
	contains "$TMP/out" "Device 3: " "-d 1,3: the second GPU is Device 3"
contains "$TMP/out" "lowest 14.0 GB/s (GPU 3)" "-d 1,3: the slow GPU is named by its CUDA index"
contains "$TMP/out" ": GPU 3 14.0" "-d 1,3: the cell below the expectation is GPU 3"
# an expectation no planned test is held to is a usage error
expect_exit 2 copy -t 1 --expect-h2d 3000 &&
	contains "$TMP/err" "--expect-h2d applies to host_to_device_memcpy_ce" "--expect-h2d without its test: exit 2"

# The latency tests (a pointer chase through 2 MiB, whatever -b says): the
# double's latency per access (FAKE_CUDA_LATENCY_NS, followed hop by hop)
# in the matrices in ns, within 1% (the first launch on a stream also
# counts the host's gap before it); the pairs without peer access N/A; one
# GPU: the device-to-device test waived.
# matrix_row FILE HEADER ROW V1 V2 ...: ROW of the matrix under HEADER holds
# V1 V2 ... within 1% ("N/A" exactly).
matrix_row() {
	python3 - "$@" <<'PY'
import sys
path, header, row, want = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
lines = open(path).read().split("\n")
i = lines.index(header)
cells = next(l.split() for l in lines[i + 2:] if l.split() and l.split()[0] == row)[1:]
assert len(cells) == len(want), (cells, want)
for got, w in zip(cells, want):
    if w == "N/A":
        assert got == "N/A", (cells, want)
    else:
        assert abs(float(got) - float(w)) <= float(w) * 0.01, (cells, want)
PY
}
lat_h="memory latency SM CPU(row) <-> GPU(column) (ns)"
lat_d="Device to Device Latency SM GPU(row) <-> GPU(column) (ns)"
FAKE_CUDA_DEVICES=3 FAKE_CUDA_PEER=0-1,1-0 FAKE_CUDA_LATENCY_NS=host=800,host@2=1500,p2p=600,p2p@1=640 \
	expect_exit 0 copy -t 32,device_to_device_latency_sm && pass "latency tests, three GPUs: exit 0"
contains "$TMP/out" "Running host_device_latency_sm." "host_device_latency_sm runs"
matrix_row "$TMP/out" "$lat_h" 0 800 800 1500 && pass "host latency: 800 ns, GPU 2 1500 ns" ||
	fail "host latency figures"
matrix_row "$TMP/out" "$lat_d" 0 N/A 600 N/A && matrix_row "$TMP/out" "$lat_d" 1 640 N/A N/A &&
	matrix_row "$TMP/out" "$lat_d" 2 N/A N/A N/A && pass "peer latency: 0->1 600 ns, 1->0 640 ns, the rest N/A" ||
	fail "peer latency figures"
contains "$TMP/out" "# host_device_latency_sm: highest 15" "the host verdict names the highest latency"
contains "$TMP/out" "(GPU 2) per access, lower is better" "... its GPU, and that lower is better"
contains "$TMP/out" "# device_to_device_latency_sm: highest 6" "the peer verdict names the highest latency"
contains "$TMP/out" "N/A: 2 GPU pairs without peer access" "the peer verdict says why cells are N/A"
lacks "$TMP/out" "ns, " "no share of a link limit on a latency"
FAKE_CUDA_DEVICES=1 FAKE_CUDA_LATENCY_NS=host=900 expect_exit 0 copy -t 32,33 -b 1 &&
	pass "latency tests, one GPU, -b 1: exit 0"
matrix_row "$TMP/out" "$lat_h" 0 900 && pass "one GPU: host latency 900 ns" || fail "one GPU: host latency"
contains "$TMP/out" "# device_to_device_latency_sm: waived: one GPU: there is no GPU pair" \
	"one GPU: the device-to-device latency test is waived"
contains "$TMP/out" "allocated apart (-b is below 2 MiB)" "-b 1: the 2 MiB host buffer is allocated apart, and said so"

# A GPU lost part-way: the test errors naming the GPU and the call; exit 2.
FAKE_CUDA_DEVICES=2 FAKE_CUDA_LOST_AFTER=30 expect_exit 2 copy -t 0,1 && pass "a GPU lost part-way: exit 2"
contains "$TMP/out" "Error: GPU 0 (0000:18:00.0): cuMemcpyAsync: CUDA_ERROR_UNKNOWN (999)" \
	"the lost GPU and the failing call are named"

# Allocation failure: a clear error naming the allocation.
FAKE_CUDA_OOM=1000000 expect_exit 2 copy -t 0 && pass "out of GPU memory: exit 2"
contains "$TMP/err" "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)" "the allocation and its error are named"
contains "$TMP/err" "a buffer of 4 MiB" "and its size"

# A GPU that stops answering: the step's deadline ends the run.
t0=$(date +%s)
FAKE_CUDA_HANG=cuDevicePrimaryCtxRetain GPUREADY_PROBE_TIMEOUT=1 expect_exit 2 copy -t 0 &&
	pass "a hung CUDA call: exit 2 after $(($(date +%s) - t0)) s"
contains "$TMP/err" "cuDevicePrimaryCtxRetain on GPU 0 (0000:18:00.0) did not return within 1 s" "the hung call is named"
# with -d, the GPU by its CUDA index and address, not its place in the list
FAKE_CUDA_DEVICES=2 FAKE_CUDA_HANG=cuDevicePrimaryCtxRetain GPUREADY_PROBE_TIMEOUT=1 expect_exit 2 copy -t 0 -d 1 &&
	contains "$TMP/err" "cuDevicePrimaryCtxRetain on GPU 1 (0000:29:00.0) did not return" "-d 1: the hung GPU is GPU 1"

# ... or in the middle of a test: the test errors naming the call, the
# tests after it are not run, the figures before it are kept.
FAKE_CUDA_HANG=cuStreamSynchronize GPUREADY_PROBE_TIMEOUT=1 expect_exit 2 copy -t 0,1 &&
	pass "a hung cuStreamSynchronize: exit 2"
# (4 MiB x 20 copies queued: 84 MB at 0.5 GB/s add 0.17 s to the 1 s)
contains "$TMP/out" "Error: CUDA call cuStreamSynchronize on GPU 0 (0000:18:00.0) with up to 84 MB queued did not return within 1.17 s" \
	"the hung test names the call and the GPU"
contains "$TMP/out" "not run: CUDA call cuStreamSynchronize" "the next test was not run, and says why"

# No libcuda: exit 2 naming the library and the loader's error.
LD_LIBRARY_PATH=/nonexistent expect_exit 2 copy -t 0 && pass "no libcuda: exit 2"
contains "$TMP/err" "cannot load the CUDA driver library: libcuda.so.1" "the library is named"
FAKE_CUDA_DEVICES=0 expect_exit 2 copy -t 0 && pass "no GPU: exit 2"
contains "$TMP/err" "CUDA_ERROR_NO_DEVICE" "no GPU: the driver's error"

# --numa forces the host buffers' node; a node that does not exist is an error.
expect_exit 0 copy -t 0 --numa 0 && pass "--numa 0: exit 0"
expect_exit 2 copy -t 0 --numa 1000 && pass "--numa 1000: exit 2"
contains "$TMP/err" "set_mempolicy(MPOL_BIND, node 1000)" "a node that cannot hold memory is named"

# A GPU whose own node (sysfs numa_node) cannot be bound, as a node without
# memory: its host buffers fall back to the default policy, and the header
# and the JSON say so; the run goes on.
mem0="$TMP/memless/sys/bus/pci/devices/0000:18:00.0"
mkdir -p "$mem0" && echo 0x10de >"$mem0/vendor" && echo 0x030200 >"$mem0/class" && echo 7 >"$mem0/numa_node"
expect_exit 0 copy -t 0 --sysroot "$TMP/memless" && pass "a GPU on a node that cannot be bound: exit 0"
contains "$TMP/out" "host buffers on each GPU's NUMA node where known" "the header does not claim every GPU's node"
contains "$TMP/out" "# GPU 0: set_mempolicy cannot prefer NUMA node 7 (no memory there, or not online)" \
	"the GPU whose node could not be bound is named"
expect_exit 0 copy -t 0 --sysroot "$TMP/memless" --json && pass "the same with --json: exit 0"
contains "$TMP/out" '"numa_note":"set_mempolicy cannot prefer NUMA node 7' "--json: the note"
cp "$TMP/out" "$TMP/memless.json"
# Without a host test there are no host buffers, and the header says nothing of them.
FAKE_CUDA_DEVICES=2 expect_exit 0 copy -t 34 && pass "device_local_copy: exit 0"
contains "$TMP/out" "median of 3 samples
" "no host test: no word on host buffers"

# A cuCtxEnablePeerAccess that fails (a driver's peer limit) takes only
# that pair out: its cells are N/A with the driver's error, every other
# pair and test runs.
FAKE_CUDA_DEVICES=3 FAKE_CUDA_PEER_ENABLE_FAIL=0-2 FAKE_CUDA_COPY_GBPS=p2p=300 \
	expect_exit 0 copy -t 0,5,12 && pass "one pair's peer access cannot be enabled: exit 0"
contains "$TMP/out" "N/A: 1 GPU pair without peer access, 1 of them because cuCtxEnablePeerAccess failed (GPU 0 to GPU 2: cuCtxEnablePeerAccess: CUDA_ERROR_TOO_MANY_PEERS" \
	"the failed pair is named with the driver's error"
contains "$TMP/out" " 0       N/A    300.00       N/A" "GPU 0 -> 1 measured, GPU 0 -> 2 N/A"
contains "$TMP/out" "SUM host_to_device_memcpy_ce 150.00" "the host test ran"
FAKE_CUDA_DEVICES=2 FAKE_CUDA_PEER_ENABLE_FAIL=0-1 expect_exit 0 copy -t 0,5 && pass "no pair can be enabled: exit 0"
contains "$TMP/out" "waived: peer access could not be enabled for any GPU pair (GPU 0 to GPU 1: cuCtxEnablePeerAccess: CUDA_ERROR_TOO_MANY_PEERS" \
	"no pair enabled: waived, with why"

# GPUs behind one host link (FAKE_CUDA_SHARED_HOST): alone each copies at
# the link's 40 GB/s; in all_to_host / host_to_all the others' copies run
# at the same time on the shared link, so the measured GPU gets half. This
# holds only if the load really overlaps the measured window.
FAKE_CUDA_DEVICES=2 FAKE_CUDA_SHARED_HOST=0-1 FAKE_CUDA_COPY_GBPS=h2d=40,d2h=40 \
	expect_exit 0 copy -t 0,8,10,2,24,26 && pass "two GPUs on one host link: exit 0"
python3 - "$TMP/out" <<'PY' && pass "a shared host link halves the all-GPU figures, not the one-GPU ones" || fail "shared host link figures"
import re, sys
text = open(sys.argv[1]).read()
def sums(name):
    return float(re.search(r"^SUM %s ([0-9.]+)$" % name, text, re.M).group(1))
one = sums("host_to_device_memcpy_ce")
assert abs(one - 80) < 0.5, one            # one at a time: 40 + 40
for t in ("all_to_host_memcpy_ce", "host_to_all_memcpy_ce", "all_to_host_memcpy_sm", "host_to_all_memcpy_sm"):
    v = sums(t)
    assert 36 < v < 46, (t, v)             # each GPU ~20 while the other copies
bi = sums("host_to_device_bidirectional_memcpy_ce")
assert abs(bi - 80) < 0.5, bi              # the other direction does not share
PY

# A spin kernel whose timeout ends before the host releases it (the clock
# rate the driver reports is far below the one it counts at): the test
# still reports its figures and says that the hold did not last.
FAKE_CUDA_CLOCK_KHZ=1 expect_exit 0 copy -t 0 && pass "a spin kernel that times out: exit 0"
contains "$TMP/out" "the spin kernel gave up waiting (10 s) before the copies of 3 samples were queued" \
	"the timed-out hold is reported"

# all_to_one / one_to_all: the GPU in the middle has a buffer per peer, as
# nvbandwidth: with room for only its two own buffers that allocation
# fails, names itself, and the other tests run.
# (-s: the data check's two host buffers would not fit either)
FAKE_CUDA_DEVICES=3 FAKE_CUDA_OOM=$((8 << 20)) expect_exit 2 copy -s -t 5,12 && pass "no room for a buffer per peer: exit 2"
contains "$TMP/out" "cuMemAlloc (a buffer per peer): CUDA_ERROR_OUT_OF_MEMORY" "the per-peer buffer is named"
contains "$TMP/out" "SUM device_to_device_memcpy_write_ce" "the pair test before it ran"

# The data check, as nvbandwidth's: copies to or from GPU 1 arrive with a
# byte changed (FAKE_CUDA_CORRUPT=1): every test that moves GPU 1's data
# fails naming the copy and the bytes, exit 1; the cells of GPU 0 alone
# are fine. -s turns the check off, and the figures come back.
FAKE_CUDA_DEVICES=2 FAKE_CUDA_CORRUPT=1 expect_exit 1 copy -t 0,5,34 && pass "a copy that changes the data: exit 1"
contains "$TMP/out" "# host_to_device_memcpy_ce: FAIL: 1 measurement failed the data check: the copy from host memory to GPU 1 (0000:29:00.0) (issued by GPU 1) left 1 of 4194304 bytes different from the source, the first at byte 1398101" \
	"the h2d copy into GPU 1 is named with the bytes that differ"
contains "$TMP/out" "# device_to_device_memcpy_write_ce: FAIL: 2 measurements failed the data check: the copy from GPU 0 (0000:18:00.0) to GPU 1 (0000:29:00.0) (issued by GPU 0)" \
	"both pairs through GPU 1 fail"
contains "$TMP/out" "# device_local_copy: FAIL: 1 measurement failed the data check: the copy from GPU 1 (0000:29:00.0) to GPU 1 (0000:29:00.0)" \
	"GPU 1's local copy fails, GPU 0's passes"
FAKE_CUDA_DEVICES=2 FAKE_CUDA_CORRUPT=1 expect_exit 0 copy -s -t 0,5 && pass "-s: no data check, exit 0"
contains "$TMP/out" "SUM device_to_device_memcpy_write_ce 800.00" "-s: the figures"
FAKE_CUDA_DEVICES=2 FAKE_CUDA_CORRUPT=1 expect_exit 1 copy -t 0 --json && pass "--json with a failed data check: exit 1"
contains "$TMP/out" '"status":"bad_data"' "--json: the test's status"
cp "$TMP/out" "$TMP/bad.json"

# The SM host<->device bidirectional tests are nvbandwidth's split warp:
# one kernel moves half the data each way at once and the figure is half
# of the total, so both tests give the same figure, set by the slower
# direction (here 30 GB/s); the copy-engine ones measure one stream
# beside a load. The data check covers both halves.
FAKE_CUDA_DEVICES=1 FAKE_CUDA_COPY_GBPS=h2d=50,d2h=45,sm_h2d=40,sm_d2h=30 expect_exit 0 copy -t 2,3,18,19 &&
	pass "the bidirectional tests: exit 0"
contains "$TMP/out" "SUM host_to_device_bidirectional_memcpy_sm 30.00" "split warp: host to device"
contains "$TMP/out" "SUM device_to_host_bidirectional_memcpy_sm 30.00" "split warp: device to host, the same measure"
contains "$TMP/out" "SUM host_to_device_bidirectional_memcpy_ce 50.00" "copy engine: the measured direction"
FAKE_CUDA_DEVICES=1 FAKE_CUDA_CORRUPT=0 expect_exit 1 copy -t 18 && pass "split warp over a corrupting link: exit 1"
contains "$TMP/out" "failed the data check: the copy from host memory to GPU 0" "split warp: the data check"

# The bidirectional write tests as nvbandwidth fills them: Write1 (row r,
# column c) is GPU c writing into GPU r, Write2 the reverse (peer rates by
# source GPU: 0 writes at 300, 1 at 200).
FAKE_CUDA_DEVICES=2 FAKE_CUDA_COPY_GBPS=p2p@0=300,p2p@1=200 expect_exit 0 copy -t 7 && pass "bidirectional write: exit 0"
python3 - "$TMP/out" <<'PY' && pass "Write1 is the column GPU's write, Write2 the row's" || fail "bidirectional write matrices"
import re, sys
text = open(sys.argv[1]).read()
def row0(name):
    block = text.split(name + " bandwidth (GB/s)")[1]
    return re.search(r"^ 0\s+N/A\s+([0-9.]+)$", block, re.M).group(1)
assert row0("Write1") == "200.00", row0("Write1")
assert row0("Write2") == "300.00", row0("Write2")
PY

# -l lists the tests as nvbandwidth -l numbers them, without libcuda.
LD_LIBRARY_PATH=/nonexistent expect_exit 0 "$BIN" bench copy -l && pass "-l: exit 0 without libcuda"
contains "$TMP/out" "0, host_to_device_memcpy_ce:" "-l: index 0 is host_to_device_memcpy_ce"
contains "$TMP/out" "34, device_local_copy:" "-l: index 34 is device_local_copy"

# --json validates, with the figures in it.
FAKE_CUDA_DEVICES=4 FAKE_CUDA_PEER=0-1,1-0 FAKE_CUDA_COPY_GBPS=h2d=50 \
	expect_exit 0 copy -t 0,1,2,4,6,8,12,16,32,34 --json --sysroot "$ROOT" && pass "--json: exit 0"
cp "$TMP/out" "$TMP/copy.json"
FAKE_CUDA_LOST_AFTER=40 FAKE_CUDA_DEVICES=2 expect_exit 2 copy -t 0,1 --json
cp "$TMP/out" "$TMP/lost.json"
FAKE_CUDA_DEVICES=3 FAKE_CUDA_PEER=0-1,1-0 FAKE_CUDA_LATENCY_NS=host=800,p2p=600 \
	expect_exit 0 copy -t 32,33 --json && pass "--json with the latency tests: exit 0"
cp "$TMP/out" "$TMP/latency.json"
LD_LIBRARY_PATH=/nonexistent expect_exit 2 copy -t 0,1 --json && pass "--json without libcuda: exit 2"
cp "$TMP/out" "$TMP/nolib.json"
contains "$TMP/nolib.json" '"result":"error"' "--json without libcuda: result error"
contains "$TMP/nolib.json" "cannot load the CUDA driver library: libcuda.so.1" "--json without libcuda: the reason"
schema_ok bench-copy.schema.json "bench copy" "$TMP/copy.json" "$TMP/lost.json" "$TMP/nolib.json" "$TMP/memless.json" \
	"$TMP/bad.json" \
	"$TMP/latency.json"
python3 - "$TMP/copy.json" <<'PY' && pass "JSON: the h2d figure and the result" || fail "JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
t = [x for x in d["tests"] if x["name"] == "host_to_device_memcpy_ce"][0]
s = json.dumps(t)
assert "50.0" in s, s[:400]
assert d["result"] == "pass", d["result"]
PY
python3 - "$TMP/latency.json" <<'PY' && pass "JSON: the latency tests in ns, N/A as null" || fail "JSON latency content"
import json, sys
d = json.load(open(sys.argv[1]))
h, p = d["tests"]
assert h["name"] == "host_device_latency_sm" and h["unit"] == "ns" and h["status"] == "ran", h
m = h["matrices"][0]
assert m["limits"] is None and m["rows"] == 1 and m["cols"] == 3, m
assert all(abs(v - 800) <= 8 for v in m["values"][0]), m["values"]
assert p["name"] == "device_to_device_latency_sm" and p["unit"] == "ns", p
v = p["matrices"][0]["values"]
assert abs(v[0][1] - 600) <= 6 and abs(v[1][0] - 600) <= 6, v
assert v[0][0] is None and v[2][0] is None and v[0][2] is None, v
assert p["verdict"]["weakest"]["share"] is None and "lower is better" in p["verdict"]["text"], p["verdict"]
assert d["result"] == "pass", d["result"]
PY

[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
exit 0
