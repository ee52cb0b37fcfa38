#!/bin/sh
# The Prometheus files gpuready writes, as node_exporter's textfile
# collector reads them.
#
#   prom.sh scrape   check, gpu, rdma and gpudirect each write a --prom file
#                    into one textfile directory; promtool finds every file
#                    clean, and Debian's prometheus-node-exporter, listening
#                    on loopback with only the textfile collector, serves
#                    all of them without a scrape error: every command's
#                    counts, one gpuready_finding per finding (exit 77
#                    when node_exporter or promtool is not installed)
#
# Environment (tests/meson.build): GPUREADY_BIN, GPUREADY_SOURCE_DIR,
# GPUREADY_FIXTURES. Exit 0 pass, 1 fail, 77 skip.
set -u

. "$(dirname "$0")/lib.sh"

ROOT=$FIX/h100-roce-broken/root

t_scrape() {
	ne=$(command -v prometheus-node-exporter || command -v node_exporter) ||
		{ echo "SKIP: prometheus-node-exporter is not installed (make test installs it)"; exit 77; }
	command -v promtool >/dev/null || { echo "SKIP: promtool (Debian package prometheus) is not installed"; exit 77; }
	dir=$TMP/textfile
	mkdir "$dir"
	for cmd in check gpu rdma gpudirect; do
		"$BIN" "$cmd" --sysroot "$ROOT" --prom "$dir/gpuready-$cmd.prom" --json >"$TMP/$cmd.json" 2>"$TMP/err"
		[ $? -le 1 ] || { fail "$cmd --prom exited $?"; cat "$TMP/err" >&2; }
		if promtool check metrics <"$dir/gpuready-$cmd.prom" >"$TMP/lint" 2>&1; then
			pass "promtool check metrics: $cmd's file is clean"
		else
			fail "promtool check metrics on $cmd's file:"; head -10 "$TMP/lint" >&2
		fi
	done

	port=$(free_port)
	"$ne" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$dir" >"$TMP/ne.log" 2>&1 &
	ne_pid=$!
	# node_exporter answers within a second; at most 10 s, 50 tries
	scraped=0
	for _ in $(seq 50); do
		if python3 -c 'import sys, urllib.request
open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1], timeout=2).read())' \
			"http://127.0.0.1:$port/metrics" "$TMP/metrics" 2>/dev/null; then
			scraped=1; break
		fi
		sleep 0.2
	done
	kill "$ne_pid" 2>/dev/null; wait "$ne_pid" 2>/dev/null
	[ "$scraped" -eq 1 ] || { fail "node_exporter did not answer on 127.0.0.1:$port"; sed 's/^/  | /' "$TMP/ne.log" >&2; return; }

	if grep -q '^node_textfile_scrape_error 0$' "$TMP/metrics"; then
		pass "node_exporter reads the four files together without a scrape error"
	else
		fail "node_textfile_scrape_error is not 0"; grep -i 'textfile\|error' "$TMP/ne.log" | head -10 >&2
	fi
	python3 - "$TMP/metrics" "$TMP" <<'PYEOF' && pass "every command's counts and findings are served" || fail "the served series do not match the reports"
import json, re, sys
text = open(sys.argv[1]).read()
bad = 0
for cmd in ("check", "gpu", "rdma", "gpudirect"):
    rep = json.load(open(f"{sys.argv[2]}/{cmd}.json"))
    for st, n in rep["summary"].items():
        want = f'gpuready_checks{{host="{rep["host"]}",scope="{cmd}",status="{st}"}} {n}'
        if want not in text:
            print(f"missing: {want}"); bad += 1
    got = len(re.findall(rf'^gpuready_finding{{[^}}]*scope="{cmd}"', text, re.M))
    want = len({(c["id"], c["subject"], c["status"]) for c in rep["checks"]})
    if got != want:
        print(f"{cmd}: {got} gpuready_finding series served, {want} distinct findings"); bad += 1
sys.exit(1 if bad else 0)
PYEOF
	if promtool check metrics <"$TMP/metrics" >"$TMP/lint" 2>&1; then
		pass "promtool check metrics: the scrape is clean"
	else
		grep gpuready "$TMP/lint" >"$TMP/lint.g"
		if [ -s "$TMP/lint.g" ]; then fail "promtool on the scrape:"; head -10 "$TMP/lint.g" >&2
		else pass "promtool check metrics: nothing about gpuready in the scrape"; fi
	fi
}

case ${1:-} in
scrape) "t_$1" ;;
*) echo "usage: $0 scrape" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || exit 1
exit 0
