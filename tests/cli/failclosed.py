#!/usr/bin/env python3
"""Fail-closed test: damaging a file the checks read never turns a finding OK.

For each fixture, the files `gpuready snapshot` records (exactly the files the
checks read) are grouped by kind (the path with its numbers and PCI addresses
blanked), and a deterministic sample is drawn: one file of every kind (from under
a subject that warns or fails where the kind has one), plus extra files at
random. Each sampled file is damaged in turn on a
world-readable copy of the tree, in one of three ways:

  empty       the file is truncated to zero bytes
  missing     the file is removed
  unreadable  the file is made mode 0000 (the check then runs as `nobody`)

and `gpuready check --json` is run. The rule (see docs/adding-a-check.md, "Fail
closed"): a (check, subject) that warned or failed on the intact tree must not
be OK on the damaged one, and a subject that disappears needs a finding (not
OK) that names the damaged file. Configuration files that may be empty or
absent by design (nccl.conf, profile.d, rc.local, ...) are only made
unreadable: an empty one is a valid configuration.

Every run goes as `nobody`, so reading is what an unprivileged user gets; the
seed is fixed and printed, and each violation names the fixture, the file and
the damage, with the command that reproduces it.

usage: failclosed.py GPUREADY FIXTURES_DIR [--seed N] [--extra N] [--fixture NAME ...]
exit: 0 clean, 1 a violation, 77 cannot run here (not root: no `nobody`).
"""

import argparse
import json
import os
import pwd
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_FIXTURES = ["h100-roce-broken", "h100-gpu-degraded", "ndr-ib-4port", "dgx-spark-gb10"]

# Files that are configuration: they may be absent or empty on a healthy
# machine, so only an unreadable one is damage.
CONFIG_RE = re.compile(
    r"^/(etc/(nccl\.conf|profile\.d/|rc\.local|environment|security/limits|systemd/|udev/|"
    r"modprobe\.d/|gpuready\.conf|sysctl)|lib/(systemd|udev)/|usr/lib/(systemd|udev)/|"
    r"(root|home/[^/]+)/\.nccl\.conf|"
    # programs a unit or udev rule runs: a missing or empty one is a
    # configuration (it sets nothing), not a damaged reading
    r"(usr/(local/)?)?s?bin/|opt/|usr/libexec/)"
)

GROUP_SUBS = [
    (re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]"), "BDF"),
    (re.compile(r"pci[0-9a-f]{4}:[0-9a-f]{2}"), "pciROOT"),
    (re.compile(r"\d+"), "N"),
]


def kind(rel):
    for rx, rep in GROUP_SUBS:
        rel = rx.sub(rep, rel)
    return rel


def recorded_files(gpuready, root, scratch):
    """The files the checks read: a snapshot of the tree records exactly those."""
    snap = os.path.join(scratch, "snap")
    subprocess.run([gpuready, "snapshot", "--sysroot", root, snap], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = []
    for d, _, files in os.walk(snap):
        for f in files:
            rel = "/" + os.path.relpath(os.path.join(d, f), snap)
            if rel.startswith("/.gpuready/"):
                continue  # the recording's own metadata, not the machine's files
            if os.path.isfile(os.path.join(root, rel.lstrip("/"))):
                out.append(rel)
    shutil.rmtree(snap)
    return sorted(out)


def findings(gpuready, tree, as_user):
    cmd = [gpuready, "check", "--sysroot", tree, "--json", "--no-color"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       preexec_fn=as_user)
    if r.returncode not in (0, 1):
        return None, r.stderr.decode(errors="replace").strip()
    doc = json.loads(r.stdout)
    res = {}
    for c in doc["checks"]:
        res.setdefault((c["id"], c.get("subject") or ""), []).append(c)
    return res, None


def worst(entries):
    order = {"ok": 0, "skip": 1, "warn": 2, "fail": 3}
    return max((e["status"] for e in entries), key=lambda s: order.get(s, 0))


def in_tree(tree, path):
    """The in-tree canonical form of an absolute-looking path named in a message."""
    p = os.path.realpath(os.path.join(tree, path.lstrip("/")))
    t = os.path.realpath(tree)
    return "/" + os.path.relpath(p, t) if p.startswith(t + "/") else None


# A path may hold colons (a PCI address, 0000:cb:00.0); one that ends it is
# the message's ("/sys/.../vendor: empty").
PATH_RE = re.compile(r"/(?:sys|proc|etc|dev|boot|lib|usr|run|var|root|home)/[^\s;,()`'\"]+")


def names_file(entries, tree, rel, canon):
    for e in entries:
        if e["status"] == "ok":
            continue
        text = " ".join(str(e.get(k, "")) for k in ("message", "hint", "detail"))
        for m in PATH_RE.findall(text):
            m = m.rstrip(".:")
            if m == rel or in_tree(tree, m) == canon:
                return True
    return False


def hot_marks(base):
    """Path pieces of the subjects that warn or fail on the intact tree: a
    file of a kind is drawn from under such a subject where one exists, so
    damage meets the findings it could hide."""
    marks = set()
    for (_, subj), entries in base.items():
        if worst(entries) not in ("warn", "fail") or not subj or " " in subj:
            continue
        if "/" in subj:
            dev, port = subj.split("/", 1)
            marks.add(f"/{dev}/ports/{port}/")
        else:
            marks.add(f"/{subj}/")
    return sorted(marks)


def damage(path, how):
    if how == "empty":
        open(path, "w").close()
    elif how == "missing":
        os.unlink(path)
    else:
        os.chmod(path, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpuready")
    ap.add_argument("fixtures")
    ap.add_argument("--seed", type=int, default=20250604)
    ap.add_argument("--extra", type=int, default=15, help="random files per fixture besides one per kind")
    ap.add_argument("--fixture", action="append")
    a = ap.parse_args()

    if os.geteuid() != 0:
        print("SKIP: must run as root to damage files and run the checks as nobody")
        return 77
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        print("SKIP: no user nobody")
        return 77

    def as_nobody():
        os.setgroups([])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    # a copy nobody can run whatever the permissions above the build tree
    bindir = tempfile.mkdtemp(prefix="gpuready-failclosed-bin.")
    os.chmod(bindir, 0o755)
    gpuready = os.path.join(bindir, "gpuready")
    shutil.copy2(os.path.abspath(a.gpuready), gpuready)
    os.chmod(gpuready, 0o755)
    try:
        return run(a, gpuready, as_nobody)
    finally:
        shutil.rmtree(bindir, ignore_errors=True)


def run(a, gpuready, as_nobody):
    print(f"seed {a.seed}, {a.extra} extra files per fixture")
    rng = random.Random(a.seed)
    violations = 0
    runs = 0
    t0 = time.monotonic()
    for fx in a.fixture or DEFAULT_FIXTURES:
        src = os.path.join(a.fixtures, fx, "root")
        scratch = tempfile.mkdtemp(prefix="gpuready-failclosed.")
        os.chmod(scratch, 0o755)
        try:
            tree = os.path.join(scratch, "root")
            shutil.copytree(src, tree, symlinks=True)
            subprocess.run(["chmod", "-R", "a+rX", tree], check=True)
            files = recorded_files(gpuready, tree, scratch)
            base, err = findings(gpuready, tree, as_nobody)
            if base is None:
                print(f"FAIL: {fx}: the intact tree does not run: {err}")
                violations += 1
                continue
            hot = hot_marks(base)
            groups = {}
            for f in files:
                groups.setdefault(kind(f), []).append(f)
            sample = []
            for _, v in sorted(groups.items()):
                near = [f for f in v if any(m in f + "/" for m in hot)]
                sample.append(rng.choice(near or v))
            rest = [f for f in files if f not in set(sample)]
            near = [f for f in rest if any(m in f + "/" for m in hot)]
            sample += rng.sample(near, min(a.extra // 2, len(near)))
            rest = [f for f in rest if f not in set(sample)]
            sample += rng.sample(rest, min(a.extra - a.extra // 2, len(rest)))
            print(f"{fx}: {len(files)} files read, {len(groups)} kinds, {len(sample)} sampled")
            for rel in sample:
                path = os.path.join(tree, rel.lstrip("/"))
                canon = in_tree(tree, rel)
                hows = ["unreadable"] if CONFIG_RE.match(rel) else ["empty", "missing", "unreadable"]
                for how in hows:
                    keep = tempfile.mktemp(dir=scratch)
                    shutil.copy2(path, keep)
                    damage(path, how)
                    try:
                        got, err = findings(gpuready, tree, as_nobody)
                    finally:
                        if os.path.exists(path):
                            os.unlink(path)
                        shutil.move(keep, path)
                    runs += 1
                    where = f"{fx}: {rel} {how}"
                    if got is None and rel in err:
                        continue  # refused to run, naming the file: not OK either
                    if got is None:
                        print(f"FAIL: {where}: check did not run: {err}")
                        violations += 1
                        continue
                    named = None
                    for key, entries in sorted(base.items()):
                        was = worst(entries)
                        if key not in got:
                            if named is None:
                                named = any(names_file(e, tree, rel, canon) for e in got.values())
                            if not named:
                                print(f"FAIL: {where}: {key[0]} {key[1]!r} ({was}) disappeared "
                                      "and no finding names the file")
                                violations += 1
                            continue
                        now = worst(got[key])
                        if was in ("warn", "fail") and now == "ok":
                            print(f"FAIL: {where}: {key[0]} {key[1]!r} went from {was} to ok: "
                                  f"{got[key][0]['message']}")
                            violations += 1
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"{runs} damaged runs in {time.monotonic() - t0:.0f} s, {violations} violations")
    if violations:
        print(f"reproduce: {sys.argv[0]} {a.gpuready} {a.fixtures} --seed {a.seed} --extra {a.extra}")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
