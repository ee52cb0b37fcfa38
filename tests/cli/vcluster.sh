# A virtual cluster on one machine, for tests/cli/cluster_netns.sh and
# perf/vcluster.sh: N network namespaces, each a "node" with its own UTS
# namespace (host name nodeNN) and an OpenSSH sshd, joined by veth pairs to
# one Linux bridge in a further namespace (the "hub"), from which ssh,
# `gpuready cluster check --hosts` and mpirun are run. Nothing changes in
# the machine's own network namespace or files: the /24 and the bridge exist
# only inside this run's namespaces, the names carry the caller's PID, and
# sshd's privilege-separation directory (/run/sshd) is a tmpfs in a private
# mount namespace, where root's shell startup files are hidden too.
#
#   vc_skip_unless_able        exit 77 (meson's skip) unless root with ip
#                              netns, unshare, sshd, ssh and ssh-keygen, and
#                              a namespace with a bridge and a veth pair
#                              can be made
#   vc_up N DIR BIN            the namespaces, keys, sshd configs, an ssh
#                              config DIR/ssh_config naming node01..nodeNN,
#                              and DIR/remote-gpuready, a wrapper that runs
#                              BIN with --sysroot DIR/trees/$(hostname)
#   vc_sshd K                  starts node K's sshd (a node never started
#                              is down: its address refuses connections)
#   vc_wait_ssh DEADLINE K...  polls port 22 of nodes K... (at most
#                              DEADLINE seconds); 0 when all listen
#   vc_tree K SRC              node K's machine tree: a copy of SRC, made of
#                              hard links where it can (gpuready only reads)
#   vc_tree_set K PATH TEXT    writes TEXT into PATH of node K's tree as a
#                              new file (never through a hard link)
#   vc_hub CMD...              runs CMD in the hub namespace
#   vc_launch_wrapper N        DIR/launch-gpuready: BIN for `mpirun ...
#                              cluster check` on nodes 1..N, rank R reading
#                              node R+1's tree through the test-only
#                              GPUREADY_TEST_RANK_TREES (the R-th directory
#                              of DIR/ranktrees, named by it); it refuses to
#                              run when that is not its own host name
#   vc_mpirun HOSTFILE CMD...  mpirun in the hub, ssh as its agent, one
#                              process per node of HOSTFILE, Open MPI's TCP
#                              traffic on the /24 (the daemons on the nodes
#                              connect back to mpirun at the bridge's address)
#   vc_down                    kills every process in the namespaces and
#                              deletes them (the bridge goes with the hub)
#
# A node K whose DIR/hang/nodeKK exists never answers: its wrapper sleeps.
# shellcheck shell=sh

VC_NS=grvc$$
VC_NODES=0
# 10.213.X.0/24, X from the PID: the net lives in private namespaces only,
# so this cannot clash with the machine's addresses or another run's.
VC_NET=10.213.$(($$ % 250 + 1))
VC_DIR=

vc_skip_unless_able() {
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: not root (network namespaces need it)"; exit 77; }
	for t in ip unshare /usr/sbin/sshd ssh ssh-keygen; do
		command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t is missing"; exit 77; }
	done
	ip netns add "$VC_NS-probe" 2>/dev/null || { echo "SKIP: cannot create a network namespace"; exit 77; }
	ip -n "$VC_NS-probe" link add vcprobe0 type bridge 2>/dev/null &&
		ip -n "$VC_NS-probe" link add vcprobe1 type veth peer name vcprobe2 2>/dev/null
	ok=$?
	ip netns del "$VC_NS-probe"
	[ "$ok" -eq 0 ] || { echo "SKIP: cannot create a bridge or a veth pair in a network namespace"; exit 77; }
}

vc_name() { printf 'node%02d\n' "$1"; }
vc_addr() { echo "$VC_NET.$(($1 + 1))"; }
# Every command in the hub has a deadline (VC_TIMEOUT seconds, default 60),
# and runs in the background under `wait`, which a signal interrupts: the
# caller's trap runs at once instead of when the command ends.
vc_hub() {
	timeout -k 2 "${VC_TIMEOUT:-60}" ip netns exec "$VC_NS-hub" "$@" <&0 &
	wait "$!"
}

vc_up() {
	VC_DIR=$2
	mkdir -p "$VC_DIR/trees" "$VC_DIR/hang" "$VC_DIR/log" || return 1
	ip netns add "$VC_NS-hub" || return 1
	ip -n "$VC_NS-hub" link set lo up &&
		ip -n "$VC_NS-hub" link add br0 type bridge &&
		ip -n "$VC_NS-hub" addr add "$VC_NET.1/24" dev br0 &&
		ip -n "$VC_NS-hub" link set br0 up || return 1
	ssh-keygen -q -t ed25519 -N '' -C vcluster-host -f "$VC_DIR/host_key" &&
		ssh-keygen -q -t ed25519 -N '' -C vcluster-client -f "$VC_DIR/client_key" &&
		cp "$VC_DIR/client_key.pub" "$VC_DIR/authorized_keys" || return 1
	: >"$VC_DIR/ssh_config.hosts"
	k=1
	while [ "$k" -le "$1" ]; do
		vc_node "$k" || return 1
		k=$((k + 1))
	done
	# the hosts first: ssh takes the first value it meets for each option
	cat "$VC_DIR/ssh_config.hosts" - >"$VC_DIR/ssh_config" <<EOF
Host *
	User root
	IdentityFile $VC_DIR/client_key
	IdentitiesOnly yes
	UserKnownHostsFile /dev/null
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking no
	BatchMode yes
	ConnectTimeout 5
	LogLevel ERROR
EOF
	cat >"$VC_DIR/remote-gpuready" <<EOF
#!/bin/sh
# gpuready on a virtual node: its own tree, chosen by the UTS host name.
h=\$(hostname)
[ -e "$VC_DIR/hang/\$h" ] && exec sleep 3600
exec "$3" "\$@" --sysroot "$VC_DIR/trees/\$h"
EOF
	chmod 755 "$VC_DIR/remote-gpuready"
	VC_BIN=$3
}

vc_launch_wrapper() {
	mkdir -p "$VC_DIR/ranktrees" || return 1
	k=1
	while [ "$k" -le "$1" ]; do
		ln -s "$VC_DIR/trees/$(vc_name "$k")" "$VC_DIR/ranktrees/" || return 1
		k=$((k + 1))
	done
	cat >"$VC_DIR/launch-gpuready" <<EOF
#!/bin/sh
# gpuready cluster check under mpirun on a virtual node: rank R's tree is
# the R-th of ranktrees/, which must be this node's own.
h=\$(hostname)
mine=\$(ls "$VC_DIR/ranktrees" | sed -n "\$((\${OMPI_COMM_WORLD_RANK:-0} + 1))p")
[ "\$mine" = "\$h" ] || { echo "rank \${OMPI_COMM_WORLD_RANK:-?} on \$h would read the tree of '\$mine'" >&2; exit 2; }
# Open MPI leaks at exit (as tests/meson.build says for the mpi tests)
ASAN_OPTIONS=detect_leaks=0 GPUREADY_JOB_TOKEN=vcluster-$$ GPUREADY_TEST_RANK_TREES="$VC_DIR/ranktrees" \\
	exec "$VC_BIN" "\$@"
EOF
	chmod 755 "$VC_DIR/launch-gpuready"
}

# vc_node K: namespace, veth into the bridge, address, sshd_config.
vc_tree() {
	t=$VC_DIR/trees/$(vc_name "$1")
	cp -al "$2" "$t" 2>/dev/null || { rm -rf "$t" && cp -a "$2" "$t"; }
}

vc_tree_set() {
	f=$VC_DIR/trees/$(vc_name "$1")/$2
	rm -f "$f" && printf '%s\n' "$3" >"$f"
}

vc_node() {
	ns=$VC_NS-$(vc_name "$1") addr=$(vc_addr "$1")
	ip netns add "$ns" || return 1
	VC_NODES=$1
	ip -n "$ns" link set lo up &&
		ip -n "$VC_NS-hub" link add "v$1" type veth peer name eth0 netns "$ns" &&
		ip -n "$VC_NS-hub" link set "v$1" master br0 up &&
		ip -n "$ns" addr add "$addr/24" dev eth0 &&
		ip -n "$ns" link set eth0 up || return 1
	printf 'Host %s\n\tHostName %s\n' "$(vc_name "$1")" "$addr" >>"$VC_DIR/ssh_config.hosts"
	cat >"$VC_DIR/sshd_config.$1" <<EOF
ListenAddress $addr
HostKey $VC_DIR/host_key
PidFile $VC_DIR/sshd.$1.pid
AuthorizedKeysFile $VC_DIR/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
PermitUserRC no
MaxStartups 200
LogLevel ERROR
EOF
}

# sshd in node K's own UTS and mount namespaces. Root's shell startup files
# (~/.bashrc, which bash reads for a command over ssh, and ~/.zshenv) are
# hidden there under /dev/null: a node runs what it is asked, not the
# machine's login setup (which may wait on locks or print to stdout).
vc_sshd() {
	home=$(getent passwd root | cut -d: -f6)
	# shellcheck disable=SC2016
	ip netns exec "$VC_NS-$(vc_name "$1")" unshare --uts --mount --propagation private sh -c \
		'mount -t tmpfs -o mode=755 vcluster /run && mkdir -m 755 /run/sshd &&
		for f in "$4/.bashrc" "$4/.zshenv"; do [ ! -f "$f" ] || mount --bind /dev/null "$f" || exit 1; done &&
		hostname "$1" && exec /usr/sbin/sshd -D -f "$2" -E "$3"' sh "$(vc_name "$1")" "$VC_DIR/sshd_config.$1" \
		"$VC_DIR/log/sshd.$1" "${home:-/root}" </dev/null >/dev/null 2>&1 &
}

vc_wait_ssh() {
	deadline=$1; shift
	addrs=
	for k in "$@"; do addrs="$addrs $(vc_addr "$k")"; done
	# shellcheck disable=SC2086
	vc_hub python3 - "$deadline" $addrs <<'EOF'
import socket, sys, time
end = time.monotonic() + float(sys.argv[1])
todo = set(sys.argv[2:])
while todo and time.monotonic() < end:
    for a in sorted(todo):
        try:
            socket.create_connection((a, 22), timeout=0.5).close()
            todo.discard(a)
        except OSError:
            pass
    if todo:
        time.sleep(0.1)
if todo:
    print("sshd not listening within %s s on: %s" % (sys.argv[1], " ".join(sorted(todo))), file=sys.stderr)
sys.exit(1 if todo else 0)
EOF
}

vc_mpirun() {
	hf=$1; shift
	vc_hub mpirun --allow-run-as-root --hostfile "$hf" --map-by ppr:1:node \
		-mca plm_rsh_agent "ssh -F $VC_DIR/ssh_config" -mca oob_tcp_if_include "$VC_NET.0/24" \
		-mca btl self,tcp -mca btl_tcp_if_include "$VC_NET.0/24" "$@"
}

vc_down() {
	k=1
	while [ "$k" -le "$VC_NODES" ]; do
		ns=$VC_NS-$(vc_name "$k")
		# shellcheck disable=SC2086
		pids=$(ip netns pids "$ns" 2>/dev/null) && [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
		k=$((k + 1))
	done
	# shellcheck disable=SC2086
	pids=$(ip netns pids "$VC_NS-hub" 2>/dev/null) && [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
	ip netns del "$VC_NS-hub" 2>/dev/null
	VC_NODES=0
	return 0
}
