#!/bin/sh
# The Debian packages (make deb, scripts/build-deb.sh): built with
# dpkg-buildpackage -b from a copy of the source tree in a scratch directory
# (the tree itself is never written to), lintian clean (no error or
# warning), each file in its package (the binary and man page in gpuready, the
# MPI module in gpuready-mpi, the alias links and their man page links in
# gpuready-aliases, no file in two packages), gpuready free of any MPI
# dependency; the packages are unpacked with dpkg-deb -x into the scratch
# directory (nothing is installed) and the unpacked programs run.
#
# Skips (77) where dpkg-buildpackage, debhelper or lintian, or a Build-Depends
# of debian/control, are missing: make test installs them
# (scripts/deps.sh --deb).
#
# Environment as tests/cli/run.sh (tests/meson.build). Exit 0 pass, 1 fail, 77 skip.
set -u

. "$(dirname "$0")/lib.sh"

for tool in dpkg-buildpackage dpkg-checkbuilddeps dpkg-deb dh lintian; do
	command -v "$tool" >/dev/null ||
		{ echo "SKIP: $tool missing (scripts/deps.sh --deb installs it)"; exit 77; }
done
if ! dpkg-checkbuilddeps "$SRC/debian/control" >"$TMP/deps" 2>&1; then
	echo "SKIP: $(cat "$TMP/deps") (scripts/deps.sh --deb installs them)"
	exit 77
fi

version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$SRC/meson.build" | head -1)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
# the aliases meson.build installs (its install-aliases.sh line)
aliases=$(sed -n "/install-aliases.sh/,/)$/p" "$SRC/meson.build" | sed "s/get_option('[a-z]*')//g" |
	grep -oE "'[a-z_-]+'" | tr -d "'")
[ -n "$aliases" ] || fail "no alias list found in meson.build"

# MESON_* of the test run must not reach the package's own meson
env -u MESON_BUILD_ROOT -u MESON_SOURCE_ROOT -u MESON_TEST_ITERATION \
	"$SRC/scripts/build-deb.sh" "$TMP/dist" "$TMP/work" >"$TMP/build.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	pass "dpkg-buildpackage -b and lintian (no error or warning) exit 0"
else
	fail "scripts/build-deb.sh exit $rc:"; tail -40 "$TMP/build.out" >&2
	exit 1
fi
grep -E '^[EW]: ' "$TMP/dist/lintian.txt" >"$TMP/lint.ew"
[ -s "$TMP/lint.ew" ] && { fail "lintian errors or warnings:"; cat "$TMP/lint.ew" >&2; } ||
	pass "lintian: $(grep -c '^[IPXO]: ' "$TMP/dist/lintian.txt") info or overridden tags, no error or warning"

deb() { echo "$TMP/dist/${1}_${version}_$arch.deb"; }
for p in gpuready gpuready-mpi gpuready-aliases; do
	# files and links, without directories and the per-package doc files
	dpkg-deb -c "$(deb "$p")" | awk '$1 !~ /^d/ { print $6 }' | sed 's#^\./#/#' |
		grep -v "^/usr/share/doc/$p/" | sort >"$TMP/$p.files"
done
has() { # PACKAGE PATH
	grep -qx -- "$2" "$TMP/$1.files" && pass "$1 holds $2" || { fail "$1 lacks $2:"; cat "$TMP/$1.files" >&2; }
}
libdir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
has gpuready /usr/bin/gpuready
has gpuready /usr/share/man/man1/gpuready.1.gz
has gpuready-mpi "$libdir/gpuready/gpuready-mpi.so"
for a in $aliases; do
	has gpuready-aliases "/usr/bin/$a"
	has gpuready-aliases "/usr/share/man/man1/$a.1.gz"
done
n=$(echo "$aliases" | wc -w)
[ "$(grep -c . "$TMP/gpuready-aliases.files")" -eq $((2 * n)) ] &&
	pass "gpuready-aliases holds the $n aliases and their man page links, nothing else" ||
	{ fail "gpuready-aliases holds more than the $n aliases and their man pages:"; cat "$TMP/gpuready-aliases.files" >&2; }
[ "$(grep -c . "$TMP/gpuready-mpi.files")" -eq 1 ] && pass "gpuready-mpi holds the module only" ||
	{ fail "gpuready-mpi holds more than the module:"; cat "$TMP/gpuready-mpi.files" >&2; }
sort "$TMP/gpuready.files" "$TMP/gpuready-mpi.files" "$TMP/gpuready-aliases.files" | uniq -d >"$TMP/dup"
[ -s "$TMP/dup" ] && { fail "files in two packages:"; cat "$TMP/dup" >&2; } || pass "no file is in two packages"

dep() { dpkg-deb -f "$(deb "$1")" Depends; }
dep gpuready | grep -qi mpi && fail "gpuready depends on MPI: $(dep gpuready)" || pass "gpuready has no MPI dependency"
dep gpuready-mpi | grep -q libopenmpi && pass "gpuready-mpi depends on Open MPI" ||
	fail "gpuready-mpi's Depends lacks Open MPI: $(dep gpuready-mpi)"
for p in gpuready-mpi gpuready-aliases; do
	dep "$p" | grep -qF "gpuready (= $version)" && pass "$p depends on gpuready (= $version)" ||
		fail "$p's Depends lacks gpuready (= $version): $(dep "$p")"
done

# Unpacked, not installed: the programs run from the scratch tree.
root=$TMP/root
for p in gpuready gpuready-mpi gpuready-aliases; do dpkg-deb -x "$(deb "$p")" "$root"; done
gr=$root/usr/bin/gpuready
"$gr" version >"$TMP/v" 2>&1 && grep -qF "$version" "$TMP/v" && pass "unpacked gpuready version says $version" ||
	{ fail "unpacked gpuready version:"; cat "$TMP/v" >&2; }
expect_exit 0 "$gr" --help && pass "unpacked gpuready --help exits 0"
"$root/usr/bin/verify-rdma" --sysroot "$FIX/h100-8x-cx7-roce/root" --no-color >"$TMP/a.txt"; rc=$?
"$gr" rdma --sysroot "$FIX/h100-8x-cx7-roce/root" --no-color >"$TMP/b.txt"
[ "$rc" -eq 0 ] && cmp -s "$TMP/a.txt" "$TMP/b.txt" && pass "unpacked verify-rdma runs gpuready rdma" ||
	fail "unpacked verify-rdma (exit $rc)"
# the binary finds the module beside it (<bindir>/../<libdir>/gpuready)
GPUREADY_MPI_MODULE='' timeout 120 "$gr" bench --backend mpi -b 8 -e 8 -n 1 -w 0 >"$TMP/m.out" 2>"$TMP/m.err"; rc=$?
grep -q "cannot load the MPI backend module\|built without MPI" "$TMP/m.err" &&
	{ fail "the unpacked gpuready does not load the unpacked module (exit $rc):"; cat "$TMP/m.err" >&2; } ||
	pass "the unpacked gpuready loads the unpacked MPI module (exit $rc)"

[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
