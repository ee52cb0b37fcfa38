#!/usr/bin/env python3
"""The corpus of real NCCL logs (tests/nccl-logs/corpus/, labelled by hand
from public issue threads) against `gpuready nccl --explain --json`: every
label of every log must come back. Prints one line per mismatch and a
count; exit 1 when any label is not recovered.

usage: nccl_corpus.py GPUREADY CORPUS_DIR
"""
import json
import os
import subprocess
import sys

LIST_FIELDS = ("versions", "hcas", "signatures", "harmless")
FIELDS = ("versions", "network", "hcas", "link", "socket_if", "gdr", "dmabuf", "signatures", "harmless")


def main():
    binary, corpus = sys.argv[1], sys.argv[2]
    dirs = sorted(d for d in os.listdir(corpus) if os.path.isdir(os.path.join(corpus, d)))
    bad = checked = 0
    for d in dirs:
        labels = json.load(open(os.path.join(corpus, d, "labels.json")))
        p = subprocess.run([binary, "nccl", "--explain", os.path.join(corpus, d, "nccl.log"), "--json"],
                           capture_output=True, text=True, timeout=60)
        if p.returncode not in (0, 1):
            print("%s: exit %d: %s" % (d, p.returncode, p.stderr.strip()[:300]))
            bad += 1
            continue
        try:
            got = json.loads(p.stdout)
        except ValueError as e:
            print("%s: not JSON: %s" % (d, e))
            bad += 1
            continue
        want_fail = bool(labels["signatures"])
        if want_fail != (p.returncode == 1):
            print("%s: exit %d, but the labels have %s" % (d, p.returncode, labels["signatures"] or "no failure"))
            bad += 1
        for f in FIELDS:
            checked += 1
            w, g = labels.get(f), got.get(f)
            if f in LIST_FIELDS:
                w, g = sorted(w or []), sorted(g or [])
            if w != g:
                print("%s: %s: labelled %s, explained %s" % (d, f, json.dumps(w), json.dumps(g)))
                bad += 1
    print("%d logs, %d labels checked, %d not recovered" % (len(dirs), checked, bad))
    sys.exit(1 if bad or not dirs else 0)


main()
