#!/bin/sh
# CLI tests of `gpuready bench net`: a real server and client on loopback,
# in network namespaces joined by a shaped veth pair, and a server fed
# garbage.
#
#   net.sh tcp       server + client: tcp_bw -a and tcp_lat tables, JSON,
#                    -q streams, -b, -D, --expect-gbps
#   net.sh loopback  --loopback (one process)
#   net.sh robust    a silent client, garbage, another protocol version, an
#                    oversized frame, a client that vanishes mid-run: the
#                    server drops each, serves the next, and leaks nothing
#   net.sh gate      200 idle connections (the gate's cap plus more) do not
#                    keep a client out; the job token: the same on both
#                    ends works, a different or a missing one is refused
#   net.sh rdma      RDMA tests on a machine without RDMA: the missing piece
#                    named, on the client and (refused) on the server
#   net.sh netns     two namespaces, a veth pair, htb at 200 Mbit/s: the
#                    shaped rate within 10%; latency beside sockperf's
#   net.sh usage     option errors, perftest's flags it refuses (-R, -c UD,
#                    ...) with the reason
#   net.sh perftest  a parser written from perftest's published format
#                    (perftest_format.py) reads the tables of tcp_bw, tcp_lat
#                    and the six RDMA tests (test double) and finds the JSON's
#                    numbers; perftest's flags with their meaning (-T ToS,
#                    --qp=, --report_gbits, --perform_warm_up, -c RC, -F);
#                    --timeout
#   net.sh fakerdma  every RDMA test through the command, in one process
#                    (--loopback) against the libibverbs test double
#                    (tests/fakes/fake_ibverbs.c): the verbs path's logic,
#                    not hardware
set -u

. "$(dirname "$0")/lib.sh"

# server PORT ARGS...: a server in the background ($SERVER), stderr in $TMP/srv.err
server() {
	port=$1; shift
	"$BIN" bench net --server --bind 127.0.0.1 -p "$port" "$@" 2>"$TMP/srv.err" &
	SERVER=$!
	i=0
	while ! grep -q "serving on" "$TMP/srv.err" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

# rows FILE: data rows of the table (lines that start with a number)
rows() { grep -cE '^ [0-9]+ ' "$1"; }

t_tcp() {
	port=$(free_port)
	server "$port" --clients 5
	expect_exit 0 "$BIN" bench net "127.0.0.1:$port" --test tcp_bw -a -n 200 --json "$TMP/bw.json" && {
		grep -qx " #bytes     #iterations    BW peak\[MiB/sec\]    BW average\[MiB/sec\]   MsgRate\[Mpps\]" "$TMP/out" \
			&& pass "perftest's bandwidth header, nothing after MsgRate" || fail "bandwidth header"
		contains "$TMP/out" "Link share      : unknown" "the link share on its own line, after the table"
		[ "$(rows "$TMP/out")" -eq 23 ] && pass "-a: 23 sizes, 2 B to 8 MiB" || fail "-a rows: $(rows "$TMP/out")"
		grep -qE '^ 8388608 +200 ' "$TMP/out" && pass "last row is 8 MiB x 200" || fail "8 MiB row"
		contains "$TMP/out" "Link            : lo, rate unknown" "loopback has no rate: said, not guessed"
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["result"]=="pass" and len(d["rows"])==23 and d["rows"][-1]["bytes"]==8388608 and d["rows"][0]["errors"]==0, d["result"]' \
			"$TMP/bw.json" && pass "--json rows" || fail "--json"
		schema_ok bench-net.schema.json "tcp_bw -a" "$TMP/bw.json"
	}
	expect_exit 0 "$BIN" bench net "127.0.0.1:$port" --test tcp_lat -n 300 --json "$TMP/lat.json" && {
		schema_ok bench-net.schema.json "tcp_lat" "$TMP/lat.json"
		contains "$TMP/out" "t_typical[usec]" "perftest's latency header"
		grep -qE '^ 2 +300 ' "$TMP/out" && pass "tcp_lat: 2 B x 300" || fail "tcp_lat row"
		contains "$TMP/out" "measured 21.9 usec over" "latency is put beside what is usual"
	}
	expect_exit 0 "$BIN" bench net "127.0.0.1:$port" --test tcp_bw -q 4 -b -s 32K -n 400 --report-gbits && {
		contains "$TMP/out" "BW average[Gb/sec]" "--report-gbits"
		contains "$TMP/out" "Streams         : 4" "-q 4 streams"
		grep -qE '^ 32768 +1600 ' "$TMP/out" && pass "-b -q 4 -n 400: 1600 iterations (x QPs, as perftest prints)" || { fail "-b row"; cat "$TMP/out" >&2; }
	}
	expect_exit 0 "$BIN" bench net "127.0.0.1:$port" --test tcp_bw -D 1 -s 64K && contains "$TMP/out" "Duration        : 1 s per size" "-D"
	expect_exit 1 "$BIN" bench net "127.0.0.1:$port" --test tcp_bw -n 100 --expect-gbps 100000 && \
		contains "$TMP/out" "Verdict         : FAILED:" "--expect-gbps below: exit 1 with both numbers"
	wait "$SERVER"; rc=$?
	[ "$rc" -eq 0 ] && pass "the server served 5 clients and exited 0" || fail "server exit $rc"
	contains "$TMP/srv.err" "tcp_lat, 1 size served" "the server logs each client"
}

t_loopback() {
	expect_exit 0 "$BIN" bench net --loopback --test tcp_bw -s 1M -n 64 && \
		grep -qE '^ 1048576 +64 ' "$TMP/out" && pass "--loopback tcp_bw" || fail "--loopback tcp_bw"
	expect_exit 0 "$BIN" bench net --loopback --test tcp_lat -s 4096 -n 100 && \
		grep -qE '^ 4096 +100 ' "$TMP/out" && pass "--loopback tcp_lat" || fail "--loopback tcp_lat"
}

t_robust() {
	port=$(free_port)
	server "$port" --clients 5 --timeout 2
	python3 - "$port" <<'EOF' >"$TMP/py.out" 2>&1 || fail "the misbehaving clients"
import socket, struct, sys, time
port = int(sys.argv[1])
def frame(t, payload, magic=0x54454e47):
    return struct.pack('<III', magic, t, len(payload)) + payload
def conn():
    return socket.create_connection(("127.0.0.1", port))
def drain(s):
    out = b""
    while True:
        b = s.recv(4096)
        if not b:
            return out
        out += b
s = conn(); time.sleep(3); s.close()                                   # silent past --timeout 2
s = conn(); s.sendall(b"\xff" * 100); s.recv(4096); s.close()          # garbage
s = conn(); s.sendall(frame(1, struct.pack("<I", 7) + b"\0" * 112))    # protocol 7
print("v7:", drain(s)); s.close()
s = conn(); s.sendall(struct.pack("<III", 0x54454e47, 1, 0x7fffffff)); s.recv(4096); s.close()  # oversized
s = conn(); s.sendall(frame(1, b"\x01\x00\x00\x00" + b"\0" * 40)); s.close()                    # truncated, gone
def hello(test, size, iters, qps):
    return frame(1, struct.pack("<IIQBBBBQdIIiI", 2, test, size, 0, 0, 0, 0, iters, 0.0, qps, 0, -1, 0)
                 + b"hostile".ljust(64, b"\0") + struct.pack("<I", 0) + b"\0" * 32)
s = conn(); s.sendall(hello(6, 1 << 30, 10, 64)); print("greedy:", drain(s)); s.close()         # 128 GiB of buffers
s = conn(); s.sendall(hello(6, 64, 100, 1)); time.sleep(0.5)                                      # then a step it never announced
s.sendall(frame(4, struct.pack("<QQd", 64, 1 << 62, 0.0))); drain(s); s.close()
EOF
	contains "$TMP/py.out" "protocol version 7, this server 2" "another version is refused with the reason"
	expect_exit 0 "$BIN" bench net "127.0.0.1:$port" --test tcp_bw -n 100 && pass "after all that, a real client is served"
	wait "$SERVER"; rc=$?
	[ "$rc" -eq 0 ] && pass "the server exits cleanly (no leak reported)" || { fail "server exit $rc"; cat "$TMP/srv.err" >&2; }
	contains "$TMP/srv.err" "the peer said nothing by the deadline" "the silent client is dropped at the deadline"
	contains "$TMP/srv.err" "does not speak gpuready's protocol" "garbage is dropped"
	contains "$TMP/srv.err" "oversized" "an oversized frame is dropped"
	contains "$TMP/py.out" "it allows 2048 MiB" "a client asking for too much memory is refused with the numbers"
	contains "$TMP/srv.err" "a step it did not announce" "a step the handshake did not announce is refused"
	# a client that vanishes in the middle of a run
	port=$(free_port)
	server "$port" --clients 2 --timeout 5
	"$BIN" bench net "127.0.0.1:$port" --test tcp_bw -s 64K -n 10000000 >/dev/null 2>&1 &
	victim=$!
	sleep 2
	kill -9 "$victim"
	expect_exit 0 "$BIN" bench net "127.0.0.1:$port" --test tcp_lat -n 50 && pass "a client killed mid-run does not stop the server"
	wait "$SERVER"
	grep "client 127.0.0.1 (" "$TMP/srv.err" | grep -qv "size.* served" && pass "the lost client is reported" \
		|| { fail "lost client not reported"; cat "$TMP/srv.err" >&2; }
}

t_gate() {
	port=$(free_port)
	server "$port" --clients 1
	python3 - "$port" <<'EOF' >"$TMP/idle.out" 2>&1 &
import socket, sys, time
idle = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(200)]
print("open", len(idle), flush=True)
time.sleep(30)
EOF
	idle=$!
	i=0
	while ! grep -q "open 200" "$TMP/idle.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	expect_exit 0 "$BIN" bench net "127.0.0.1:$port" --test tcp_bw -n 100 && pass "200 idle connections: a client is still served"
	wait "$SERVER"; rc=$?
	kill "$idle" 2>/dev/null; wait "$idle" 2>/dev/null
	[ "$rc" -eq 0 ] && pass "the server served it and exited 0" || { fail "server exit $rc"; cat "$TMP/srv.err" >&2; }
	contains "$TMP/srv.err" "connections were waiting and it was the oldest" "the oldest idle connections make room"

	port=$(free_port)
	export GPUREADY_JOB_TOKEN=s3cret
	server "$port" --clients 3
	unset GPUREADY_JOB_TOKEN
	expect_exit 0 env GPUREADY_JOB_TOKEN=s3cret "$BIN" bench net "127.0.0.1:$port" --test tcp_lat -n 50 && pass "the same token: served"
	expect_exit 2 env GPUREADY_JOB_TOKEN=other "$BIN" bench net "127.0.0.1:$port" --test tcp_lat -n 50 && \
		contains "$TMP/err" "the server could not prove the job token" "a different token: refused, named"
	expect_exit 2 "$BIN" bench net "127.0.0.1:$port" --test tcp_lat -n 50 && \
		contains "$TMP/err" "the server requires a job token" "no token: refused, named"
	wait "$SERVER"
	contains "$TMP/srv.err" "requires a job token" "the server says why too"
}

t_rdma() {
	[ -d /sys/class/infiniband ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] && { echo "this machine has RDMA devices"; exit 77; }
	expect_exit 2 "$BIN" bench net --loopback --test write_bw --json "$TMP/nordma.json" && \
		if grep -q "libibverbs\|no RDMA device\|/sys/class/infiniband\|ib_uverbs" "$TMP/err"; then pass "write_bw without RDMA: the missing piece named"; else fail "write_bw: $(cat "$TMP/err")"; fi
	# a run that stopped before its connection was set up: still a valid document, the unknowns null
	schema_ok bench-net.schema.json "a run refused before it started" "$TMP/nordma.json"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["result"]=="error" and d["mtu"] is None, d' \
		"$TMP/nordma.json" && pass "refused before starting: result error, mtu null" || fail "refused run's JSON"
	port=$(free_port)
	server "$port" --clients 1
	expect_exit 2 "$BIN" bench net "127.0.0.1:$port" --test send_lat && \
		contains "$TMP/err" "the server refused: the server cannot run send_lat" "the server refuses RDMA it cannot run, and the client says so"
	wait "$SERVER"
	contains "$TMP/srv.err" "cannot run send_lat" "the server logs the refusal too"
}

t_netns() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
	command -v ip >/dev/null && command -v tc >/dev/null || { echo "needs iproute2"; exit 77; }
	a=gpr-a-$$ b=gpr-b-$$ va=gva$$ vb=gvb$$
	ip netns add "$a" 2>/dev/null || { echo "cannot create network namespaces here"; exit 77; }
	trap 'ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
	ip netns add "$b"
	ip link add "$va" netns "$a" type veth peer name "$vb" netns "$b" || { echo "no veth"; exit 77; }
	ip -n "$a" addr add 10.250.7.1/24 dev "$va"
	ip -n "$b" addr add 10.250.7.2/24 dev "$vb"
	ip -n "$a" link set "$va" up
	ip -n "$b" link set "$vb" up
	ip -n "$a" link set lo up
	ip -n "$b" link set lo up
	# shape the client's side: htb at 200 Mbit/s (no netem on this kernel)
	ip netns exec "$a" tc qdisc add dev "$va" root handle 1: htb default 10 2>/dev/null
	ip netns exec "$a" tc class add dev "$va" parent 1: classid 1:10 htb rate 200mbit 2>/dev/null
	ip netns exec "$b" "$BIN" bench net --server --clients 2 --bind 10.250.7.2 2>"$TMP/srv.err" &
	srv=$!
	sleep 0.5
	ip netns exec "$a" "$BIN" bench net 10.250.7.2 --test tcp_bw -s 128K -D 3 --json "$TMP/ns.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	gbps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"][0]["bw_avg_gbps"])' "$TMP/ns.json" 2>/dev/null)
	python3 -c 'import sys; g=float(sys.argv[1]); sys.exit(0 if abs(g - 0.2) <= 0.02 else 1)' "${gbps:-0}" \
		&& pass "shaped veth: measured $gbps Gb/s against htb's 0.2 (within 10%)" \
		|| { fail "shaped veth: measured ${gbps:-nothing} Gb/s (exit $rc)"; cat "$TMP/out" "$TMP/err" >&2; }
	contains "$TMP/out" "Link            : $va, 10 Gb/s" "the veth's rate is read from its netdev"
	ip netns exec "$a" "$BIN" bench net 10.250.7.2 --test tcp_lat -s 14 -n 20000 --json "$TMP/lat.json" >"$TMP/out" 2>"$TMP/err" \
		|| fail "tcp_lat over the veth"
	wait "$srv"
	# the fastest round trips: this kind of machine's medians move between
	# two modes (whether a vCPU had to wake up) from one run to the next, for
	# every tool alike; bench/net-vs-iperf3-sockperf.sh compares medians over
	# many runs
	ours=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"][0]["t_min_us"])' "$TMP/lat.json" 2>/dev/null)
	if command -v sockperf >/dev/null; then
		ip netns exec "$b" sockperf server --tcp -i 10.250.7.2 -p 11111 >/dev/null 2>&1 &
		sp=$!
		sleep 0.5
		theirs=$(ip netns exec "$a" sockperf ping-pong --tcp -i 10.250.7.2 -p 11111 -m 14 -t 2 2>&1 |
			awk '/<MIN> observation =/ { print $NF }' | head -1)
		kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
		python3 -c 'import sys; o, t = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if 0.5 <= o / t <= 2.0 else 1)' "${ours:-0}" "${theirs:-0}" 2>/dev/null \
			&& pass "veth latency: fastest round trip ${ours} us beside sockperf's ${theirs} us (same range: 0.5x to 2x)" \
			|| fail "veth latency: fastest ${ours:-?} us against sockperf's ${theirs:-?} us"
	else
		echo "sockperf not installed: latency not compared"
	fi
}

t_usage() {
	expect_exit 2 "$BIN" bench net && contains "$TMP/err" "give --server, --loopback, or the server's HOST" "nothing to do"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test ib_write_bw && contains "$TMP/err" "--test ib_write_bw" "unknown test"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test write_lat -q 2 && contains "$TMP/err" "one QP" "latency with -q 2"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test write_bw --mem gpu && contains "$TMP/err" "--mem gpu" "bad --mem"
	expect_exit 2 "$BIN" bench net 127.0.0.1 -a -s 64 && contains "$TMP/err" "-a and -s" "-a with -s"
	port=$(free_port)
	expect_exit 2 "$BIN" bench net "127.0.0.1:$port" --connect-timeout 1 && contains "$TMP/err" "is \`gpuready bench net --server\` running there?" "no server: said so"
	# perftest's flags that cannot be honoured: refused, with the reason
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test write_bw -R && contains "$TMP/err" "-R (--rdma_cm): gpuready does not set up connections through rdma_cm" "-R refused, why said"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test write_bw -c UD && contains "$TMP/err" "--connection: 'UD' is not RC" "-c UD refused"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test write_bw --connection=XRC && contains "$TMP/err" "UC, UD, XRC, DC" "--connection=XRC refused, what is implemented said"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test send_bw --perform_warm_up && contains "$TMP/err" "write_bw and read_bw only" "--perform_warm_up on send_bw refused"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test tcp_bw --perform_warm_up && contains "$TMP/err" "not tcp_bw" "--perform_warm_up on TCP refused"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test write_bw -T 40 --tclass 41 && contains "$TMP/err" "give one" "-T and --tclass disagreeing"
	expect_exit 2 "$BIN" bench net 127.0.0.1 -T 256 && contains "$TMP/err" "out of range 0..255" "-T above a byte"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test write_bw --use_cuda_dmabuf && contains "$TMP/err" "give --use_cuda=GPU" "--use_cuda_dmabuf without GPU memory"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --test write_bw --use_cuda=1 --mem cuda:0 && contains "$TMP/err" "name different GPUs" "--use_cuda and --mem disagreeing"
	expect_exit 2 "$BIN" bench net 127.0.0.1 -T && contains "$TMP/err" "option '--tos' needs a value (TOS)" "-T takes a ToS value"
	expect_exit 2 "$BIN" bench net 127.0.0.1 --timeout x && contains "$TMP/err" "--timeout: 'x' is not a number" "--timeout is bench net's deadline"
	expect_exit 0 "$BIN" bench net --help && contains "$TMP/out" "-T, --tos TOS" "--help: -T is the ToS" && \
		contains "$TMP/out" "-q, --qps, --qp N" "--help: perftest's --qp beside --qps"
	grep -q -- "-T, --timeout" "$TMP/out" && fail "--help still offers -T as a timeout" || pass "--help: no -T timeout"
}

# perftest_format.py OUT JSON [--gbits]: every row parses and matches
parses() {
	what=$1; shift
	python3 "$(dirname "$0")/perftest_format.py" "$@" >"$TMP/pf.out" 2>&1 && pass "$what: $(cat "$TMP/pf.out")" \
		|| { fail "$what: perftest's format"; cat "$TMP/pf.out" "$1" >&2; }
}

t_perftest() {
	expect_exit 0 "$BIN" bench net --loopback --test tcp_bw -a -n 50 --json "$TMP/a.json" && parses "tcp_bw -a" "$TMP/out" "$TMP/a.json"
	expect_exit 0 "$BIN" bench net --loopback --test tcp_bw -s 64K -n 200 --qp=2 -b --report_gbits --json "$TMP/g.json" && {
		parses "tcp_bw --qp=2 -b --report_gbits" "$TMP/out" "$TMP/g.json" --gbits
		grep -qE '^ 65536 +400 ' "$TMP/out" && pass "--qp=2: perftest's iterations x QPs" || fail "--qp=2 row"
	}
	expect_exit 0 "$BIN" bench net --loopback --test tcp_lat -s 64 -n 200 --json "$TMP/l.json" && parses "tcp_lat" "$TMP/out" "$TMP/l.json"
	# -D: perftest's short latency table (RESULT_FMT_LAT_DUR), the distribution after it
	expect_exit 0 "$BIN" bench net --loopback --test tcp_lat -s 64 -D 1 --json "$TMP/ld.json" && {
		parses "tcp_lat -D" "$TMP/out" "$TMP/ld.json" --duration
		contains "$TMP/out" " Distribution    : 64 B: t_min " "-D: the distribution after the table"
		schema_ok bench-net.schema.json "tcp_lat -D" "$TMP/ld.json"
	}
	# -T is perftest's ToS: set on the data connections, said, recorded
	expect_exit 0 "$BIN" bench net --loopback --test tcp_bw -s 4K -n 100 -T 0x68 -F -c RC --timeout 30 --json "$TMP/t.json" && {
		contains "$TMP/out" "Traffic class   : 104 (0x68; IP_TOS on each data connection)" "-T 0x68: the ToS of the TCP data connections"
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["traffic_class"]==104, d' "$TMP/t.json" \
			&& pass "-T in the JSON (traffic_class)" || fail "-T in the JSON"
		schema_ok bench-net.schema.json "a run with -T" "$TMP/t.json"
	}
	# the six RDMA tests through the test double
	fake=${FAKE_IBVERBS:?}
	mkdir -p "$TMP/lib"
	ln -s "$fake" "$TMP/lib/libibverbs.so.1"
	export LD_LIBRARY_PATH="$TMP/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	for t in write_bw read_bw send_bw write_lat read_lat send_lat; do
		case $t in *_bw) size=-a n=20 ;; *) size="-s 8" n=100 ;; esac
		# shellcheck disable=SC2086
		expect_exit 0 "$BIN" bench net --loopback --test "$t" $size -n $n --json "$TMP/r.json" && parses "$t" "$TMP/out" "$TMP/r.json"
	done
	expect_exit 0 "$BIN" bench net --loopback --test read_lat -s 8 -D 1 --json "$TMP/rd.json" && {
		parses "read_lat -D" "$TMP/out" "$TMP/rd.json" --duration
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"][0]; assert abs(r["tps_average"]*r["t_avg_us"]-1e6)<1e6*1e-6, r' \
			"$TMP/rd.json" && pass "read_lat -D: tps is round trips per second, t_avg a whole round trip" || fail "read_lat tps"
	}
	expect_exit 0 "$BIN" bench net --loopback --test write_bw -s 64K -n 100 --qp=2 --report_gbits -x 0 -T 0x68 \
		--perform_warm_up -c RC -F --json "$TMP/w.json" && {
		parses "write_bw with perftest's flags" "$TMP/out" "$TMP/w.json" --gbits
		contains "$TMP/out" "Traffic class   : 104 (0x68; the GRH's traffic class)" "-T: the GRH's traffic class"
		contains "$TMP/out" "Warm-up         : 128 requests per QP" "--perform_warm_up"
		grep -qE '^ 65536 +200 ' "$TMP/out" && pass "--qp=2 -n 100: 200 iterations" || fail "write_bw --qp=2 row"
	}
	expect_exit 0 "$BIN" bench net --loopback --test read_bw -s 4K -n 50 -b --perform_warm_up && \
		pass "read_bw -b --perform_warm_up: both ends warm up, the data still checks"
	expect_exit 2 "$BIN" bench net --loopback --test write_bw -s 4K -n 50 -T 0x68 && \
		contains "$TMP/err" "it travels in the GRH, which this InfiniBand connection does not use" "-T on InfiniBand without a GRH: refused, not dropped"
}

t_fakerdma() {
	fake=${FAKE_IBVERBS:?}
	# the double answers to libibverbs.so.1's name only where we say so
	mkdir -p "$TMP/lib"
	ln -s "$fake" "$TMP/lib/libibverbs.so.1"
	export LD_LIBRARY_PATH="$TMP/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	for t in write_bw read_bw send_bw write_lat read_lat send_lat; do
		"$BIN" bench net --loopback --test "$t" -s 4096 -n 200 --json "$TMP/r.$t.json" >"$TMP/out" 2>"$TMP/err"
		rc=$?
		[ "$rc" -eq 0 ] && grep -qE '^ 4096 +200 ' "$TMP/out" && pass "$t through the command (test double)" \
			|| { fail "$t (exit $rc)"; cat "$TMP/err" "$TMP/out" >&2; }
	done
	contains "$TMP/out" "Transport type  : IB" "perftest's info block"
	schema_ok bench-net.schema.json "the six RDMA tests" "$TMP"/r.*.json
	"$BIN" bench net --loopback --test write_bw -a -q 2 -b -n 32 >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 0 ] && [ "$(rows "$TMP/out")" -eq 23 ] && pass "write_bw -a -q 2 -b: 23 sizes" || { fail "write_bw -a"; cat "$TMP/err" >&2; }
	# a request fails mid-run (retries exhausted): both ends stop at once and say why
	for t in send_bw send_lat write_lat; do
		t0=$(date +%s)
		FAKE_IBVERBS_FAIL=300 "$BIN" bench net --loopback --test "$t" -s 64 -D 20 --json "$TMP/f.$t.json" >"$TMP/out" 2>"$TMP/err"
		rc=$?
		t1=$(date +%s)
		[ "$rc" -ne 0 ] && [ $((t1 - t0)) -lt 10 ] && grep -q "IBV_WC_RETRY_EXC_ERR\|the peer failed" "$TMP/err" \
			&& pass "$t: a request failing mid-run ends the -D 20 run in $((t1 - t0)) s, named (exit $rc)" \
			|| { fail "$t failing mid-run: exit $rc after $((t1 - t0)) s"; cat "$TMP/err" >&2; }
	done
	schema_ok bench-net.schema.json "runs that failed" "$TMP"/f.*.json
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["result"]=="error" and "IBV_WC_RETRY_EXC_ERR" in d["error"], d' \
		"$TMP/f.send_bw.json" && pass "a failed run's JSON says error and why" || fail "failed run's JSON"
}

case "${1:-}" in
tcp|loopback|robust|gate|rdma|netns|usage|fakerdma|perftest) "t_$1" ;;
*) echo "usage: $0 tcp | loopback | robust | gate | rdma | netns | usage | fakerdma | perftest" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
exit 0
