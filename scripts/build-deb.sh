#!/bin/sh
# Builds gpuready's Debian packages (gpuready, gpuready-mpi, gpuready-aliases)
# with dpkg-buildpackage -us -uc -b and checks them with lintian; run by
# `make deb` (into dist/) and by tests/cli/deb.sh (into a scratch directory).
#
# The source tree is never written to: the files the release build needs
# (git's tracked and untracked-but-not-ignored files, without tests/ and
# perf/, which -Dtests=disabled never reads) are copied into WORK/gpuready,
# debian/changelog is written there with meson.build's version (the one
# source of the version), and dpkg-buildpackage runs in that copy. The .deb
# files are copied into OUTDIR; lintian's report goes to OUTDIR/lintian.txt
# and any error or warning fails the build.
#
# Usage: build-deb.sh OUTDIR [WORK]   (WORK defaults to build-deb/ in the
# source tree; it is emptied first)
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build-deb.sh OUTDIR [WORK]}
work=${2:-$src/build-deb}

for tool in dpkg-buildpackage dh lintian; do
	command -v "$tool" >/dev/null || {
		echo "build-deb: $tool missing (scripts/deps.sh --deb installs it)" >&2; exit 1; }
done

version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -1)
[ -n "$version" ] || { echo "build-deb: no version in meson.build" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/gpuready" "$out"
tree=$work/gpuready
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1; then
	# tracked and new files; a file deleted in the work tree is not copied
	(cd "$src" && git ls-files -z -co --exclude-standard -- . ':!tests' ':!perf' |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf -) | tar -xf - -C "$tree"
	date=$(git -C "$src" log -1 --format=%cD 2>/dev/null || date -R)
else
	(cd "$src" && tar --exclude=./tests --exclude=./perf --exclude='./build*' --exclude=./dist -cf - .) |
		tar -xf - -C "$tree"
	date=$(date -R)
fi
[ -n "$date" ] || date=$(date -R)

# The version is meson.build's; the packaging is part of the upstream tree
# (a native package), so there is no Debian revision.
maint=$(sed -n 's/^Maintainer: //p' "$tree/debian/control")
cat >"$tree/debian/changelog" <<EOF
gpuready ($version) unstable; urgency=medium

  * gpuready $version, packaged from its source tree (make deb); its
    changes are in /usr/share/doc/gpuready/CHANGELOG.md.gz.

 -- $maint  $date
EOF

(cd "$tree" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
	tail -60 "$work/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (the whole log: $work/build.log)" >&2
	exit 1
}

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
debs=""
for p in gpuready gpuready-mpi gpuready-aliases; do
	deb=$work/${p}_${version}_$arch.deb
	[ -f "$deb" ] || { echo "build-deb: $deb was not built" >&2; exit 1; }
	cp "$deb" "$out/"
	debs="$debs $out/${p}_${version}_$arch.deb"
done

# Errors and warnings fail; the overrides (debian/*.lintian-overrides) say why.
# shellcheck disable=SC2086
if lintian --fail-on error,warning --display-info $debs >"$out/lintian.txt" 2>&1; then
	lint=0
else
	lint=1
fi
cat "$out/lintian.txt"
[ "$lint" -eq 0 ] || { echo "build-deb: lintian found errors or warnings" >&2; exit 1; }
for d in $debs; do echo "built $d"; done
