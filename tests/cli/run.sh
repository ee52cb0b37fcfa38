#!/bin/sh
# CLI tests: run the real gpuready binary and compare with expected output.
#
#   run.sh fixture NAME   gpuready rdma on tests/fixtures/NAME/root, text and
#                         JSON, against tests/fixtures/NAME/expected/
#   run.sh basics|cmdline|config|output|schema|topo|snapshot|realdata|man|install|nosubprocess|budget|hints
#   run.sh fakenvml       live reports with a libnvidia-ml.so.1 that prints to stdout
#   run.sh probedeadline  live reports with NVML and CUDA calls that never return
#   run.sh gdrdeadline    the same for GPU memory registration and verbs queries
#
# Environment (set by tests/meson.build): GPUREADY_BIN, GPUREADY_SOURCE_DIR,
# GPUREADY_FIXTURES, MESON_BUILD_ROOT. GPUREADY_UPDATE=1 rewrites the expected
# files instead of comparing (for output that changed on purpose; review the
# diff before committing). Exit 0 pass, 1 fail, 77 skip (meson's convention).
set -u

. "$(dirname "$0")/lib.sh"

# Each fixture is checked with every check command (text, JSON, exit code)
# and with topo (text and JSON).
t_fixture() {
	name=$1
	root=$FIX/$name/root
	exp=$FIX/$name/expected
	[ -d "$root" ] || { fail "no fixture $root"; return; }
	for cmd in rdma gpu gpudirect; do
		"$BIN" $cmd --sysroot "$root" --no-color >"$TMP/$cmd.txt" 2>"$TMP/err"
		echo $? >"$TMP/$cmd.exit"
		"$BIN" $cmd --sysroot "$root" --json 2>>"$TMP/err" | normalize_json >"$TMP/$cmd.json"
		[ -s "$TMP/err" ] && { echo "stderr:" >&2; cat "$TMP/err" >&2; fail "$name $cmd: gpuready wrote to stderr"; }
		compare "$exp/$cmd.txt" "$TMP/$cmd.txt" "$name $cmd text"
		compare "$exp/$cmd.json" "$TMP/$cmd.json" "$name $cmd json"
		compare "$exp/$cmd.exit" "$TMP/$cmd.exit" "$name $cmd exit code"
	done
	"$BIN" topo --sysroot "$root" >"$TMP/topo.txt" 2>&1
	echo $? >>"$TMP/topo.txt"
	# --json is a document on stdout whatever the tree holds (t_schema
	# validates it), with the text's exit status and message
	"$BIN" topo --sysroot "$root" --json >"$TMP/topo.raw" 2>"$TMP/topo.err"
	echo $? >>"$TMP/topo.err"
	sed -e 's#"sysroot": ".*"#"sysroot": "ROOT"#' "$TMP/topo.raw" >"$TMP/topo.json"
	compare "$exp/topo.txt" "$TMP/topo.txt" "$name topo text"
	compare "$exp/topo.json" "$TMP/topo.json" "$name topo json"
	{ "$BIN" topo --sysroot "$root" 2>&1 >/dev/null; echo $?; } >"$TMP/topo.txt.err"
	if cmp -s "$TMP/topo.err" "$TMP/topo.txt.err"; then
		pass "$name topo --json: the text's exit status and stderr"
	else
		fail "$name topo --json: exit status or stderr differ from the text's"; cat "$TMP/topo.err" >&2
	fi
	# the busybox aliases are the same commands
	for pair in verify-rdma:rdma verify-gpu:gpu verify-gpudirect:gpudirect; do
		alias=${pair%%:*}; cmd=${pair#*:}
		ln -sf "$BIN" "$TMP/$alias"
		"$TMP/$alias" --sysroot "$root" --no-color >"$TMP/alias.txt" 2>/dev/null
		if cmp -s "$TMP/alias.txt" "$TMP/$cmd.txt"; then pass "$name $alias alias"; else fail "$name $alias differs"; fi
	done
}

t_basics() {
	expect_exit 0 "$BIN" --version && contains "$TMP/out" "gpuready " "--version"
	expect_exit 0 "$BIN" version && contains "$TMP/out" "gpuready " "version command"
	expect_exit 0 "$BIN" help && contains "$TMP/out" "verify-rdma" "help lists aliases"
	expect_exit 0 "$BIN" --help && contains "$TMP/out" "snapshot" "--help lists commands"
	expect_exit 0 "$BIN" help rdma && contains "$TMP/out" "--sysroot" "help rdma shows options"
	expect_exit 0 "$BIN" rdma --help && contains "$TMP/out" "Exit status" "rdma --help documents exit codes"
	expect_exit 0 "$BIN" check -h && contains "$TMP/out" "--prom" "check -h"
	expect_exit 2 "$BIN" && contains "$TMP/err" "usage" "no command: usage, exit 2"
	expect_exit 2 "$BIN" chek && contains "$TMP/err" "Did you mean 'check'" "unknown command suggests"
	expect_exit 2 "$BIN" rdm && contains "$TMP/err" "not a gpuready command" "no prefix abbreviations"
	expect_exit 2 "$BIN" rdma --bogus && contains "$TMP/err" "unknown option '--bogus'" "unknown option"
	expect_exit 2 "$BIN" rdma --tos && contains "$TMP/err" "needs a value" "missing option value"
	expect_exit 2 "$BIN" rdma --tos 300 && contains "$TMP/err" "out of range" "option range"
	expect_exit 2 "$BIN" rdma extra && contains "$TMP/err" "usage: gpuready rdma" "stray argument"
	expect_exit 2 "$BIN" snapshot && contains "$TMP/err" "usage: gpuready snapshot" "snapshot needs DIR"
	expect_exit 2 "$BIN" version --json && contains "$TMP/err" "does not apply to this command" "options are per command"
	expect_exit 2 "$BIN" rdma --sysroot "$TMP/nonexistent" && contains "$TMP/err" "cannot open sysroot" "bad sysroot"
	expect_exit 0 "$BIN" list-checks && contains "$TMP/out" "rdma.port_state" "list-checks"
	expect_exit 0 "$BIN" list-checks --only 'rdma.nccl_*' && lacks "$TMP/out" "rdma.mtu" "list-checks --only"
	expect_exit 2 "$BIN" rdma --sysroot "$FIX/plain-no-rdma/root" --only nothing.matches && contains "$TMP/err" "--only 'nothing.matches' matches no check" "--only matching nothing is an error"
	expect_exit 1 "$BIN" rdma --sysroot "$FIX/plain-no-rdma/root" --no-color && contains "$TMP/out" "RDMA is only needed for multi-server training" "no RDMA explains"
}

# The command line behaves the same everywhere: usage errors come before
# anything runs, with a suggestion; --only/--skip take areas and refuse a
# pattern that selects nothing in every command; each command takes and
# lists only the options that affect it, while the config file may hold
# every key; NO_COLOR; the summary, help paths and man page.
t_cmdline() {
	root=$FIX/h100-8x-cx7-roce/root
	# nccl --require is checked before a rank starts (no library, no log)
	expect_exit 2 "$BIN" nccl --require ib,foo &&
		contains "$TMP/err" "--require: 'ib,foo' is not a comma-separated list of ib, gdr, dmabuf" "nccl --require foo: usage error"
	[ -s "$TMP/out" ] && fail "nccl --require foo printed a run" || pass "nccl --require foo runs nothing"
	lacks "$TMP/err" "libnccl" "nccl --require foo: refused before loading NCCL"
	# help takes a sub-command path
	expect_exit 0 "$BIN" help bench net && cp "$TMP/out" "$TMP/help.txt"
	expect_exit 0 "$BIN" bench net --help
	cmp -s "$TMP/out" "$TMP/help.txt" && pass "help bench net is bench net --help" || fail "help bench net differs from bench net --help"
	expect_exit 2 "$BIN" help bench nte && contains "$TMP/err" "Did you mean 'bench net'?" "help: unknown command suggests"
	# a pattern that selects nothing: exit 2 in list-checks and the check commands, --only and --skip
	for cmd in list-checks check; do
		where=""
		[ $cmd = check ] && where="--sysroot $root"
		for opt in --only --skip; do
			# shellcheck disable=SC2086
			expect_exit 2 "$BIN" $cmd $where $opt xyz
			contains "$TMP/err" "$opt 'xyz' matches no check; the areas are gpu, rdma and gpudirect" "$cmd $opt xyz: usage error listing the areas"
		done
	done
	expect_exit 2 "$BIN" list-checks --only rdma.mtuu && contains "$TMP/err" "did you mean 'rdma.mtu'?" "a mistyped check ID: the nearest"
	expect_exit 2 "$BIN" gpu --sysroot "$root" --only rdma.mtu && contains "$TMP/err" "matches no check of \`gpuready gpu\` (its checks are gpu.*)" "gpu --only rdma.mtu names the area"
	expect_exit 2 "$BIN" rdma --sysroot "$root" --only 'gpu*' && pass "rdma --only 'gpu*': a glob that selects nothing of rdma"
	# an area name is all its checks, in --only and --skip
	"$BIN" list-checks --only 'rdma.*' >"$TMP/glob.txt"
	expect_exit 0 "$BIN" list-checks --only rdma
	[ -s "$TMP/out" ] && cmp -s "$TMP/out" "$TMP/glob.txt" && pass "list-checks --only rdma is rdma.*" || fail "list-checks --only rdma"
	expect_exit 0 "$BIN" list-checks --skip rdma,gpudirect && lacks "$TMP/out" "rdma." "--skip rdma skips the area" &&
		contains "$TMP/out" "gpu.pci" "--skip rdma,gpudirect keeps gpu"
	expect_exit 0 "$BIN" check --sysroot "$root" --only rdma --json
	python3 -c 'import json,sys; ids={c["id"] for c in json.load(open(sys.argv[1]))["checks"]}; assert ids and all(i.startswith("rdma.") for i in ids), ids' \
		"$TMP/out" && pass "check --only rdma runs the rdma checks" || fail "check --only rdma"
	# mistyped options and config keys: did you mean
	expect_exit 2 "$BIN" rdma --sysrot "$root" && contains "$TMP/err" "Did you mean '--sysroot'?" "a mistyped option suggests"
	expect_exit 2 "$BIN" bench net --lopback && contains "$TMP/err" "Did you mean '--loopback'?" "bench net: a mistyped option suggests"
	printf 'lnk_rate = 400\n' >"$TMP/typo.conf"
	expect_exit 2 "$BIN" rdma --sysroot "$root" --config "$TMP/typo.conf" &&
		contains "$TMP/err" "unknown key 'lnk_rate' (did you mean 'link_rate'?)" "a mistyped config key suggests"
	# each area's command lists and takes its own site expectations; check takes all
	for cmd in check gpu rdma gpudirect; do
		"$BIN" $cmd --help >"$TMP/$cmd.help"
		for o in tos mtu link-rate min-sockbuf expect-gpus min-cuda python min-bar1; do
			case $cmd:$o in
			check:*|rdma:tos|rdma:mtu|rdma:link-rate|rdma:min-sockbuf|gpu:expect-gpus|gpu:min-cuda|gpu:python|gpu:min-bar1)
				contains "$TMP/$cmd.help" "--$o " "$cmd --help lists --$o" ;;
			*)	lacks "$TMP/$cmd.help" "--$o " "$cmd --help leaves out --$o" ;;
			esac
		done
	done
	expect_exit 2 "$BIN" gpu --sysroot "$root" --tos 104 && contains "$TMP/err" "option '--tos' does not apply to this command" "gpu --tos is refused" &&
		contains "$TMP/err" "--tos is an option of \`gpuready check\`, \`gpuready rdma\`, \`gpuready bench net\`, \`gpuready cluster check\`, \`gpuready cluster facts\`, \`gpuready cluster fix\` and \`gpuready fix\`." "gpu --tos names the commands that take it (bench net: perftest's -T)"
	expect_exit 2 "$BIN" rdma --sysroot "$root" --expect-gpus 8 && contains "$TMP/err" "--expect-gpus is an option of \`gpuready check\`, \`gpuready gpu\`, \`gpuready cluster check\`, \`gpuready cluster facts\`, \`gpuready cluster fix\` and \`gpuready fix\`." "rdma --expect-gpus names gpu"
	expect_exit 0 "$BIN" check --sysroot "$root" --tos 104 --expect-gpus 8 --only rdma.roce_tos && pass "check takes every area's options"
	printf 'tos = 104\nmtu = 0\nlink_rate = 0\nmin_sockbuf = 256M\nexpect_gpus = 8\nmin_cuda = 12.8\npython = python3\nmin_bar1 = 1\nexpect_busbw = 0\nstrict = no\nskip = gpu.pytorch\n' >"$TMP/all.conf"
	for cmd in check gpu rdma gpudirect; do
		"$BIN" $cmd --sysroot "$root" --config "$TMP/all.conf" >/dev/null 2>"$TMP/err"; rc=$?
		[ "$rc" -le 1 ] && [ ! -s "$TMP/err" ] && pass "$cmd reads a config file with every key" || { fail "$cmd with every config key: exit $rc"; cat "$TMP/err" >&2; }
	done
	printf 'skip = xyz\n' >"$TMP/skip.conf"
	expect_exit 2 "$BIN" rdma --sysroot "$root" --config "$TMP/skip.conf" && contains "$TMP/err" "skip (config file) 'xyz' matches no check" "a config pattern that selects nothing"
	# NO_COLOR (https://no-color.org): any non-empty value turns color off, as --no-color does
	if command -v script >/dev/null; then
		for case in "color:TERM=xterm" "none:TERM=xterm NO_COLOR=1" "color:TERM=xterm NO_COLOR=" "none:TERM=dumb" "none:TERM=xterm --no-color"; do
			want=${case%%:*} how=${case#*:} flag=""
			case $how in *--no-color) flag=--no-color how=${how% --no-color} ;; esac
			script -qec "env $how '$BIN' rdma --sysroot '$root' --only rdma.mtu $flag" /dev/null >"$TMP/tty.txt" 2>&1
			if grep -q "$(printf '\033')" "$TMP/tty.txt"; then got=color; else got=none; fi
			[ "$got" = "$want" ] && pass "on a terminal with $how $flag: $want" || fail "on a terminal with $how $flag: $got, want $want"
		done
	else
		pass "script(1) missing: NO_COLOR on a terminal not tried"
	fi
	# check's summary and the man page name every area; EXIT STATUS has bench net's 3
	expect_exit 0 "$BIN" help && contains "$TMP/out" "Run every check on this node (GPUs, GPUDirect RDMA, RDMA stack" "check's summary names GPUs and GPUDirect"
	expect_exit 0 "$BIN" man && contains "$TMP/out" "whether the GPUs, GPUDirect RDMA, the RDMA stack" "man page's description names GPUs and GPUDirect" &&
		contains "$TMP/out" "bench net: the peer (the server or the client) disconnected or stopped answering" "man page's EXIT STATUS has bench net's 3"
}

t_config() {
	root=$TMP/root
	cp -a "$FIX/h100-8x-cx7-roce/root" "$root"
	expect_exit 0 "$BIN" rdma --sysroot "$root" --only rdma.roce_tos --no-color -v && contains "$TMP/out" "[OK] mlx5_0/1" "default tos 104"
	printf '# site policy\n[gpuready]\ntos = 96\n' >"$root/etc/gpuready.conf"
	expect_exit 1 "$BIN" rdma --sysroot "$root" --only rdma.roce_tos --no-color && contains "$TMP/out" "expected ToS 96" "config tos applies"
	expect_exit 0 "$BIN" rdma --sysroot "$root" --only rdma.roce_tos --tos 106 && pass "command line beats config file"
	printf 'tos = 104\nlnk_rate = 400\n' >"$root/etc/gpuready.conf"
	expect_exit 2 "$BIN" rdma --sysroot "$root" && contains "$TMP/err" "/etc/gpuready.conf:2: unknown key 'lnk_rate'" "unknown key names the line"
	printf 'tos = lots\n' >"$root/etc/gpuready.conf"
	expect_exit 2 "$BIN" rdma --sysroot "$root" && contains "$TMP/err" "key 'tos'" "bad value is an error"
	rm "$root/etc/gpuready.conf"
	printf 'link_rate = 800\n' >"$TMP/site.conf"
	expect_exit 0 "$BIN" rdma --sysroot "$root" --config "$TMP/site.conf" --only rdma.link_rate --no-color && contains "$TMP/out" "below the expected 800 Gb/s" "--config FILE"
	expect_exit 2 "$BIN" rdma --sysroot "$root" --config "$TMP/missing.conf" && contains "$TMP/err" "cannot read config file" "missing --config"
	expect_exit 1 "$BIN" rdma --sysroot "$root" --config "$TMP/site.conf" --only rdma.link_rate --strict && pass "--strict turns warnings into exit 1"
	# --min-cuda is MAJOR.MINOR, on the command line and in the file; anything else is a usage error
	expect_exit 0 "$BIN" gpu --sysroot "$root" --min-cuda 12.8 && pass "--min-cuda 12.8 is taken"
	for v in 12.8.1 abc 12 "" 12.x; do
		expect_exit 2 "$BIN" gpu --sysroot "$root" --min-cuda "$v" &&
			contains "$TMP/err" "--min-cuda: '$v' is not a CUDA version MAJOR.MINOR" "--min-cuda '$v' is refused"
	done
	printf 'min_cuda = 12.8.1\n' >"$TMP/cuda.conf"
	expect_exit 2 "$BIN" gpu --sysroot "$root" --config "$TMP/cuda.conf" &&
		contains "$TMP/err" "cuda.conf:1: key 'min_cuda': --min-cuda: '12.8.1' is not a CUDA version MAJOR.MINOR" \
			"min_cuda = 12.8.1 in the config file is refused"
}

t_output() {
	root=$FIX/h100-roce-broken/root
	expect_exit 1 "$BIN" rdma --sysroot "$root" --json
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["summary"]["fail"]>0 and len(d["checks"])>0' "$TMP/out"; then pass "json parses"; else fail "json does not parse"; fi
	expect_exit 1 "$BIN" rdma --sysroot "$root" --prom "$TMP/m.prom" --no-color
	contains "$TMP/m.prom" 'gpuready_check_status{scope="rdma",host="gpu-h100-07",id="rdma.port_state",subject="mlx5_3/1"} 2' "prom status series"
	contains "$TMP/m.prom" 'gpuready_finding{scope="rdma",host="gpu-h100-07",id="rdma.port_state",subject="mlx5_3/1",status="fail"} 1' "prom finding series"
	contains "$TMP/m.prom" 'gpuready_checks{scope="rdma",host="gpu-h100-07",status="fail"}' "prom summary"
	if ls "$TMP" | grep -q 'm.prom.tmp'; then fail "prom temp file left behind"; else pass "prom written atomically"; fi
	dup=$(grep '^gpuready_check_status' "$TMP/m.prom" | sed 's/} .*//' | sort | uniq -d | head -1)
	[ -z "$dup" ] && pass "prom series unique" || fail "duplicate prom series $dup"
	expect_exit 2 "$BIN" rdma --sysroot "$root" --prom "$TMP/no/such/dir/m.prom" && contains "$TMP/err" "cannot write" "prom write error is exit 2"
	"$BIN" rdma --sysroot "$root" >/dev/full 2>"$TMP/err"; rc=$?
	[ "$rc" -eq 2 ] && pass "stdout write error is exit 2" || fail "stdout to /dev/full exited $rc"
	expect_exit 1 "$BIN" rdma --sysroot "$root"
	if grep -q "$(printf '\033')" "$TMP/out"; then fail "color when not a terminal"; else pass "no color off a terminal"; fi
	expect_exit 0 "$BIN" rdma --sysroot "$FIX/h100-8x-cx7-roce/root" -v --only rdma.roce_gid
	contains "$TMP/out" "DEV     PORT INDEX GID" "-v shows ok details"
	expect_exit 0 "$BIN" rdma --sysroot "$FIX/h100-8x-cx7-roce/root" --only rdma.roce_gid
	lacks "$TMP/out" "DEV     PORT INDEX GID" "details hidden without -v"
}

t_schema() {
	# Debian's python3-jsonschema is for /usr/bin/python3, which may not be
	# the first python3 on PATH.
	PY=""
	for p in python3 /usr/bin/python3; do
		if command -v "$p" >/dev/null && "$p" -c 'import jsonschema' 2>/dev/null; then PY=$p; break; fi
	done
	[ -n "$PY" ] || { echo "python3-jsonschema missing"; exit 77; }
	mkdir "$TMP/topo"
	for d in "$FIX"/*/; do
		n=$(basename "$d")
		[ -d "$d/root" ] || continue
		"$BIN" check --sysroot "$d/root" --json >"$TMP/$n.json" 2>/dev/null
		"$BIN" topo --sysroot "$d/root" --json >"$TMP/topo/$n.json" 2>/dev/null
	done
	"$BIN" check --json >"$TMP/live.json" 2>/dev/null
	"$BIN" topo --json >"$TMP/topo/live.json" 2>/dev/null
	if "$PY" "$SRC/tests/cli/validate_schema.py" "$SRC/docs/report.schema.json" "$TMP"/*.json; then pass "reports validate against docs/report.schema.json"; else fail "schema validation"; fi
	if "$PY" "$SRC/tests/cli/validate_schema.py" "$SRC/docs/topo.schema.json" "$TMP"/topo/*.json; then pass "topo --json validates against docs/topo.schema.json"; else fail "topo schema validation"; fi
	# The summary counts exactly the findings, in every report; the
	# compared values come as a pair.
	for gpu_area in gpu rdma gpudirect; do
		"$BIN" "$gpu_area" --sysroot "$FIX/h100-roce-broken/root" --json >"$TMP/area-$gpu_area.json" 2>/dev/null
	done
	if "$PY" - "$TMP"/*.json <<'PYEOF'
import json, sys
bad = 0
for p in sys.argv[1:]:
    d = json.load(open(p))
    n = {s: 0 for s in ("ok", "warn", "fail", "skip", "info")}
    for c in d["checks"]:
        n[c["status"]] += 1
        if ("observed" in c) != ("expected" in c):
            print(f"{p}: {c['id']} {c['subject']}: observed without expected"); bad += 1
    if n != d["summary"]:
        print(f"{p}: summary {d['summary']} but the findings count {n}"); bad += 1
sys.exit(1 if bad else 0)
PYEOF
	then pass "every summary counts its findings"; else fail "a summary does not count its findings"; fi
	grep -q '"observed": ' "$TMP/h100-roce-broken.json" && pass "findings that compare carry observed and expected" ||
		fail "no finding carries observed/expected"
	# The validator itself must reject a broken report.
	echo '{"version": "x", "checks": [{"id": "Bad ID", "status": "great"}]}' >"$TMP/bad.json"
	if "$PY" "$SRC/tests/cli/validate_schema.py" "$SRC/docs/report.schema.json" "$TMP/bad.json" >/dev/null 2>&1; then fail "schema accepts a broken report"; else pass "schema rejects a broken report"; fi
	echo '{"sysroot": "/", "devices": [{"name": "GPU0", "kind": "cpu"}], "matrix": [["FAR"]]}' >"$TMP/bad.json"
	if "$PY" "$SRC/tests/cli/validate_schema.py" "$SRC/docs/topo.schema.json" "$TMP/bad.json" >/dev/null 2>&1; then fail "topo schema accepts a broken document"; else pass "topo schema rejects a broken document"; fi
}

# The default report fits on a screen: the healthy 8-GPU node in at most
# 40 lines, the node with neither GPU nor RDMA in at most 15, and on every
# fixture each warn and fail of the JSON report is still a line of the text
# (with its check ID and subject), in the default and the --quiet report.
# Every fixture's hints (tests/cli/hints.py): a hint on every warn and fail,
# commands in backticks that start with a known binary, and no hint that
# requires what another finding on the same node says is false.
t_hints() {
	for d in "$FIX"/*/; do
		[ -d "$d/root" ] || continue
		"$BIN" check --sysroot "$d/root" --json >"$TMP/$(basename "$d").json" 2>/dev/null
	done
	if python3 "$SRC/tests/cli/hints.py" --gpuready "$BIN" "$TMP"/*.json >"$TMP/hints.out"; then
		pass "hints: $(tail -1 "$TMP/hints.out")"
	else
		fail "hints:"; cat "$TMP/hints.out" >&2
	fi
	# the reader itself: each kind of wrong hint is caught
	mkdir -p "$TMP/bad"
	cat >"$TMP/bad/bad.json" <<'JSON'
{"checks": [
 {"id": "a.fact", "subject": "x", "status": "ok", "facts": ["gdr_possible=false"]},
 {"id": "a.b", "subject": "s1", "status": "warn", "hint": "`ethtool --frobnicate eth0`"},
 {"id": "a.b", "subject": "s2", "status": "warn", "hint": "`mlxfwreset -d <PCI address> reset`"},
 {"id": "a.b", "subject": "s3", "status": "warn", "hint": "`systemctl nvidia-persistenced`"},
 {"id": "a.b", "subject": "s4", "status": "warn", "hint": "`frob -x`"},
 {"id": "a.b", "subject": "s5", "status": "warn", "hint": "`gpuready check --frob`"},
 {"id": "a.b", "subject": "s6", "status": "fail"},
 {"id": "a.b", "subject": "s7", "status": "warn", "hint": "`ip link set dev eth0 up`", "requires": ["gdr_possible"]},
 {"id": "gpudirect.next_steps", "subject": "n", "status": "ok",
  "details": ["NCCL: torchrun --nproc_per_node=8 --node_rank=<rank> --no-python gpuready nccl --require ib"]}
]}
JSON
	python3 "$SRC/tests/cli/hints.py" --gpuready "$BIN" "$TMP/bad/bad.json" >"$TMP/hints.out"
	rc=$?
	while IFS= read -r want; do
		grep -qF -- "$want" "$TMP/hints.out" || { fail "hints.py misses: $want"; cat "$TMP/hints.out" >&2; }
	done <<'WANT'
s1: `ethtool --frobnicate eth0`: ethtool has no option --frobnicate
s2: `mlxfwreset -d <PCI address> reset`: <PCI address> is a placeholder
s3: `systemctl nvidia-persistenced`: systemctl needs one of its subcommands
s4: `frob -x`: starts with frob, not a known binary
s5: `gpuready check --frob`: gpuready has no option --frob
s6: fail without a hint
s7: its hint requires gdr_possible, but a.fact x says gdr_possible=false
<rank> is a placeholder
WANT
	[ "$rc" -eq 1 ] && [ "$(grep -c ': ' "$TMP/hints.out")" -eq 8 ] && pass "hints.py catches each kind of wrong hint" \
		|| { fail "hints.py on wrong hints: exit $rc"; cat "$TMP/hints.out" >&2; }
}

t_budget() {
	n=$("$BIN" check --sysroot "$FIX/h100-8x-cx7-roce/root" --no-color | wc -l)
	[ "$n" -le 40 ] && pass "healthy 8-GPU node: $n lines (at most 40)" || fail "healthy 8-GPU node: $n lines (more than 40)"
	n=$("$BIN" check --sysroot "$FIX/plain-no-rdma/root" --no-color | wc -l)
	[ "$n" -le 15 ] && pass "no GPU, no RDMA: $n lines (at most 15)" || fail "no GPU, no RDMA: $n lines (more than 15)"
	for d in "$FIX"/*/; do
		name=$(basename "$d")
		[ -d "$d/root" ] || continue
		"$BIN" check --sysroot "$d/root" --json >"$TMP/b.json" 2>/dev/null
		for mode in "" -q; do
			"$BIN" check --sysroot "$d/root" --no-color $mode >"$TMP/b.txt" 2>/dev/null
			if python3 - "$TMP/b.json" "$TMP/b.txt" <<'PYEOF'
import json, sys
text = open(sys.argv[2]).read().splitlines()
missing = 0
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["status"] not in ("warn", "fail"):
        continue
    tag = "[" + c["status"].upper() + "] " + c["id"] + "  "
    subj = "" if c["subject"] == c["id"].split(".")[0] else c["subject"] + ": "
    if not any(l.startswith(tag) and l[len(tag):].startswith(subj + c["message"]) for l in text):
        print(f"missing: {c['id']} {c['subject']}: {c['message'][:80]}")
        missing += 1
sys.exit(1 if missing else 0)
PYEOF
			then pass "$name${mode:+ $mode}: every warn and fail is shown"; else fail "$name${mode:+ $mode}: a warn or fail is not shown"; fi
		done
	done
	"$BIN" check --sysroot "$FIX/h100-8x-cx7-roce/root" --no-color -q >"$TMP/q.txt"
	[ "$(wc -l <"$TMP/q.txt")" -eq 1 ] && pass "-q on a healthy node: the summary only" || fail "-q on a healthy node printed more than the summary"
	r=$("$BIN" check --sysroot "$FIX/h100-roce-broken/root" --reason)
	[ ${#r} -le 200 ] && printf '%s' "$r" | LC_ALL=C grep -qv '[^ -~]' && ! printf '%s' "$r" | grep -q "[\"']" &&
		pass "--reason: ${#r} bytes of printable ASCII without quotes" || fail "--reason: '$r'"
}

# topo --json on trees the fixtures do not cover: one with neither GPU nor
# RDMA device still gets a document (and exit 1, as the text), and bytes
# that are not UTF-8 in what sysfs says (a device name, local_cpulist)
# come out as U+FFFD, so the document stays JSON (RFC 8259 requires UTF-8).
t_topo() {
	mkdir -p "$TMP/empty/sys" "$TMP/empty/proc"
	expect_exit 1 "$BIN" topo --sysroot "$TMP/empty" --json
	contains "$TMP/err" "no NVIDIA GPU and no RDMA device" "no GPU, no NIC: said on stderr"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["devices"]==[] and d["matrix"]==[], d' "$TMP/out" \
		&& pass "no GPU, no NIC: topo --json prints an empty document" || { fail "topo --json on an empty tree"; head -5 "$TMP/out" >&2; }
	schema_ok topo.schema.json "topo on an empty tree" "$TMP/out"
	root=$TMP/latin1
	cp -a "$FIX/dgx-spark-gb10/root" "$root"
	mv "$root/sys/class/infiniband/roceP2p1s0f0" "$root/sys/class/infiniband/$(printf 'roce\377\376x')"
	printf '0-19\351\n' >"$root/sys/devices/pci000f:00/000f:00:00.0/000f:01:00.0/local_cpulist"
	expect_exit 0 "$BIN" topo --sysroot "$root" --json
	python3 - "$TMP/out" <<-'PY' >"$TMP/py.out" 2>&1 && pass "invalid UTF-8 from sysfs: topo --json is UTF-8 JSON with U+FFFD" \
		|| { fail "invalid UTF-8 from sysfs"; cat "$TMP/py.out" >&2; }
	import json, sys
	d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
	names = [v["name"] for v in d["devices"]]
	assert "roce\ufffd\ufffdx" in names, names
	assert d["devices"][0]["cpus"] == "0-19\ufffd", d["devices"][0]
	PY
	schema_ok topo.schema.json "topo with invalid UTF-8" "$TMP/out"
}

t_snapshot() {
	for d in "$FIX"/*/; do
		n=$(basename "$d")
		[ -d "$d/root" ] || continue
		out=$TMP/snap-$n
		expect_exit 0 "$BIN" snapshot --sysroot "$d/root" "$out" || continue
		"$BIN" check --sysroot "$d/root" --json | normalize_json >"$TMP/a.json"
		"$BIN" check --sysroot "$out" --json | normalize_json >"$TMP/b.json"
		if diff -u "$TMP/a.json" "$TMP/b.json" >"$TMP/diff"; then pass "snapshot of $n reproduces its report"; else fail "snapshot of $n differs:"; head -40 "$TMP/diff" >&2; fi
	done
	mkdir -p "$TMP/full" && touch "$TMP/full/x"
	expect_exit 2 "$BIN" snapshot "$TMP/full" && contains "$TMP/err" "not empty" "snapshot refuses a non-empty dir"
	# live: only NCCL_*, UCX_* and CUDA_VISIBLE_DEVICES are kept
	expect_exit 0 env GPUREADY_TEST_SECRET=hunter2 NCCL_TEST_MARKER=1 UCX_TLS=rc CUDA_VISIBLE_DEVICES=0 "$BIN" snapshot "$TMP/live"
	tr '\0' '\n' <"$TMP/live/.gpuready/environ" >"$TMP/env.txt"
	contains "$TMP/env.txt" "NCCL_TEST_MARKER=1" "snapshot keeps NCCL_*"
	contains "$TMP/env.txt" "UCX_TLS=rc" "snapshot keeps UCX_*"
	contains "$TMP/env.txt" "CUDA_VISIBLE_DEVICES=0" "snapshot keeps CUDA_VISIBLE_DEVICES"
	if grep -rq hunter2 "$TMP/live" 2>/dev/null; then fail "snapshot captured a secret"; else pass "snapshot captures no other environment"; fi
	"$BIN" check --sysroot "$TMP/live" --json >"$TMP/live.json"; rc=$?
	[ "$rc" -le 1 ] && pass "live snapshot checks (exit $rc)" || fail "live snapshot check exited $rc"
	contains "$TMP/live.json" '"subject": "NCCL_TEST_MARKER"' "recorded environment is read back"
}

t_realdata() {
	tarball=$SRC/tests/realdata.tar.xz
	[ -f "$tarball" ] || { fail "missing $tarball"; return; }
	tar -xJf "$tarball" -C "$TMP" || { fail "cannot extract realdata"; return; }
	while IFS='|' read -r dir want; do
		case "$dir" in ''|'#'*) continue ;; esac
		root=$TMP/realdata/$dir
		"$BIN" check --sysroot "$root" --json >"$TMP/rd.json" 2>"$TMP/rd.err"; rc=$?
		if [ "$rc" -gt 1 ]; then fail "$dir: exit $rc"; cat "$TMP/rd.err" >&2; continue; fi
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/rd.json" || { fail "$dir: invalid JSON"; continue; }
		rest=$want
		while [ -n "$rest" ]; do
			w=${rest%%|*}
			[ "$w" = "$rest" ] && rest="" || rest=${rest#*|}
			contains "$TMP/rd.json" "$w" "$dir names $w"
		done
		rm -rf "$TMP/rdsnap"
		if "$BIN" snapshot --sysroot "$root" "$TMP/rdsnap" 2>/dev/null; then
			"$BIN" check --sysroot "$TMP/rdsnap" --json | normalize_json >"$TMP/b.json"
			normalize_json <"$TMP/rd.json" >"$TMP/a.json"
			if diff -q "$TMP/a.json" "$TMP/b.json" >/dev/null; then pass "$dir snapshot reproduces"; else fail "$dir snapshot differs"; diff -u "$TMP/a.json" "$TMP/b.json" | head -30 >&2; fi
		else
			fail "$dir: snapshot failed"
		fi
	done <"$SRC/tests/realdata.expect"
}

t_man() {
	"$BIN" man >"$TMP/gpuready.1" || { fail "gpuready man"; return; }
	compare "$SRC/docs/gpuready.1" "$TMP/gpuready.1" "docs/gpuready.1 is generated from the option tables"
	if command -v man >/dev/null 2>&1; then
		MANWIDTH=100 man -l "$TMP/gpuready.1" >"$TMP/man.txt" 2>"$TMP/man.err"
		contains "$TMP/man.txt" "--sysroot" "man page renders"
	fi
}

t_install() {
	build=${MESON_BUILD_ROOT:?}
	dest=$TMP/dest
	meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$TMP/inst.log" 2>&1 || { fail "meson install"; cat "$TMP/inst.log" >&2; return; }
	vr=$(find "$dest" -name verify-rdma | head -1)
	[ -n "$vr" ] || { fail "verify-rdma not installed"; return; }
	[ -L "$vr" ] && pass "verify-rdma is a link" || fail "verify-rdma is not a link"
	"$vr" --sysroot "$FIX/h100-8x-cx7-roce/root" --no-color >"$TMP/a.txt"; rc=$?
	"$BIN" rdma --sysroot "$FIX/h100-8x-cx7-roce/root" --no-color >"$TMP/b.txt"
	[ "$rc" -eq 0 ] && cmp -s "$TMP/a.txt" "$TMP/b.txt" && pass "installed verify-rdma runs gpuready rdma" || fail "installed verify-rdma (exit $rc)"
	for pair in verify-gpu:gpu verify-gpudirect:gpudirect; do
		alias=${pair%%:*}; cmd=${pair#*:}
		a=$(find "$dest" -name "$alias" | head -1)
		[ -L "$a" ] || { fail "$alias not installed as a link"; continue; }
		"$a" --sysroot "$FIX/h100-8x-cx7-roce/root" --no-color >"$TMP/a.txt"; rc=$?
		"$BIN" $cmd --sysroot "$FIX/h100-8x-cx7-roce/root" --no-color >"$TMP/b.txt"
		[ "$rc" -eq 0 ] && cmp -s "$TMP/a.txt" "$TMP/b.txt" && pass "installed $alias runs gpuready $cmd" || fail "installed $alias (exit $rc)"
	done
	for c in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
		a=$(find "$dest" -name "${c}_perf" | head -1)
		[ -L "$a" ] || { fail "${c}_perf not installed as a link"; continue; }
		"$a" --backend socket -b 1K -e 1K -n 1 >"$TMP/a.txt" 2>"$TMP/a.err"; rc=$?
		[ "$rc" -eq 0 ] && grep -q "Collective test starting: ${c}_perf" "$TMP/a.txt" \
			&& pass "installed ${c}_perf runs the $c benchmark" || { fail "installed ${c}_perf (exit $rc)"; cat "$TMP/a.err" >&2; }
	done
	[ -n "$(find "$dest" -name gpuready.1)" ] && pass "man page installed" || fail "man page not installed"
	install_foreign "$build"
	install_no_aliases "$build"
	install_mpi_module "$dest"
}

# An all_reduce_perf that is not gpuready's (nccl-tests' own, a link
# elsewhere) is left alone with a message, and the install goes on.
install_foreign() {
	dest=$TMP/dest-foreign
	bindir=$(meson introspect --buildoptions "$1" | python3 -c 'import json,sys; o={x["name"]:x["value"] for x in json.load(sys.stdin)}; print(o["prefix"]+"/"+o["bindir"])')
	mkdir -p "$dest$bindir"
	printf '#!/bin/sh\necho nccl-tests\n' >"$dest$bindir/all_reduce_perf"
	ln -s /opt/nccl-tests/build/sendrecv_perf "$dest$bindir/sendrecv_perf"
	meson install -C "$1" --destdir "$dest" --no-rebuild --quiet >"$TMP/inst.log" 2>&1; rc=$?
	[ "$rc" -eq 0 ] && pass "install with a foreign all_reduce_perf goes on" || { fail "install stopped (exit $rc)"; cat "$TMP/inst.log" >&2; }
	grep -q "nccl-tests" "$dest$bindir/all_reduce_perf" && [ ! -L "$dest$bindir/all_reduce_perf" ] \
		&& pass "the foreign all_reduce_perf is left alone" || fail "the foreign all_reduce_perf was replaced"
	[ "$(readlink "$dest$bindir/sendrecv_perf")" = /opt/nccl-tests/build/sendrecv_perf ] \
		&& pass "a foreign sendrecv_perf link is left alone" || fail "the foreign sendrecv_perf link was replaced"
	msg=$1/meson-logs/install-aliases.log # what make install prints (meson swallows it)
	grep -q "left $dest$bindir/all_reduce_perf alone.*gpuready bench all_reduce" "$msg" \
		&& grep -q "left $dest$bindir/sendrecv_perf alone: it is a link to /opt" "$msg" \
		&& pass "install names each name it left alone" || { fail "no message for the names left alone"; cat "$msg" >&2; }
	[ "$(readlink "$dest$bindir/all_gather_perf")" = gpuready ] && [ -x "$dest$bindir/gpuready" ] \
		&& [ -n "$(find "$dest" -name gpuready.1)" ] && pass "the other aliases, the binary and the man page are installed" \
		|| fail "install stopped half-way"
}

install_no_aliases() {
	dest=$TMP/dest-noalias
	GPUREADY_ALIASES=no meson install -C "$1" --destdir "$dest" --no-rebuild --quiet >"$TMP/inst.log" 2>&1 || { fail "meson install (ALIASES=no)"; return; }
	n=$(find "$dest" -type l | wc -l)
	[ "$n" -eq 0 ] && [ -n "$(find "$dest" -name gpuready -type f)" ] && pass "ALIASES=no installs gpuready and no alias" \
		|| { fail "ALIASES=no installed $n links"; find "$dest" -type l >&2; }
	grep -q "GPUREADY_ALIASES=\$(ALIASES) meson install" "$SRC/Makefile" && grep -q "cat .*install-aliases.log" "$SRC/Makefile" \
		&& pass "make install passes ALIASES on and prints what the alias script said" || fail "the Makefile does not pass ALIASES or hides the alias messages"
}

# Under DESTDIR the installed binary finds the module installed beside it,
# and never claims a build with MPI was built without it.
install_mpi_module() {
	mod=$(find "$1" -name gpuready-mpi.so | head -1)
	[ -n "$mod" ] || { echo "no MPI module built: the DESTDIR module test is skipped"; return; }
	gr=$(find "$1" -name gpuready -type f | head -1)
	mv "$mod" "$mod.away"
	"$gr" bench --backend mpi -b 8 -e 8 -n 1 >"$TMP/m.out" 2>"$TMP/m.err"
	mv "$mod.away" "$mod"
	if grep -q "built without MPI" "$TMP/m.err"; then fail "a build with MPI says it was built without"; cat "$TMP/m.err" >&2
	else grep -q "built with MPI, but its module is in none" "$TMP/m.err" && pass "a missing module under DESTDIR is named as missing" \
		|| { fail "no message for the missing module"; cat "$TMP/m.err" >&2; }; fi
	GPUREADY_MPI_MODULE= "$gr" bench --backend mpi -b 8 -e 8 -n 1 -w 0 >"$TMP/m.out" 2>"$TMP/m.err"; rc=$?
	grep -q "cannot load the MPI backend module" "$TMP/m.err" && { fail "the installed binary does not find its module"; cat "$TMP/m.err" >&2; } \
		|| pass "the binary installed under DESTDIR loads the module installed beside it (exit $rc)"
}

t_nosubprocess() {
	command -v strace >/dev/null || { echo "strace missing"; exit 77; }
	ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o "$TMP/trace" -e trace=execve,fork,vfork,clone,clone3 "$BIN" check --sysroot "$FIX/h100-8x-cx7-roce/root" >/dev/null
	n=$(grep -c 'execve(' "$TMP/trace"); c=$(grep -cE '(fork|clone3?)\(' "$TMP/trace")
	[ "$n" -eq 1 ] && [ "$c" -eq 0 ] && pass "check on a fixture runs no subprocess" || { fail "subprocesses: $n execve, $c fork/clone"; cat "$TMP/trace" >&2; }
}

# nvml_finding FILE: "status|message|hint" of gpu.nvml's first finding in a report.
nvml_finding() { first_finding gpu.nvml "$1"; }
# first_finding ID FILE: the same for check ID.
first_finding() {
	python3 - "$1" "$2" <<-'PY'
	import json, sys
	for c in json.load(open(sys.argv[2]))["checks"]:
	    if c["id"] == sys.argv[1]:
	        print("%s|%s|%s" % (c["status"], c["message"], c.get("hint", "")))
	        break
	PY
}

# The live commands with a libnvidia-ml.so.1 that prints to stdout from its
# constructor, nvmlInit_v2, nvmlShutdown and destructor (tests/fakes/fake_nvml.c,
# GPUREADY_FAKE_NVML): --json stays JSON, nothing it printed reaches stdout,
# and gpu.nvml names nvmlInit_v2's error; its copy of the toolkit stub's
# banner alone is enough to name the stub.
t_fakenvml() {
	nv=${GPUREADY_FAKE_NVML:?}
	for cmd in check gpu; do
		LD_LIBRARY_PATH=$nv "$BIN" $cmd --json >"$TMP/$cmd.json" 2>"$TMP/err"
		rc=$?
		[ "$rc" -le 1 ] || { fail "$cmd --json exited $rc"; cat "$TMP/err" >&2; }
		if python3 -m json.tool "$TMP/$cmd.json" >/dev/null 2>&1; then
			pass "$cmd --json is JSON with a libnvidia-ml.so.1 that prints to stdout"
		else
			fail "$cmd --json is not JSON"; head -5 "$TMP/$cmd.json" >&2
		fi
		lacks "$TMP/$cmd.json" "FAKE-NVML-BANNER" "$cmd --json: nothing NVML printed is on stdout"
		schema_ok report.schema.json "$cmd with a printing libnvidia-ml.so.1" "$TMP/$cmd.json"
	done
	nvml_finding "$TMP/gpu.json" >"$TMP/nvml"
	contains "$TMP/nvml" "nvmlInit_v2: Driver Not Loaded (9)" "gpu.nvml names nvmlInit_v2's error"
	lacks "$TMP/nvml" "stub" "a library that only prints is not called the stub"
	LD_LIBRARY_PATH=$nv "$BIN" gpu --no-color >"$TMP/gpu.txt" 2>"$TMP/err"
	lacks "$TMP/gpu.txt" "FAKE-NVML-BANNER" "gpu (text): nothing NVML printed is on stdout"
	# nvmlInit_v2 succeeds: the reads, nvmlShutdown and the unload are guarded too
	LD_LIBRARY_PATH=$nv FAKE_NVML_INIT=0 "$BIN" gpu --json >"$TMP/ok.json" 2>"$TMP/err"
	python3 -m json.tool "$TMP/ok.json" >/dev/null 2>&1 && pass "gpu --json is JSON when the printing NVML initialises" \
		|| { fail "gpu --json with FAKE_NVML_INIT=0 is not JSON"; head -5 "$TMP/ok.json" >&2; }
	lacks "$TMP/ok.json" "FAKE-NVML-BANNER" "nothing from nvmlShutdown or the unload is on stdout"
	# the stub's banner (the file is not in a stubs/ directory)
	LD_LIBRARY_PATH=$nv FAKE_NVML_BANNER=stub "$BIN" gpu --json >"$TMP/stub.json" 2>"$TMP/err"
	schema_ok report.schema.json "gpu with the stub's banner" "$TMP/stub.json"
	nvml_finding "$TMP/stub.json" >"$TMP/nvml"
	contains "$TMP/nvml" "NVML_ERROR_DRIVER_NOT_LOADED (9): the CUDA toolkit's stub libnvidia-ml.so was loaded" \
		"the stub is recognised by its banner"
	lacks "$TMP/nvml" "WARNING" "the stub's banner is not in the finding"
}

# A library call that never returns (tests/fakes: FAKE_NVML_HANG,
# FAKE_CUDA_HANG) costs `check` one deadline (GPUREADY_PROBE_TIMEOUT, 2 s
# here), and the finding names the call.
t_probedeadline() {
	nv=${GPUREADY_FAKE_NVML:?} cu=${GPUREADY_FAKES:?} limit=9 # twice the deadline and 5 s
	for lib in nvml cuda; do
		case $lib in
		nvml) set -- env LD_LIBRARY_PATH="$nv" FAKE_NVML_INIT=0 FAKE_NVML_GPUS=2 FAKE_NVML_HANG=nvmlDeviceGetTemperature
		      call="NVML call nvmlDeviceGetTemperature on GPU 0 did not return within 2 s" ;;
		cuda) set -- env LD_LIBRARY_PATH="$cu" FAKE_CUDA_HANG=cuMemcpyHtoD_v2
		      call="CUDA call cuMemcpyHtoD_v2 on device 0 did not return within 2 s" ;;
		esac
		t0=$(date +%s)
		GPUREADY_PROBE_TIMEOUT=2 "$@" "$BIN" check --json >"$TMP/$lib.json" 2>"$TMP/err"
		rc=$? t1=$(date +%s)
		[ $((t1 - t0)) -le $limit ] && pass "$lib: check ended $((t1 - t0)) s after it began" \
			|| fail "$lib: check took $((t1 - t0)) s with a call that never returns (at most $limit)"
		[ "$rc" -eq 1 ] && pass "$lib: check exits 1" || { fail "$lib: check exited $rc"; cat "$TMP/err" >&2; }
		schema_ok report.schema.json "check with a $lib call that never returns" "$TMP/$lib.json"
		first_finding gpu.$lib "$TMP/$lib.json" >"$TMP/$lib.finding"
		contains "$TMP/$lib.finding" "fail|$call" "gpu.$lib fails naming the call"
		contains "$TMP/$lib.finding" "fallen off the bus" "gpu.$lib says what blocks a call"
		contains "$TMP/$lib.finding" "dmesg | grep -i -e xid" "gpu.$lib's hint reads the kernel log"
	done
	# without a hang the same libraries answer (the deadline changes nothing)
	LD_LIBRARY_PATH=$cu GPUREADY_PROBE_TIMEOUT=2 "$BIN" gpu --json >"$TMP/ok.json" 2>"$TMP/err"
	first_finding gpu.cuda "$TMP/ok.json" >"$TMP/ok.finding"
	contains "$TMP/ok.finding" "ok|cuInit ok" "gpu.cuda passes with the fake libcuda and no hang"
}

# The registration probe and the verbs queries under the same deadline: a
# recorded machine's /sys bind-mounted over the live one in a private
# mount namespace (the root stays live, so check runs the live probes),
# the fake libcuda and libibverbs (named as the tree's NICs) on
# LD_LIBRARY_PATH, one call made to hang at a time.
t_gdrdeadline() {
	fk=${GPUREADY_FAKES:?} ibv=${FAKE_IBVERBS:?} limit=9 # twice the deadline and 5 s
	command -v unshare >/dev/null || { echo "SKIP: unshare(1) missing: no private mount namespace"; exit 77; }
	own=-m
	[ "$(id -u)" -eq 0 ] || own=-rm
	unshare $own --propagation private sh -c 'mount --bind "$1" /sys' sh "$FIX/ndr-ib-4port/root/sys" \
		2>"$TMP/err" || { echo "SKIP: cannot mount over /sys here: $(cat "$TMP/err")"; exit 77; }
	mkdir -p "$TMP/lib" && ln -sf "$ibv" "$TMP/lib/libibverbs.so.1"
	for hang in cuda:cuMemGetHandleForAddressRange verbs:ibv_reg_mr verbs:ibv_query_port; do
		lib=${hang%%:*} fn=${hang#*:} fx=h100-8x-cx7-roce id=gpudirect.registration
		case $fn in
		cuMemGetHandleForAddressRange) call="fail|CUDA call $fn on GPU 0000:18:00.0 did not return within 2 s" ;;
		ibv_reg_mr) call="fail|libibverbs call ibv_reg_mr(mlx5_0) on GPU 0000:18:00.0's memory did not return within 2 s" ;;
		ibv_query_port) fx=ndr-ib-4port id=rdma.mtu
			call="libibverbs call ibv_query_port(mlx5_0, port 1) did not return within 2 s" ;;
		esac
		t0=$(date +%s)
		unshare $own --propagation private sh -c 'mount --bind "$1" /sys || exit 125; shift; exec "$@"' sh \
			"$FIX/$fx/root/sys" env LD_LIBRARY_PATH="$TMP/lib:$fk" FAKE_IBVERBS_NAMES=mlx5_0,mlx5_1,mlx5_2,mlx5_3 \
			FAKE_CUDA_HANG=$fn FAKE_IBVERBS_HANG=$fn GPUREADY_PROBE_TIMEOUT=2 \
			"$BIN" check --json >"$TMP/$fn.json" 2>"$TMP/err"
		rc=$? t1=$(date +%s)
		[ $((t1 - t0)) -le $limit ] && pass "$fn: check ended $((t1 - t0)) s after it began" \
			|| fail "$fn: check took $((t1 - t0)) s with a call that never returns (at most $limit)"
		[ "$rc" -eq 1 ] && pass "$fn: check exits 1" || { fail "$fn: check exited $rc"; cat "$TMP/err" >&2; }
		schema_ok report.schema.json "check with $fn never returning" "$TMP/$fn.json"
		first_finding $id "$TMP/$fn.json" >"$TMP/$fn.finding"
		contains "$TMP/$fn.finding" "$call" "$id names $fn"
		[ $lib = cuda ] || [ $fn = ibv_reg_mr ] || continue
		contains "$TMP/$fn.finding" "fallen off the bus" "$id says what blocks a call"
		contains "$TMP/$fn.finding" "dmesg | grep -i -e xid" "$id's hint reads the kernel log"
	done
	# without a hang the same fakes answer: the verbs queries reach every port
	unshare $own --propagation private sh -c 'mount --bind "$1" /sys || exit 125; shift; exec "$@"' sh \
		"$FIX/ndr-ib-4port/root/sys" env LD_LIBRARY_PATH="$TMP/lib:$fk" FAKE_IBVERBS_NAMES=mlx5_0,mlx5_1,mlx5_2,mlx5_3 \
		GPUREADY_PROBE_TIMEOUT=2 "$BIN" rdma --json >"$TMP/ok.json" 2>"$TMP/err"
	first_finding rdma.mtu "$TMP/ok.json" >"$TMP/ok.finding"
	contains "$TMP/ok.finding" "ok|active_mtu=4096 (max supported)" "rdma.mtu confirmed by the verbs queries' child"
}

# The NVML setting checks live against the fake libnvidia-ml.so.1 (its
# FAKE_NVML_* answers, tests/fakes/fake_nvml.c): the fixture of F04, F10,
# F15 and F16, which no recorded tree can show. Each line of
# $TMP/<case>.f is "STATUS|ID|SUBJECT|MESSAGE|HINT".
nvml_settings() {
	name=$1; shift
	env LD_LIBRARY_PATH="${GPUREADY_FAKE_NVML:?}" FAKE_NVML_INIT=0 "$@" "$BIN" gpu --json >"$TMP/$name.json" \
		2>"$TMP/err"
	rc=$?
	[ "$rc" -le 1 ] || { fail "$name: gpu --json exited $rc"; cat "$TMP/err" >&2; }
	python3 - "$TMP/$name.json" >"$TMP/$name.f" <<-'PY'
	import json, sys
	for c in json.load(open(sys.argv[1]))["checks"]:
	    if c["id"] in ("gpu.compute_mode", "gpu.power_clocks", "gpu.fabric", "gpu.nvml_p2p", "gpu.nvml"):
	        print("|".join((c["status"], c["id"], c["subject"], c["message"], c.get("hint", ""))))
	PY
}

t_nvmlsettings() {
	# F15: Prohibited fails, Exclusive_Process warns, Default passes
	nvml_settings mode FAKE_NVML_GPUS=3 FAKE_NVML_COMPUTE_MODE="2;3;0"
	schema_ok report.schema.json "gpu with the NVML setting queries" "$TMP/mode.json"
	contains "$TMP/mode.f" "fail|gpu.compute_mode|GPU 0|compute mode Prohibited" "Prohibited fails"
	contains "$TMP/mode.f" "\`nvidia-smi -i 0 -c DEFAULT\`" "the hint resets GPU 0's compute mode"
	contains "$TMP/mode.f" "warn|gpu.compute_mode|GPU 1|compute mode Exclusive_Process" "Exclusive_Process warns"
	contains "$TMP/mode.f" "ok|gpu.compute_mode|GPU 2|compute mode Default" "Default passes"
	contains "$TMP/mode.f" "skip|gpu.fabric|nvml|not applicable: no GPU takes part in an NVLink fabric" \
		"fabric information not supported: not applicable"
	lacks "$TMP/mode.f" "warn|gpu.fabric" "no fabric warning without a fabric"
	# F16: a lowered power limit names the default watts; lowered application clocks
	nvml_settings power FAKE_NVML_GPUS=2 FAKE_NVML_POWER="500,500,700;700,700,700" \
		FAKE_NVML_CLOCKS="1980,1980,1980;1500,1980,1980"
	contains "$TMP/power.f" "warn|gpu.power_clocks|GPU 0|power limit 500 W, 29% below the default 700 W" \
		"a lowered power limit warns, quantified"
	contains "$TMP/power.f" "\`nvidia-smi -i 0 -pl 700\`" "the hint restores the default 700 W"
	contains "$TMP/power.f" "warn|gpu.power_clocks|GPU 1|graphics application clock 1500 MHz, 24% below the default 1980 MHz" \
		"lowered application clocks warn"
	contains "$TMP/power.f" "\`nvidia-smi -i 1 -rac\`" "the hint resets the application clocks"
	# F04: registration in progress fails; completed with a degraded
	# health mask fails; healthy passes; the R525 call without health
	nvml_settings fabric FAKE_NVML_GPUS=3 FAKE_NVML_FABRIC="2,0,0;3,0,0xa9;3,0,0xaa,1"
	contains "$TMP/fabric.f" "fail|gpu.fabric|GPU 0|not registered with the NVLink fabric: state In Progress (2)" \
		"fabric state In Progress fails"
	contains "$TMP/fabric.f" "fail|gpu.fabric|GPU 1|registered with the NVLink fabric (clique 7), but the fabric reports: bandwidth degraded" \
		"a degraded health mask fails"
	contains "$TMP/fabric.f" "ok|gpu.fabric|GPU 2|registered with the NVLink fabric (clique 7), healthy (health mask 0xaa)" \
		"a healthy registration passes"
	nvml_settings fabric2 FAKE_NVML_GPUS=1 FAKE_NVML_FABRIC="3,0,0xa9" FAKE_NVML_FABRIC_V=2
	contains "$TMP/fabric2.f" "fail|gpu.fabric|GPU 0|registered with the NVLink fabric (clique 7), but the fabric reports: bandwidth degraded" \
		"the v2 struct where the driver refuses v3 (driver 550)"
	nvml_settings fabric1 FAKE_NVML_GPUS=1 FAKE_NVML_FABRIC="3,0,0xa9" FAKE_NVML_FABRIC_V=1
	contains "$TMP/fabric1.f" "ok|gpu.fabric|GPU 0|registered with the NVLink fabric (clique 7); this driver does not report the fabric's health" \
		"the R525 call where the versioned one is missing (driver 535)"
	# F10: P2P read disabled between two GPUs with NVLinks up
	nvml_settings p2p FAKE_NVML_GPUS=3 FAKE_NVML_NVLINKS="18,18" FAKE_NVML_P2P="0,4,0" FAKE_NVML_P2P_PAIR="1,2"
	contains "$TMP/p2p.f" "fail|gpu.nvml_p2p|GPU 1<->GPU 2|NVML reports P2P between GPU 1 and GPU 2 (both with NVLinks up) as NVLink OK, read disabled by registry key, write OK" \
		"P2P disabled on an NVLink pair fails"
	lacks "$TMP/p2p.f" "GPU 0<->" "the healthy pairs pass"
	nvml_settings p2pok FAKE_NVML_GPUS=2 FAKE_NVML_NVLINKS="18,18"
	contains "$TMP/p2pok.f" "ok|gpu.nvml_p2p|nvml|P2P read and write OK over NVLink for 1 pair of GPUs" "healthy P2P passes"
	nvml_settings nolinks FAKE_NVML_GPUS=2
	contains "$TMP/nolinks.f" "skip|gpu.nvml_p2p|nvml|not applicable: 0 GPUs with NVLinks up" "no NVLinks: not applicable"
	contains "$TMP/nolinks.f" "skip|gpu.power_clocks|GPU 0|NVML reports neither" "nothing reported: skip"
	# F17, F18, F09 (gpu.nvml): persistence off warns; uncorrected
	# ECC errors and a pending row remap fail; NVLinks down fail; MIG on fails
	nvml_settings health FAKE_NVML_GPUS=4 FAKE_NVML_PERSISTENCE="0;1" FAKE_NVML_ECC="0,0;3,0;0,0" \
		FAKE_NVML_REMAP="0,0,0,0;0,0,0,0;0,1,1,0;0,0,0,0" FAKE_NVML_NVLINKS="18,18;18,18;18,18;16,18"
	contains "$TMP/health.f" "warn|gpu.nvml|GPU 0|persistence mode off" "persistence mode off warns (F17)"
	contains "$TMP/health.f" "fail|gpu.nvml|GPU 1|" "uncorrected ECC errors fail (F18)"
	contains "$TMP/health.f" "row remapping pending" "a pending row remap fails (F18)"
	contains "$TMP/health.f" "fail|gpu.nvml|GPU 3|2 of 18 NVLinks are down" "NVLinks down fail (F09)"
	lacks "$TMP/health.f" "warn|gpu.nvml|GPU 2|persistence" "persistence on does not warn"
	# F12: the library and the loaded module from different driver versions (this
	# machine has no GPU on PCI, so gpu.nvml skips, naming NVML's error)
	nvml_settings mismatch FAKE_NVML_GPUS=1 FAKE_NVML_INIT=18
	contains "$TMP/mismatch.f" "nvmlInit_v2: Driver/library version mismatch (18)" \
		"a library/module version mismatch is named (F12)"
	# snapshot records NVML's NVLinks in .gpuready/nvlink (bench copy's peer
	# limits on a tree): counts, and the version NVML answers as it is
	# (lib/nvml_api.h decodes it), "-" without an active link
	env LD_LIBRARY_PATH="$GPUREADY_FAKE_NVML" FAKE_NVML_INIT=0 FAKE_NVML_GPUS=3 \
		FAKE_NVML_BDF="0000:18:00.0;0000:29:00.0;0000:3a:00.0" FAKE_NVML_NVLINKS="18,18;16,18;0,0" \
		FAKE_NVML_NVLINK_VERSION="6;7" "$BIN" snapshot "$TMP/snap" >/dev/null 2>&1 ||
		fail "snapshot with the fake NVML"
	contains "$TMP/snap/.gpuready/nvlink" "0000:18:00.0 18 0 6" "snapshot: NVML's NVLinks and version recorded"
	contains "$TMP/snap/.gpuready/nvlink" "0000:29:00.0 18 2 7" "snapshot: links down, another version"
	contains "$TMP/snap/.gpuready/nvlink" "0000:3a:00.0 0 0 -" "snapshot: no active link, no version"
	# every command these hints print is one nvidia-smi (or systemctl)
	# takes (exit 2: these reports export no facts, which is right here)
	python3 "$SRC/tests/cli/hints.py" --gpuready "$BIN" "$TMP"/mode.json "$TMP"/power.json "$TMP"/fabric.json \
		"$TMP"/p2p.json "$TMP"/health.json >"$TMP/hints.out"
	if [ $? -ne 1 ] && grep -q ", 0 problems$" "$TMP/hints.out"; then
		pass "hints of the live NVML findings: $(tail -1 "$TMP/hints.out")"
	else
		fail "hints of the live NVML findings:"; cat "$TMP/hints.out" >&2
	fi
}

case "${1:-}" in
fixture) t_fixture "$2" ;;
basics|cmdline|config|output|schema|topo|snapshot|realdata|man|install|nosubprocess|fakenvml|nvmlsettings|probedeadline|gdrdeadline|budget|hints) "t_$1" ;;
*) echo "usage: $0 fixture NAME | basics | cmdline | config | output | schema | topo | snapshot | realdata | man | install | nosubprocess | fakenvml | nvmlsettings | probedeadline | gdrdeadline | budget | hints" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
exit 0
