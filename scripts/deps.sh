#!/bin/sh
# Installs the Debian packages gpuready needs to build (and, with --test, to
# run its tests; with --deb, to build its Debian packages: make deb) when they
# are missing. As root it runs apt-get; otherwise it
# prints the command to run and fails.
set -eu

# linux-libc-dev (which libc6-dev pulls in anyway): <linux/dcbnl.h> and
# <linux/rtnetlink.h> for the DCB probe (src/probe/dcb.c)
build="gcc make meson ninja-build pkg-config libinih-dev libjson-c-dev zlib1g-dev libsodium-dev libyaml-dev linux-libc-dev"
# openssh-server, openssh-client: the virtual cluster of tests/cli/cluster_netns.sh
# (sshd in network namespaces, asked by ssh); slurmctld, slurmd, slurm-client,
# munge: the one-node Slurm of tests/cli/slurm.sh real; python3-yaml: tests/cli/fix_mtu.sh
# reads the netplan file gpuready writes back
test="libcmocka-dev python3 python3-jsonschema python3-yaml clang libclang-rt-dev strace man-db xz-utils time libopenmpi-dev openmpi-bin iproute2 sockperf iperf3 libibverbs-dev valgrind prometheus-node-exporter prometheus openssh-server openssh-client slurmctld slurmd slurm-client munge pdsh"

# debian/control's Build-Depends beyond $build (libopenmpi-dev: the MPI
# module's package), dpkg-buildpackage's implicit build-essential, and lintian.
deb="build-essential debhelper dpkg-dev libopenmpi-dev lintian"

want=$build
for kind in "$@"; do
	case $kind in
	--test) want="$want $test" ;;
	--deb) want="$want $deb" ;;
	*) echo "usage: deps.sh [--test] [--deb]" >&2; exit 2 ;;
	esac
done

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "missing packages:$missing" >&2
	echo "install them with: sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
