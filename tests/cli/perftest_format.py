#!/usr/bin/env python3
"""Reads `gpuready bench net` text the way tools written for perftest do,
and checks every row against the run's --json document.

The format is perftest's own (linux-rdma/perftest, src/perftest_parameters.h):
the header is RESULT_FMT (" #bytes     #iterations    BW peak[MiB/sec]
BW average[MiB/sec]   MsgRate[Mpps]", MiB/sec since perftest 24.07),
RESULT_FMT_G with --report_gbits (Gb/sec), or RESULT_FMT_LAT for latency;
each row follows it, numbers separated by white space, until RESULT_LINE,
the line of 87 dashes that closes the table. A second, looser reading is
the one benchmark harnesses use on perftest's bandwidth output: every line
of exactly five fields whose first is an integer is a row (superbench's
ib-loopback reads the fourth field, BW average, that way). Both readings
must find the JSON's rows and nothing else.

    perftest_format.py OUT.txt RUN.json [--gbits] [--duration]

With --duration the table must be RESULT_FMT_LAT_DUR's (perftest prints it
for latency tests run with -D).

Exits 0 when every row parses and matches, 1 with the reasons otherwise.
"""
import json
import sys

RESULT_LINE = "-" * 87
RESULT_FMT = " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]"
RESULT_FMT_G = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
RESULT_FMT_LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
                  "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ")
RESULT_FMT_LAT_DUR = " #bytes        #iterations       t_avg[usec]    tps average"
MIBS_TO_GBPS = 1048576.0 * 8 / 1e9


def table(lines):
    """The header's kind and the rows between it and RESULT_LINE, each as
    a list of numbers (int for the first two columns)."""
    kinds = {RESULT_FMT: "bw", RESULT_FMT_G: "bw_g", RESULT_FMT_LAT: "lat", RESULT_FMT_LAT_DUR: "lat_dur"}
    for i, line in enumerate(lines):
        if line in kinds:
            rows = []
            for row in lines[i + 1:]:
                if row == RESULT_LINE:
                    return kinds[line], rows
                f = row.split()
                rows.append([int(f[0]), int(f[1])] + [float(x) for x in f[2:]])
            raise ValueError("the table is not closed by RESULT_LINE")
    raise ValueError("no perftest header line")


def loose_rows(lines):
    """Every line of five fields that starts with an integer (bandwidth)."""
    out = []
    for line in lines:
        f = line.split()
        if len(f) != 5:
            continue
        try:
            out.append((int(f[0]), float(f[-2])))
        except ValueError:
            pass
    return out


def close(a, b, places):
    return abs(a - b) <= 0.5 * 10 ** -places + 1e-9 * abs(b)


def compare(rows, want, columns):
    """Each row against its JSON row: bytes, iterations, then the columns,
    (name, JSON key, scale, decimal places printed) each."""
    problems = []
    for r, j in zip(rows, want):
        if len(r) != 2 + len(columns):
            problems.append(f"row of {len(r)} fields, {2 + len(columns)} wanted: {r}")
            continue
        if r[0] != j["bytes"] or r[1] != j["iterations"]:
            problems.append(f"row {r[:2]} against {j['bytes']} B x {j['iterations']}")
        problems += [f"{j['bytes']} B {name}: {v} against {j[key] * k}"
                     for v, (name, key, k, places) in zip(r[2:], columns) if not close(v, j[key] * k, places)]
    return problems


def main():
    text, doc = open(sys.argv[1]).read().splitlines(), json.load(open(sys.argv[2]))
    gbits = "--gbits" in sys.argv[3:]
    problems = []
    kind, rows = table(text)
    if ("--duration" in sys.argv[3:]) != (kind == "lat_dur"):
        problems.append(f"header {kind}, --duration {'--duration' in sys.argv[3:]}")
    want = doc["rows"]
    if len(rows) != len(want):
        problems.append(f"{len(rows)} rows in the table, {len(want)} in the JSON")
    if kind == "lat_dur":
        problems += compare(rows, want, [("t_avg", "t_avg_us", 1.0, 2), ("tps average", "tps_average", 1.0, 2)])
    elif kind == "lat":
        keys = ["t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "p99_us", "p999_us"]
        problems += compare(rows, want, [(key, key, 1.0, 2) for key in keys])
    else:
        if (kind == "bw_g") != gbits:
            problems.append(f"header {kind}, --report_gbits {gbits}")
        k = MIBS_TO_GBPS if gbits else 1.0
        problems += compare(rows, want, [("BW peak", "bw_peak_mibs", k, 2), ("BW average", "bw_avg_mibs", k, 2),
                                         ("MsgRate", "msg_rate_mpps", 1.0, 6)])
        loose = loose_rows(text)
        if [b for b, _ in loose] != [j["bytes"] for j in want]:
            problems.append(f"five-field reading found sizes {[b for b, _ in loose]}")
        problems += [f"five-field reading: {b} B average {v} against {j['bw_avg_mibs'] * k}"
                     for (b, v), j in zip(loose, want) if not close(v, j["bw_avg_mibs"] * k, 2)]
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{kind}: {len(rows)} rows parsed" + (", every one matches the JSON" if not problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
