#!/bin/sh
# What `gpuready snapshot` promises about the tree it writes:
#
#   snapshot.sh secrets     configuration files keep only the lines the checks parse: secrets
#                           planted in units, scripts, rc.local, udev rules, nccl.conf,
#                           profile.d and /etc/environment are not in the snapshot, and the
#                           checks' verdicts on it equal those on its source
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
#   snapshot.sh roundtrip   a snapshot of a snapshot is the same tree (contents, modes, links),
#                           for every fixture, a planted tree and the live machine (whose
#                           snapshot names the same host)
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

# tree_listing DIR: every entry with its type, permission bits and link target.
tree_listing() {
	(cd "$1" && find . -printf '%P %y %m %l\n' | LC_ALL=C sort)
}

# same_tree A B WHAT: the same names, kinds, modes, link targets and contents.
same_tree() {
	tree_listing "$1" >"$TMP/ta"
	tree_listing "$2" >"$TMP/tb"
	if ! diff -u "$TMP/ta" "$TMP/tb" >"$TMP/diff"; then
		fail "$3: entries or modes differ:"; head -20 "$TMP/diff" >&2
	elif ! diff -r --no-dereference "$1" "$2" >"$TMP/diff" 2>&1; then
		fail "$3: contents differ:"; head -20 "$TMP/diff" >&2
	else
		pass "$3"
	fi
}

# plant_secrets ROOT: configuration that the checks parse, mixed with secrets
# (every secret contains "s3cr3t").
plant_secrets() {
	r=$1
	mkdir -p "$r/etc/systemd/system" "$r/etc/udev/rules.d" "$r/usr/local/sbin" "$r/root" "$r/etc/profile.d"
	# a unit that sets the ToS itself, and one that runs a script that does
	cat >"$r/etc/systemd/system/app-tos.service" <<-'EOF'
	[Unit]
	Description=Application (DB_PASSWORD in its environment)

	[Service]
	Environment=DB_PASSWORD=db-s3cr3t
	Environment="VAULT_TOKEN=s.vault-s3cr3t"
	ExecStartPre=/usr/local/sbin/fetch-creds --token=pre-s3cr3t
	ExecStart=/bin/sh -c 'echo 104 > /sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos'

	[Install]
	WantedBy=multi-user.target
	EOF
	printf 'Environment=VAULT_TOKEN=unit-s3cr3t\nEnvironmentFile=/etc/default/s3cr3t\n' \
		>>"$r/etc/systemd/system/rdma-cm-tos.service"
	printf '#!/bin/sh\nfetch-creds --token=script-s3cr3t\n' >"$r/usr/local/sbin/fetch-creds"
	printf 'export VAULT_TOKEN=script-s3cr3t\n' >>"$r/usr/local/bin/rdma-cm-tos.sh"
	# rc.local and a udev rule whose program sets the ToS
	printf '#!/bin/sh\nexport API_KEY=rc-s3cr3t\ncma_roce_tos -d mlx5_2 -t 104\nexit 0\n' >"$r/etc/rc.local"
	printf 'ACTION=="add", ENV{TOKEN}="udev-s3cr3t", RUN+="/usr/local/sbin/udev-tos --key udev-s3cr3t"\n' \
		>"$r/etc/udev/rules.d/90-tos.rules"
	printf '#!/bin/sh\nPASS=prog-s3cr3t\necho 104 > /sys/kernel/config/rdma_cm/$1/ports/1/default_roce_tos\n' \
		>"$r/usr/local/sbin/udev-tos"
	# NCCL's own files and what login shells export
	printf 'NCCL_DEBUG=WARN\nNCCL_SECRET_FREE=1\nDB_PASSWORD=conf-s3cr3t\n#NCCL_COMMENT=s3cr3t\n' >"$r/etc/nccl.conf"
	printf 'NCCL_ALGO=Ring\nAWS_SECRET_ACCESS_KEY=home-s3cr3t\n' >"$r/root/.nccl.conf"
	cat >"$r/etc/profile.d/zz-site.sh" <<-'EOF'
	# site environment
	export GITHUB_TOKEN=gh-s3cr3t
	export NCCL_SOCKET_IFNAME=eno1; export AWS_SECRET_ACCESS_KEY=same-line-s3cr3t
	NCCL_IB_TIMEOUT=22 # not s3cr3t, but not parsed either
	export NCCL_IB_TIMEOUT
	echo "NCCL_ in a line that sets nothing: s3cr3t"
	EOF
	printf 'PATH="/usr/local/sbin:/usr/bin"\nhttp_proxy=http://user:proxy-s3cr3t@proxy:3128\nNCCL_IB_RETRY_CNT=7\n' \
		>"$r/etc/environment"
}

# no_secrets SNAPSHOT WHAT
no_secrets() {
	if grep -rl 's3cr3t' "$1" >"$TMP/leaks"; then
		fail "$2: the snapshot holds planted secrets:"; grep -rn 's3cr3t' "$1" | head -20 >&2
	else
		pass "$2: no planted secret is in the snapshot"
	fi
}

# The ToS persistence check names the first enabled writer only, so each kind
# of writer is made the first in turn: the unit that runs a script, a unit
# that writes the ToS itself, a udev rule's program, rc.local, none.
t_secrets() {
	src=$TMP/src
	cp -a "$FIX/h100-8x-cx7-roce/root" "$src"
	plant_secrets "$src"
	expect_exit 0 "$BIN" snapshot --sysroot "$src" "$TMP/snap" || return
	no_secrets "$TMP/snap" "all planted"
	# the planted files were read, and are what the report names
	check_json "$src" "$TMP/src.json"
	for w in NCCL_SOCKET_IFNAME NCCL_IB_TIMEOUT NCCL_IB_RETRY_CNT NCCL_ALGO NCCL_DEBUG; do
		contains "$TMP/src.json" "$w" "the source's report names $w"
	done
	"$BIN" check --sysroot "$src" --no-color -v >"$TMP/a.txt" 2>&1
	"$BIN" check --sysroot "$TMP/snap" --no-color -v >"$TMP/b.txt" 2>&1
	if cmp -s "$TMP/a.txt" "$TMP/b.txt"; then pass "secrets: the text report is the same"; else
		fail "secrets: the text report differs"; diff -u "$TMP/a.txt" "$TMP/b.txt" | head -20 >&2; fi
	# what is kept: the lines the parsers read, at their line numbers
	sed -n 3p "$TMP/snap/etc/profile.d/zz-site.sh" >"$TMP/line"
	contains "$TMP/line" "export NCCL_SOCKET_IFNAME=eno1" "profile.d: an NCCL_ export keeps its line"
	contains "$TMP/snap/etc/systemd/system/app-tos.service" "ExecStart=/bin/sh -c 'echo 104 >" \
		"units: the line that sets the ToS is kept"
	contains "$TMP/snap/etc/systemd/system/rdma-cm-tos.service" "ExecStart=/usr/local/bin/rdma-cm-tos.sh" \
		"units: the program an Exec line runs is kept"
	sys=$src/etc/systemd/system
	for step in script unit udev rc.local none; do
		case $step in
		unit) rm "$sys/rdma-cm-tos.service" "$sys/multi-user.target.wants/rdma-cm-tos.service"
		      ln -s /etc/systemd/system/app-tos.service "$sys/multi-user.target.wants/app-tos.service"
		      want="enabled unit /etc/systemd/system/app-tos.service sets" ;;
		script) want="rdma-cm-tos.service sets default_roce_tos at boot via /usr/local/bin/rdma-cm-tos.sh" ;;
		udev) rm "$sys/app-tos.service" "$sys/multi-user.target.wants/app-tos.service"
		      want="/etc/udev/rules.d/90-tos.rules sets default_roce_tos at boot via /usr/local/sbin/udev-tos" ;;
		rc.local) rm "$src/etc/udev/rules.d/90-tos.rules"; want="/etc/rc.local sets default_roce_tos at boot" ;;
		none) rm "$src/etc/rc.local"; want="nothing sets default_roce_tos at boot" ;;
		esac
		"$BIN" rdma --sysroot "$src" --only rdma.tos_persist --no-color -v >"$TMP/persist.txt" 2>&1
		contains "$TMP/persist.txt" "$want" "ToS writer '$step' is what the source's report names"
		expect_exit 0 "$BIN" snapshot --sysroot "$src" "$TMP/snap-$step" || continue
		no_secrets "$TMP/snap-$step" "ToS writer '$step'"
		same_verdicts "$src" "$TMP/snap-$step" "ToS writer '$step'"
	done
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
	# the live DCB state (rtnetlink; a header only where no RoCE netdev exists)
	if head -1 "$TMP/live/.gpuready/dcb" 2>/dev/null | grep -q '^# DCB state'; then
		pass "the live snapshot records the RoCE netdevs' DCB state (.gpuready/dcb)"
	else
		fail "the live snapshot has no .gpuready/dcb"
	fi
}

t_incomplete() {
	src=$TMP/src
	cp -a "$FIX/h100-roce-broken/root" "$src"
	for cmd in check rdma gpu gpudirect topo; do
		"$BIN" $cmd --sysroot "$src" --json 2>/dev/null >"$TMP/$cmd.j"
		echo "exit $?" >>"$TMP/$cmd.j"
		normalize_json <"$TMP/$cmd.j" >"$TMP/$cmd.want"
	done
	printf 'gpuready snapshot did not finish\n' >"$src/.gpuready/incomplete"
	for cmd in check rdma gpu gpudirect topo; do
		expect_exit 2 "$BIN" $cmd --sysroot "$src" && contains "$TMP/err" "incomplete" "$cmd refuses an incomplete tree"
		[ -s "$TMP/out" ] && fail "$cmd printed a report for an incomplete tree"
		"$BIN" $cmd --sysroot "$src" --json --force >"$TMP/$cmd.j" 2>"$TMP/err"
		echo "exit $?" >>"$TMP/$cmd.j"
		normalize_json <"$TMP/$cmd.j" >"$TMP/$cmd.got"
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

t_roundtrip() {
	for d in "$FIX"/*/; do
		n=$(basename "$d")
		[ -d "$d/root" ] || continue
		"$BIN" snapshot --sysroot "$d/root" "$TMP/$n-a" >/dev/null 2>&1 &&
			"$BIN" snapshot --sysroot "$TMP/$n-a" "$TMP/$n-b" >/dev/null 2>&1 ||
			{ fail "$n: snapshot failed"; continue; }
		same_tree "$TMP/$n-a" "$TMP/$n-b" "$n: a snapshot of its snapshot is the same tree"
	done
	src=$TMP/planted
	cp -a "$FIX/h100-8x-cx7-roce/root" "$src"
	plant_secrets "$src"
	chmod 0600 "$src/etc/nccl.conf" "$src/root/.nccl.conf"
	tos=sys/kernel/config/rdma_cm/mlx5_3/ports/1/default_roce_tos
	rm -f "$src/$tos" && mkfifo "$src/$tos"
	"$BIN" snapshot --sysroot "$src" "$TMP/p-a" >/dev/null 2>&1 &&
		"$BIN" snapshot --sysroot "$TMP/p-a" "$TMP/p-b" >/dev/null 2>&1 &&
		same_tree "$TMP/p-a" "$TMP/p-b" "planted: a snapshot of its snapshot is the same tree" ||
		fail "planted: snapshot failed"
	"$BIN" snapshot "$TMP/l-a" >/dev/null 2>&1 &&
		"$BIN" snapshot --sysroot "$TMP/l-a" "$TMP/l-b" >/dev/null 2>&1 &&
		same_tree "$TMP/l-a" "$TMP/l-b" "live: a snapshot of its snapshot is the same tree" ||
		fail "live: snapshot failed"
	# the report on a live snapshot names the host the live report names
	"$BIN" check --json 2>/dev/null | grep '"host":' >"$TMP/host.live"
	"$BIN" check --sysroot "$TMP/l-a" --json 2>/dev/null | grep '"host":' >"$TMP/host.snap"
	if [ -s "$TMP/host.live" ] && cmp -s "$TMP/host.live" "$TMP/host.snap"; then pass "live: the snapshot keeps the host name"
	else fail "live: the host name differs: $(cat "$TMP/host.live") vs $(cat "$TMP/host.snap")"; fi
}

case "${1:-}" in
secrets|modes|incomplete|diskfull|unreadable|roundtrip) "t_$1" ;;
*) echo "usage: $0 secrets | modes | incomplete | diskfull | unreadable | roundtrip" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
exit 0
