#!/bin/sh
# The live half of the MTU remedy (rdma.mtu) in a network namespace: a veth
# named like the RDMA netdev of h100-roce-broken (ens6f0np0) at MTU 1500 is
# set to 9000 by `ip link` run live, while the persistent part (the
# ifupdown stanza of tests/cli/fix_mtu/ifupdown) goes to a temporary tree.
# The test-only hook GPUREADY_TEST_FIX_LIVE_CMDS=1 (src/fix/apply.c) makes
# the sysroot plan run its commands live. Root only: skipped (77) when
# `ip netns add` is not allowed. The namespace is removed on every exit.
# shellcheck shell=sh
. "$(dirname "$0")/lib.sh"

NS=gpuready-mtu-$$
command -v ip >/dev/null || { echo "SKIP: ip (iproute2) missing"; exit 77; }
ip netns add "$NS" 2>/dev/null || { echo "SKIP: ip netns add is not allowed here"; exit 77; }
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM

if ! ip -n "$NS" link add ens6f0np0 mtu 1500 type veth peer name peer0 mtu 9000 2>"$TMP/err"; then
	echo "SKIP: no veth in the namespace: $(cat "$TMP/err")"; exit 77
fi
ip -n "$NS" link set ens6f0np0 up
ip -n "$NS" link set peer0 up
ip -n "$NS" link show ens6f0np0 | grep -q " mtu 1500 " && pass "the veth starts at MTU 1500" || fail "veth MTU"

T=$TMP/tree
cp -a "$FIX/h100-roce-broken/root" "$T"
cp -a "$SRC/tests/cli/fix_mtu/ifupdown/." "$T/"
GPUREADY_TEST_FIX_LIVE_CMDS=1 ip netns exec "$NS" "$BIN" fix --apply --only rdma.mtu --sysroot "$T" >"$TMP/out" 2>&1
contains "$TMP/out" "ran: ip link set dev ens6f0np0 mtu 9000: exit 0" "the ip link command ran live"
ip -n "$NS" link show ens6f0np0 | grep -q " mtu 9000 " && pass "the veth is at MTU 9000" ||
	{ fail "the veth's MTU"; ip -n "$NS" link show ens6f0np0 >&2; }
grep -q "^	mtu 9000$" "$T/etc/network/interfaces.d/rail5" && pass "the stanza in the tree has mtu 9000" ||
	fail "the tree's stanza"
[ "$(cat "$T/sys/class/net/ens6f0np0/mtu")" = 1500 ] && pass "the tree's sysfs is left alone (the command ran live)" ||
	fail "the tree's sysfs MTU was written"
ip link show ens6f0np0 >/dev/null 2>&1 && fail "ens6f0np0 exists outside the namespace" ||
	pass "nothing outside the namespace"

[ "$FAILS" -eq 0 ]
