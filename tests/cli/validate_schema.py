#!/usr/bin/env python3
"""Validates gpuready JSON reports against docs/report.schema.json.

usage: validate_schema.py SCHEMA REPORT.json...
Exit 0 if every report validates, 1 otherwise (each error is printed)."""
import json
import sys

import jsonschema


def main():
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in sys.argv[2:]:
        try:
            doc = json.load(open(path))
        except ValueError as e:
            print(f"{path}: not JSON: {e}")
            bad += 1
            continue
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        for e in errors[:5]:
            print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
