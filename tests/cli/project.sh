#!/bin/sh
# Tests of the project's own promises, not of the binary's checks:
#
#   project.sh ci       scripts/ci-summary.py (what .ci/run counts) on the canned logs in
#                       tests/ci/*/: output and exit code against each case's "expected"
#   project.sh readme   the README's package lists are scripts/deps.sh's, and its counts
#                       (checks, fixture trees, real-machine captures) are true; debian/control's
#                       Build-Depends are in scripts/deps.sh's lists (make deb installs them)
#   project.sh testcount  the README's count of Meson tests, in a full `make test` build
#   project.sh layout   src/ keeps its layout (scripts/check-layout.py: include layers, file and
#                       function sizes, no mutable static storage; docs/ARCHITECTURE.md)
#   project.sh scenarios  the scenario fixtures' overlays are what tests/fixtures/scen_*.py gives,
#                       and each has its README.md, expect and expected/ (a trap asserts `clean`)
#   project.sh jargon   nothing the binary prints and no tracked file (docs, comments, fixture
#                       READMEs) points at the team's private notes: sources are cited by name
#
# Environment as tests/cli/run.sh (tests/meson.build). Exit 0 pass, 1 fail, 77 skip.
set -u

. "$(dirname "$0")/lib.sh"

python() {
	for py in python3 /usr/bin/python3; do command -v "$py" >/dev/null && { "$py" "$@"; return; }; done
	echo "python3 missing" >&2
	return 127
}

t_ci() {
	for dir in "$SRC"/tests/ci/*/; do
		case=$(basename "$dir")
		python "$SRC/scripts/ci-summary.py" --testlog "$dir/testlog.json" --test-log "$dir/test.log" \
			--test-status "$(cat "$dir/test.status")" --run-status "$(cat "$dir/run.status")" \
			>"$TMP/$case.out" 2>&1
		echo "exit $?" >>"$TMP/$case.out"
		sed -i "s#$dir#CASE/#g; s#CASE//#CASE/#g" "$TMP/$case.out"
		compare "$dir/expected" "$TMP/$case.out" "ci-summary on canned logs: $case"
	done
	# The exit code is what CI acts on: a failing case must exit non-zero.
	for case in fail timeout runfail fuzzcrash notestlog; do
		grep -qx 'exit 1' "$SRC/tests/ci/$case/expected" && pass "$case exits 1" || fail "$case does not exit 1"
	done
	grep -qx 'exit 0' "$SRC/tests/ci/ok/expected" && pass "ok exits 0" || fail "ok does not exit 0"
}

# deps_list build|test|deb: the package list scripts/deps.sh installs.
deps_list() {
	sed -n "s/^$1=\"\(.*\)\"$/\1/p" "$SRC/scripts/deps.sh" | tr ' ' '\n' | sort
}
# readme_list LABEL: the packages after "LABEL: " on its README line, one per line.
readme_list() {
	sed -n "s/^$1: \`\(.*\)\`.*/\1/p" "$SRC/README.md" | tr ' ' '\n' | sort
}
# readme_count PATTERN: the first number in the first match of PATTERN (an
# extended regex) in the README.
readme_count() {
	grep -oE -- "$1" "$SRC/README.md" | head -1 | grep -oE '[0-9]+' | head -1
}
same_count() { # WHAT README-NUMBER REAL-NUMBER
	if [ -n "$2" ] && [ "$2" = "$3" ]; then pass "README: $1: $2"; else fail "README says ${2:-nothing} $1, there are $3"; fi
}

t_readme() {
	for kind in build test deb; do
		case $kind in build) label="Build packages" ;; test) label="Test packages" ;; deb) label="Packaging packages" ;; esac
		deps_list $kind >"$TMP/deps.$kind"
		readme_list "$label" >"$TMP/readme.$kind"
		if [ -s "$TMP/deps.$kind" ] && cmp -s "$TMP/deps.$kind" "$TMP/readme.$kind"; then
			pass "README's $label are scripts/deps.sh's"
		else
			fail "README's '$label:' line differs from scripts/deps.sh $kind="
			diff "$TMP/deps.$kind" "$TMP/readme.$kind" >&2
		fi
	done

	# make deb installs debian/control's Build-Depends (debhelper-compat is debhelper's)
	sed -n '/^Build-Depends:/,/^$/p' "$SRC/debian/control" | sed 's/^Build-Depends://' | tr ',' '\n' |
		sed 's/(.*//; s/debhelper-compat/debhelper/; s/[[:space:]]//g' | grep . | sort -u >"$TMP/bdeps"
	sort -u "$TMP/deps.build" "$TMP/deps.deb" | comm -23 "$TMP/bdeps" - >"$TMP/bdeps.missing"
	if [ -s "$TMP/bdeps" ] && [ ! -s "$TMP/bdeps.missing" ]; then
		pass "debian/control's Build-Depends are in scripts/deps.sh's build and deb lists"
	else
		fail "debian/control's Build-Depends not in scripts/deps.sh build= or deb=: $(tr '\n' ' ' <"$TMP/bdeps.missing")"
	fi

	"$BIN" list-checks >"$TMP/checks" || fail "list-checks failed"
	same_count "checks" "$(readme_count '[0-9]+ checks in all')" "$(grep -c . "$TMP/checks")"
	# every check has its row in the README's tables, and no row names a check that is gone
	missing=$(awk '{ print $1 }' "$TMP/checks" | while read -r id; do
		grep -q "^| \`$id\` |" "$SRC/README.md" || printf ' %s' "$id"; done)
	[ -z "$missing" ] && pass "README: every check has a table row" || fail "README: no table row for:$missing"
	stale=$(grep -oE '^\| `[a-z]+\.[a-z0-9_]+` \|' "$SRC/README.md" | tr -d '|` ' | while read -r id; do
		grep -q "^$id " "$TMP/checks" || printf ' %s' "$id"; done)
	[ -z "$stale" ] && pass "README: every check row names a check" || fail "README rows for unknown checks:$stale"
	fixtures=$(find "$FIX" -mindepth 2 -maxdepth 2 -name root -type d | wc -l)
	same_count "fixture trees" "$(readme_count 'on the [0-9]+ fixture trees')" "$fixtures"
	captures=$(tar -tJf "$SRC/tests/realdata.tar.xz" | awk -F/ 'NF > 2 && $3 != "" { print $2 }' | sort -u | wc -l)
	same_count "real-machine captures" "$(readme_count '[0-9]+ public real-machine captures')" "$captures"
}

# The README's count of Meson tests is that of a full `make test` build, which
# installs every test dependency; a build without one skips this comparison.
t_testcount() {
	command -v meson >/dev/null && [ -n "${MESON_BUILD_ROOT:-}" ] ||
		{ echo "SKIP: meson or MESON_BUILD_ROOT missing: the test count cannot be read"; exit 77; }
	meson introspect "$MESON_BUILD_ROOT" --tests >"$TMP/tests.json" || { fail "meson introspect failed"; return; }
	n=$(python -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$TMP/tests.json")
	partial=""
	for t in mpi/backend-np2 unit/verbs_abi; do
		grep -q "\"$t\"" "$TMP/tests.json" || partial="$partial $t"
	done
	[ -z "$partial" ] ||
		{ echo "SKIP: this build lacks$partial (an optional test dependency is missing; make test installs it)"; exit 77; }
	same_count "Meson tests" "$(readme_count 'runs [0-9]+ Meson tests')" "$n"
}

t_layout() {
	if python "$SRC/scripts/check-layout.py" "$SRC/src" >"$TMP/layout" 2>&1; then
		pass "src/ keeps its layout ($(tail -1 "$TMP/layout"))"
	else
		fail "src/ breaks its layout (docs/ARCHITECTURE.md):"; cat "$TMP/layout" >&2
	fi
}

# The README's examples: every fenced block that starts with
# "$ gpuready ... --sysroot tests/fixtures/..." is run from the source
# tree, and what follows in the block must be its output (or, for a block
# that ends with a line "...", the start of it).
t_examples() {
	python3 - "$SRC/README.md" "$BIN" "$SRC" >"$TMP/ex" 2>&1 <<'PYEOF'
import re, shlex, subprocess, sys
readme, binary, src = sys.argv[1:]
blocks = re.findall(r"^```\n(\$ gpuready [^\n]*--sysroot tests/fixtures/[^\n]*)\n(.*?)^```$", open(readme).read(), re.M | re.S)
bad = 0
for cmd, want in blocks:
    got = subprocess.run([binary] + shlex.split(cmd[len("$ gpuready "):]), cwd=src, capture_output=True, text=True).stdout
    # an excerpt ends with a line "...": the output must start with it
    if want.endswith("\n...\n"):
        want = want[: -len("...\n")]
        got = got[: len(want)]
    if got != want:
        bad += 1
        print(f"drifted: {cmd}")
        for line in __import__("difflib").unified_diff(want.splitlines(), got.splitlines(), "README", "now", lineterm=""):
            print("  " + line)
print(f"{len(blocks)} examples, {bad} drifted")
sys.exit(1 if bad or not blocks else 0)
PYEOF
	if [ $? -eq 0 ]; then pass "README examples match the binary ($(tail -1 "$TMP/ex"))"
	else fail "README examples drifted (regenerate them from real output):"; head -40 "$TMP/ex" >&2; fi
}

# Private shorthand a clone of the project cannot resolve: numbered guides,
# sections of an internal notebook, paths beside the checkout. Sources are
# cited by their public name instead (docs/ARCHITECTURE.md).
jargon_re='[Ss]eeds? ?\(?[0-9]{3}|[Ss]eed.s\b|seed-era|no seed\)|\bREFERENCE\b|\.\./shared/|/work/shared'
t_jargon() {
	command -v strings >/dev/null || { echo "SKIP: strings (binutils) missing"; exit 77; }
	strings -a "$BIN" | grep -nE -- "$jargon_re" >"$TMP/bin.hits"
	if [ -s "$TMP/bin.hits" ]; then fail "the binary's strings:"; head -20 "$TMP/bin.hits" >&2
	else pass "the binary's strings cite no private notes"; fi
	# Every tracked text file; without git (a source tarball), every file.
	if git -C "$SRC" ls-files -z >"$TMP/files" 2>/dev/null && [ -s "$TMP/files" ]; then :; else
		(cd "$SRC" && find . -path ./.git -prune -o -path './build*' -prune -o -type f -print0) >"$TMP/files"
	fi
	# Comments wrap, so a line break and the next line's comment leader
	# count as one space. Left out: this pattern's own definition, and the
	# CI runner's path to its fresh-root tool on the CI host (a path it
	# runs, not a citation).
	(cd "$SRC" && python - "$jargon_re" "$TMP/files" >"$TMP/src.hits" <<'PYEOF'
import re, sys
pat = re.compile(sys.argv[1])
leader = re.compile(r"[ \t]*\n[ \t]*(?:\*|#|//|--)?[ \t]*")
for name in open(sys.argv[2], "rb").read().decode().split("\0"):
    if not name:
        continue
    try:
        text = open(name, "rb").read()
    except OSError:
        continue
    if b"\0" in text[:8192]:
        continue  # binary
    text = text.decode("utf-8", "replace")
    keep = [line for line in text.split("\n")
            if not (name.endswith("tests/cli/project.sh") and line.startswith("jargon_re="))
            and not (name.endswith(".ci/run") and "tools/fresh-debian.sh" in line)]
    joined = leader.sub(" ", "\n".join(keep))
    for m in pat.finditer(joined):
        print(f"{name}: ...{joined[max(0, m.start() - 40):m.end() + 20]}...")
PYEOF
	)
	if [ -s "$TMP/src.hits" ]; then fail "private shorthand in tracked files (cite the public source):"; head -40 "$TMP/src.hits" >&2
	else pass "tracked files cite no private notes ($(tr -cd '\0' <"$TMP/files" | wc -c) files)"; fi
}

t_scenarios() {
	python "$SRC/tests/fixtures/gen.py" --scenarios --check >"$TMP/gen.out" 2>&1 &&
		pass "scenario overlays match tests/fixtures/scen_*.py" ||
		{ fail "scenario overlays are stale or incomplete:"; cat "$TMP/gen.out" >&2; }
	n=0
	for d in "$SRC"/tests/fixtures/scenarios/*/; do
		[ -d "$d" ] || continue
		s=$(basename "$d"); n=$((n + 1))
		for f in README.md expect expected/check.txt expected/check.json expected/check.exit; do
			[ -s "$d/$f" ] || fail "scenario $s: $f missing or empty"
		done
		case $s in
		T[0-9]*) grep -qx 'clean' "$d/expect" || fail "scenario $s: a healthy-but-unusual node must expect 'clean'" ;;
		F[0-9]*) grep -Eq '^(warn|fail) ' "$d/expect" || fail "scenario $s: a failure mode must expect a warn or fail" ;;
		*) fail "scenario $s: the name starts with Fnn- (failure mode) or Tnn- (healthy but unusual)" ;;
		esac
	done
	pass "$n scenario directories have their files"
}

case ${1:-} in
ci) t_ci ;;
scenarios) t_scenarios ;;
jargon) t_jargon ;;
examples) t_examples ;;
layout) t_layout ;;
readme) t_readme ;;
testcount) t_testcount ;;
*) echo "usage: $0 ci|readme|testcount|layout|examples|jargon|scenarios" >&2; exit 2 ;;
esac
[ "$FAILS" -eq 0 ]
