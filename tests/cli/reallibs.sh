#!/bin/sh
# The real binary with NVIDIA's real user-space libraries (driver 535's libcuda.so.1 and
# libnvidia-ml.so.1, the CUDA toolkit's stub libnvidia-ml.so) on a machine with no GPU and no
# driver: what a node looks like where the driver packages are installed but the kernel module
# is not loaded. The libraries come from scripts/nvidia-libs.sh (GPUREADY_NVIDIA_DIR); where
# they are missing, or where an NVIDIA driver is loaded (/proc/driver/nvidia), this skips and
# says why.
#
#   reallibs.sh gpu      gpuready gpu --json: a valid report naming cuInit's and nvmlInit_v2's
#                        errors, with hints that fit them
#   reallibs.sh bench    gpuready bench, bench copy and nccl: exit 2, naming the missing pieces
#   reallibs.sh stub     the NVML stub as libnvidia-ml.so.1: check --json stays JSON and the
#                        finding names the stub
set -u

. "$(dirname "$0")/lib.sh"

NV=${GPUREADY_NVIDIA_DIR:-}
if [ -z "$NV" ] || [ ! -f "$NV/root/.complete" ]; then
	why="not fetched"
	[ -n "$NV" ] && [ -s "$NV/unavailable" ] && why=$(cat "$NV/unavailable")
	echo "SKIP: NVIDIA's libraries are not in '${NV:-(no -Dnvidia_libs)}': $why"
	exit 77
fi
if [ -e /proc/driver/nvidia ]; then
	echo "SKIP: an NVIDIA driver is loaded here (/proc/driver/nvidia): the no-driver expectations do not apply"
	exit 77
fi
LIBS=$NV/root/usr/lib/x86_64-linux-gnu/nvidia/current
STUBS=$NV/root/usr/lib/x86_64-linux-gnu/stubs
echo "libraries: $(tr '\n' ';' <"$NV/root/VERSIONS")"

python() {
	for py in /usr/bin/python3 python3; do command -v "$py" >/dev/null && { "$py" "$@"; return; }; done
	return 127
}

# finding CHECK-ID FILE: "status|message|hint" of the check's first finding in a report.
finding() {
	python - "$1" "$2" <<-'PY'
	import json, sys
	for c in json.load(open(sys.argv[2]))["checks"]:
	    if c["id"] == sys.argv[1]:
	        print("%s|%s|%s" % (c["status"], c["message"], c.get("hint", "")))
	        break
	PY
}

t_gpu() {
	LD_LIBRARY_PATH=$LIBS "$BIN" gpu --json >"$TMP/gpu.json" 2>"$TMP/err"
	echo "exit $?"
	schema_ok report.schema.json "gpu with the real libraries" "$TMP/gpu.json"
	finding gpu.nvml "$TMP/gpu.json" >"$TMP/nvml"
	finding gpu.cuda "$TMP/gpu.json" >"$TMP/cuda"
	contains "$TMP/nvml" "nvmlInit_v2" "gpu.nvml names nvmlInit_v2"
	contains "$TMP/nvml" "Driver Not Loaded (9)" "gpu.nvml names NVML_ERROR_DRIVER_NOT_LOADED (9)"
	contains "$TMP/cuda" "cuInit" "gpu.cuda names cuInit"
	contains "$TMP/cuda" "CUDA_ERROR_NO_DEVICE (100)" "gpu.cuda names CUDA_ERROR_NO_DEVICE (100)"
	# The libraries loaded: no hint may tell the operator to install them, or call them stubs.
	for f in nvml cuda; do
		lacks "$TMP/$f" "could not be loaded" "gpu.$f: the library is not reported missing"
		lacks "$TMP/$f" "stub" "gpu.$f: the driver's library is not called a stub"
		lacks "$TMP/$f" "apt install" "gpu.$f: no install hint for a library that is there"
	done
}

t_bench() {
	for cmd in "bench -g 1 -b 8 -e 8" nccl; do
		# shellcheck disable=SC2086
		expect_exit 2 env LD_LIBRARY_PATH="$LIBS" "$BIN" $cmd && pass "$cmd exits 2 with libcuda and no GPU"
		contains "$TMP/err" "CUDA_ERROR_NO_DEVICE (100)" "$cmd names cuInit's error"
		lacks "$TMP/out" "#wrong" "$cmd prints no result table"
		# no libnccl either (as on a machine without NCCL): both are named
		# shellcheck disable=SC2086
		expect_exit 2 env LD_LIBRARY_PATH="$LIBS" "$BIN" $cmd --nccl-lib "$TMP/none/libnccl.so.2" &&
			pass "$cmd exits 2 with libcuda, no GPU and no NCCL"
		contains "$TMP/err" "CUDA_ERROR_NO_DEVICE (100)" "$cmd without NCCL still names cuInit's error"
		contains "$TMP/err" "NCCL could not be loaded" "$cmd without NCCL names NCCL"
	done
	# bench copy with driver 535's libcuda: every CUDA_NEED_COPYBENCH symbol
	# resolves, cuInit's error is named, nothing is printed as a result.
	expect_exit 2 env LD_LIBRARY_PATH="$LIBS" "$BIN" bench copy -t 0 && pass "bench copy exits 2 with libcuda and no GPU"
	contains "$TMP/err" "cuInit: CUDA_ERROR_NO_DEVICE (100)" "bench copy names cuInit's error"
	lacks "$TMP/out" "Running" "bench copy prints no test"
	# With no libcuda.so.1 at all, each names the library.
	for cmd in "bench -g 1 -b 8 -e 8" nccl; do
		# shellcheck disable=SC2086
		expect_exit 2 env LD_LIBRARY_PATH="$TMP/empty" "$BIN" $cmd && pass "$cmd exits 2 without libcuda"
		contains "$TMP/err" "libcuda.so.1" "$cmd names libcuda.so.1"
	done
}

t_stub() {
	# Container images often link the toolkit's stub as libnvidia-ml.so.1 to build against it.
	mkdir -p "$TMP/stub"
	ln -s "$STUBS/libnvidia-ml.so" "$TMP/stub/libnvidia-ml.so.1"
	LD_LIBRARY_PATH=$TMP/stub "$BIN" check --json >"$TMP/check.json" 2>"$TMP/err"
	echo "exit $?"
	if python -m json.tool "$TMP/check.json" >/dev/null 2>&1; then
		pass "check --json is JSON with the NVML stub loaded"
	else
		fail "check --json is not JSON with the NVML stub loaded"; head -5 "$TMP/check.json" >&2
	fi
	schema_ok report.schema.json "check with the NVML stub" "$TMP/check.json"
	finding gpu.nvml "$TMP/check.json" >"$TMP/nvml"
	contains "$TMP/nvml" "stub" "gpu.nvml says the stub library was loaded"
}

case ${1:-} in
gpu) t_gpu ;;
bench) t_bench ;;
stub) t_stub ;;
*) echo "usage: $0 gpu|bench|stub" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ]
