#!/usr/bin/env python3
"""Throughput of `kernelgate eval --batch` against one `kernelgate eval` per submission.

    tools/bench-batch.py [--kernelgate build/bin/kernelgate] [--n 20] [--distinct K] [--warmup] [--kind cpu|cuda|nvrtc]
                         [--device cpu|cuda] [--jobs N] [--timing] [--policy P] [--no-loop] [--keep DIR]

Makes N single-op relu submissions of the kind (copies of the bundled example, each with a
comment of its own so that no two share a build), then in one run, side by side:
  loop cold    one `kernelgate eval SUB` after another, fresh build cache (today's way)
  batch cold   `kernelgate eval --batch DIR --jobs N`, fresh build cache
  loop cached  the loop again, its cache warm
  nopool cached the batch with every runner started when needed (--no-runner-pool), cache warm
  batch cached the batch again, its cache warm
and prints evaluations per minute for each and the batch/loop and batch/nopool ratios (--no-loop
leaves the loop out: the batch rows only). Every verdict must be
pass in all four (the script says so and exits 1 otherwise). Timing is off unless --timing.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = {
    "cpu": os.path.join(HERE, "..", "examples", "correct", "relu__default"),
    "cuda": os.path.join(HERE, "..", "examples", "cuda", "correct", "relu__default"),
    "nvrtc": os.path.join(HERE, "..", "examples", "nvrtc", "correct", "relu__default"),
}


def make_batch(root, n, kind, distinct):
    batch = os.path.join(root, "batch")
    for i in range(n):
        dest = os.path.join(batch, f"sub{i:03d}", "relu__default")
        shutil.copytree(EXAMPLE[kind], dest)
        for name in os.listdir(dest):
            path = os.path.join(dest, name)
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(f"// submission {i % distinct}\n" + text)
    return batch


PHASES = {}  # (who, label) -> mean seconds per op of eval and of each phase_seconds entry


def verdicts_of(results_paths, key=None):
    out, sums, n = {}, {}, 0
    for sub, path in results_paths:
        with open(path) as f:
            for op in json.load(f)["ops"]:
                out[(sub, op["op"])] = op["verdict"]
                n += 1
                sums["eval"] = sums.get("eval", 0) + (op.get("eval_seconds") or 0)
                for k, v in (op.get("phase_seconds") or {}).items():
                    sums[k] = sums.get(k, 0) + v
    if key and n:
        PHASES[key] = {k: v / n for k, v in sums.items()}
    return out


def run_loop(kg, batch, out, common, env):
    subs = sorted(os.listdir(batch))
    t0 = time.monotonic()
    for sub in subs:
        subprocess.run([kg, "eval", os.path.join(batch, sub), "--out", os.path.join(out, sub), "--jobs", "1"] + common,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.monotonic() - t0
    return seconds, verdicts_of([(s, os.path.join(out, s, "results.json")) for s in subs])


def run_batch(kg, batch, out, common, env, jobs, more=()):
    t0 = time.monotonic()
    subprocess.run([kg, "eval", "--batch", batch, "--out", out, "--jobs", str(jobs)] + common + list(more), env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.monotonic() - t0
    subs = sorted(os.listdir(batch))
    return seconds, verdicts_of([(s, os.path.join(out, s, "results.json")) for s in subs], key=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernelgate", default=os.path.join(HERE, "..", "build", "bin", "kernelgate"))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--distinct", type=int, default=0,
                    help="only this many different sources (builds); the rest repeat them. The cached rows are "
                         "unchanged by it, the cold rows then build only these (default: every one distinct)")
    ap.add_argument("--kind", choices=sorted(EXAMPLE), default="cpu")
    ap.add_argument("--device", choices=["cpu", "cuda"], default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--policy", default=None, help="policy profile (default: kernelgate's)")
    ap.add_argument("--no-loop", action="store_true", help="leave out the one-eval-per-submission loop")
    ap.add_argument("--warmup", action="store_true",
                    help="run `kernelgate warmup --kind KIND` into each cold cache first, timed apart: the cold rows then "
                         "measure the submissions' own builds, not the one-time set-up of a new cache (README)")
    ap.add_argument("--keep", help="leave the batch and outputs in this folder")
    a = ap.parse_args()
    device = a.device or ("cpu" if a.kind == "cpu" else "cuda")
    root = a.keep or tempfile.mkdtemp(prefix="kg-bench-batch-")
    os.makedirs(root, exist_ok=True)
    distinct = a.distinct if 0 < a.distinct < a.n else a.n
    batch = make_batch(root, a.n, a.kind, distinct)
    common = ["--device", device, "--seed", "1", "--suite", "smoke"] + ([] if a.timing else ["--no-timing"])
    if a.policy:
        common += ["--policy", a.policy]
    rows, ok, warmups = [], True, []
    for label in ("cold", "cached"):
        env = dict(os.environ)
        whos = ["loop", "batch"] if label == "cold" else ["loop", "nopool", "batch"]
        if a.no_loop:
            whos.remove("loop")
        for who in whos:
            env["KERNELGATE_CACHE"] = os.path.join(root, "cache-batch" if who == "nopool" else f"cache-{who}")
            if label == "cold":
                shutil.rmtree(env["KERNELGATE_CACHE"], ignore_errors=True)
            os.makedirs(env["KERNELGATE_CACHE"], mode=0o700, exist_ok=True)
            if label == "cold" and a.warmup:
                t0 = time.monotonic()
                w = subprocess.run([a.kernelgate, "warmup", "--kind", a.kind], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if w.returncode != 0:
                    ok = False
                    print(f"{who} warmup failed ({w.returncode}): {w.stderr[-2000:]}", file=sys.stderr)
                warmups.append((who, time.monotonic() - t0))
            out = os.path.join(root, f"out-{who}-{label}")
            if who == "loop":
                s, v = run_loop(a.kernelgate, batch, out, common, env)
            else:
                more = ["--no-runner-pool"] if who == "nopool" else []
                s, v = run_batch(a.kernelgate, batch, out, common, env, a.jobs, more)
            bad = {k: x for k, x in v.items() if x != "pass"}
            if len(v) != a.n or bad:
                ok = False
                print(f"{who} {label}: {len(v)} verdicts, not passing: {bad}", file=sys.stderr)
            rows.append((who, label, s, a.n / s * 60))
    print(f"{a.n} single-op {a.kind} submissions ({distinct} distinct builds) on {device}, timing {'on' if a.timing else 'off'}, policy {a.policy or 'default'}, "
          f"--jobs {a.jobs}, {os.cpu_count()} cores")
    for who, secs in warmups:
        print(f"{who} cold cache: `kernelgate warmup --kind {a.kind}` first, {secs:.1f} s (not in the cold row)")
    print(f"{'run':<14} {'seconds':>8} {'evals/min':>10}")
    for who, label, s, rate in rows:
        print(f"{who + ' ' + label:<14} {s:8.1f} {rate:10.1f}")
    print("per op, mean seconds (results.json eval_seconds and phase_seconds):")
    for out, ph in PHASES.items():
        print(f"  {os.path.basename(out):<18} " + "  ".join(f"{k} {v:.3f}" for k, v in sorted(ph.items())))
    by = {(w, l): r for w, l, _, r in rows}
    if not a.no_loop:
        for label in ("cold", "cached"):
            print(f"batch/loop {label}: {by[('batch', label)] / by[('loop', label)]:.2f}x")
    print(f"batch/nopool cached (runners started ahead vs when needed): {by[('batch', 'cached')] / by[('nopool', 'cached')]:.2f}x")
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
