#!/bin/sh
# CLI tests of what gpuready writes: files (--prom, --json FILE, --plot,
# snapshot) and standard output.
#
#   files.sh symlink   a symbolic link planted at the temporary file's name
#                      (a group-writable directory, a root run) is never
#                      followed: the file it points at stays as it was
#   files.sh diskfull  every file writer on a full tmpfs: exit 2, "No space
#                      left on device", no temporary file left behind (needs
#                      mount(8) of a tmpfs: skipped, exit 77, where refused)
#   files.sh stdout    every command with stdout on /dev/full and closed:
#                      exit 2 and one line on stderr saying so
#
# Environment (tests/meson.build): GPUREADY_BIN, GPUREADY_SOURCE_DIR,
# GPUREADY_FIXTURES, GPUREADY_FAKES (the libcuda/libnccl test doubles, for
# `gpuready nccl`). Exit 0 pass, 1 fail, 77 skip.
set -u

. "$(dirname "$0")/lib.sh"

ROOT=$FIX/h100-roce-broken/root

# Before temporary names were random, --prom FILE wrote FILE.tmp.PID.TID
# (open(2) with O_CREAT but without O_EXCL, following a link there). exec
# keeps the shell's PID, which is also the main thread's TID, so the name
# can be planted in advance exactly as another user of the directory would.
t_symlink() {
	dir=$TMP/shared
	mkdir "$dir" && chmod 1777 "$dir"
	echo "precious" >"$TMP/victim"
	sh -c 'ln -s "$1" "$2.tmp.$$.$$" && exec "$3" rdma --sysroot "$4" --prom "$2" --no-color >/dev/null' \
		sh "$TMP/victim" "$dir/m.prom" "$BIN" "$ROOT"
	rc=$?
	[ "$rc" -eq 1 ] && pass "--prom with a planted link: the run's own exit status ($rc)" || fail "--prom exited $rc"
	[ "$(cat "$TMP/victim")" = precious ] && pass "the file a planted link points at is not written" \
		|| { fail "the planted link was followed: the victim file now starts with"; head -3 "$TMP/victim" >&2; }
	contains "$dir/m.prom" 'gpuready_checks{scope="rdma",host="gpu-h100-07",status="fail"} ' "--prom FILE is written beside the planted link"
	[ -L "$dir/m.prom" ] && fail "m.prom is a link" || pass "m.prom is a regular file"
	n=$(find "$dir" -name 'm.prom.tmp.*' ! -type l | wc -l)
	[ "$n" -eq 0 ] && pass "no temporary file left behind" || fail "$n temporary file(s) left in $dir"
}

# nospace WHAT DIR CMD...: CMD writes into DIR on the full tmpfs: exit 2,
# the errno text of the failed write, nothing new left in DIR.
nospace() {
	what=$1 dir=$2; shift 2
	ls -A "$dir" >"$TMP/before"
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 2 ] && pass "$what on a full disk: exit 2" || { fail "$what on a full disk exited $rc"; cat "$TMP/err" >&2; }
	contains "$TMP/err" "No space left on device" "$what on a full disk says so"
	ls -A "$dir" >"$TMP/after"
	if cmp -s "$TMP/before" "$TMP/after"; then pass "$what: nothing left behind"; else
		fail "$what left files behind:"; diff "$TMP/before" "$TMP/after" >&2; fi
}

t_diskfull() {
	mnt=$TMP/mnt
	mkdir "$mnt"
	mount -t tmpfs -o size=64k gpuready-test "$mnt" 2>"$TMP/mount.err" ||
		{ echo "SKIP: cannot mount a tmpfs: $(cat "$TMP/mount.err")"; exit 77; }
	trap 'umount "$mnt"; rm -rf "$TMP"' EXIT INT TERM
	mkdir "$mnt/snap"
	dd if=/dev/zero of="$mnt/fill" bs=4k count=64 >/dev/null 2>&1 # fails with ENOSPC: the disk is full
	nospace "--prom" "$mnt" "$BIN" rdma --sysroot "$ROOT" --prom "$mnt/m.prom"
	nospace "bench --json" "$mnt" "$BIN" bench --backend socket -b 8 -e 8 -n 1 --json "$mnt/b.json"
	nospace "bench --plot" "$mnt" "$BIN" bench --backend socket -b 8 -e 8 -n 1 --plot "$mnt/b.svg"
	nospace "bench net --json" "$mnt" "$BIN" bench net --loopback --test tcp_lat -s 8 -n 2 -p "$(free_port)" \
		--json "$mnt/n.json"
	# snapshot writes a tree, file by file (O_EXCL|O_NOFOLLOW, into a new
	# directory): what it recorded before the disk filled stays, and the
	# error names the file that did not fit
	"$BIN" snapshot --sysroot "$ROOT" "$mnt/snap/s" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 2 ] && contains "$TMP/err" ": No space left on device" "snapshot on a full disk: exit 2, says so" \
		|| { fail "snapshot on a full disk exited $rc"; cat "$TMP/err" >&2; }
}

# stdout_lost WHAT CMD...: CMD with stdout on /dev/full, then closed: exit 2
# and the one line that says standard output could not be written.
stdout_lost() {
	what=$1; shift
	for how in full closed; do
		if [ "$how" = full ]; then "$@" >/dev/full 2>"$TMP/err"; else "$@" >&- 2>"$TMP/err"; fi
		rc=$?
		n=$(grep -c "cannot write standard output" "$TMP/err")
		[ "$rc" -eq 2 ] && [ "$n" -eq 1 ] && pass "$what, stdout $how: exit 2, said once" \
			|| { fail "$what, stdout $how: exit $rc, $n error line(s)"; head -5 "$TMP/err" >&2; }
	done
	contains "$TMP/err" "Bad file descriptor" "$what, stdout closed: the error is named"
}

t_stdout() {
	for cmd in check rdma gpu gpudirect topo; do
		stdout_lost "$cmd" "$BIN" $cmd --sysroot "$ROOT"
	done
	stdout_lost "topo --json" "$BIN" topo --json --sysroot "$ROOT"
	stdout_lost "check --json" "$BIN" check --json --sysroot "$ROOT"
	stdout_lost "list-checks" "$BIN" list-checks
	stdout_lost "help" "$BIN" help
	stdout_lost "help rdma" "$BIN" help rdma
	stdout_lost "rdma --help" "$BIN" rdma --help
	stdout_lost "version" "$BIN" version
	stdout_lost "--version" "$BIN" --version
	stdout_lost "man" "$BIN" man
	stdout_lost "bench" "$BIN" bench --backend socket --rank 0 --nranks 1 -b 8 -e 1K -n 1
	stdout_lost "bench all_reduce --json FILE" "$BIN" bench all_reduce --backend socket -b 8 -e 8 -n 1 --json "$TMP/b.json"
	stdout_lost "bench net" "$BIN" bench net --loopback --test tcp_lat -s 8 -n 2 -p "$(free_port)"
	"$BIN" bench --backend socket -b 8 -e 8 -n 1 --json "$TMP/b.json" >&- 2>/dev/null
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/b.json" \
		&& pass "with stdout closed, --json FILE still holds only the JSON" || fail "--json FILE with stdout closed"
	if [ -n "${GPUREADY_FAKES:-}" ]; then
		stdout_lost "nccl" env LD_LIBRARY_PATH="$GPUREADY_FAKES" "$BIN" nccl -g 2 --bytes 4K
	fi
	# snapshot prints nothing on stdout (its summary goes to stderr): with
	# stdout on /dev/full nothing is lost and the snapshot stands
	"$BIN" snapshot --sysroot "$ROOT" "$TMP/snap" >/dev/full 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 0 ] && contains "$TMP/err" "recorded in" "snapshot writes nothing on stdout: /dev/full loses nothing" \
		|| fail "snapshot with stdout on /dev/full exited $rc"
}

case "${1:-}" in
symlink|diskfull|stdout) "t_$1" ;;
*) echo "usage: $0 symlink | diskfull | stdout" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
exit 0
