#!/bin/sh
# A stand-in for Slurm's scontrol in tests (docs/cluster.md, "Slurm: drain
# and resume"): `show node -o NODE` and `update NodeName=NODE State=...`
# against one file per node in $FAKE_SCONTROL_DIR holding "STATE" on its
# first line and the reason on its second. A node without a file is
# unknown to "Slurm" (exit 1, as scontrol says). Every call is appended to
# $FAKE_SCONTROL_DIR/calls, its arguments separated by '|'.
set -u
d=${FAKE_SCONTROL_DIR:?}
(IFS='|'; printf '%s\n' "$*") >>"$d/calls"
case "$1 ${2-}" in
"show node")
	[ "$3" = -o ] || { echo "fake scontrol: want -o" >&2; exit 2; }
	f=$d/node.$4
	[ -f "$f" ] || { echo "Node $4 not found" >&2; exit 1; }
	state=$(sed -n 1p "$f") reason=$(sed -n 2p "$f")
	printf 'NodeName=%s Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUTot=4 OS=Linux 6.1.0 #1 SMP State=%s ThreadsPerCore=1 Partitions=test' "$4" "$state"
	[ -n "$reason" ] && printf ' Reason=%s [root@2026-01-01T00:00:00]' "$reason"
	printf '\n'
	;;
"update NodeName="*)
	node=${2#NodeName=} f=$d/node.${2#NodeName=}
	[ -f "$f" ] || { echo "slurm_update error: Invalid node name specified" >&2; exit 1; }
	case ${3-} in
	State=DRAIN) printf 'IDLE+DRAIN\n%s\n' "${4#Reason=}" >"$f" ;;
	State=RESUME) printf 'IDLE\n\n' >"$f" ;;
	*) echo "fake scontrol: unknown update $3" >&2; exit 2 ;;
	esac
	: "$node"
	;;
*) echo "fake scontrol: unknown command $*" >&2; exit 2 ;;
esac
