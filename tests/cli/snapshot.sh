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
#   snapshot.sh unreadable  read errors are recorded in .gpuready/unreadable with their errno
#                           and replayed when the snapshot is read: the verdicts are those of
#                           the source, not those of an empty file
#
# Environment as tests/cli/run.sh (tests/meson.build). Exit 0 pass, 1 fail, 77 skip.
set -u

. "$(dirname "$0")/lib.sh"

# check_json ROOT OUT [gpuready options]: the normalised `check --json` of ROOT.
check_json() {
	root=$1 out=$2; shift 2
	"$BIN" check --sysroot "$root" --json "$@" 2>"$TMP/check.err" | normalize_json >"$out"
}

# same_verdicts SOURCE SNAPSHOT WHAT: the check report on both trees is the same.
same_verdicts() {
	check_json "$1" "$TMP/v1.json"
	check_json "$2" "$TMP/v2.json"
	if [ -s "$TMP/v1.json" ] && diff -u "$TMP/v1.json" "$TMP/v2.json" >"$TMP/diff"; then
		pass "$3: the checks' verdicts on the snapshot are those on its source"
	else
		fail "$3: the report on the snapshot differs from the source's:"; head -40 "$TMP/diff" >&2
	fi
}

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

# A FIFO stands for a file the kernel refuses to read (root_read opens only
# regular files: EINVAL), and a 0600 file read as nobody gives EACCES.
t_unreadable() {
	src=$TMP/src
	cp -a "$FIX/h100-8x-cx7-roce/root" "$src"
	tos=sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos
	rm -f "$src/$tos" && mkfifo "$src/$tos"
	expect_exit 0 "$BIN" snapshot --sysroot "$src" "$TMP/snap" || return
	contains "$TMP/snap/.gpuready/unreadable" "EINVAL /$tos" "the read error is recorded with its errno"
	[ -f "$TMP/snap/$tos" ] && [ ! -s "$TMP/snap/$tos" ] && pass "the unreadable file is an empty placeholder" ||
		fail "no placeholder for the unreadable file"
	same_verdicts "$src" "$TMP/snap" "unreadable"
	expect_exit 0 "$BIN" snapshot --sysroot "$TMP/snap" "$TMP/snap2" &&
		cmp -s "$TMP/snap/.gpuready/unreadable" "$TMP/snap2/.gpuready/unreadable" &&
		pass "a snapshot of the snapshot records the same errors" || fail "the error list is not carried over"
	# malformed lines are ignored; the good line among them still counts
	cp -a "$TMP/snap" "$TMP/bad"
	{ printf 'garbage\nEBOGUS /etc/profile.d/nccl-rdma.sh\nEACCES\nEACCES relative/path\n 13 /etc/profile.d/nccl-rdma.sh\n0 /etc/profile.d/nccl-rdma.sh\n'
	  printf '99999 /etc/profile.d/nccl-rdma.sh\nEACCES /etc/profile.d/nccl-rdma.sh/\nEACCES  /etc/profile.d/nccl-rdma.sh\n\0EACCES /etc/profile.d/nccl-rdma.sh\n'
	  cat "$TMP/snap/.gpuready/unreadable"
	  head -c 3000 /dev/zero | tr '\0' x; printf ' /etc/profile.d/nccl-rdma.sh\nEACCES /etc/host'; } >"$TMP/bad/.gpuready/unreadable"
	same_verdicts "$TMP/snap" "$TMP/bad" "malformed lines in .gpuready/unreadable are ignored"
	# EACCES, as on the machine: a 0600 file read by another user
	[ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null || { pass "not root: EACCES case skipped"; return; }
	printf 'export NCCL_DEBUG=INFO\n' >"$src/etc/profile.d/private.sh"
	chmod 0600 "$src/etc/profile.d/private.sh"
	chmod 0755 "$TMP"
	mkdir "$TMP/nb" && chown 65534:65534 "$TMP/nb"
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	nobody "$BIN" snapshot --sysroot "$src" "$TMP/nb/snap" >"$TMP/out" 2>"$TMP/err" ||
		{ fail "snapshot as nobody"; cat "$TMP/err" >&2; return; }
	contains "$TMP/nb/snap/.gpuready/unreadable" "EACCES /etc/profile.d/private.sh" "EACCES is recorded"
	nobody "$BIN" check --sysroot "$src" --json 2>/dev/null | normalize_json >"$TMP/n1.json"
	check_json "$TMP/nb/snap" "$TMP/n2.json"
	if diff -u "$TMP/n1.json" "$TMP/n2.json" >"$TMP/diff"; then pass "EACCES is replayed (root reads the snapshot as nobody read the source)"
	else fail "EACCES replay differs"; head -30 "$TMP/diff" >&2; fi
}

case "${1:-}" in
modes|incomplete|diskfull|unreadable) "t_$1" ;;
*) echo "usage: $0 modes | incomplete | diskfull | unreadable" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
exit 0
