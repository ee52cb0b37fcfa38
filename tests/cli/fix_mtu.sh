#!/bin/sh
# `gpuready fix` for rdma.mtu on copies of h100-roce-broken (ens6f0np0 at
# MTU 1500) configured by each network manager: tests/cli/fix_mtu/FLAVOUR
# holds the configuration added to the tree. For each flavour: apply, the
# findings ok, the file written or edited right, nothing else changed, a
# second plan with nothing for rdma.mtu, revert byte for byte. Then the
# declines: no manager, two managers, a netplan file that does not parse,
# and the hold of a disruptive remedy.
# shellcheck shell=sh
. "$(dirname "$0")/lib.sh"

BASE=$FIX/h100-roce-broken/root
CONF=$SRC/tests/cli/fix_mtu

# tree NAME FLAVOUR...: a copy of the base with the flavours' files, in $TMP/NAME
tree() {
	d=$TMP/$1
	shift
	rm -rf "$d"
	cp -a "$BASE" "$d"
	for f in "$@"; do cp -a "$CONF/$f/." "$d/"; done
	# git keeps no 0600; netplan and NetworkManager want their files private
	find "$d/etc/netplan" "$d/etc/NetworkManager" -type f -exec chmod 600 {} + 2>/dev/null
}

mtu_ok() {
	"$BIN" check --sysroot "$1" --only rdma.mtu --json >"$TMP/check.json" 2>"$TMP/err"
	python3 - "$TMP/check.json" <<'EOF' && pass "$2: rdma.mtu all ok after apply" || fail "$2: rdma.mtu not ok after apply"
import json, sys
r = json.load(open(sys.argv[1]))
bad = [f for f in r["checks"] if f["id"] == "rdma.mtu" and f["status"] in ("warn", "fail")]
print(*bad, sep="\n")
sys.exit(1 if bad else 0)
EOF
}

# only_changed FLAVOUR PATH...: the copy differs from the original in PATH...
# only (in-root paths and what is under them), besides gpuready's own state
# and the netdev's MTU
only_changed() {
	fl=$1; shift
	diff -rq --no-dereference "$TMP/$fl.orig" "$TMP/$fl" |
		sed -e "s#^Only in $TMP/$fl\(.orig\)\{0,1\}\(.*\): \(.*\)#\2/\3#" \
		    -e "s#^Files $TMP/$fl.orig\([^ ]*\) and .* differ#\1#" >"$TMP/diff"
	for p in "$@" /var/lib/gpuready /var/log; do
		grep -v -e "^$p\$" -e "^$p/" "$TMP/diff" >"$TMP/diff2"; mv "$TMP/diff2" "$TMP/diff"
	done
	grep -v "/net/ens6f0np0/mtu\$" "$TMP/diff" >"$TMP/diff2"
	if [ -s "$TMP/diff2" ]; then fail "$fl: other changes:"; cat "$TMP/diff2" >&2; else pass "$fl: nothing else changed"; fi
	# the netdev's MTU in the tree (the sysfs links lead to /sys/devices)
	[ "$(cat "$TMP/$fl/sys/class/net/ens6f0np0/mtu")" = 9000 ] && pass "$fl: ens6f0np0 at 9000 in the tree" ||
		fail "$fl: ens6f0np0 not at 9000"
}

# round FLAVOUR CHECK PATH...: apply, CHECK (a function) on the result,
# the checks above, revert
round() {
	fl=$1 chk=$2; shift 2
	tree "$fl" "$fl"
	rm -rf "$TMP/$fl.orig"
	cp -a "$TMP/$fl" "$TMP/$fl.orig"
	expect_exit 0 "$BIN" fix --apply --only rdma.mtu --sysroot "$TMP/$fl" && pass "$fl: apply"
	mtu_ok "$TMP/$fl" "$fl"
	only_changed "$fl" "$@"
	$chk
	expect_exit 0 "$BIN" fix --only rdma.mtu --sysroot "$TMP/$fl"
	contains "$TMP/out" "0 changes planned, 0 manual steps" "$fl: a second plan has nothing for rdma.mtu"
	expect_exit 0 "$BIN" fix --revert --sysroot "$TMP/$fl"
	rm -rf "$TMP/$fl/var/log/gpuready"
	rmdir "$TMP/$fl/var/log" 2>/dev/null
	if diff -r --no-dereference "$TMP/$fl.orig" "$TMP/$fl" >"$TMP/diff"; then pass "$fl: revert restores the tree"
	else fail "$fl: revert"; head -20 "$TMP/diff" >&2; fi
	rm -rf "$TMP/$fl.orig"
}

# netplan: our file after the operator's, same type, ID and renderer
netplan_ok() {
	python3 - "$TMP/netplan" <<'EOF' && pass "netplan: 90-gpuready.yaml parses and merges to mtu 9000 for rail5 under networkd" || fail "netplan: 90-gpuready.yaml"
import glob, os, stat, sys, yaml
d = sys.argv[1] + "/etc/netplan"
ours = yaml.safe_load(open(d + "/90-gpuready.yaml"))
assert ours == {"network": {"version": 2, "renderer": "networkd", "ethernets": {"rail5": {"mtu": 9000}}}}, ours
assert stat.S_IMODE(os.stat(d + "/90-gpuready.yaml").st_mode) == 0o600
merged = {}
for f in sorted(glob.glob(d + "/*.yaml")):   # netplan's order; a later scalar wins
    for dev, conf in yaml.safe_load(open(f))["network"].get("ethernets", {}).items():
        merged.setdefault(dev, {}).update(conf)
assert merged["rail5"]["mtu"] == 9000 and merged["rail5"]["addresses"] == ["10.0.5.10/24"], merged
assert merged["eno2"]["mtu"] == 9000 and merged["eno1"] == {"dhcp4": True}, merged
EOF
	head -2 "$TMP/netplan/etc/netplan/90-gpuready.yaml" | grep -q "gpuready fix" && pass "netplan: header" || fail "netplan: header"
}
round netplan netplan_ok /etc/netplan/90-gpuready.yaml

# systemd-networkd: a drop-in of the .network file that matches ens6f0np0
networkd_ok() {
	f=$TMP/networkd/etc/systemd/network/10-rail5.network.d/90-gpuready-mtu.conf
	[ "$(grep -v '^#' "$f")" = "$(printf '[Link]\nMTUBytes=9000')" ] && pass "networkd: the drop-in sets MTUBytes=9000" ||
		{ fail "networkd: drop-in"; cat "$f" >&2; }
}
round networkd networkd_ok /etc/systemd/network/10-rail5.network.d

# NetworkManager: the keyfile whose interface-name is ens6f0np0, [ethernet] mtu=9000
nm_ok() {
	k=NetworkManager/system-connections/rail5.nmconnection
	diff "$TMP/nm.orig/etc/$k" "$TMP/nm/etc/$k" >"$TMP/diff"
	[ "$(grep '^[<>]' "$TMP/diff")" = "> mtu=9000" ] && pass "nm: the keyfile gains mtu=9000, every other line kept" ||
		{ fail "nm: keyfile"; cat "$TMP/diff" >&2; }
	[ -f "$TMP/nm/var/lib/gpuready/backup/etc/$k.gpuready-bak" ] && pass "nm: the backup is outside system-connections" ||
		fail "nm: backup"
	[ -z "$(ls "$TMP/nm/etc/NetworkManager/system-connections" | grep -v nmconnection)" ] &&
		pass "nm: nothing else in system-connections" || fail "nm: extra files in system-connections"
}
round nm nm_ok /etc/NetworkManager/system-connections/rail5.nmconnection

# ifupdown: the stanza in interfaces.d gains `mtu 9000`
ifupdown_ok() {
	diff "$TMP/ifupdown.orig/etc/network/interfaces.d/rail5" "$TMP/ifupdown/etc/network/interfaces.d/rail5" >"$TMP/diff"
	[ "$(grep '^[<>]' "$TMP/diff")" = "$(printf '> \tmtu 9000')" ] && pass "ifupdown: the stanza gains mtu 9000" ||
		{ fail "ifupdown: stanza"; cat "$TMP/diff" >&2; }
	[ ! -e "$TMP/ifupdown/etc/network/interfaces.d/rail5.gpuready-bak" ] && pass "ifupdown: no backup in interfaces.d" ||
		fail "ifupdown: backup in interfaces.d (ifupdown would source it)"
}
round ifupdown ifupdown_ok /etc/network/interfaces.d/rail5

# a RoCE LAG bond (T01-roce-lag-bond) at 1500 in netplan: the bond is set,
# the kernel gives its MTU to the slaves (in the tree: their mtu files too)
B=$TMP/bond
sh "$FIX/scenario.sh" T01-roce-lag-bond "$B" >/dev/null 2>&1 || fail "bond: scenario tree"
for n in bond2 ens3f0np0 ens3f1np1; do echo 1500 >"$(readlink -f "$B/sys/class/net/$n")/mtu"; done
mkdir -p "$B/etc/netplan"
printf 'network:\n  version: 2\n  ethernets:\n    ens3f0np0: {}\n    ens3f1np1: {}\n  bonds:\n    bond2:\n      interfaces: [ens3f0np0, ens3f1np1]\n      mtu: 1500\n' \
	>"$B/etc/netplan/01-bonds.yaml"
cp -a "$B" "$B.orig"
expect_exit 0 "$BIN" fix --apply --only rdma.mtu --sysroot "$B"
contains "$TMP/out" "set the MTU of bond2 to 9000" "bond: the bond is set"
mtu_ok "$B" bond
grep -q "^  bonds:" "$B/etc/netplan/90-gpuready.yaml" && pass "bond: under bonds: in netplan" || fail "bond: netplan key"
[ "$(cat "$B/sys/class/net/ens3f1np1/mtu")" = 9000 ] && pass "bond: a slave follows" || fail "bond: slave MTU"
expect_exit 0 "$BIN" fix --revert --sysroot "$B"
rm -rf "$B/var/log/gpuready"; rmdir "$B/var/log" 2>/dev/null
diff -r --no-dereference "$B.orig" "$B" >"$TMP/diff" && pass "bond: revert restores the tree" ||
	{ fail "bond: revert"; head "$TMP/diff" >&2; }
rm -rf "$B" "$B.orig"

# declines: a manual step that names what was found, and nothing written
decline() {
	what=$1 want=$2; shift 2
	tree decline "$@"
	expect_exit 0 "$BIN" fix --only rdma.mtu --sysroot "$TMP/decline"
	contains "$TMP/out" "0 changes planned" "$what: nothing planned"
	contains "$TMP/out" "$want" "$what: the manual step says why"
}
decline "no manager" "no network manager configures ens6f0np0"
decline "two managers" "more than one network manager configures ens6f0np0: netplan (/etc/netplan/50-cloud-init.yaml), NetworkManager (/etc/NetworkManager/system-connections/rail5.nmconnection)" netplan nm
tree netplan netplan
printf 'network:\n  ethernets: [\n' >"$TMP/netplan/etc/netplan/70-broken.yaml"
expect_exit 0 "$BIN" fix --only rdma.mtu --sysroot "$TMP/netplan"
contains "$TMP/out" "/etc/netplan/70-broken.yaml: does not parse as YAML" "netplan: a file that does not parse is a decline naming it"
tree netplan netplan
printf 'network:\n  ethernets:\n    rail5:\n      mtu: 1500\n' >"$TMP/netplan/etc/netplan/99-late.yaml"
expect_exit 0 "$BIN" fix --only rdma.mtu --sysroot "$TMP/netplan"
contains "$TMP/out" "/etc/netplan/99-late.yaml sets mtu: 1500 for rail5" "netplan: a later file's mtu is a decline naming it"

# a glob that also matches an interface at another MTU: its MTU would change too
tree netplan netplan
printf 'network:\n  version: 2\n  ethernets:\n    all-en:\n      match: {name: "en*"}\n      mtu: 1500\n' \
	>"$TMP/netplan/etc/netplan/50-cloud-init.yaml"
expect_exit 0 "$BIN" fix --only rdma.mtu --sysroot "$TMP/netplan"
contains "$TMP/out" "/etc/netplan/50-cloud-init.yaml configures eno1 too (MTU 1500)" "netplan: a glob that matches eno1 is a decline"
tree networkd networkd
sed -i 's/^Name=ens6f0\*$/Name=e*/' "$TMP/networkd/etc/systemd/network/10-rail5.network"
expect_exit 0 "$BIN" fix --only rdma.mtu --sysroot "$TMP/networkd"
contains "$TMP/out" "/etc/systemd/network/10-rail5.network configures eno1 too (MTU 1500)" "networkd: a glob that matches eno1 is a decline"
sed -i 's/^Name=e\*$/Name=ens*/' "$TMP/networkd/etc/systemd/network/10-rail5.network"
expect_exit 1 "$BIN" fix --only rdma.mtu --sysroot "$TMP/networkd"
contains "$TMP/out" "1 change planned, 0 manual steps" "networkd: a glob whose other interfaces are at 9000 is fine"

# ifupdown: a relative `source` is relative to the file's directory; continued lines are declined
tree ifupdown ifupdown
sed -i 's#^source /etc/network/interfaces.d/\*$#source interfaces.d/*#' "$TMP/ifupdown/etc/network/interfaces"
expect_exit 1 "$BIN" fix --only rdma.mtu --sysroot "$TMP/ifupdown"
contains "$TMP/out" "+++ /etc/network/interfaces.d/rail5" "ifupdown: a relative source path"
printf 'iface ens6f0np0 inet manual\n\tup ip link set dev ens6f0np0 \\\n\t   up\n' >"$TMP/ifupdown/etc/network/interfaces.d/rail5"
expect_exit 0 "$BIN" fix --only rdma.mtu --sysroot "$TMP/ifupdown"
contains "$TMP/out" "/etc/network/interfaces.d/rail5 has lines continued with a backslash" "ifupdown: continued lines are a decline"

# disruptive: held without --only rdma.mtu or --allow-disruptive
tree ifupdown ifupdown
cp -a "$TMP/ifupdown/etc/network/interfaces.d/rail5" "$TMP/rail5.orig"
# (exit 1: the fixture's other warnings stay)
expect_exit 1 "$BIN" fix --apply --sysroot "$TMP/ifupdown"
cmp -s "$TMP/rail5.orig" "$TMP/ifupdown/etc/network/interfaces.d/rail5" &&
	pass "held: a plain --apply leaves the MTU alone" || fail "held: the MTU was changed without --only or --allow-disruptive"
expect_exit 1 "$BIN" fix --sysroot "$TMP/ifupdown"
contains "$TMP/out" "disruptive: applied only with --allow-disruptive or when named with --only rdma.mtu" "held: the plan says why"

[ "$FAILS" -eq 0 ]
