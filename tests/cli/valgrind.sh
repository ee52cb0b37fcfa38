#!/bin/sh
# No uninitialised byte goes on the wire: a multi-rank job and a bench net
# server with its clients, every process under valgrind's memcheck, which
# reports a write(2), send(2) or sendmsg(2) of bytes nobody wrote ("Syscall
# param ... points to uninitialised byte(s)") and every other memory error.
#
#   - 4 ranks of the socket backend's all_reduce with a job token (the
#     rendezvous, the token's challenge, the job's collectives, the
#     watchdog, the warm-up on buffers no data was written to yet);
#   - 3 ranks of alltoall (gather and scatter);
#   - a bench net server with a job token serving tcp_bw on 2 streams and
#     tcp_lat.
#
# Valgrind cannot run an ASan binary: GPUREADY_PLAIN_BIN is the same program
# built without sanitizers (tests/meson.build). Suppressions, only for
# system libraries: GPUREADY_VALGRIND_SUPP (tests/valgrind.supp). Skips
# (exit 77) where valgrind is not installed. Every process has a time
# limit, and every wait loop a bound.
set -u

. "$(dirname "$0")/lib.sh"

PLAIN=${GPUREADY_PLAIN_BIN:?}
SUPP=${GPUREADY_VALGRIND_SUPP:?}
LIMIT=40 # seconds for any one process under valgrind (about 7 s each when idle)

command -v valgrind >/dev/null ||
	{ echo "SKIP: valgrind is not installed (Debian: valgrind; scripts/deps.sh --test installs it)"; exit 77; }
grep -q __asan_init "$PLAIN" &&
	{ echo "SKIP: $PLAIN is built with ASan, which valgrind cannot run (this Meson cannot turn b_sanitize off per target)"; exit 77; }

# vg NAME ARGS...: gpuready ARGS under memcheck, its reports in $TMP/vg.NAME.PID.
vg() {
	name=$1; shift
	timeout -k 5 "$LIMIT" valgrind -q --error-exitcode=99 --track-origins=yes --trace-children=yes \
		--suppressions="$SUPP" --log-file="$TMP/vg.$name.%p" "$PLAIN" "$@"
}

# clean NAME WHAT: passes when memcheck reported nothing for NAME.
clean() {
	reports=$(cat "$TMP"/vg."$1".* 2>/dev/null)
	if [ -z "$reports" ]; then
		pass "$2: valgrind reports nothing"
	else
		fail "$2: valgrind reports:"; echo "$reports" | head -60 >&2
	fi
}

# ranks NAME N ARGS...: N ranks of `gpuready ARGS`, each under valgrind;
# process R writes $TMP/NAME.out.R and $TMP/NAME.err.R.
ranks() {
	name=$1 n=$2; shift 2
	run_ranks "$n" "$name." vg "$name" "$@"
}

export GPUREADY_JOB_TOKEN=valgrind-test-token

t_job() {
	ranks job4 4 bench all_reduce --backend socket -b 8 -e 64K -f 4 -n 2 &&
		grep -q "# Out of bounds values : 0 OK" "$TMP/job4.out.0" &&
		pass "4 ranks with a job token: all_reduce ran, #wrong 0" ||
		{ fail "4 ranks all_reduce (exit $?, 99: valgrind's)"; head -5 "$TMP/job4.err.0" >&2; }
	clean job4 "4 ranks all_reduce"
	ranks job3 3 bench alltoall --backend socket -b 8 -e 4K -f 8 -n 2 ||
		{ fail "3 ranks alltoall (exit $?, 99: valgrind's)"; head -5 "$TMP/job3.err.0" >&2; }
	clean job3 "3 ranks alltoall"
}

t_net() {
	port=$(free_port)
	vg server bench net --server --bind 127.0.0.1 -p "$port" --clients 2 2>"$TMP/srv.err" &
	server=$!
	i=0
	while ! grep -q "serving on" "$TMP/srv.err" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	vg client bench net "127.0.0.1:$port" --test tcp_bw -q 2 -s 64K -n 50 >"$TMP/c1.out" 2>&1 &&
		pass "bench net tcp_bw -q 2 with a job token" ||
		{ fail "bench net tcp_bw (exit $?, 99: valgrind's)"; head -5 "$TMP/c1.out" >&2; }
	vg client bench net "127.0.0.1:$port" --test tcp_lat -s 64 -n 50 >"$TMP/c2.out" 2>&1 &&
		pass "bench net tcp_lat with a job token" ||
		{ fail "bench net tcp_lat (exit $?, 99: valgrind's)"; head -5 "$TMP/c2.out" >&2; }
	wait "$server" && pass "the server served both and exited 0" ||
		{ fail "bench net server (exit $?, 99: valgrind's)"; head -5 "$TMP/srv.err" >&2; }
	clean server "bench net server"
	clean client "bench net clients"
}

t_job
t_net
[ "$FAILS" -eq 0 ]
