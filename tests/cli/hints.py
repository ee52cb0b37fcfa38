#!/usr/bin/env python3
"""The hints of `gpuready check --json` reports, one report per node:

  - every warn and fail has a hint;
  - every command in backticks in a hint starts with a binary on KNOWN
    (each part of a pipeline or && / ; list), so a hint names a tool an
    operator has, and a new tool is added here on purpose;
  - no hint proposes what another finding on the same node says is
    impossible: findings export facts ("gdr_possible.mlx4_0=false"),
    findings declare what their hint or commands require ("key": key is
    never false; "key=value": key is never set to another value), and the
    two are joined here (docs/report-schema.md).

Usage: hints.py REPORT.json...  Prints one line per problem; exit 1 if any,
2 if no report exports a fact or declares a requirement (the join would
prove nothing)."""
import json
import re
import sys

KNOWN = {
    "apt", "cat", "dmesg", "echo", "ethtool", "gpuready", "grep", "ib_write_bw", "ibv_devinfo", "ip", "ls",
    "lspci", "mkdir", "mlnx_qos", "mlxconfig", "mlxfwmanager", "mlxfwreset", "mlxlink", "modprobe", "mount",
    "netplan", "nvidia-smi", "printf", "rdma", "setpci", "show_gids", "sysctl", "systemctl", "torchrun",
    "udevadm", "update-grub",
}


def commands(hint):
    """The commands in backticks, split at |, &&, || and ;."""
    for seg in re.findall(r"`([^`]+)`", hint):
        for part in re.split(r"\|\||&&|[|;]", seg):
            words = part.split()
            if words:
                yield seg, words[0]


def check(path, problems):
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
        for seg, binary in commands(hint):
            if binary not in KNOWN:
                problems.append(f"{where}: `{seg}` starts with {binary}, not a known binary (tests/cli/hints.py)")
        for req in c.get("requires", []):
            n_requires += 1
            key, eq, want = req.partition("=")
            for value, by in facts.get(key, {}).items():
                if (eq and value != want) or (not eq and value == "false"):
                    problems.append(f"{where}: its hint requires {req}, but {', '.join(sorted(set(by)))} "
                                    f"says {key}={value}")
    return n_facts, n_requires


def main():
    problems = []
    n_facts = n_requires = 0
    for path in sys.argv[1:]:
        f, r = check(path, problems)
        n_facts += f
        n_requires += r
    for p in problems:
        print(p)
    print(f"{len(sys.argv) - 1} reports, {n_facts} facts, {n_requires} requirements, {len(problems)} problems")
    if problems:
        return 1
    return 2 if not n_facts or not n_requires else 0


if __name__ == "__main__":
    sys.exit(main())
