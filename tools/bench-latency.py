#!/usr/bin/env python3
"""One submission's latency: issue #20's table, every row measured in one run.

    tools/bench-latency.py [--kernelgate build/bin/kernelgate] [--device cpu|cuda] [--reps 3] [--keep DIR]
                           [--quick] [--no-daemon] [--daemon-b "WORDS"] [--daemon-b-policy FILE]

Each row runs `kernelgate eval` on the bundled relu example (`--ops relu.default --suite smoke`)
as a user would, a fresh process each time, and prints the median wall time of --reps runs and,
from results.json, the op's build_seconds, eval_seconds (its wait for the build included) and
phase_seconds (samples, build_step, runner_start, device_wait, judging, timing, runner_end), the
op's eval outside them ("other"), and the rest of the wall time ("process": start-up with
libtorch's static initialisers, the eager runner's shut-down, the reports). Rows:

  first build, new cache     a fresh cache root, no warm-up: the one-time set-up built by the first build
  warmup                     `kernelgate warmup --kind K` into a fresh cache root (the README's alternative)
  cold build                 the example with a comment of its own (nothing cached but the warm-up's work)
  cold build + <H>           the same with `#include <H>` first, for each standard header real sources include
  cached, timing             the same source again (competition policy, then rl-reward)
  cached, --no-timing        the same source again, judged without timing
  nvrtc cold / cached        the nvrtc example, a new source (with and without timing), then cached
  daemon: ...                the cached (and nvrtc cold) rows again through `kernelgate daemon`
                             (KERNELGATE_DAEMON set) under competition and rl-reward (an RL
                             trainer's usual call is a new nvrtc kernel), a daemon per policy,
                             --daemon-pause seconds between calls for the next worker to get ready
                             (an agent writing its next kernel leaves more); then back to back
                             with no pause

--daemon-b "WORDS" adds an A/B of the daemon's competition rows: two daemons side by side, their
calls alternating, the second started with WORDS: NAME=VALUE words go into its environment (and
its callers'), the others are its arguments (e.g. "--overlap", "CUDA_MODULE_LOADING=EAGER"). The
table then also has each daemon's median worker set-up ("ready in", from its log).

--daemon-b-policy FILE does the same A/B with the second daemon and its callers under the policy
file FILE (e.g. competition with a `timing.stop_rel_error`); with --daemon-b too, both apply.

--quick keeps the warm-up, one cold build, the rl-reward cached rows and the cached --no-timing
row, in a process of their own, and the rl-reward rows through the daemon (a short device call
after a change to how an op starts or ends).

On the CPU (no GPU, or --device cpu) the cpu kind stands in for cuda and the nvrtc rows are left
out. Every verdict must be pass (the script says which was not and exits 1).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
HEADERS = ["torch/extension.h", "ATen/ATen.h", "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAStream.h"]
TARGETS = {  # issue #20's targets, seconds
    "cached, timing (competition)": 0.5,
    "cached, timing (rl-reward)": 0.5,
    "cached, --no-timing": 0.25,
    "cold build": 4.0,
    "first build, new cache": 15.0,
    "warmup": 15.0,
    "nvrtc cold, timing (competition)": 1.0,
    "nvrtc cold, --no-timing": 1.0,
}
for h in HEADERS:
    TARGETS[f"cold build + <{h}>"] = 5.0
for k in list(TARGETS):
    if k.startswith(("cached", "nvrtc")):
        TARGETS["daemon: " + k] = TARGETS[k]
TARGETS["daemon: cached, --no-timing (rl-reward)"] = TARGETS["cached, --no-timing"]
TARGETS["daemon: nvrtc cold, timing (rl-reward)"] = TARGETS["nvrtc cold, timing (competition)"]
TARGETS["daemon: nvrtc cold, --no-timing (rl-reward)"] = TARGETS["nvrtc cold, --no-timing"]


class Bench:
    def __init__(self, kg, device, root):
        self.kg, self.device, self.root = kg, device, root
        self.count = 0
        self.failures = []

    def submission(self, kind, header=None, tag=None):
        """A copy of the example of `kind` under a new folder; a comment of its own (tag) makes it a new build."""
        self.count += 1
        src = os.path.join(EXAMPLES, *(["correct"] if kind == "cpu" else [kind, "correct"]), "relu__default")
        dest = os.path.join(self.root, f"sub{self.count:03d}", "relu__default")
        shutil.copytree(src, dest)
        for name in os.listdir(dest):
            if name.endswith((".cu", ".cpp")):
                path = os.path.join(dest, name)
                with open(path) as f:
                    text = f.read()
                head = (f"#include <{header}>\n" if header else "") + f"// latency bench {tag or self.count} {time.time_ns()}\n"
                with open(path, "w") as f:
                    f.write(head + text)
        return os.path.dirname(dest)

    def eval(self, label, sub, cache, more=(), daemon=None, extra_env=None):
        out = os.path.join(self.root, f"out{self.count:03d}-{len(self.failures)}-{time.time_ns()}")
        env = dict(os.environ, KERNELGATE_CACHE=cache, **(extra_env or {}))
        if daemon:
            env["KERNELGATE_DAEMON"] = daemon
        cmd = [self.kg, "eval", sub, "--ops", "relu.default", "--suite", "smoke", "--device", self.device, "--seed", "1",
               "--out", out, "-q"] + list(more)
        t0 = time.monotonic()
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
        op = {}
        try:
            with open(os.path.join(out, "results.json")) as f:
                op = json.load(f)["ops"][0]
        except (OSError, ValueError, KeyError, IndexError) as e:
            op = {"verdict": f"no results.json ({e})"}
        if daemon and "kernelgate: " in p.stderr:  # declined, or no daemon: the row would not be the daemon's
            self.failures.append(f"{label}: not run by the daemon: {p.stderr[-500:]}")
        if p.returncode != 0 or op.get("verdict") != "pass":
            self.failures.append(f"{label}: exit {p.returncode}, verdict {op.get('verdict')}: {p.stderr[-1500:]}")
        row = {"wall": wall, "build": op.get("build_seconds") or 0.0, "eval": op.get("eval_seconds") or 0.0}
        phases = dict(op.get("phase_seconds") or {})
        if "build" in phases:  # the op's build step: its build (or wait for it), the cache's look-up, the static rules
            phases["build_step"] = phases.pop("build")
        row.update(phases)
        for k, v in (op.get("timing_seconds") or {}).items():  # where the timing went
            row["t:" + k] = v
        for k, v in (op.get("judging_seconds") or {}).items():  # where the judging went
            row["j:" + k] = v
        if "rung_seconds" in op:  # the size ladder's top rung, where climbed (the median of 1s and 0s: most reps did)
            row["r:climbed"] = 1.0
            for k, v in op["rung_seconds"].items():
                row["r:" + k] = v
        if phases:  # the op's eval outside every phase it records
            row["other"] = max(0.0, row["eval"] - sum(phases.values()))
        # eval_seconds runs from the op's start, its wait for its build included
        row["process"] = max(0.0, wall - row["eval"])
        return row

    def warmup(self, kind, cache):
        env = dict(os.environ, KERNELGATE_CACHE=cache)
        t0 = time.monotonic()
        p = subprocess.run([self.kg, "warmup", "--kind", kind], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            self.failures.append(f"warmup --kind {kind}: exit {p.returncode}: {p.stdout[-1000:]} {p.stderr[-1000:]}")
        return {"wall": wall}, p.stdout


class Daemon:
    """`kernelgate daemon` on a socket in `root`, with the bench's cache; stopped on exit."""

    def __init__(self, kg, root, device, policy, cache, extra_env=None, tag="", extra_args=()):
        name = os.path.splitext(os.path.basename(policy))[0]  # a profile's name or a policy file's
        self.socket = os.path.join(root, f"daemon-{name}{tag}.sock")
        self.log_path = os.path.join(root, f"daemon-{name}{tag}.log")
        self.log = open(self.log_path, "w")
        self.extra_env = dict(extra_env or {})
        env = dict(os.environ, KERNELGATE_CACHE=cache, **self.extra_env)
        self.proc = subprocess.Popen([kg, "daemon", "--socket", self.socket, "--device", device, "--policy", policy] + list(extra_args),
                                     env=env, stdout=self.log, stderr=self.log)
        for _ in range(600):
            if os.path.exists(self.socket):
                break
            time.sleep(0.1)
        time.sleep(3)  # its first worker: libtorch is started, the runners are not yet

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=120)
        self.log.close()

    def ready_seconds(self):
        """Each worker's own set-up, from the log's `worker N: ready in S s` lines."""
        with open(self.log_path) as f:
            return [float(m.group(1)) for m in re.finditer(r": ready in ([0-9.]+) s", f.read())]


def new_cache(root, name):
    path = os.path.join(root, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, mode=0o700)
    return path


def median_row(rows):
    keys = sorted({k for r in rows for k in r})
    return {k: statistics.median([r.get(k, 0.0) for r in rows]) for k in keys}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernelgate", default=os.path.join(HERE, "..", "build", "bin", "kernelgate"))
    ap.add_argument("--device", choices=["cpu", "cuda"], default=None, help="default: cuda when nvidia-smi sees a GPU")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--keep", help="leave the submissions, caches and outputs in this folder")
    ap.add_argument("--daemon-pause", type=float, default=2.0, help="seconds between calls through the daemon (default 2)")
    ap.add_argument("--no-daemon", action="store_true", help="leave out the daemon rows")
    ap.add_argument("--daemon-b", metavar="WORDS", help="A/B the daemon's competition rows against a daemon with these NAME=VALUE and arguments")
    ap.add_argument("--daemon-b-policy", metavar="FILE",
                    help="A/B the daemon's competition rows against a daemon (and its callers) under this policy file instead")
    ap.add_argument("--quick", action="store_true", help="only the warm-up, a cold build, the cached --no-timing row and the rl-reward cached rows")
    a = ap.parse_args()
    ab_env, ab_args = {}, []
    for word in (a.daemon_b or "").split():
        name, eq, value = word.partition("=")
        if eq and not word.startswith("-"):
            ab_env[name] = value
        else:
            ab_args.append(word)
    device = a.device
    if device is None:
        device = "cuda" if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0 else "cpu"
    kind = "cuda" if device == "cuda" else "cpu"
    root = a.keep or tempfile.mkdtemp(prefix="kg-bench-latency-")
    os.makedirs(root, exist_ok=True)
    b = Bench(a.kernelgate, device, root)
    results = []  # (label, median row, reps)

    def measure(label, fn, reps):
        rows = [fn() for _ in range(reps)]
        results.append((label, median_row(rows), len(rows)))
        print(f"  measured {label}: {results[-1][1]['wall']:.2f} s", file=sys.stderr, flush=True)

    # 1. the one-time set-up: built by a first build, and by an explicit warm-up
    if not a.quick:
        measure("first build, new cache", lambda: b.eval("first build", b.submission(kind), new_cache(root, "cache-first"), ["--no-timing"]), 1)
    cache = new_cache(root, "cache")
    wrow, wout = b.warmup(kind, cache)
    results.append(("warmup", wrow, 1))
    print(wout, file=sys.stderr)
    # 2. cold builds over the warm cache
    measure("cold build", lambda: b.eval("cold build", b.submission(kind), cache, ["--no-timing"]), a.reps)
    for h in [] if a.quick else HEADERS if kind == "cuda" else ["torch/extension.h", "ATen/ATen.h"]:
        measure(f"cold build + <{h}>", lambda h=h: b.eval(f"cold build + {h}", b.submission(kind, header=h), cache, ["--no-timing"]), a.reps)
    # 3. one op, its build cached
    sub = b.submission(kind, tag="cached")
    b.eval("cache it", sub, cache, ["--no-timing"])
    if not a.quick:
        measure("cached, timing (competition)", lambda: b.eval("cached timing", sub, cache), a.reps)
    measure("cached, timing (rl-reward)", lambda: b.eval("cached timing rl", sub, cache, ["--policy", "rl-reward"]), a.reps)
    measure("cached, --no-timing", lambda: b.eval("cached no-timing", sub, cache, ["--no-timing"]), a.reps)
    # 4. nvrtc: no precompiled work; cold is a new source
    if kind == "cuda" and not a.quick:
        measure("nvrtc cold, timing (competition)", lambda: b.eval("nvrtc cold", b.submission("nvrtc"), cache), a.reps)
        measure("nvrtc cold, --no-timing", lambda: b.eval("nvrtc cold nt", b.submission("nvrtc"), cache, ["--no-timing"]), a.reps)
        nsub = b.submission("nvrtc", tag="cached")
        b.eval("cache it", nsub, cache, ["--no-timing"])
        measure("nvrtc cached, --no-timing", lambda: b.eval("nvrtc cached nt", nsub, cache, ["--no-timing"]), a.reps)

    # 5. the same through `kernelgate daemon`: a worker with libtorch started and two runners ahead
    if not a.no_daemon:
        def through(d, row, label, source, more=(), pause=True):
            """A row through daemon `d`; `source` gives each rep's submission (a new one for a cold row)."""
            def rep():
                if pause:
                    time.sleep(a.daemon_pause)
                return b.eval(label, source(), cache, more, daemon=d.socket)
            measure(row, rep, a.reps)

        cached = lambda: sub
        new_nvrtc = lambda: b.submission("nvrtc")  # a cold row: a new source each rep
        if not a.quick:
            with Daemon(a.kernelgate, root, device, "competition", cache) as d:
                through(d, "daemon: cached, timing (competition)", "daemon timing", cached)
                through(d, "daemon: cached, --no-timing", "daemon nt", cached, ["--no-timing"])
                if kind == "cuda":
                    through(d, "daemon: nvrtc cold, timing (competition)", "daemon nvrtc cold", new_nvrtc)
                    through(d, "daemon: nvrtc cold, --no-timing", "daemon nvrtc cold nt", new_nvrtc, ["--no-timing"])
                time.sleep(a.daemon_pause)
                through(d, "daemon: back to back, --no-timing", "daemon b2b", cached, ["--no-timing"], pause=False)
        with Daemon(a.kernelgate, root, device, "rl-reward", cache) as d:
            through(d, "daemon: cached, timing (rl-reward)", "daemon timing rl", cached, ["--policy", "rl-reward"])
            through(d, "daemon: cached, --no-timing (rl-reward)", "daemon nt rl", cached, ["--policy", "rl-reward", "--no-timing"])
            if kind == "cuda":  # an RL trainer's usual call: a new kernel each time
                through(d, "daemon: nvrtc cold, timing (rl-reward)", "daemon nvrtc cold rl", new_nvrtc, ["--policy", "rl-reward"])
                through(d, "daemon: nvrtc cold, --no-timing (rl-reward)", "daemon nvrtc cold nt rl", new_nvrtc, ["--policy", "rl-reward", "--no-timing"])

    # 6. A/B: the competition daemon against one started with --daemon-b, calls alternating; then
    # each back to back (no pause), one daemon after the other
    ready = []  # (daemon's tag, median worker set-up, workers)
    if (a.daemon_b or a.daemon_b_policy) and not a.no_daemon:
        b_policy = os.path.abspath(a.daemon_b_policy) if a.daemon_b_policy else "competition"
        tag = "[" + " ".join(w for w in (a.daemon_b, a.daemon_b_policy and "policy " + os.path.basename(a.daemon_b_policy)) if w) + "]"
        with Daemon(a.kernelgate, root, device, "competition", cache, tag="-a") as da, \
             Daemon(a.kernelgate, root, device, b_policy, cache, extra_env=ab_env, tag="-b", extra_args=ab_args) as db:
            sides = ((da, "[-]"), (db, tag))
            policy_args = {da: [], db: ["--policy", b_policy] if a.daemon_b_policy else []}
            for more, row in ((["--no-timing"], "cached, --no-timing"), ([], "cached, timing (competition)")):
                rows = {da: [], db: []}
                for _ in range(a.reps):
                    for d in (da, db):
                        time.sleep(a.daemon_pause)
                        rows[d].append(b.eval(f"A/B {row}", sub, cache, more + policy_args[d], daemon=d.socket, extra_env=d.extra_env))
                for d, t in sides:
                    results.append((f"daemon {t}: {row}", median_row(rows[d]), len(rows[d])))
            for d, t in sides:
                time.sleep(a.daemon_pause)
                rows = [b.eval("A/B back to back", sub, cache, ["--no-timing"] + policy_args[d], daemon=d.socket, extra_env=d.extra_env)
                        for _ in range(a.reps)]
                results.append((f"daemon {t}: back to back, --no-timing", median_row(rows), len(rows)))
        for d, t in sides:
            r = d.ready_seconds()
            ready.append((t, statistics.median(r) if r else float("nan"), len(r)))

    print(f"one relu.default op, smoke suite, device {device}, kind {kind}, {os.cpu_count()} cores, median of the reps; seconds")
    cols = ["wall", "build", "eval", "samples", "build_step", "runner_start", "device_wait", "judging", "timing",
            "runner_end", "other", "process"]
    w = max([36] + [len(label) for label, _, _ in results])
    print(f"{'row':<{w}} {'reps':>4} {'target':>7} " + " ".join(f"{c:>12}" for c in cols) + "  met")
    for label, row, reps in results:
        t = TARGETS.get(label)
        # a build row's figure is the build; every other row's is the wall time
        fig = row["build"] if label.startswith("cold build") else row["wall"]
        met = "" if t is None else ("yes" if fig <= t else "no")
        print(f"{label:<{w}} {reps:>4} {('' if t is None else f'{t:.2f}'):>7} " +
              " ".join(f"{row[c]:12.3f}" if c in row else f"{'':>12}" for c in cols) + f"  {met}")
    print("'met' compares a cold build row's build seconds, every other row's wall seconds, with the target")
    parts = [("t:", "where the timing went (results.json's timing_seconds; an exchange less its calls is the per-call work around them):",
              ["probe", "draws", "candidate", "candidate_calls", "judge", "eager", "eager_calls"]),
             ("j:", "where the judging went (results.json's judging_seconds):",
              ["samples", "repeat", "fresh", "same_address", "enlarged", "diagnosis"]),
             ("r:", "the size ladder's top rung, part of enlarged (results.json's rung_seconds; a median over reps that climbed it or not):",
              ["climbed", "draw", "reference", "call", "awaited"])]
    for prefix, title, pcols in parts:
        rows = [(label, row, reps) for label, row, reps in results if any((prefix + c) in row for c in pcols)]
        if rows:
            print(title)
            print(f"{'row':<{w}} {'reps':>4} " + " ".join(f"{c:>15}" for c in pcols))
            for label, row, reps in rows:
                print(f"{label:<{w}} {reps:>4} " + " ".join(f"{row.get(prefix + c, 0.0):15.3f}" for c in pcols))
    if not a.no_daemon:
        print(f"daemon rows: {a.daemon_pause:g} s between calls (the next worker getting ready), but 'back to back'")
    for t, med, n in ready:
        print(f"daemon {t}: a worker's own set-up (ready in) {med:.3f} s, median of {n} workers")
    for f in b.failures:
        print("NOT PASSING: " + f, file=sys.stderr)
    if b.failures:  # the daemons' logs say why a request through them went wrong
        for name in sorted(os.listdir(root)):
            if name.startswith("daemon-") and name.endswith(".log"):
                with open(os.path.join(root, name)) as f:
                    print(f"--- {name} (last lines)\n" + "".join(f.readlines()[-30:]), file=sys.stderr)
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if b.failures else 0


if __name__ == "__main__":
    sys.exit(main())
