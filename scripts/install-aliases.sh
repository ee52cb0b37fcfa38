#!/bin/sh
# Installs gpuready's aliases (all_reduce_perf, verify-rdma, ...) as links to
# gpuready in BINDIR; run by `meson install` (meson.build) and so by
# `make install`.
#
# Never stops half-way and never replaces another program: an alias name
# that already exists in BINDIR and is not a link to gpuready (nccl-tests'
# own all_reduce_perf, say) is left alone with a message, and the install
# goes on. GPUREADY_ALIASES=no (`make install ALIASES=no`) installs none.
#
# Meson (1.0) swallows an install script's output, so the messages also go
# to meson-logs/install-aliases.log in the build directory, which `make
# install` prints.
#
# Usage: install-aliases.sh BINDIR ALIAS...   (BINDIR as configured; the
# script adds $DESTDIR itself)
set -u
bindir=$1
shift
log=${MESON_BUILD_ROOT:+$MESON_BUILD_ROOT/meson-logs/install-aliases.log}
[ -z "$log" ] || : >"$log" 2>/dev/null || log=
say() {
	echo "$*" >&2
	[ -z "$log" ] || echo "$*" >>"$log"
}
case ${GPUREADY_ALIASES:-yes} in
no | false | 0 | off)
	say "gpuready: aliases not installed (ALIASES=no)"
	exit 0 ;;
esac
dir=${DESTDIR:-}$bindir
left=0
# what the alias runs, for the message when it cannot be installed
command_of() {
	case $1 in
	*_perf) echo "gpuready bench ${1%_perf}" ;;
	verify-*) echo "gpuready ${1#verify-}" ;;
	test-nccl) echo "gpuready nccl" ;;
	*) echo gpuready ;;
	esac
}
for a in "$@"; do
	p=$dir/$a
	if [ -L "$p" ] && [ "$(readlink "$p")" = gpuready ]; then
		continue # ours from an earlier install
	fi
	if [ -e "$p" ] || [ -L "$p" ]; then
		what=$( [ -L "$p" ] && echo "a link to $(readlink "$p")" || echo "a file that is not gpuready")
		say "gpuready: left $p alone: it is $what; run \`$(command_of "$a")\` instead, or remove it and install again" >&2
		left=$((left + 1))
		continue
	fi
	ln -s gpuready "$p" || { say "gpuready: cannot create $p" >&2; left=$((left + 1)); }
done
[ "$left" -eq 0 ] || say "gpuready: $left alias(es) not installed; everything else is" >&2
exit 0
