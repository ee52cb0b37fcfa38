#!/bin/sh
# Slurm integration (docs/cluster.md, "Slurm: drain and resume" and
# "Health-check mode"): `cluster check --drain/--resume [--apply]` and
# `check --health`.
#
#   slurm.sh fake    against tests/cli/fake-scontrol.sh (a file per node):
#                    the printed script, what --apply drains and resumes,
#                    nodes drained for another reason left alone, warn and
#                    unreachable nodes not drained, failures in the exit
#                    status, usage errors, and the health-check mode with a
#                    live probe that never returns (cut off at --budget)
#   slurm.sh real    a one-node Slurm of Debian's slurmctld, slurmd and munge
#                    started here (root only; exit 77 when not root or a
#                    binary is missing): srun runs gpuready on the node,
#                    `cluster check --drain --apply` drains it for real,
#                    `--resume --apply` returns it, a node drained by
#                    someone else is left alone, `check --health --drain
#                    --apply` under srun drains its own node, and `srun -n 4
#                    gpuready cluster check --drain --apply` (the launcher
#                    mode, each rank its own tree) drains it and the
#                    health check with slurmd's SLURMD_NODENAME resumes it. Every
#                    wait has a deadline; every daemon is stopped on exit.
#                    One function per step (step_*), run in order by
#                    real_steps: a new step is one more function there.
set -u

. "$(dirname "$0")/lib.sh"

# What the test's Slurm and munge said, when they do not come up.
slurm_logs() {
	for f in "$S"/*.log "$S"/*.out; do
		[ -f "$f" ] || continue
		echo "== $f" >&2
		tail -n 15 "$f" >&2
	done
	sinfo -N -o '%N %T %E' >&2 2>&1 || true
}

H100=$FIX/h100-8x-cx7-roce/root
FAKE=$SRC/tests/cli/fake-scontrol.sh

# tree NAME DEST [SCENARIO]: a copy of the healthy H100 fixture (or of a
# scenario's tree) whose recorded host name is NAME.
tree() {
	if [ -n "${3-}" ]; then
		sh "$FIX/scenario.sh" "$3" "$2" || fail "scenario.sh $3"
	else
		cp -a "$H100" "$2"
	fi
	echo "$1" >"$2/proc/sys/kernel/hostname"
}

# fake_node NAME STATE [REASON]: what the fake scontrol knows of a node.
fake_node() {
	printf '%s\n%s\n' "$2" "${3-}" >"$FAKE_SCONTROL_DIR/node.$1"
}

# state_is NAME STATE REASON DESCRIPTION
state_is() {
	got=$(cat "$FAKE_SCONTROL_DIR/node.$1")
	want=$(printf '%s\n%s' "$2" "$3")
	[ "$got" = "$want" ] && pass "$4" || fail "$4: $1 is '$got', want '$want'"
}

t_fake() {
	F=$TMP/fleet
	mkdir -p "$F"
	tree n01 "$F/n01"
	tree n02 "$F/n02"
	tree n03 "$F/n03" F02-fabricmanager-version
	tree n04 "$F/n04"
	cp -a "$FIX/h100-nic-other-socket/root" "$F/n05" && echo n05 >"$F/n05/proc/sys/kernel/hostname"
	tree n06 "$F/n06" F02-fabricmanager-version
	ALL="$F/n01 $F/n02 $F/n03 $F/n04 $F/n05 $F/n06 $F/gone"
	# --resume reads the nodes live (never from snapshots, which may be
	# older than the drain): the same fleet through the test's remote shell
	live() {
		GPUREADY_FAKE_RSH_DIR=$F "$BIN" cluster check --hosts 'n[01-06],gone' \
			--rsh "sh '$SRC/tests/cli/fake-rsh.sh' {host}" --remote-gpuready "$BIN" "$@"
	}
	export FAKE_SCONTROL_DIR="$TMP/slurm"
	mkdir -p "$FAKE_SCONTROL_DIR"
	fake_node n01 IDLE
	fake_node n02 IDLE+DRAIN "gpuready: 1 fail 0 warn: gpu.xid 0000:18:00.0"
	fake_node n03 IDLE
	fake_node n04 IDLE+DRAIN "maintenance: DIMM swap, ticket 42"
	fake_node n05 MIXED+DRAIN "gpuready: 1 fail 0 warn: rdma.mtu rdma"
	fake_node n06 DOWN+DRAIN "power supply"

	# --drain alone: a shell script, nothing asked of Slurm
	# shellcheck disable=SC2086
	expect_exit 1 "$BIN" cluster check --snapshots $ALL --drain --scontrol "$FAKE" && pass "--drain: exit 1 (nodes fail)"
	cp "$TMP/out" "$TMP/drain.sh"
	contains "$TMP/drain.sh" "# 7 nodes: 3 pass, 1 warn, 2 fail, 1 unreachable" "--drain: the summary as a comment"
	contains "$TMP/drain.sh" "$FAKE update NodeName=n03 State=DRAIN Reason=\"gpuready: 1 fail 0 warn: gpu.fabricmanager" \
		"--drain: n03's drain command with its reason"
	contains "$TMP/drain.sh" "# n05: warns, not drained: gpuready 0 fail" "--drain: a warning node is a comment"
	contains "$TMP/drain.sh" "# gone: unreachable, not drained" "--drain: an unreachable node is a comment"
	lacks "$TMP/drain.sh" "NodeName=n01" "--drain: a passing node is not named"
	lacks "$TMP/drain.sh" "11 nodes" "--drain: no report"
	[ -e "$FAKE_SCONTROL_DIR/calls" ] && fail "--drain without --apply ran scontrol" || pass "--drain without --apply runs nothing"
	n=$(grep -vc '^#' "$TMP/drain.sh")
	[ "$n" -eq 2 ] && pass "--drain: two commands (n03, n06)" || fail "--drain: $n commands, want 2"
	# the printed script is a script: sh runs it, the reason arrives whole
	grep -F 'NodeName=n03' "$TMP/drain.sh" | sh || fail "the printed command runs"
	reason=$(grep -F 'NodeName=n03' "$TMP/drain.sh" | sed 's/.*Reason="\(.*\)"$/\1/')
	state_is n03 IDLE+DRAIN "$reason" "the printed command drains n03 with its reason through sh"
	fake_node n03 IDLE
	rm -f "$FAKE_SCONTROL_DIR/calls"

	# --resume alone: reads Slurm, prints the commands, changes nothing
	# shellcheck disable=SC2086
	expect_exit 2 "$BIN" cluster check --snapshots $ALL --resume --scontrol "$FAKE" &&
		contains "$TMP/err" "not from --snapshots, which may be older than the drain" "--resume from snapshots: refused"
	expect_exit 1 live --resume --scontrol "$FAKE" && pass "--resume: exit 1"
	contains "$TMP/out" "$FAKE update NodeName=n02 State=RESUME" "--resume: n02 (drained by gpuready, passes now)"
	contains "$TMP/out" "$FAKE update NodeName=n05 State=RESUME" "--resume: n05 (drained by gpuready, warns now)"
	contains "$TMP/out" "# n04: pass, left alone: drained for another reason (maintenance: DIMM swap, ticket 42)" \
		"--resume: n04, drained by someone else, left alone"
	lacks "$TMP/out" "NodeName=n03" "--resume: a failing node is not resumed"
	state_is n02 IDLE+DRAIN "gpuready: 1 fail 0 warn: gpu.xid 0000:18:00.0" "--resume without --apply changes nothing"

	# --drain --resume --apply
	# shellcheck disable=SC2086
	expect_exit 1 live --drain --resume --apply --scontrol "$FAKE" \
		&& pass "--drain --resume --apply: exit 1 (nodes fail)"
	cp "$TMP/out" "$TMP/apply.out"
	state_is n01 IDLE "" "--apply: n01 untouched"
	state_is n02 IDLE "" "--apply: n02 resumed"
	state_is n03 IDLE+DRAIN "$reason" "--apply: n03 drained with gpuready's reason"
	state_is n04 IDLE+DRAIN "maintenance: DIMM swap, ticket 42" "--apply: n04 (another reason) left alone"
	state_is n05 IDLE "" "--apply: n05 (warns) resumed"
	state_is n06 DOWN+DRAIN "power supply" "--apply: n06 fails but is drained for another reason: left alone"
	contains "$TMP/apply.out" "# n03: drained" "--apply: says n03 was drained"
	contains "$TMP/apply.out" "# n06: fails, left alone: already drained for another reason (power supply)" \
		"--apply: says why n06 was left alone"
	lacks "$FAKE_SCONTROL_DIR/calls" "update|NodeName=n04" "--apply: no update of n04"
	lacks "$FAKE_SCONTROL_DIR/calls" "update|NodeName=n06" "--apply: no update of n06"
	lacks "$FAKE_SCONTROL_DIR/calls" "NodeName=gone" "--apply: nothing for an unreachable node"

	# a node Slurm does not know: reported, exit 2
	rm "$FAKE_SCONTROL_DIR/node.n01"
	# shellcheck disable=SC2086
	expect_exit 2 live --resume --apply --scontrol "$FAKE" \
		&& pass "a failed scontrol: exit 2"
	contains "$TMP/out" "# n01: FAILED: cannot read its Slurm state:" "the failed node is named"
	contains "$TMP/out" "Node n01 not found" "with scontrol's message"
	contains "$TMP/err" "1 node: the scontrol command failed" "and said on standard error"
	expect_exit 2 "$BIN" cluster check --snapshots "$F/n03" --drain --apply --scontrol "$TMP/none" \
		&& contains "$TMP/out" "cannot run $TMP/none" "scontrol missing: exit 2, named"

	# the health-check mode on a tree
	fake_node n03 IDLE
	expect_exit 1 "$BIN" check --health --sysroot "$F/n03" --drain --apply --scontrol "$FAKE" \
		&& pass "check --health on a failing node: exit 1"
	head -1 "$TMP/out" >"$TMP/line"
	contains "$TMP/line" "gpuready 1 fail 0 warn: gpu.fabricmanager" "check --health: the --reason line first"
	state_is n03 IDLE+DRAIN "$reason" "check --health --drain --apply drains its node (the recorded host name)"
	expect_exit 0 "$BIN" check --health --sysroot "$F/n01" --node-name n03 --resume --apply --scontrol "$FAKE" \
		&& pass "check --health on a healthy node: exit 0"
	state_is n03 IDLE "" "check --health --resume --apply resumes it (--node-name)"
	contains "$TMP/out" "gpuready ok:" "healthy: the ok line"
	expect_exit 0 "$BIN" check --health --sysroot "$F/n01"
	n=$(wc -l <"$TMP/out")
	[ "$n" -eq 1 ] && pass "check --health prints one line" || fail "check --health printed $n lines"

	# usage
	expect_exit 2 "$BIN" cluster check --snapshots "$F/n01" --apply && contains "$TMP/err" "--apply runs the commands" "--apply alone"
	expect_exit 2 "$BIN" cluster check --snapshots "$F/n01" --drain --json && pass "--drain --json refused"
	expect_exit 2 "$BIN" check --sysroot "$F/n01" --drain && contains "$TMP/err" "need --health" "check --drain needs --health"
	expect_exit 2 "$BIN" check --health --json --sysroot "$F/n01" && pass "check --health --json refused"
	expect_exit 2 "$BIN" check --budget 5 --sysroot "$F/n01" && contains "$TMP/err" "are for check --health" \
		"check --budget needs --health"
	expect_exit 2 "$BIN" check --health --strict --sysroot "$F/n01" && pass "check --health --strict refused"
	# the printed form of the health mode: the line, then the command
	expect_exit 1 "$BIN" check --health --sysroot "$F/n06" --drain --scontrol "$FAKE"
	sed -n 2p "$TMP/out" >"$TMP/line2"
	contains "$TMP/line2" "$FAKE update NodeName=n06 State=DRAIN Reason=\"gpuready: 1 fail" \
		"check --health --drain prints the drain command after the line"

	# a live probe that never returns is cut off at the budget: the run
	# ends and says so (the fake NVML blocks in nvmlDeviceGetTemperature)
	if [ -n "${GPUREADY_FAKE_NVML-}" ]; then
		LD_LIBRARY_PATH=$GPUREADY_FAKE_NVML FAKE_NVML_INIT=0 FAKE_NVML_GPUS=2 \
			FAKE_NVML_HANG=nvmlDeviceGetTemperature $RUN "$BIN" check --health --budget 2 \
			>"$TMP/out" 2>"$TMP/err"
		rc=$?
		[ "$rc" -lt 124 ] && pass "check --health ended with a probe that never returns (exit $rc)" \
			|| fail "check --health did not end"
		contains "$TMP/out" "live probes cut off at the 2 s budget" "the line says the live probes were cut off"
	fi
	# the PyTorch probe's Python, in a process group of its own, is killed
	# with the rest at the budget: the fixture's /sys (with GPUs) over the
	# live one in a private mount namespace, and a "python" that never ends
	if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
		printf '#!/bin/sh\necho $$ >"%s"\nexec sleep 300\n' "$TMP/py.pid" >"$TMP/slowpy"
		chmod +x "$TMP/slowpy"
		GPUREADY_PROBE_TIMEOUT=1 $RUN unshare -m sh -c 'mount --bind "$1/sys" /sys && exec "$2" check --health --budget 4 --python "$3"' \
			sh "$H100" "$BIN" "$TMP/slowpy" >"$TMP/out" 2>"$TMP/err"
		contains "$TMP/out" "live probes cut off at the 4 s budget" "a Python that never ends is cut off"
		if [ -s "$TMP/py.pid" ]; then
			pid=$(cat "$TMP/py.pid") i=0
			while kill -0 "$pid" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
			if kill -0 "$pid" 2>/dev/null; then
				fail "the probe's Python ($pid) outlived check --health"; kill -9 "$pid"
			else
				pass "the probe's Python is gone with check --health"
			fi
		else
			echo "(the PyTorch probe did not start within the budget here: not asserted)"
		fi
	fi
}

# ---- a real one-node Slurm ----

NODE=gpr-node1
# every command against the test's Slurm: at most 25 s, in this process group
RUN="timeout --foreground -k 5 25"
SLURMD_PID="" CTLD_PID="" MUNGED_PID=""

stop_daemons() {
	for p in $SLURMD_PID $CTLD_PID; do
		kill "$p" 2>/dev/null
	done
	i=0
	while [ $i -lt 50 ]; do
		alive=""
		for p in $SLURMD_PID $CTLD_PID; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ -z "$alive" ] && break
		sleep 0.1; i=$((i + 1))
	done
	for p in $SLURMD_PID $CTLD_PID; do kill -9 "$p" 2>/dev/null; done
	# what this Slurm started and left (a slurmstepd, a task): the
	# processes whose environment names this test's slurm.conf, by pid
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}; p=${p%/environ}
		[ "$p" = $$ ] && continue
		tr '\0' '\n' 2>/dev/null <"$e" | grep -qxF "SLURM_CONF=$S/slurm.conf" && kill -9 "$p" 2>/dev/null
	done
	[ -n "$MUNGED_PID" ] && kill "$MUNGED_PID" 2>/dev/null
	SLURMD_PID="" CTLD_PID="" MUNGED_PID=""
}

# wait_for DESC SECONDS CMD...: runs CMD every 0.2 s until it succeeds.
wait_for() {
	desc=$1 secs=$2; shift 2
	n=$((secs * 5))
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2; n=$((n - 1))
	done
	fail "$desc: not within $secs s"
	return 1
}

node_idle() { sinfo -h -N -n "$NODE" -o '%T' | grep -qx idle; }
node_state() { scontrol show node -o "$NODE" | tr ' ' '\n' | sed -n 's/^State=//p'; }
node_reason() { scontrol show node -o "$NODE" | sed -n 's/.* Reason=\(.*\) \[.*\]$/\1/p'; }

step_start() {
	S=$TMP/slurm
	mkdir -p "$S/state" "$S/spool"
	chmod 700 "$S"
	dd if=/dev/urandom of="$S/munge.key" bs=1024 count=1 2>/dev/null && chmod 600 "$S/munge.key"
	# every daemon is a child of this shell, in its process group (no
	# daemon forks away): a test runner that kills the group ends them too
	munged --foreground --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
		--log-file="$S/munged.log" --seed-file="$S/munge.seed" --force >"$S/munged.out" 2>&1 &
	MUNGED_PID=$!
	wait_for "munged's socket" 10 test -S "$S/munge.sock" || { cat "$S/munged.out" "$S/munged.log" >&2; return 1; }
	p1=$(free_port) p2=$(free_port)
	cat >"$S/slurm.conf" <<EOF
ClusterName=gpureadytest
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$p1
SlurmdPort=$p2
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$NODE NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
	export SLURM_CONF="$S/slurm.conf"
	slurmctld -D -c -i >"$S/slurmctld.out" 2>&1 &
	CTLD_PID=$!
	# slurmd (22.05) starts its cgroup plugin whatever the proctrack and
	# task plugins; a root without cgroupfs (a chroot) gets cgroup v1
	# mounted by slurmd itself under $S/cgroup (cgroup.conf(5):
	# CgroupAutomount, CgroupMountpoint "for development and testing"), in
	# a mount namespace of its own so that the mounts go with it
	if mountpoint -q /sys/fs/cgroup 2>/dev/null; then
		slurmd -D -N "$NODE" >"$S/slurmd.out" 2>&1 &
	else
		mkdir -p "$S/cgroup"
		printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=yes\nCgroupMountpoint=%s\n' "$S/cgroup" >"$S/cgroup.conf"
		unshare -m --propagation private slurmd -D -N "$NODE" >"$S/slurmd.out" 2>&1 &
	fi
	SLURMD_PID=$!
	wait_for "the node idle in sinfo" 20 node_idle || { slurm_logs; return 1; }
	pass "a one-node Slurm is up ($NODE idle)"
}

# srun runs gpuready four times on the node, each task with its own name
step_srun_facts() {
	$RUN srun -N1 -n 4 -t 1 sh -c \
		'exec "$0" cluster facts --sysroot "$1" --node-name "n$SLURM_PROCID" >"$2/rec.$SLURM_PROCID"' \
		"$BIN" "$H100" "$TMP" 2>"$TMP/srun.err"
	rc=$?
	[ "$rc" -eq 0 ] && pass "srun -n 4 gpuready cluster facts: exit 0" || { fail "srun exited $rc"; cat "$TMP/srun.err" >&2; }
	for i in 0 1 2 3; do
		contains "$TMP/rec.$i" "\"node\": \"n$i\"" "task $i's record names n$i"
	done
	contains "$TMP/rec.0" "\"reason\": \"gpuready ok:" "the records are the healthy fixture's"
}

step_drain() {
	tree "$NODE" "$TMP/snap-$NODE" F02-fabricmanager-version
	tree gpr-ok1 "$TMP/snap-ok1"
	$RUN "$BIN" cluster check --snapshots "$TMP/snap-ok1" "$TMP/snap-$NODE" --drain --apply \
		--scontrol scontrol >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 1 ] && pass "--drain --apply: exit 1 (a node fails)" \
		|| { fail "--drain --apply exited $rc"; cat "$TMP/out" "$TMP/err" >&2; }
	contains "$TMP/out" "# $NODE: drained" "--drain --apply says $NODE was drained"
	st=$(node_state) why=$(node_reason)
	case $st in *DRAIN*) pass "Slurm shows $NODE $st" ;; *) fail "Slurm shows $NODE $st, not drained" ;; esac
	case $why in "gpuready: 1 fail 0 warn: gpu.fabricmanager"*) pass "with gpuready's reason: $why" ;;
		*) fail "reason is '$why'" ;; esac
}

# --resume asks the node live: here through the test's remote shell, which
# gives the host its tree ($TMP/ok/$NODE)
resume_live() {
	GPUREADY_FAKE_RSH_DIR=$TMP/ok $RUN "$BIN" cluster check --hosts "$NODE" \
		--rsh "sh '$SRC/tests/cli/fake-rsh.sh' {host}" --remote-gpuready "$BIN" --resume --apply --scontrol scontrol \
		>"$TMP/out" 2>"$TMP/err"
}

step_resume() {
	tree "$NODE" "$TMP/ok-$NODE"
	mkdir -p "$TMP/ok" && ln -sfn "$TMP/ok-$NODE" "$TMP/ok/$NODE"
	resume_live
	rc=$?
	[ "$rc" -eq 0 ] && pass "--resume --apply: exit 0" || { fail "--resume --apply exited $rc"; cat "$TMP/out" "$TMP/err" >&2; }
	contains "$TMP/out" "# $NODE: resumed" "--resume --apply says $NODE was resumed"
	wait_for "$NODE idle again" 10 node_idle && pass "Slurm shows $NODE idle again"
}

step_someone_else() {
	scontrol update NodeName="$NODE" State=DRAIN Reason="maintenance by bob" || fail "scontrol drain by hand"
	resume_live
	contains "$TMP/out" "# $NODE: pass, left alone: drained for another reason (maintenance by bob)" \
		"a node drained by someone else is left alone"
	why=$(node_reason)
	[ "$why" = "maintenance by bob" ] && pass "its reason is unchanged" || fail "its reason is now '$why'"
	scontrol update NodeName="$NODE" State=RESUME || fail "scontrol resume by hand"
	wait_for "$NODE idle again" 10 node_idle
}

# the health-check mode on the node, as a prolog or HealthCheckProgram
# runs it: SLURMD_NODENAME names the node to drain
step_health() {
	tree elsewhere "$TMP/hc-fail" F02-fabricmanager-version
	$RUN srun -N1 -n 1 -t 1 "$BIN" check --health --sysroot "$TMP/hc-fail" --drain --apply \
		--scontrol scontrol >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 1 ] && pass "srun gpuready check --health on a failing tree: exit 1" \
		|| { fail "check --health exited $rc"; cat "$TMP/out" "$TMP/err" >&2; }
	contains "$TMP/out" "# $NODE: drained" "check --health --drain --apply drained \$SLURMD_NODENAME"
	case $(node_state) in *DRAIN*) pass "Slurm shows $NODE drained by the health check" ;;
		*) fail "$NODE not drained by the health check" ;; esac
	$RUN "$BIN" check --health --sysroot "$TMP/ok-$NODE" --resume --apply --scontrol scontrol \
		>"$TMP/out" 2>"$TMP/err"
	wait_for "$NODE idle after check --health --resume --apply" 10 node_idle && pass "check --health --resume --apply"
}

# the launcher mode: srun starts four ranks on the node, each with its own
# tree (GPUREADY_TEST_RANK_TREES, test-only), rank 0 aggregates and drains
# the failing one, which is this Slurm's node, for real
step_srun_cluster_check() {
	# rank 0's address: the node's name is no DNS name here
	JOBOPTS="--master 127.0.0.1:$(free_port) --connect-timeout 15 --host-timeout 15"
	R=$TMP/ranks
	mkdir -p "$R"
	tree "$NODE" "$R/$NODE" F02-fabricmanager-version
	for n in r1 r2 r3; do tree "$n" "$R/$n"; done
	GPUREADY_TEST_RANK_TREES=$R $RUN srun -N1 -n 4 -t 1 "$BIN" cluster check --drain --apply \
		--scontrol scontrol $JOBOPTS >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 1 ] && pass "srun -n 4 gpuready cluster check --drain --apply: exit 1 (a node fails)" \
		|| { fail "srun cluster check exited $rc"; cat "$TMP/out" "$TMP/err" >&2; }
	contains "$TMP/out" "# 4 nodes: 3 pass, 0 warn, 1 fail, 0 unreachable" "rank 0 aggregated the four ranks"
	contains "$TMP/out" "# $NODE: drained" "rank 0 drained $NODE"
	case $(node_state) in *DRAIN*) pass "Slurm shows $NODE drained by the launched cluster check" ;;
		*) fail "$NODE not drained by the launched cluster check" ;; esac
	# Slurm starts no step on a drained node, so no launched run can see
	# it again: slurmd's HealthCheckProgram (it sets SLURMD_NODENAME) can
	$RUN env SLURMD_NODENAME="$NODE" "$BIN" check --health --sysroot "$TMP/ok-$NODE" --resume --apply \
		--scontrol scontrol >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 0 ] && pass "check --health --resume --apply as the HealthCheckProgram: exit 0" \
		|| { fail "check --health --resume exited $rc"; cat "$TMP/out" "$TMP/err" >&2; }
	contains "$TMP/out" "# $NODE: resumed" "the health check resumed $NODE (\$SLURMD_NODENAME)"
	wait_for "$NODE idle after the health check's --resume" 10 node_idle && pass "Slurm shows $NODE idle again"
}

real_steps() {
	step_start || return
	step_srun_facts
	step_drain
	step_resume
	step_someone_else
	step_health
	step_srun_cluster_check
}

t_real() {
	[ "$(id -u)" -eq 0 ] || { echo "not root: a Slurm of our own needs root"; exit 77; }
	for b in munged slurmctld slurmd srun sinfo scontrol; do
		command -v "$b" >/dev/null || { echo "no $b (Debian: slurmctld slurmd slurm-client munge)"; exit 77; }
	done
	S=$TMP/slurm
	trap 'stop_daemons; rm -rf "$TMP"' EXIT
	trap 'exit 1' INT TERM
	real_steps
	stop_daemons
}

case ${1:-} in
fake) t_fake ;;
real) t_real ;;
*) echo "usage: slurm.sh fake|real" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ] || exit 1
