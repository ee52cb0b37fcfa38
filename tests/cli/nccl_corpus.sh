#!/bin/sh
# The corpus of real NCCL logs (tests/nccl-logs/corpus/NN-slug/: nccl.log,
# labels.json labelled by hand, README.md): `gpuready nccl --explain --json`
# must give every label (versions, network, hcas, link, socket_if, gdr,
# dmabuf, signatures, harmless) exactly, and validate against
# docs/nccl-explain.schema.json. Skipped (77) where the corpus is absent.
set -u

. "$(dirname "$0")/lib.sh"

CORPUS=$SRC/tests/nccl-logs/corpus
ls "$CORPUS"/*/labels.json >/dev/null 2>&1 || { echo "no corpus in $CORPUS: skipped"; exit 77; }
for d in "$CORPUS"/*/; do
	name=$(basename "$d")
	"$BIN" nccl --explain --json "$d/nccl.log" >"$TMP/$name.json" 2>"$TMP/$name.err"
	rc=$?
	[ "$rc" -le 1 ] || { fail "$name: exit $rc"; head -3 "$TMP/$name.err" >&2; continue; }
	python3 - "$d/labels.json" "$TMP/$name.json" "$rc" <<'PY' && pass "$name: every label" || fail "$name: labels"
import json, sys
lab, got, rc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
fields = ["versions", "network", "hcas", "link", "socket_if", "gdr", "dmabuf", "signatures", "harmless"]
bad = [(f, lab.get(f), got.get(f)) for f in fields if lab.get(f) != got.get(f)]
for f, want, have in bad:
    print(f"  {f}: labelled {want!r}, explained {have!r}", file=sys.stderr)
assert (rc == 1) == (got["result"] == "fail"), (rc, got["result"])
sys.exit(1 if bad else 0)
PY
done
schema_ok nccl-explain.schema.json "corpus" "$TMP"/*.json
[ "$FAILS" -eq 0 ] || { echo "$FAILS failure(s)" >&2; exit 1; }
