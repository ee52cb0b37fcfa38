#!/usr/bin/env python3
"""`gpuready fix` over every fixture that warns or fails (docs/fix.md).

For each fixture (the full trees and the scenarios, built with
tests/fixtures/scenario.sh) whose plan has a remedy, on a copy of its tree:

  1. `check --json` (before) and `fix --json` (the plan: remedies and the
     findings each answers, its effect);
  2. `fix --apply --allow-disruptive --json --sysroot COPY`: no remedy fails;
  3. `check --json` (after): every finding a remedy that takes effect now or
     at the next login answers is ok or gone; every one a reload or reboot
     remedy answers still warns or fails and says "pending"; every other
     finding has the status it had (nothing else changed);
  4. a second `fix --json` plans nothing;
  5. the plan as a script (`--script`) run with ROOT on a second copy writes
     the same configuration files as --apply did;
  6. `fix --revert` restores the copy byte for byte (diff -r, links not
     followed), but for the audit log under /var/log/gpuready.

usage: fix_fixtures.py GPUREADY FIXTURES_DIR [--fixture NAME ...]
exit: 0 all hold, 1 a violation (each named with the fixture and the command).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def fixtures(fix_dir, only):
    out = []
    for name in sorted(os.listdir(fix_dir)):
        if os.path.isdir(os.path.join(fix_dir, name, "root")):
            out.append((name, os.path.join(fix_dir, name, "root"), None))
    scen = os.path.join(fix_dir, "scenarios")
    for name in sorted(os.listdir(scen)):
        if os.path.isfile(os.path.join(scen, name, "base")):
            out.append(("scenarios/" + name, None, name))
    return [f for f in out if not only or f[0] in only or f[0].split("/")[-1] in only]


def copy_tree(fix_dir, src, scen, dest):
    if scen:
        r = run(["sh", os.path.join(fix_dir, "scenario.sh"), scen, dest])
        if r.returncode:
            raise RuntimeError(r.stderr)
    else:
        shutil.copytree(src, dest, symlinks=True)


def findings(binary, root):
    r = run([binary, "check", "--json", "--sysroot", root])
    if r.returncode not in (0, 1):
        raise RuntimeError("check exit %d: %s" % (r.returncode, r.stderr[-300:]))
    got = {}
    for f in json.loads(r.stdout)["checks"]:
        got[(f["id"], f["subject"])] = f
    return got


def problems(fs):
    return {k: v for k, v in fs.items() if v["status"] in ("warn", "fail")}


def config_files(root):
    """Regular files under root, but kernel state, our log and pending list."""
    out = {}
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        if rel.split(os.sep)[0] in ("proc", "sys", ".gpuready"):
            dirs[:] = []
            continue
        for f in files:
            p = os.path.join(d, f)
            r = os.path.relpath(p, root)
            if r.startswith("var/log/gpuready") or r == "var/lib/gpuready/fix-pending":
                continue
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    out[r] = fh.read()
    return out


def one(binary, fix_dir, name, src, scen, errors):
    def bad(msg):
        errors.append("%s: %s" % (name, msg))

    # copies of trees are many small files: in memory where there is /dev/shm
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(dir=shm) as tmp:
        copy = os.path.join(tmp, "copy")
        orig = os.path.join(tmp, "orig")
        copy_tree(fix_dir, src, scen, orig)
        r = run([binary, "fix", "--json", "--sysroot", orig])
        if r.returncode not in (0, 1):
            return bad("fix exit %d: %s" % (r.returncode, r.stderr[-300:]))
        plan = json.loads(r.stdout)
        remedies = [x for x in plan["remedies"] if not x["pending"]]
        if not remedies:
            return 0
        shutil.copytree(orig, copy, symlinks=True)
        before = findings(binary, copy)
        targets = {}
        for rem in remedies:
            for t in rem["targets"]:
                targets[(t["check"], t["subject"])] = rem["effect"]
                if (t["check"], t["subject"]) not in problems(before):
                    bad("remedy %s answers %s %s, which does not warn or fail" % (rem["id"], t["check"],
                                                                                  t["subject"]))
        r = run([binary, "fix", "--apply", "--allow-disruptive", "--json", "--sysroot", copy])
        if r.returncode not in (0, 1):
            return bad("fix --apply exit %d: %s" % (r.returncode, r.stderr[-300:]))
        applied = json.loads(r.stdout).get("applied", [])
        for line in applied:
            if line.startswith("FAILED"):
                bad("fix --apply: " + line)
        after = findings(binary, copy)
        for key, effect in sorted(targets.items()):
            f = after.get(key)
            if effect in ("now", "login"):
                if f and f["status"] in ("warn", "fail"):
                    bad("%s %s still %s after --apply (effect %s): %s" % (key + (f["status"], effect,
                                                                                  f["message"])))
            elif not f or f["status"] not in ("warn", "fail") or "pending" not in f:
                bad("%s %s: effect %s, but after --apply it is %s without 'pending'" %
                    (key + (effect, f["status"] if f else "gone")))
        # nothing else changed: every other warning and failure is still there
        # as it was, and no new one appears (listings and passes may change
        # their words: a renamed variable is listed under its new name)
        for key, f in sorted(problems(before).items()):
            if key in targets:
                continue
            g = after.get(key)
            if not g or g["status"] != f["status"]:
                bad("%s %s changed from %s to %s, but no remedy answers it" %
                    (key + (f["status"], g["status"] if g else "gone")))
        for key, g in sorted(problems(after).items()):
            if key not in before or before[key]["status"] not in ("warn", "fail"):
                if key not in targets:
                    bad("%s %s is %s after --apply: %s" % (key + (g["status"], g["message"])))
        r = run([binary, "fix", "--json", "--sysroot", copy])
        again = json.loads(r.stdout)
        if again["changes"]:
            bad("a second fix plans %d change(s): %s" % (again["changes"], [x["id"] for x in again["remedies"]
                                                                            if not x["pending"]]))
        # the script, on a second copy
        script = os.path.join(tmp, "fix.sh")
        second = os.path.join(tmp, "second")
        shutil.copytree(orig, second, symlinks=True)
        r = run([binary, "fix", "--allow-disruptive", "--script", script, "--sysroot", second])
        r = run(["sh", script], env=dict(os.environ, ROOT=second))
        if r.returncode:
            bad("the --script failed: %s" % r.stderr[-300:])
        want, got = config_files(copy), config_files(second)
        for k in sorted(set(want) | set(got)):
            if want.get(k) != got.get(k):
                bad("--script and --apply differ on /%s" % k)
        # revert
        r = run([binary, "fix", "--revert", "--sysroot", copy])
        if r.returncode:
            bad("fix --revert exit %d: %s" % (r.returncode, r.stdout[-300:] + r.stderr[-300:]))
        r = run(["diff", "-r", "--no-dereference", orig, copy])
        allowed = ["Only in %s/var/log: gpuready" % copy, "Only in %s/var: log" % copy]
        if not os.path.exists(os.path.join(orig, "var")):
            kept = [os.path.relpath(os.path.join(d, f), copy) for d, _, fs in os.walk(os.path.join(copy, "var"))
                    for f in fs]
            if kept == ["var/log/gpuready/fix.log"]:
                allowed.append("Only in %s: var" % copy)
        left = [l for l in r.stdout.splitlines() if l not in allowed]
        if left:
            bad("after --revert the tree differs (the audit log aside):\n  " + "\n  ".join(left[:20]))
        return len(remedies)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("fixtures")
    ap.add_argument("--fixture", action="append", default=[])
    a = ap.parse_args()
    errors = []
    fixed = 0
    for name, src, scen in fixtures(a.fixtures, a.fixture):
        try:
            n = one(a.binary, a.fixtures, name, src, scen, errors)
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            errors.append("%s: %s" % (name, e))
            continue
        if n:
            fixed += 1
            print("ok: %s: %d remed%s applied, checked, planned again, scripted, reverted" %
                  (name, n, "y" if n == 1 else "ies"))
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    if not fixed:
        print("FAIL: no fixture had a remedy", file=sys.stderr)
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
