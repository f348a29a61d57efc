#!/usr/bin/env python3
"""Compares a merged sharded batch with the same batch judged unsharded.

    compare_runs.py MERGED_OUT UNSHARDED_OUT SHARD_OUT...

Per (submission, op), from OUT/<submission>/results.json: the verdict, tests passed and total, the
failure categories and the violated rules must be equal in MERGED_OUT and UNSHARDED_OUT. Each
SHARD_OUT must hold a non-empty set of pairs, the shards' sets must be disjoint and together be
every pair of the unsharded run, and each shard's judgement of a pair must be the unsharded one.
Both OUTs must hold summary.json, summary.csv and summary.md; the two summary.json must be equal
but for durations (keys ending in _seconds) and the two summary.csv equal row by row but for
columns of durations. The unsharded run must hold a
pass, a fail with a wrong value and a compile error (so that equal is not equal for want of
judging anything: every op errored the same way in both). Exit status 0 when all holds, 1
otherwise (every difference printed), 2 bad usage or an unreadable document.
"""
import csv
import json
import os
import sys


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"compare_runs: {path}: {e}", file=sys.stderr)
        sys.exit(2)


def judgements(out_dir):
    """{(submission, op): judgement} over every OUT/<submission>/results.json."""
    found = {}
    for name in sorted(os.listdir(out_dir)):
        path = os.path.join(out_dir, name, "results.json")
        if not os.path.isfile(path):
            continue
        for op in read_json(path).get("ops", []):
            tests = op.get("tests", {})
            found[(name, op["op"])] = {
                "verdict": op.get("verdict"),
                "passed": tests.get("passed"),
                "total": tests.get("total"),
                "failure categories": sorted(f.get("category") for f in op.get("failures", [])),
                "rules": sorted(v.get("rule") for v in op.get("violations", [])),
            }
    return found


def differences(name_a, a, name_b, b):
    diffs = []
    for key in sorted(set(a) | set(b)):
        label = f"{key[0]} {key[1]}"
        if key not in a:
            diffs.append(f"{label}: only in {name_b}")
        elif key not in b:
            diffs.append(f"{label}: only in {name_a}")
        else:
            for field in a[key]:
                if a[key][field] != b[key][field]:
                    diffs.append(f"{label}: {field} {a[key][field]!r} in {name_a}, {b[key][field]!r} in {name_b}")
    return diffs


def without_durations(value):
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if not k.endswith("_seconds")}
    if isinstance(value, list):
        return [without_durations(v) for v in value]
    return value


def csv_rows(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return [{k: v for k, v in row.items() if "seconds" not in k} for row in csv.DictReader(f)]
    except (OSError, csv.Error) as e:
        print(f"compare_runs: {path}: {e}", file=sys.stderr)
        sys.exit(2)


def compare_summaries(merged_dir, unsharded_dir):
    problems = []
    merged = without_durations(read_json(os.path.join(merged_dir, "summary.json")))
    unsharded = without_durations(read_json(os.path.join(unsharded_dir, "summary.json")))
    for key in sorted(set(merged) | set(unsharded)):
        if merged.get(key) != unsharded.get(key):
            problems.append(f"summary.json: {key} differs: merged {json.dumps(merged.get(key))[:400]}, "
                            f"unsharded {json.dumps(unsharded.get(key))[:400]}")
    merged_rows = csv_rows(os.path.join(merged_dir, "summary.csv"))
    unsharded_rows = csv_rows(os.path.join(unsharded_dir, "summary.csv"))
    if len(merged_rows) != len(unsharded_rows):
        problems.append(f"summary.csv: {len(merged_rows)} rows merged, {len(unsharded_rows)} unsharded")
    for i, (a, b) in enumerate(zip(merged_rows, unsharded_rows)):
        if a != b:
            problems.append(f"summary.csv: row {i + 1}: merged {a}, unsharded {b}")
    return problems


def check_variety(unsharded):
    """The batch's submissions are judged, not all refused the same way."""
    verdicts = sorted({j["verdict"] for j in unsharded.values()})
    categories = sorted({c for j in unsharded.values() for c in j["failure categories"]})
    print(f"compare_runs: unsharded verdicts {verdicts}, failure categories {categories}")
    problems = []
    if "pass" not in verdicts:
        problems.append("the unsharded run passed no op (the correct submissions must pass)")
    if not {"value_mismatch", "nan_mask", "shape_mismatch"} & set(categories):
        problems.append("the unsharded run found no wrong value (the buggy submissions must fail so)")
    if "compile_error" not in categories:
        problems.append("the unsharded run found no compile error (the broken submission must fail so)")
    return problems


def check_shards(shard_dirs, unsharded):
    problems = []
    owner = {}
    for shard in shard_dirs:
        pairs = judgements(shard)
        if not pairs:
            problems.append(f"{shard}: judged no (submission, op) pair")
        for key, judgement in pairs.items():
            if key in owner:
                problems.append(f"{key[0]} {key[1]}: judged by both {owner[key]} and {shard}")
            owner[key] = shard
            if key in unsharded and unsharded[key] != judgement:
                problems.append(f"{key[0]} {key[1]}: {shard} says {judgement}, the unsharded run {unsharded[key]}")
        print(f"compare_runs: {shard}: {len(pairs)} pairs")
    for key in sorted(set(unsharded) - set(owner)):
        problems.append(f"{key[0]} {key[1]}: judged by no shard")
    for key in sorted(set(owner) - set(unsharded)):
        problems.append(f"{key[0]} {key[1]}: judged by {owner[key]} but not by the unsharded run")
    return problems


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    merged_dir, unsharded_dir, shard_dirs = argv[1], argv[2], argv[3:]
    problems = []
    for out_dir in (merged_dir, unsharded_dir):
        for name in ("summary.json", "summary.csv", "summary.md"):
            if not os.path.isfile(os.path.join(out_dir, name)):
                problems.append(f"{out_dir}: no {name}")
    if not problems:
        problems += compare_summaries(merged_dir, unsharded_dir)
    merged, unsharded = judgements(merged_dir), judgements(unsharded_dir)
    if not unsharded:
        problems.append(f"{unsharded_dir}: no (submission, op) pair judged at all")
    problems += check_variety(unsharded)
    problems += differences("merged", merged, "unsharded", unsharded)
    problems += check_shards(shard_dirs, unsharded)
    for problem in problems:
        print(f"compare_runs: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"compare_runs: {len(merged)} (submission, op) pairs and the summaries, merged equal to unsharded, "
          f"{len(shard_dirs)} disjoint non-empty shards covering all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
