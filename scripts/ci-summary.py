#!/usr/bin/env python3
"""Counts one CI run of the README's commands and says whether it passed.

Reads Meson's testlog.json of `make test`, the log of `make test` (for the
fuzz smoke run's line, which Meson does not run) and the exit codes of
`make run` and `make test`. Prints the skipped tests with the reason each
gave, every failure, and last the line "N passed, N failed, N skipped".
Exits 1 when anything failed (a test, the fuzz run, `make run`, `make test`
outside its tests, or no test log at all), else 0.

Counting:
  Meson OK, EXPECTEDFAIL                  passed
  Meson SKIP                              skipped, listed with its reason
  Meson FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS, anything else   failed
  "fuzz[ TARGET]: ... no crash"           passed, each target; "fuzz: clang not installed" skipped;
                                          no fuzz line: failed, unless a test failed before it
  make run exit 0 / otherwise             passed / failed
  make test exit != 0 with no failure counted above: one failure ("make test")
  a test step whose log is missing or empty: one failure

usage: ci-summary.py --testlog FILE --test-log FILE --test-status N --run-status N
  (a status of "-" means the step did not run: then it is not counted)
"""
import argparse
import json
import re
import sys

OK = ("OK", "EXPECTEDFAIL")


def skip_reason(rec):
    """The last non-empty line a skipped test printed, or a default."""
    for stream in ("stdout", "stderr"):
        lines = [l.strip() for l in (rec.get(stream) or "").splitlines() if l.strip()]
        if lines:
            return lines[-1][:200]
    return "no reason printed"


def count(args):
    passed = failed = skipped = 0
    notes, failures = [], []

    tests = []
    try:
        with open(args.testlog, errors="replace") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    tests.append(json.loads(line))
                except ValueError:
                    failures.append(f"{args.testlog}:{n}: not a JSON line")
    except OSError as e:
        if args.test_status != "-":
            failures.append(f"no Meson test log ({e.strerror}: {args.testlog})")

    if args.test_status != "-" and not tests and not failures:
        failures.append(f"no test ran ({args.testlog} is empty)")
    for rec in tests:
        name, result = rec.get("name", "?"), rec.get("result", "?")
        if result in OK:
            passed += 1
        elif result == "SKIP":
            skipped += 1
            notes.append(f"skipped: {name}: {skip_reason(rec)}")
        else:
            failures.append(f"{result}: {name}")

    if args.test_status != "-":
        try:
            text = open(args.test_log, errors="replace").read()
        except OSError:
            text = ""
        lines = re.findall(r"^fuzz(?: [\w-]+)?: .*$", text, re.M)
        ran = [l for l in lines if "no crash" in l]
        fuzz = lines[0] if lines else None
        if ran:
            passed += len(ran)
        elif fuzz and "clang not installed" in fuzz:
            skipped += 1
            notes.append("skipped: fuzz: clang not installed")
        elif failures:
            notes.append("not run: fuzz (make test stopped at the failures below)")
        elif tests:
            failures.append("fuzz: the smoke run did not finish without a crash (see the make test log)")

    if args.run_status != "-":
        if args.run_status == "0":
            passed += 1
        else:
            failures.append(f"make run exited {args.run_status}")

    failed = len(failures)
    if args.test_status not in ("-", "0") and failed == 0:
        failures.append(f"make test exited {args.test_status} outside its tests")
        failed = 1
    return passed, failed, skipped, notes, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--testlog", required=True)
    ap.add_argument("--test-log", required=True)
    ap.add_argument("--test-status", required=True)
    ap.add_argument("--run-status", required=True)
    args = ap.parse_args()
    passed, failed, skipped, notes, failures = count(args)
    for line in notes:
        print(line)
    for line in failures:
        print("FAILED: " + line)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
