#!/bin/sh
# Fetches NVIDIA's real user-space libraries and headers from Debian's non-free archive for
# the tests that hold gpuready's declarations and loaders against them (tests/abi): driver
# 535's libcuda.so.1 and libnvidia-ml.so.1 (libcuda1, libnvidia-ml1), nvml.h
# (libnvidia-ml-dev), and from the CUDA 11.8 toolkit package nvidia-cuda-dev only cuda.h and
# the stub libraries stubs/libcuda.so and stubs/libnvidia-ml.so.
#
# Nothing is installed: the packages are fetched with `apt-get download` through a private apt
# configuration (its own sources list with contrib and non-free, package lists and cache) and
# unpacked with dpkg-deb into DIR/root. Nothing under /etc changes, it works as a normal user,
# and a later run with the same DIR reuses what is there. Installing these packages
# system-wide would end the tests that prove gpuready starts without NVIDIA's libraries.
#
# usage: scripts/nvidia-libs.sh [DIR]
#   DIR  default $GPUREADY_NVIDIA_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/gpuready/nvidia
# Prints DIR/root on success. On failure (no network, no mirror, no dpkg) it writes the reason
# to DIR/unavailable, prints it on stderr and exits 1; the tests then skip with that reason.
set -u

dir=${1:-${GPUREADY_NVIDIA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuready/nvidia}}
suite=bookworm
pkgs="libcuda1 libnvidia-ml1 libnvidia-ml-dev nvidia-cuda-dev"
# What is kept from nvidia-cuda-dev (about 780 MB): its headers and stubs we compare with.
cuda_dev_keep="./usr/include/cuda.h ./usr/lib/x86_64-linux-gnu/stubs/libcuda.so ./usr/lib/x86_64-linux-gnu/stubs/libnvidia-ml.so"

mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd)
root=$dir/root

unavailable() {
	echo "$*" >"$dir/unavailable"
	echo "nvidia-libs: $*" >&2
	exit 1
}

if [ -f "$root/.complete" ]; then
	rm -f "$dir/unavailable"
	echo "$root"
	exit 0
fi
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || unavailable "apt-get and dpkg-deb are needed (a Debian or Ubuntu machine)"

# The Debian mirror this machine's apt uses (deb822 .sources or one-line sources.list).
mirror=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
	awk '/^URIs:/ && $2 ~ /debian\/?$/ { print $2; exit } /^deb / { for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*debian\/?$/) { print $i; exit } }')
[ -n "$mirror" ] || unavailable "no Debian mirror in /etc/apt (Debian's non-free archive has NVIDIA's libraries)"

apt=$dir/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$apt/prefs" "$dir/debs" || exit 1
echo "deb $mirror $suite main contrib non-free non-free-firmware" >"$apt/sources.list"
: >"$apt/status"
set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/parts" \
	-o Dir::Etc::PreferencesParts="$apt/prefs" -o Dir::State::Lists="$apt/lists" \
	-o Dir::Cache="$apt/cache" -o Dir::State::status="$apt/status" -o Debug::NoLocking=1 \
	-o APT::Sandbox::User="$(id -un)" -o APT::Architecture=amd64 -qq

echo "nvidia-libs: fetching $pkgs from $mirror ($suite non-free) into $dir" >&2
apt-get "$@" update >"$dir/apt.log" 2>&1 || unavailable "apt-get update of $mirror $suite non-free failed (see $dir/apt.log)"
(cd "$dir/debs" && apt-get "$@" download $pkgs) >>"$dir/apt.log" 2>&1 ||
	unavailable "apt-get download $pkgs failed (see $dir/apt.log)"

rm -rf "$root.tmp"
mkdir -p "$root.tmp" || exit 1
for p in libcuda1 libnvidia-ml1 libnvidia-ml-dev; do
	dpkg-deb -x "$dir/debs/${p}_"*.deb "$root.tmp" || unavailable "dpkg-deb -x $p failed"
done
# shellcheck disable=SC2086
dpkg-deb --fsys-tarfile "$dir/debs/nvidia-cuda-dev_"*.deb | tar -x -C "$root.tmp" $cuda_dev_keep ||
	unavailable "cannot unpack cuda.h and the stubs from nvidia-cuda-dev"
for f in $cuda_dev_keep ./usr/include/nvml.h ./usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1 \
	./usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.1; do
	[ -e "$root.tmp/$f" ] || unavailable "the packages lack $f"
done
rm -rf "$root.tmp/usr/share"
# Which versions ran, for the test logs.
for d in "$dir/debs/"*.deb; do dpkg-deb -f "$d" Package Version | tr '\n' ' '; echo; done >"$root.tmp/VERSIONS"
rm -rf "$root" "$dir/debs/nvidia-cuda-dev_"*.deb
mv "$root.tmp" "$root" && touch "$root/.complete" || exit 1
rm -f "$dir/unavailable"
echo "$root"
