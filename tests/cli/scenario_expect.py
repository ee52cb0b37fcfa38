#!/usr/bin/env python3
"""scenario_expect.py EXPECT REPORT.json: the assertions of a scenario fixture.

EXPECT holds one assertion per line (`#` starts a comment):

    fail rdma.nccl_p2p NCCL_P2P_DISABLE   a finding with this status, check ID and subject
    warn gpu.fabricmanager                ... with any subject
    clean                                 no finding of any check is warn or fail

Every line must hold; a file with no assertion is an error (a scenario that
asserts nothing proves nothing). Exit 0 when all hold, 1 otherwise."""
import json
import sys

STATUSES = {"ok", "warn", "fail", "skip", "info"}


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[2]) as f:
        checks = json.load(f)["checks"]
    bad = n = 0
    with open(argv[1]) as f:
        lines = f.read().splitlines()
    for no, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        n += 1
        if words == ["clean"]:
            loud = [c for c in checks if c["status"] in ("warn", "fail")]
            for c in loud:
                print(f"line {no}: clean, but {c['status']} {c['id']} {c['subject']}: {c['message']}")
            bad += bool(loud)
            continue
        if words[0] not in STATUSES or len(words) not in (2, 3):
            print(f"line {no}: not `STATUS CHECK_ID [SUBJECT]` or `clean`: {line!r}")
            bad += 1
            continue
        st, cid = words[0], words[1]
        subj = words[2] if len(words) == 3 else None
        hit = [c for c in checks if c["status"] == st and c["id"] == cid and (subj is None or c["subject"] == subj)]
        if not hit:
            have = [f"{c['status']} {c['subject']}" for c in checks if c["id"] == cid]
            print(f"line {no}: no {st} finding of {cid}{' for ' + subj if subj else ''}; "
                  f"{cid} gave: {', '.join(have) or 'nothing'}")
            bad += 1
    if n == 0:
        print("no assertion in the expect file")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
