#!/bin/sh
# `gpuready fix` for the kernel-side findings (docs/fix.md): the RDMA-CM
# ToS and its boot unit (rdma.roce_tos, rdma.tos_persist), missing RDMA
# modules (rdma.modules), nvidia_peermem where DMA-BUF serves
# (gpudirect.peermem), ACS on GPU-NIC bridges (gpudirect.acs) and IOMMU
# passthrough (gpudirect.iommu), on copies of the broken fixtures: after
# --apply the answered findings are ok or say "pending", nothing else in
# the report changes, a second plan has nothing new, and --revert restores
# the tree byte for byte (but the audit log). Then the manual steps: a
# module not installed, a RHEL-family node, an operator's unit of our
# name, a package's modules-load.d file, and nvidia_peermem as the only
# GPUDirect path.
set -u

. "$(dirname "$0")/lib.sh"

# copy NAME: a fresh copy of fixture NAME at $TMP/NAME, and $TMP/NAME.orig.
copy() {
	rm -rf "$TMP/$1" "$TMP/$1.orig"
	cp -a "$FIX/$1/root" "$TMP/$1"
	cp -a "$FIX/$1/root" "$TMP/$1.orig"
}

# changed BEFORE AFTER ALLOWED...: the findings whose status, message or
# pending note differ, each "ID SUBJECT BEFORE->AFTER"; fails for one whose
# check is not allowed.
changed() {
	python3 - "$@" <<'PY'
import json, sys
def load(p):
    return {(f["id"], f.get("subject", "")): f for f in json.load(open(p))["checks"]}
a, b, allowed = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3:]
bad = 0
for k in sorted(set(a) | set(b)):
    x, y = a.get(k, {}), b.get(k, {})
    if (x.get("status"), x.get("message"), x.get("pending")) == (y.get("status"), y.get("message"), y.get("pending")):
        continue
    st = "%s->%s%s" % (x.get("status", "none"), y.get("status", "none"), " (pending)" if y.get("pending") else "")
    print(k[0], k[1], st)
    if k[0] not in allowed:
        print("NOT ALLOWED", k[0], k[1], st)
        bad = 1
sys.exit(bad)
PY
}

# cycle NAME ALLOWED...: plan, apply (disruptive allowed), check again, plan
# again, revert; $TMP/NAME.changes lists what changed in the report.
cycle() {
	name=$1; shift
	root=$TMP/$name
	"$BIN" check --sysroot "$root" --json >"$TMP/$name.before.json" 2>/dev/null
	only=
	for c in "$@"; do only="$only --only $c"; done
	# shellcheck disable=SC2086 # one word per option
	"$BIN" fix --sysroot "$root" --apply --allow-disruptive $only >"$TMP/$name.apply" 2>&1
	"$BIN" check --sysroot "$root" --json >"$TMP/$name.after.json" 2>/dev/null
	"$BIN" check --sysroot "$root" >"$TMP/$name.after.txt" 2>/dev/null
	if changed "$TMP/$name.before.json" "$TMP/$name.after.json" "$@" >"$TMP/$name.changes"; then
		pass "$name: only the answered findings changed"
	else
		fail "$name: other findings changed"; sed 's/^/  | /' "$TMP/$name.changes" >&2
	fi
	# shellcheck disable=SC2086
	"$BIN" fix --sysroot "$root" --allow-disruptive $only >"$TMP/$name.again" 2>&1
	if grep -q '^0 changes planned' "$TMP/$name.again"; then pass "$name: a second plan has nothing new"
	else fail "$name: a second plan plans again"; tail -3 "$TMP/$name.again" >&2; fi
}

# reverted NAME: the tree is the fixture again, byte for byte, but the
# audit log (and /var/log when the fixture has none).
reverted() {
	root=$TMP/$1
	"$BIN" fix --sysroot "$root" --revert >"$TMP/$1.revert" 2>&1 || { fail "$1: revert failed"; cat "$TMP/$1.revert" >&2; }
	rm -rf "$root/var/log/gpuready"
	[ -d "$TMP/$1.orig/var/log" ] || rmdir "$root/var/log" 2>/dev/null
	[ -d "$TMP/$1.orig/var" ] || rmdir "$root/var" 2>/dev/null
	if diff -r --no-dereference "$TMP/$1.orig" "$root" >"$TMP/$1.diff"; then
		pass "$1: revert restores the tree byte for byte"
	else
		fail "$1: the tree differs after revert"; head -20 "$TMP/$1.diff" >&2
	fi
}

status_of() { # JSON ID SUBJECT -> STATUS[ pending]
	python3 - "$@" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["checks"]:
    if f["id"] == sys.argv[2] and f.get("subject") == sys.argv[3]:
        print(f["status"] + (" pending" if f.get("pending") else ""))
        break
else:
    print("none")
PY
}

is_status() { # JSON ID SUBJECT WANT
	got=$(status_of "$1" "$2" "$3")
	if [ "$got" = "$4" ]; then pass "$2 $3: $4"; else fail "$2 $3: $got, want $4"; fi
}

tos() {
	copy h100-roce-broken
	r=$TMP/h100-roce-broken
	"$BIN" fix --sysroot "$r" >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "set the RDMA-CM ToS to 104 on the RoCE ports, now and at every boot" "tos: planned"
	contains "$TMP/plan.txt" "link: /etc/systemd/system/multi-user.target.wants/rdma-cm-tos.service -> /etc/systemd/system/rdma-cm-tos.service" "tos: the enable link"
	contains "$TMP/plan.txt" "/sys/kernel/config/rdma_cm/mlx5_5/ports/1/default_roce_tos = 104   (for: /usr/local/sbin/gpuready-rdma-cm-tos mlx5_5 1)" "tos: one command per port"
	"$BIN" fix --sysroot "$r" --script - >"$TMP/plan.sh" 2>&1
	contains "$TMP/plan.sh" "ln -sfn '/etc/systemd/system/rdma-cm-tos.service' \"\$ROOT\"'/etc/systemd/system/multi-user.target.wants/rdma-cm-tos.service'" "tos: --script makes the link"
	cycle h100-roce-broken rdma.roce_tos rdma.tos_persist rdma.nccl_ib_tc rdma.sockbuf gpudirect.peermem
	a=$TMP/h100-roce-broken.after.json
	for p in mlx5_4/1 mlx5_5/1 mlx5_6/1 mlx5_7/1; do is_status "$a" rdma.roce_tos "$p" ok; done
	is_status "$a" rdma.tos_persist rdma-cm-tos.service ok
	is_status "$a" rdma.nccl_ib_tc default_roce_tos none
	is_status "$a" gpudirect.peermem nvidia_peermem "warn pending"
	contains "$TMP/h100-roce-broken.after.txt" "pending: \`gpuready fix\` wrote \"unload nvidia_peermem" "peermem: the report says pending"
	[ -x "$r/usr/local/sbin/gpuready-rdma-cm-tos" ] && pass "tos: the script is executable" || fail "tos: script not executable"
	sh -n "$r/usr/local/sbin/gpuready-rdma-cm-tos" && pass "tos: the script parses" || fail "tos: sh -n"
	[ "$(readlink "$r/etc/systemd/system/multi-user.target.wants/rdma-cm-tos.service")" = /etc/systemd/system/rdma-cm-tos.service ] \
		&& pass "tos: enabled by a link" || fail "tos: no enable link"
	contains "$r/etc/modprobe.d/gpuready-peermem.conf" "blacklist nvidia_peermem" "peermem: blacklisted"
	# the script itself, on a fake sysfs and configfs: it sets the RoCE ports only
	fake_script "$r/usr/local/sbin/gpuready-rdma-cm-tos"
	reverted h100-roce-broken

	# an operator's rdma-cm-tos.service that does not set the ToS: kept,
	# the persistence a manual step; the ports are still set now
	copy h100-roce-broken
	printf '[Service]\nExecStart=/bin/true\n' >"$r/etc/systemd/system/rdma-cm-tos.service"
	"$BIN" fix --sysroot "$r" >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "/etc/systemd/system/rdma-cm-tos.service exists and was not written by gpuready" "tos: an operator's unit is kept"
	contains "$TMP/plan.txt" "set the RDMA-CM ToS to 104 on the RoCE ports" "tos: the ports are set all the same"
	lacks "$TMP/plan.txt" "+++ /etc/systemd/system/rdma-cm-tos.service" "tos: the operator's unit is not rewritten"
	# a unit that sets the ToS but is not enabled: systemctl enable, by hand
	copy h100-roce-broken
	printf '[Service]\nExecStart=/bin/sh -c "echo 104 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos"\n' \
		>"$r/etc/systemd/system/my-tos.service"
	"$BIN" fix --sysroot "$r" >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "enable it with \`systemctl enable --now my-tos.service\`" "tos: a disabled unit is enabled by hand"

	copy v100-cx3pro
	cycle v100-cx3pro rdma.roce_tos rdma.tos_persist rdma.sockbuf
	is_status "$TMP/v100-cx3pro.after.json" rdma.roce_tos mlx4_0/2 ok
	is_status "$TMP/v100-cx3pro.after.json" rdma.tos_persist rdma-cm-tos.service ok
	reverted v100-cx3pro
}

# fake_script SCRIPT: runs the ToS script with /sys paths moved into a
# scratch tree (two devices, one RoCE and one InfiniBand port).
fake_script() {
	f=$TMP/fake
	rm -rf "$f"
	mkdir -p "$f/ib/mlx5_0/ports/1" "$f/ib/mlx5_1/ports/1" "$f/cm"
	echo Ethernet >"$f/ib/mlx5_0/ports/1/link_layer"
	echo InfiniBand >"$f/ib/mlx5_1/ports/1/link_layer"
	sed -e "s#/sys/class/infiniband#$f/ib#g" -e "s#/sys/kernel/config/rdma_cm#$f/cm#g" \
		-e 's#mkdir -p "$CM/$dev" \&\&#mkdir -p "$CM/$dev/ports/$port" \&\&#' "$1" >"$f/script"
	if sh "$f/script" && [ "$(cat "$f/cm/mlx5_0/ports/1/default_roce_tos")" = 104 ] && [ ! -e "$f/cm/mlx5_1" ]; then
		pass "tos: the script sets the RoCE port and leaves the InfiniBand one"
	else
		fail "tos: the script on a fake tree"; find "$f/cm" >&2
	fi
}

modules() {
	copy h100-no-rdma-provider
	r=$TMP/h100-no-rdma-provider
	cycle h100-no-rdma-provider rdma.modules
	a=$TMP/h100-no-rdma-provider.after.json
	is_status "$a" rdma.modules ib_uverbs "fail pending"
	is_status "$a" rdma.modules rdma_ucm "warn pending"
	is_status "$a" rdma.modules mlx5_ib "fail pending"
	contains "$TMP/h100-no-rdma-provider.after.txt" "it takes effect at the next module reload or reboot" "modules: the report says pending"
	contains "$TMP/h100-no-rdma-provider.again" "1 pending" "modules: pending in the second plan"
	contains "$r/etc/modules-load.d/gpuready-rdma.conf" "mlx5_ib" "modules: loaded at boot"
	reverted h100-no-rdma-provider

	# a module not installed for the running kernel: a manual step
	copy h100-no-rdma-provider
	sed -i '/mlx5_ib/d' "$r"/lib/modules/*/modules.dep
	"$BIN" fix --sysroot "$r" >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "mlx5_ib is not installed for kernel 6.8.0-52-generic" "modules: not installed is manual"
	rm "$r"/lib/modules/*/modules.dep
	"$BIN" fix --sysroot "$r" >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "cannot tell whether ib_uverbs is installed" "modules: no modules.dep is manual"
	lacks "$TMP/plan.txt" "load the missing RDMA modules" "modules: nothing planned without modules.dep"
}

peermem() {
	copy h100-roce-broken
	r=$TMP/h100-roce-broken
	for t in "$r" "$r.orig"; do
		mkdir -p "$t/etc/modules-load.d"
		printf 'nvidia_peermem\n# GPUDirect\nnvidia-uvm\n' >"$t/etc/modules-load.d/gpudirect.conf"
	done
	"$BIN" fix --sysroot "$r" --only gpudirect.peermem >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "-nvidia_peermem" "peermem: the modules-load.d line is removed"
	"$BIN" fix --sysroot "$r" --only gpudirect.peermem --apply >/dev/null 2>&1
	if [ "$(cat "$r/etc/modules-load.d/gpudirect.conf")" = "$(printf '# GPUDirect\nnvidia-uvm')" ]; then
		pass "peermem: every other byte of the operator's file kept"
	else
		fail "peermem: gpudirect.conf is now: $(cat "$r/etc/modules-load.d/gpudirect.conf")"
	fi
	is_status_now() { "$BIN" check --sysroot "$r" --json >"$TMP/now.json" 2>/dev/null; is_status "$TMP/now.json" "$@"; }
	is_status_now gpudirect.peermem nvidia_peermem "warn pending"
	reverted h100-roce-broken

	# a package's modules-load.d file, or a unit running modprobe: manual
	copy h100-roce-broken
	mkdir -p "$r/usr/lib/modules-load.d"
	echo nvidia-peermem >"$r/usr/lib/modules-load.d/nvidia-peermem.conf"
	"$BIN" fix --sysroot "$r" --only gpudirect.peermem >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "/usr/lib/modules-load.d/nvidia-peermem.conf loads nvidia_peermem by name at boot" "peermem: a package's file is manual"
	rm "$r/usr/lib/modules-load.d/nvidia-peermem.conf"
	printf '[Service]\nExecStart=/sbin/modprobe nvidia-peermem\n' >"$r/etc/systemd/system/gpu-tune.service"
	"$BIN" fix --sysroot "$r" --only gpudirect.peermem >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "/etc/systemd/system/gpu-tune.service runs modprobe for nvidia_peermem" "peermem: a unit loading it is manual"

	# the proprietary driver: peer memory is the path, nothing to unload
	copy h100-proprietary-peermem
	"$BIN" fix --sysroot "$TMP/h100-proprietary-peermem" >"$TMP/plan.txt" 2>&1
	lacks "$TMP/plan.txt" "unload nvidia_peermem" "peermem: kept where DMA-BUF is not usable"
}

acs_iommu() {
	copy h100-acs-iommu
	r=$TMP/h100-acs-iommu
	"$BIN" fix --sysroot "$r" >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "held: disruptive" "acs: held unless allowed"
	cycle h100-acs-iommu gpudirect.acs gpudirect.iommu
	a=$TMP/h100-acs-iommu.after.json
	is_status "$a" gpudirect.acs 0000:4a:00.0 ok
	is_status "$a" gpudirect.acs 0000:b9:01.0 ok
	is_status "$a" gpudirect.iommu iommu "warn pending"
	contains "$TMP/h100-acs-iommu.after.txt" "it takes effect at the next module reload or reboot" "iommu: the report says pending"
	u=$r/etc/systemd/system/gpuready-acs-off.service
	contains "$u" "ExecStart=setpci -s 0000:4a:00.0 ECAP_ACS+0x6.w=0000" "acs: the unit clears the first bridge"
	contains "$u" "ExecStart=setpci -s 0000:b9:01.0 ECAP_ACS+0x6.w=0000" "acs: and the second"
	cfg=sys/devices/pci0000:48/0000:48:01.0/0000:49:00.0/0000:4a:00.0/config
	n=$(cmp -l "$TMP/h100-acs-iommu.orig/$cfg" "$r/$cfg" | wc -l)
	[ "$n" -ge 1 ] && [ "$n" -le 2 ] && pass "acs: only the ACS Control word changed ($n bytes)" || fail "acs: $n bytes changed"
	contains "$r/etc/default/grub.d/gpuready.cfg" 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT iommu=pt"' "iommu: the GRUB drop-in"
	reverted h100-acs-iommu

	# RHEL family: grubby, by hand
	copy h100-acs-iommu
	printf 'NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\n' >"$r/etc/os-release"
	"$BIN" fix --sysroot "$r" >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "grubby --update-kernel=ALL --args=iommu=pt" "iommu: RHEL is manual with grubby"
	lacks "$TMP/plan.txt" "/etc/default/grub.d/gpuready.cfg" "iommu: no GRUB drop-in on RHEL"
	# an operator's unit of our name
	copy h100-acs-iommu
	printf '[Service]\nExecStart=/bin/true\n' >"$r/etc/systemd/system/gpuready-acs-off.service"
	"$BIN" fix --sysroot "$r" >"$TMP/plan.txt" 2>&1
	contains "$TMP/plan.txt" "gpuready-acs-off.service exists and was not written by gpuready" "acs: an operator's unit is kept"
}

case "${1:-all}" in
tos) tos ;;
modules) modules ;;
peermem) peermem ;;
acs) acs_iommu ;;
*) tos; modules; peermem; acs_iommu ;;
esac
[ "$FAILS" -eq 0 ] || exit 1
