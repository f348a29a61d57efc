#!/usr/bin/python3
"""Reads a JUnit XML file back with Python's XML parser and prints what the e2e tests check, as JSON.

usage: junit_summary.py FILE
Prints {"attributes": {...root's counts}, "suites": [{"name", "attributes": {tests, failures,
errors, skipped}, "counted": {the same, counted from the testcases}, "cases": [{"classname",
"name", "outcome", "type", "message"}]}]}. Exits 1 when the file is not well-formed XML.
"""
import json
import sys
import xml.etree.ElementTree as ET


def outcome(case):
    for kind in ("failure", "error", "skipped"):
        element = case.find(kind)
        if element is not None:
            return kind, element.get("type", ""), element.get("message", "")
    return "passed", "", ""


def counts(element):
    return {key: element.get(key) for key in ("tests", "failures", "errors", "skipped")}


def main(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 1
    suites = []
    for suite in root.findall("testsuite"):
        cases = []
        counted = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for case in suite.findall("testcase"):
            kind, type_, message = outcome(case)
            counted["tests"] += 1
            if kind != "passed":
                counted[{"failure": "failures", "error": "errors", "skipped": "skipped"}[kind]] += 1
            cases.append({"classname": case.get("classname"), "name": case.get("name"), "outcome": kind, "type": type_,
                          "message": message})
        suites.append({"name": suite.get("name"), "attributes": counts(suite),
                       "counted": {k: str(v) for k, v in counted.items()}, "cases": cases})
    print(json.dumps({"root": root.tag, "attributes": counts(root), "suites": suites}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]) if len(sys.argv) == 2 else 2)
