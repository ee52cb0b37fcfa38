#!/bin/sh
# What `gpuready snapshot` promises about the tree it writes:
#
#   snapshot.sh modes       file modes are kept (a 0600 file stays 0600 whatever the umask;
#                           the live kernel log is saved 0600)
#   snapshot.sh incomplete  a tree with .gpuready/incomplete is refused by the check commands
#                           and topo (exit 2) unless --force; snapshot marks its own tree so
#                           while it writes
#   snapshot.sh diskfull    a snapshot that runs out of space (a small tmpfs) stays marked
#                           incomplete, and the checks refuse it
#
# Environment as tests/cli/run.sh (tests/meson.build). Exit 0 pass, 1 fail, 77 skip.
set -u

. "$(dirname "$0")/lib.sh"

t_modes() {
	src=$TMP/src
	cp -a "$FIX/h100-8x-cx7-roce/root" "$src"
	printf 'NCCL_DEBUG=WARN\n' >"$src/etc/nccl.conf"
	chmod 0600 "$src/etc/nccl.conf" "$src/.gpuready/kmsg"
	chmod 0640 "$src/etc/profile.d/nccl-rdma.sh"
	chmod 0400 "$src/proc/cmdline"
	chmod 0755 "$src/usr/local/bin/rdma-cm-tos.sh"
	for mask in 022 077 000; do
		out=$TMP/snap-$mask
		(umask $mask && "$BIN" snapshot --sysroot "$src" "$out") >"$TMP/out" 2>"$TMP/err" \
			|| { fail "snapshot under umask $mask"; cat "$TMP/err" >&2; continue; }
		for f in etc/nccl.conf .gpuready/kmsg etc/profile.d/nccl-rdma.sh proc/cmdline \
			usr/local/bin/rdma-cm-tos.sh etc/security/limits.conf; do
			want=$(stat -c %a "$src/$f") got=$(stat -c %a "$out/$f" 2>/dev/null)
			[ "$want" = "$got" ] && pass "umask $mask: $f keeps mode $want" ||
				fail "umask $mask: $f has mode ${got:-(missing)}, its source $want"
		done
	done
	# the live kernel log
	expect_exit 0 "$BIN" snapshot "$TMP/live" || return
	if [ -f "$TMP/live/.gpuready/kmsg" ]; then
		m=$(stat -c %a "$TMP/live/.gpuready/kmsg")
		[ "$m" = 600 ] && pass "the live kernel log is saved 0600" || fail "the live kernel log is saved $m"
	else
		pass "no live kernel log here (reading /dev/kmsg needs root or CAP_SYSLOG): nothing to check"
	fi
}

t_incomplete() {
	src=$TMP/src
	cp -a "$FIX/h100-roce-broken/root" "$src"
	for cmd in check rdma gpu gpudirect topo; do
		"$BIN" $cmd --sysroot "$src" --json >"$TMP/$cmd.want" 2>/dev/null
		echo "exit $?" >>"$TMP/$cmd.want"
	done
	printf 'gpuready snapshot did not finish\n' >"$src/.gpuready/incomplete"
	for cmd in check rdma gpu gpudirect topo; do
		expect_exit 2 "$BIN" $cmd --sysroot "$src" && contains "$TMP/err" "incomplete" "$cmd refuses an incomplete tree"
		[ -s "$TMP/out" ] && fail "$cmd printed a report for an incomplete tree"
		"$BIN" $cmd --sysroot "$src" --json --force >"$TMP/$cmd.got" 2>"$TMP/err"
		echo "exit $?" >>"$TMP/$cmd.got"
		if cmp -s "$TMP/$cmd.want" "$TMP/$cmd.got"; then pass "$cmd --force reads it as before"; else
			fail "$cmd --force differs from the unmarked tree"; diff -u "$TMP/$cmd.want" "$TMP/$cmd.got" | head >&2; fi
		contains "$TMP/err" "incomplete" "$cmd --force says what it reads"
	done
	expect_exit 2 "$BIN" snapshot --sysroot "$src" "$TMP/s1" && contains "$TMP/err" "incomplete" \
		"snapshot refuses an incomplete source"
	expect_exit 0 "$BIN" snapshot --force --sysroot "$src" "$TMP/s2" &&
		[ -f "$TMP/s2/.gpuready/incomplete" ] && pass "a forced snapshot of an incomplete tree stays marked" ||
		fail "a forced snapshot of an incomplete tree is not marked"
	# a snapshot that finished carries no marker; a tree without one is read as before
	expect_exit 0 "$BIN" snapshot --sysroot "$FIX/h100-roce-broken/root" "$TMP/s3" &&
		[ ! -e "$TMP/s3/.gpuready/incomplete" ] && pass "a finished snapshot has no marker" ||
		fail "a finished snapshot is marked incomplete"
	expect_exit 1 "$BIN" check --sysroot "$TMP/s3" && pass "a finished snapshot is checked"
	# only the marker file counts, not a directory of that name elsewhere
	mkdir -p "$TMP/s3/etc/.gpuready/incomplete"
	expect_exit 1 "$BIN" check --sysroot "$TMP/s3" && pass "only /.gpuready/incomplete marks a tree"
}

# The marker must be written before the first recorded file and removed
# only after the last: a small tmpfs makes the snapshot fail part-way.
t_diskfull() {
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: mounting a tmpfs needs root"; exit 77; }
	command -v unshare >/dev/null || { echo "SKIP: unshare(1) missing: no private mount namespace"; exit 77; }
	mnt=$TMP/mnt
	mkdir -p "$mnt" "$TMP/partial"
	unshare -m --propagation private true 2>"$TMP/err" ||
		{ echo "SKIP: no mount namespace here: $(cat "$TMP/err")"; exit 77; }
	# in a private mount namespace: the tmpfs is gone when it exits
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o size=96k,nr_inodes=4096 gpuready-test "$1" || exit 77
		"$2" snapshot --sysroot "$3" "$1/snap" >"$4/snap.out" 2>"$4/snap.err"
		echo $? >"$4/snap.rc"
		cp -a "$1/snap/." "$4/partial/"' sh "$mnt" "$BIN" "$FIX/h100-8x-cx7-roce/root" "$TMP"
	rc=$?
	[ "$rc" -eq 77 ] && { echo "SKIP: cannot mount a tmpfs here"; exit 77; }
	[ "$(cat "$TMP/snap.rc" 2>/dev/null)" = 2 ] && pass "snapshot on a full disk exits 2" ||
		{ fail "snapshot on a full disk exited $(cat "$TMP/snap.rc" 2>/dev/null)"; cat "$TMP/snap.err" >&2; }
	contains "$TMP/snap.err" "No space left on device" "the error is named"
	contains "$TMP/snap.err" "incomplete" "the error says the tree is incomplete"
	[ -f "$TMP/partial/.gpuready/incomplete" ] && pass "the partial tree is marked incomplete" ||
		fail "the partial tree is not marked incomplete"
	expect_exit 2 "$BIN" check --sysroot "$TMP/partial" && contains "$TMP/err" "incomplete" \
		"check refuses the partial tree"
}

case "${1:-}" in
modes|incomplete|diskfull) "t_$1" ;;
*) echo "usage: $0 modes | incomplete | diskfull" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
exit 0
