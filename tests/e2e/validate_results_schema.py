#!/usr/bin/python3
"""Validates JSON documents against a JSON Schema with Debian's python3-jsonschema.

usage: validate_results_schema.py SCHEMA DOC...
Prints "DOC: valid", or "DOC: invalid at /JSON/POINTER: problem" for each error (the deepest
first), and exits 0 when every document is valid, 1 when one is not, 2 when the schema itself is
not a valid schema or a file is unreadable.
"""
import json
import sys

import jsonschema


def pointer(path):
    return "/" + "/".join(str(p) for p in path)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        print(f"{argv[1]}: not a usable schema: {e}", file=sys.stderr)
        return 2
    validator = jsonschema.Draft202012Validator(schema)
    status = 0
    for path in argv[2:]:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: unreadable: {e}")
            return 2
        errors = sorted(validator.iter_errors(doc), key=lambda e: -len(e.absolute_path))
        if not errors:
            print(f"{path}: valid")
            continue
        status = 1
        for e in errors:
            print(f"{path}: invalid at {pointer(e.absolute_path)}: {e.message}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
