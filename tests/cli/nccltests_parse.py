#!/usr/bin/env python3
"""Reads a benchmark table the way scripts written for nccl-tests do, and
checks every row against gpuready's JSON document of the same run.

The parser is written from nccl-tests' published output format (README and
doc/PERFORMANCE.md of NVIDIA/nccl-tests; docs/nccl-tests-format.md §1): lines
starting with '#' are comments; every other non-empty line is a result row of
whitespace-separated columns

    size count type redop root  time algbw busbw #wrong  time algbw busbw #wrong  [timestamp]

(out-of-place, then in-place; time in us, bandwidths in GB/s, #wrong a number
or N/A; the column header names "cputime" instead of "time" with -C and adds
"timestamp" (a date and a time) with -S).

Usage: nccltests_parse.py TABLE JSON  -> prints "rows N" and exits 0, or names
the first row that does not parse or does not match and exits 1.
"""
import json
import re
import sys

NUM = re.compile(r"^[0-9]+(\.[0-9]+)?(e[+-][0-9]+)?$")


def header_columns(lines):
    for line in lines:
        if line.startswith("#") and " size " in line and "redop" in line:
            return line[1:].split()
    raise ValueError("no column header line ('# size count type redop root ...')")


def parse(path):
    lines = open(path).read().splitlines()
    cols = header_columns(lines)
    timed = [c for c in cols if c in ("time", "cputime")]
    if cols[:5] != ["size", "count", "type", "redop", "root"] or len(timed) != 2:
        raise ValueError("unexpected header %r" % cols)
    stamp = cols[-1] == "timestamp"
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        want = 13 + (2 if stamp else 0)
        if len(f) != want:
            raise ValueError("line %d: %d columns, not %d: %r" % (n, len(f), want, line))
        row = {"size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3], "root": int(f[4])}
        for i, half in ((5, "out_of_place"), (9, "in_place")):
            t, a, b, w = f[i:i + 4]
            for v in (t, a, b):
                if not NUM.match(v):
                    raise ValueError("line %d: %r is not a number" % (n, v))
            if w != "N/A" and not re.match(r"^[0-9]+$", w):
                raise ValueError("line %d: #wrong %r" % (n, w))
            row[half] = {"time": float(t), "algbw": float(a), "busbw": float(b),
                         "wrong": None if w == "N/A" else int(w)}
        if stamp and not re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", " ".join(f[13:15])):
            raise ValueError("line %d: timestamp %r" % (n, f[13:15]))
        rows.append(row)
    return rows


def close(text_value, exact, decimals_of):
    # the table rounds to the decimals it printed (nccl-tests' getFloatStr)
    m = re.search(r"\.([0-9]+)", decimals_of)
    d = len(m.group(1)) if m else 0
    return abs(text_value - exact) <= 0.5 * 10 ** -d + 1e-9 or abs(text_value - exact) <= 1e-6 * abs(exact) + 0.05


def main():
    rows = parse(sys.argv[1])
    doc = json.load(open(sys.argv[2]))
    jrows = doc["rows"]
    if len(rows) != len(jrows):
        print("table has %d rows, JSON %d" % (len(rows), len(jrows)))
        return 1
    for i, (r, j) in enumerate(zip(rows, jrows)):
        root = -1 if j["root"] is None else j["root"]
        if (r["size"], r["count"], r["type"], r["root"]) != (j["size"], j["count"], j["type"], root) or \
                r["redop"] != (j["redop"] or "none"):
            print("row %d: %r does not match JSON %r" % (i, r, j))
            return 1
        for half in ("out_of_place", "in_place"):
            t, jh = r[half], j[half]
            for k, jk in (("time", "time_us"), ("algbw", "algbw_gbps"), ("busbw", "busbw_gbps")):
                if not close(t[k], jh[jk], "%.2f" % t[k] if t[k] < 1000 else "%.0f" % t[k]):
                    print("row %d %s %s: table %s, JSON %s" % (i, half, k, t[k], jh[jk]))
                    return 1
            if t["wrong"] != jh["wrong"]:
                print("row %d %s #wrong: table %s, JSON %s" % (i, half, t["wrong"], jh["wrong"]))
                return 1
    print("rows %d" % len(rows))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ValueError as e:
        print("parse error: %s" % e)
        sys.exit(1)
