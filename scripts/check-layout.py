#!/usr/bin/env python3
"""Checks that src/ keeps the layout docs/ARCHITECTURE.md describes.

  - include edges go only downward, by the layer table below (a directory
    may include itself and the directories listed for it);
  - checks/ includes no option table, bench/ nothing from job/;
  - no file over 800 lines, no function over 80 lines, cmd/ files under 300;
  - no mutable static storage outside main.c, except the ALLOWED entries
    (signal flags, once-loaded library tables).

Prints one line per violation and exits 1 if there is any. Usage:
  check-layout.py [SRC_DIR]        (default: the src/ beside this script)
"""
import os
import re
import sys

# directory -> the directories its files may include (besides its own).
LAYERS = {
    "core": [],
    "inventory": ["core"],
    "snapshot": ["core"],
    "lib": ["core"],
    "probe": ["core", "lib", "inventory"],
    "checks": ["core", "inventory"],
    "bench": ["core", "lib", "inventory"],
    "job": ["core", "bench"],
    "cluster": ["core", "lib", "inventory", "probe", "checks", "bench", "job", "opts"],
    "fix": ["core", "lib", "inventory", "probe", "checks", "bench", "job", "opts"],
    "opts": ["core", "checks", "bench", "job"],
    "cmd": ["core", "lib", "inventory", "snapshot", "probe", "checks", "bench", "job", "cluster", "fix", "opts"],
    "": ["core", "lib", "inventory", "snapshot", "probe", "checks", "bench", "job", "cluster", "fix", "opts", "cmd"],
}
# Option tables live in opts/ (and the command files that own them); checks/
# read only the site expectations struct, which core/ defines.
NO_INCLUDE = {"checks": ["opts/", "settings.h"], "bench": ["job/"]}

MAX_FILE, MAX_FUNC, MAX_CMD = 800, 80, 300
# file: names of mutable statics that are allowed, each with why.
ALLOWED = {
    # set from signal handlers, read by the loops they stop
    "job/watchdog.c": {"g_signal"},
    "bench/net/server.c": {"stop_requested"},
    "cluster/hosts.c": {"stop_signal"},
    # the temporary files being written, which the SIGINT/SIGTERM handler
    # unlinks (a handler sees only static storage), and its one-time install
    "core/fileio.c": {"pending", "handler_once"},
    # git's slopbuf: the one byte an empty strbuf points at (core/strbuf.h)
    "core/strbuf.c": {"strbuf_empty"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
FUNC_START = re.compile(r"^[A-Za-z_][^;=]*\)\s*$")
STATIC_VAR = re.compile(r"^\s*static\s+(?!const\b)(?!inline\b)(?!.*\bconst\b\s+\w+\s*(\[|=|;))[^(]*?\b(\w+)\s*(\[[^\]]*\])*\s*(=|;)")
GLOBAL_VAR = re.compile(r"^(?!static|extern|typedef|(?:struct|union|enum)\s+\w+\s*[{;]|enum|#|/|\s|})[A-Za-z_][^(]*?\b(\w+)\s*(\[[^\]]*\])*\s*(=[^;]*)?;\s*$")


def layer_of(rel):
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else ""


def include_layer(src, rel, inc):
    """The layer an include names: "core/x.h" -> core; a bare "x.h" is the
    includer's own directory where it is there, else src/ itself (the
    top, "")."""
    parts = inc.split("/")
    if len(parts) > 1:
        return parts[0]
    here = os.path.join(src, os.path.dirname(rel), inc)
    return layer_of(rel) if os.path.exists(here) else ""


def functions(lines):
    """(name, first line, length) of each function defined in kernel style:
    a signature line ending in ')' and a '{' alone at column 0."""
    i = 0
    while i < len(lines) - 1:
        if FUNC_START.match(lines[i]) and lines[i + 1].rstrip() == "{":
            name = re.findall(r"(\w+)\s*\(", lines[i])
            j = i + 2
            while j < len(lines) and lines[j].rstrip() != "}":
                j += 1
            yield (name[0] if name else "?", i + 1, j - i + 1)
            i = j
        i += 1


def check_file(src, rel, problems):
    with open(os.path.join(src, rel), errors="replace") as f:
        lines = f.read().split("\n")
    layer = layer_of(rel)
    n = len(lines) - (1 if lines and lines[-1] == "" else 0)
    if n > MAX_FILE:
        problems.append(f"{rel}: {n} lines (more than {MAX_FILE})")
    if layer == "cmd" and rel.endswith(".c") and n >= MAX_CMD:
        problems.append(f"{rel}: {n} lines (a command file stays under {MAX_CMD})")
    for no, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m or m.group(1) == "config.h":
            continue
        inc = m.group(1)
        target = include_layer(src, rel, inc)
        if layer not in LAYERS:
            problems.append(f"{rel}:{no}: directory '{layer}' is not in the layer table")
            break
        if target != layer and target not in LAYERS[layer]:
            problems.append(f"{rel}:{no}: {layer or 'src'}/ includes {inc} ({target}/ is not below it)")
        for bad in NO_INCLUDE.get(layer, []):
            if inc.startswith(bad) or inc.endswith("/" + bad) or inc == bad:
                problems.append(f"{rel}:{no}: {layer}/ must not include {inc}")
    if rel.endswith(".c"):
        for name, first, length in functions(lines):
            if length > MAX_FUNC:
                problems.append(f"{rel}:{first}: {name}() is {length} lines (more than {MAX_FUNC})")
    if rel == "main.c":
        return
    allowed = ALLOWED.get(rel, set())
    depth = 0
    for no, line in enumerate(lines, 1):
        code = re.sub(r'"([^"\\]|\\.)*"', '""', line.split("//")[0])
        m = STATIC_VAR.match(code)
        name = m.group(2) if m else None
        if not m and depth == 0:
            g = GLOBAL_VAR.match(code)
            name = g.group(1) if g and "const" not in code.split("=")[0] else None
        if name and name not in allowed:
            problems.append(f"{rel}:{no}: mutable static storage '{name}'")
        depth += code.count("{") - code.count("}")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    problems = []
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                check_file(src, os.path.relpath(os.path.join(root, f), src), problems)
    for p in sorted(problems):
        print(p)
    print(f"check-layout: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
