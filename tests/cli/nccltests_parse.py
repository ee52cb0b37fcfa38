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
"timestamp" (a date and a time) with -S; with -I each half has four more
columns, i_min i_max i_p99 (us) and i_cv% (nccl-tests 2.19.6 README, -I)).

JSON is either gpuready's --json document or nccl-tests' own JSON file (-J):
version 3 as nccl-tests 2.19.6 writes it (its src/util.cu): top-level
version, start_time, args, env, nccl_version, config (with devices),
results, out_of_bounds, average_bus_bandwidth, errors, end_time; a result
has size, count, type, redop, root (a "%6i" string), out_of_place and
in_place ({time or cpu_time, alg_bw, bus_bw, nwrong}), with -I
out_of_place_per_iter and in_place_per_iter ({skipped_iterations, min_us,
max_us, avg_us, p50_us, p95_us, p99_us, stdev_us, cv_pct, times_us, and
per_process_max_times_us with several processes}), actual_iterations and
experiment_name; booleans are the strings "true" and "false".

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
    per_iter = "i_min" in cols
    width = 8 if per_iter else 4
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        want = 5 + 2 * width + (2 if stamp else 0)
        if len(f) != want:
            raise ValueError("line %d: %d columns, not %d: %r" % (n, len(f), want, line))
        row = {"size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3], "root": int(f[4])}
        for i, half in ((5, "out_of_place"), (5 + width, "in_place")):
            t, a, b, w = f[i:i + 4]
            extra = f[i + 4:i + width]
            for v in [t, a, b] + extra:
                if not NUM.match(v):
                    raise ValueError("line %d: %r is not a number" % (n, v))
            if w != "N/A" and not re.match(r"^[0-9]+$", w):
                raise ValueError("line %d: #wrong %r" % (n, w))
            row[half] = {"time": float(t), "algbw": float(a), "busbw": float(b),
                         "wrong": None if w == "N/A" else int(w)}
            if per_iter:
                row[half]["iter"] = dict(zip(("min", "max", "p99", "cv"), map(float, extra)))
        ts = f[5 + 2 * width:]
        if stamp and not re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", " ".join(ts)):
            raise ValueError("line %d: timestamp %r" % (n, ts))
        rows.append(row)
    return rows


def close(text_value, exact, decimals_of):
    # the table rounds to the decimals it printed (nccl-tests' getFloatStr)
    m = re.search(r"\.([0-9]+)", decimals_of)
    d = len(m.group(1)) if m else 0
    return abs(text_value - exact) <= 0.5 * 10 ** -d + 1e-9 or abs(text_value - exact) <= 1e-6 * abs(exact) + 0.05


def footer_avg(path):
    for line in open(path):
        m = re.match(r"^# Avg bus bandwidth +: (\S+)", line)
        if m:
            return float(m.group(1))
    raise ValueError("no 'Avg bus bandwidth' line")


def check_per_iter(i, half, t, it):
    """The -I columns against nccl-tests' per-iteration object."""
    times = it["times_us"]
    summary = sorted(times[it["skipped_iterations"]:])
    n = len(summary)
    if not n or it["min_us"] != summary[0] or it["max_us"] != summary[-1]:
        return "row %d %s: min/max %s/%s are not those of times_us" % (i, half, it["min_us"], it["max_us"])
    if it["p99_us"] != summary[min(n - 1, (n * 99 + 99) // 100 - 1)] or it["p50_us"] != summary[n // 2]:
        return "row %d %s: p50/p99 are not nccl-tests' percentiles of times_us" % (i, half)
    for k, jk in (("min", "min_us"), ("max", "max_us"), ("p99", "p99_us"), ("cv", "cv_pct")):
        if not close(t["iter"][k], it[jk], "%.2f" % t["iter"][k] if t["iter"][k] < 1000 else "%.0f" % t["iter"][k]):
            return "row %d %s i_%s: table %s, JSON %s" % (i, half, k, t["iter"][k], it[jk])
    return None


def nccltests_row(j):
    """A result of nccl-tests' JSON in the shape of gpuready's rows."""
    def half(h):
        tk = "cpu_time" if "cpu_time" in h else "time"
        return {"time_us": h[tk], "algbw_gbps": h["alg_bw"], "busbw_gbps": h["bus_bw"],
                "wrong": None if h["nwrong"] is None else int(h["nwrong"])}
    if not re.match(r"^ *-?[0-9]+$", j["root"]) or len(j["root"]) < 6:
        raise ValueError("root %r is not nccl-tests' %%6i string" % j["root"])
    return {"size": j["size"], "count": j["count"], "type": j["type"], "root": int(j["root"]),
            "redop": None if j["redop"] == "none" else j["redop"],
            "out_of_place": half(j["out_of_place"]), "in_place": half(j["in_place"])}


def check_nccltests_doc(doc, table):
    """The document-level parts of nccl-tests' JSON file."""
    for k in ("version", "start_time", "args", "env", "nccl_version", "config", "results", "out_of_bounds",
              "average_bus_bandwidth", "errors", "end_time"):
        if k not in doc:
            return "nccl-tests JSON lacks %r" % k
    c = doc["config"]
    if doc["version"] != 3 or c["nthreads"] != 1 or c["blocking_collectives"] not in ("true", "false") or \
            not c["devices"] or any(set(d) != {"rank", "group", "pid", "hostname", "device", "device_hex",
                                               "device_info"} for d in c["devices"]):
        return "nccl-tests JSON config: %r" % c
    if doc["out_of_bounds"]["okay"] != ("true" if doc["out_of_bounds"]["count"] == 0 else "false"):
        return "out_of_bounds: %r" % doc["out_of_bounds"]
    if not close(footer_avg(table), doc["average_bus_bandwidth"]["bandwidth"], "%.6f"):
        return "average_bus_bandwidth %r, table %s" % (doc["average_bus_bandwidth"], footer_avg(table))
    return None


def main():
    rows = parse(sys.argv[1])
    doc = json.load(open(sys.argv[2]))
    if "results" in doc:
        bad = check_nccltests_doc(doc, sys.argv[1])
        if bad:
            print(bad)
            return 1
        for i, (r, j) in enumerate(zip(rows, doc["results"])):
            for half in ("out_of_place", "in_place"):
                if ("iter" in r[half]) != (half + "_per_iter" in j):
                    print("row %d %s: -I columns and JSON per_iter disagree" % (i, half))
                    return 1
                bad = "iter" in r[half] and check_per_iter(i, half, r[half], j[half + "_per_iter"])
                if bad:
                    print(bad)
                    return 1
        jrows = [nccltests_row(j) for j in doc["results"]]
    else:
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
