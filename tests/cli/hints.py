#!/usr/bin/env python3
"""The hints of `gpuready check --json` reports, one report per node:

  - every warn and fail has a hint;
  - every command in backticks in a hint (each part of a pipeline or
    && / || / ; list), and every command of gpudirect.next_steps, is
    runnable as written: its binary is on TOOLS, its options are ones the
    binary documents (its manual page, or for gpuready its own --help),
    its subcommand is one the binary has, and a hint names the node's own
    devices (no <placeholder>; next_steps may leave the peer's address,
    <server-ip>, <ip> and the node rank, to the operator); a new tool or
    option is added here on purpose;
  - no hint proposes what another finding on the same node says is
    impossible: findings export facts ("gdr_possible.mlx4_0=false"),
    findings declare what their hint or commands require ("key": key is
    never false; "key=value": key is never set to another value), and the
    two are joined here (docs/report-schema.md).

Usage: hints.py --gpuready BIN REPORT.json...  Prints one line per problem;
exit 1 if any, 2 if no report exports a fact or declares a requirement
(the join would prove nothing)."""
import json
import re
import subprocess
import sys

# binary -> (options it documents, its subcommands or None, whether one
# is required). Options are
# matched before any "="; a short option may carry its value attached
# (-i0). Sources: each tool's manual page (apt-get(8), dmesg(1),
# ethtool(8), grep(1), ibstat(8), ip(8), lspci(8), modprobe(8), mount(8), sysctl(8),
# systemctl(1), udevadm(8), setpci(8), dcb(8), nvidia-smi(1) (its `mig` subcommand's -dci/-dgi),
# rdma(8)), NVIDIA's
# MFT and MLNX_OFED user manuals (mlxfwmanager, mlxfwreset, mlxlink,
# mlnx_qos), perftest's --help (ib_write_bw) and PyTorch's torchrun
# documentation.
ANY = None
TOOLS = {
    "apt": ({"-y", "--reinstall"}, {"install", "remove", "purge", "update", "upgrade"}, True),
    "cat": (set(), None),
    # dcb(8), iproute2's DCB tool: `dcb pfc set dev IF prio-pfc P:on` and
    # `dcb app add dev IF dscp-prio D:P` (rdma.roce_pfc: PFC and DSCP trust
    # of a RoCE netdev, through rtnetlink DCB as the check reads them)
    "dcb": ({"-j", "-p", "-s", "-n", "-i", "-N", "-b", "-f"}, {"pfc", "app", "ets", "buffer", "dcbx", "maxrate",
                                                            "apptrust", "rewr"}, True),
    "df": ({"-h"}, None),  # df(1): the size of /dev/shm inside a container (rdma.dev_shm)
    "dmesg": ({"-T", "-w", "-k", "-l", "--level"}, None),
    "echo": (set(), None),
    "ethtool": ({"-i", "-S", "-m", "-a", "-k", "-g", "--show-priv-flags"}, None),
    "gpuready": (ANY, None),  # checked against its own --help
    "grep": ({"-i", "-E", "-r", "-v", "-c", "-l", "-H", "-s", "-e"}, None),
    "ib_write_bw": ({"-d", "-a", "-i", "-x", "-s", "-n", "-D", "-q", "-b", "-F", "-R", "-T", "--report_gbits",
                     "--use_cuda", "--use_cuda_dmabuf", "--perform_warm_up", "--tclass"}, None),
    # ibstat(8) (infiniband-diags): `ibstat DEV` shows a device's ports, their state and rate
    # (cluster links' hints for an RDMA rail)
    "ibstat": ({"-l", "-s", "-p"}, None),
    "ibv_devinfo": ({"-d", "-i", "-v", "-l"}, None),
    "ip": ({"-br", "-brief", "-d", "-s", "-4", "-6"}, {"addr", "address", "link", "route", "neigh", "rule"}, True),
    "ls": ({"-l", "-d", "-L", "-1", "-la"}, None),
    "lspci": ({"-d", "-s", "-v", "-vv", "-vvv", "-nn", "-k", "-t", "-D", "-x"}, None),
    "mkdir": ({"-p"}, None),
    "mlnx_qos": ({"-i", "--trust", "--pfc", "--prio_tc", "--dscp2prio", "--tsa", "--tcbw"}, None),
    "mlxfwmanager": ({"--query", "-u", "-d", "-y", "--online", "-i"}, None),
    "mlxfwreset": ({"-d", "-y", "--level"}, {"reset", "query"}, True),
    "mlxlink": ({"-d", "-p", "-c", "-e", "-m", "--show_module"}, None),
    "modprobe": ({"-a", "-r", "-v"}, None),
    "mount": ({"-t", "-o"}, None),
    "netplan": (set(), {"apply", "try", "generate", "get", "set"}, True),
    "nvidia-bug-report.sh": (set(), None),
    # -c (compute mode: gpu.compute_mode), -pl (power limit) and -rac (reset application clocks:
    # gpu.power_clocks), topo -p2p (P2P status per capability, r or w: gpu.nvml_p2p)
    "nvidia-smi": ({"-q", "-d", "-i", "-r", "-pm", "-e", "-s", "-m", "-L", "--query-gpu", "--format", "-mig",
                    "-dci", "-dgi", "-c", "-pl", "-rac", "-p2p"},
                   {"nvlink", "topo", "mig"}, False),
    "printf": (set(), None),
    "rdma": ({"-d", "-j", "-p"}, {"link", "dev", "resource", "system", "statistic"}, True),
    "setpci": ({"-s", "-d", "-v"}, None),
    "show_gids": (set(), None),
    "sudo": ({"-E"}, None),
    "sysctl": ({"-w", "-p", "-a", "-n", "--system"}, None),
    "systemctl": ({"--now"}, {"enable", "disable", "start", "stop", "restart", "status", "is-active",
                              "daemon-reload", "reboot"}, True),
    "tail": ({"-n", "-f"}, None),
    "torchrun": ({"--nproc_per_node", "--nproc-per-node", "--nnodes", "--node_rank", "--node-rank", "--master_addr",
                  "--master-addr", "--master_port", "--master-port", "--no-python", "--no_python", "--standalone",
                  "--rdzv-endpoint", "--rdzv-backend"}, None),
    "ulimit": ({"-l"}, None),  # bash(1) builtin: a container's locked-memory limit (rdma.memlock)
    "udevadm": ({"--reload", "--action", "-q", "--query", "-p", "--path"}, {"control", "trigger", "info", "settle"},
                True),
    "update-grub": (set(), None),
    "update-initramfs": ({"-u", "-k"}, None),
}
TOOLS = {k: v if len(v) == 3 else (v[0], v[1], False) for k, v in TOOLS.items()}
KNOWN = set(TOOLS)
LAUNCHERS = {"torchrun"}  # run the program that follows their options
# what next_steps may leave to the operator: the peer's address, the node rank
OPERATOR_FILLS = {"<server-ip>", "<ip>", "<0|1>"}


def commands(hint):
    """The commands in backticks, split at |, &&, || and ;."""
    for seg in re.findall(r"`([^`]+)`", hint):
        for part in re.split(r"\|\||&&|[|;]", seg):
            words = part.split()
            if words:
                yield seg, words


def next_steps_commands(details):
    """gpudirect.next_steps' details: "what: command", or "what: server:
    command   client: command"; a detail in words ("not possible with
    mlx4_0 ...": no known binary, no option) is not a command."""
    for line in details:
        _, _, rest = line.partition(": ")
        for cmd in re.split(r"\s*\b(?:server|client):\s+", rest):
            words = cmd.split()
            if words and (words[0] in TOOLS or any(w.startswith("-") for w in words)):
                yield cmd.strip(), words


def gpuready_options(binary, words, cache):
    """The options `gpuready WORDS[0] --help` lists (or `gpuready --help`)."""
    cmd = words[0] if words and not words[0].startswith("-") else ""
    if cmd not in cache:
        out = subprocess.run([binary] + ([cmd] if cmd else []) + ["--help"], capture_output=True, text=True,
                             timeout=30).stdout
        cache[cmd] = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", out))
    return cache[cmd]


def runnable(words, operator_fills, gpuready, cache, launched=False):
    """What is wrong with a command as written, or None (launched: the
    launcher's own options only)."""
    binary, args = words[0], words[1:]
    for ph in re.findall(r"<[^<>]*>", " ".join(words)):
        if ph not in operator_fills:
            return f"{ph} is a placeholder: name this node's own device or value"
    if binary == "sudo":
        args = [a for a in args if a not in TOOLS["sudo"][0]]
        return runnable(args, operator_fills, gpuready, cache) if args else "sudo without a command"
    if binary not in TOOLS:
        return f"starts with {binary}, not a known binary (tests/cli/hints.py)"
    opts, subs, sub_required = TOOLS[binary]
    if binary in LAUNCHERS and not launched:
        # its options (NAME=VALUE), then the program and the program's own
        prog = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
        if prog is None:
            return f"{binary} without a program"
        why = runnable([binary] + args[:prog], operator_fills, gpuready, cache, launched=True)
        return why or runnable(args[prog:], operator_fills, gpuready, cache)
    if binary == "gpuready":
        opts = gpuready_options(gpuready, args, cache)
    for a in args:
        if a.startswith(">") or a.startswith("2>"):
            break  # a redirection: what follows is its file
        name = a.partition("=")[0] if a.startswith("-") else ""
        if name and not re.fullmatch(r"-\d[\d.]*", name) and name not in opts \
                and not (len(name) > 2 and not name.startswith("--") and name[:2] in opts):
            return f"{binary} has no option {name}"
    words_only = [a for a in args if not a.startswith("-")]
    if subs is not None and sub_required and not any(w in subs for w in words_only):
        return f"{binary} needs one of its subcommands ({', '.join(sorted(subs))})"
    if subs is not None and words_only and not sub_required and words_only[0] not in subs \
            and not args[0].startswith("-"):
        return f"{binary} has no subcommand {words_only[0]}"
    return None


def check(path, problems, gpuready, cache):
    report = json.load(open(path))
    facts = {}  # key -> {value: [finding, ...]}
    n_facts = n_requires = 0
    for c in report["checks"]:
        for fact in c.get("facts", []):
            key, _, value = fact.partition("=")
            facts.setdefault(key, {}).setdefault(value, []).append(f"{c['id']} {c['subject']}")
            n_facts += 1
    for c in report["checks"]:
        where = f"{path}: {c['id']} {c['subject']}"
        hint = c.get("hint", "")
        if c["status"] in ("warn", "fail") and not hint.strip():
            problems.append(f"{where}: {c['status']} without a hint")
        cmds = [(seg, words, set()) for seg, words in commands(hint)]
        if c["id"] == "gpudirect.next_steps":
            cmds += [(seg, words, OPERATOR_FILLS) for seg, words in next_steps_commands(c.get("details", []))]
        for seg, words, fills in cmds:
            why = runnable(words, fills, gpuready, cache)
            if why:
                problems.append(f"{where}: `{seg}`: {why}")
        for req in c.get("requires", []):
            n_requires += 1
            key, eq, want = req.partition("=")
            for value, by in facts.get(key, {}).items():
                if (eq and value != want) or (not eq and value == "false"):
                    problems.append(f"{where}: its hint requires {req}, but {', '.join(sorted(set(by)))} "
                                    f"says {key}={value}")
    return n_facts, n_requires


def main():
    if len(sys.argv) < 3 or sys.argv[1] != "--gpuready":
        print(__doc__, file=sys.stderr)
        return 2
    gpuready, paths, cache = sys.argv[2], sys.argv[3:], {}
    problems = []
    n_facts = n_requires = 0
    for path in paths:
        f, r = check(path, problems, gpuready, cache)
        n_facts += f
        n_requires += r
    for p in problems:
        print(p)
    print(f"{len(paths)} reports, {n_facts} facts, {n_requires} requirements, {len(problems)} problems")
    if problems:
        return 1
    return 2 if not n_facts or not n_requires else 0


if __name__ == "__main__":
    sys.exit(main())
