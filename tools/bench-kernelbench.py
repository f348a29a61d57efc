#!/usr/bin/env python3
"""Times `kernelgate eval --problem` on KernelBench pairs, side by side with a KernelBench-style
evaluation of the same files in the same run (docs/kernelbench.md, "Benchmark").

    tools/bench-kernelbench.py --kernelgate build/bin/kernelgate [--python /usr/bin/python3]
                               [--reps N] [PROBLEM SOLUTION]...

Default pairs: tests/kernelbench-problems/19_ReLU.py with tests/legit-kernelbench/relu_numpy and
with relu_load_inline_cpp (a C++ kernel through load_inline), 2_Standard_matrix_multiplication_.py
with matmul_small_numpy. Both tools start from empty build caches ($KERNELGATE_CACHE after
`kernelgate warmup --kind cpu`, whose one-time time is printed; $TORCH_EXTENSIONS_DIR), so for a
load_inline pair the first rep is a cold build for both and is printed as its own row (there
kernelgate's timed eval builds, its --no-timing eval already finds the build cached); the
others are cached. For each pair and rep:
  - kernelgate, timing on: `eval --problem P S` (a fresh process; both sandboxed runners, five
    samples judged, both forwards timed);
  - kernelgate, `--no-timing`;
  - the KernelBench-style loop: a fresh Python process that imports both files, builds Model and
    ModelNew under one seed, checks 5 fresh get_inputs() draws with allclose (atol = rtol = 1e-2),
    and times 100 calls of ModelNew.forward after 3 warm-up calls, as KernelBench's
    eval_kernel_against_ref does on the GPU (perf_counter here: this machine has no GPU).
    KernelBench itself is not installed here; this is its loop, not its code.
Prints each figure (median over reps) and the ratios kernelgate / loop. Exit status 1 when an
evaluation did not pass.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests")
DEFAULT_PAIRS = [
    ("kernelbench-problems/19_ReLU.py", "legit-kernelbench/relu_numpy/solution.py"),
    ("kernelbench-problems/19_ReLU.py", "legit-kernelbench/relu_load_inline_cpp/solution.py"),
    ("kernelbench-problems/2_Standard_matrix_multiplication_.py", "legit-kernelbench/matmul_small_numpy/solution.py"),
]

LOOP = r"""
import importlib.util, sys, time, torch
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
p, s = load(sys.argv[1], "problem"), load(sys.argv[2], "solution")
init = p.get_init_inputs()
torch.manual_seed(42)
ref = p.Model(*init)
torch.manual_seed(42)
new = s.ModelNew(*init)
with torch.no_grad():
    for trial in range(5):
        torch.manual_seed(1000 + trial)
        x = p.get_inputs()
        if not torch.allclose(ref(*x), new(*x), atol=1e-2, rtol=1e-2):
            print("incorrect"); sys.exit(1)
    x = p.get_inputs()
    for _ in range(3):
        new(*x)
    times = []
    for _ in range(100):
        t = time.perf_counter(); new(*x); times.append(time.perf_counter() - t)
print("correct", sorted(times)[50])
"""


def timed(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return time.perf_counter() - t, r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernelgate", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("pairs", nargs="*", help="PROBLEM SOLUTION ...")
    a = ap.parse_args()
    if len(a.pairs) % 2:
        ap.error("pairs come as PROBLEM SOLUTION")
    pairs = list(zip(a.pairs[::2], a.pairs[1::2])) or [(os.path.join(TESTS, p), os.path.join(TESTS, s)) for p, s in DEFAULT_PAIRS]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        loop = os.path.join(tmp, "loop.py")
        with open(loop, "w") as f:
            f.write(LOOP)
        os.environ["KERNELGATE_CACHE"] = os.path.join(tmp, "kernelgate-cache")
        os.environ["TORCH_EXTENSIONS_DIR"] = os.path.join(tmp, "torch-extensions")
        s, r = timed([a.kernelgate, "warmup", "--kind", "cpu"])
        print(f"kernelgate warmup --kind cpu (once per machine and toolchain): {s:.2f}s")
        print(f"{'pair':44} {'kernelgate':>11} {'--no-timing':>12} {'loop':>8} {'ratio':>7} {'ratio nt':>9}")
        for problem, solution in pairs:
            figures = {"kg": [], "kg_nt": [], "loop": []}
            with open(solution) as f:
                builds = "load_inline" in f.read()
            for rep in range(a.reps + (1 if builds else 0)):
                out = os.path.join(tmp, f"out-{rep}")
                for key, extra in (("kg", []), ("kg_nt", ["--no-timing"])):
                    s, r = timed([a.kernelgate, "eval", "--problem", problem, solution, "--out", out, "--quiet"] + extra)
                    if r.returncode != 0:
                        failed = True
                        print(f"kernelgate did not pass {problem} / {solution} (exit {r.returncode}):\n{r.stdout[-2000:]}")
                    figures[key].append(s)
                s, r = timed([a.python, loop, problem, solution])
                last = r.stdout.strip().splitlines()[-1:] or [""]  # torch may warn first (no CUDA runtime)
                if r.returncode != 0 or not last[0].startswith("correct"):
                    failed = True
                    print(f"the loop did not pass {problem} / {solution}:\n{r.stdout[-2000:]}")
                figures["loop"].append(s)
            name = (os.path.basename(problem) + " + " + os.path.basename(os.path.dirname(solution)))[:44]
            if builds:
                # Rep 0 built the extension (kernelgate: in its first eval; the loop: in its first run).
                kg, nt, lp = (figures[k].pop(0) for k in ("kg", "kg_nt", "loop"))
                print(f"{(name + ' (cold)')[:44]:44} {kg:10.2f}s {nt:11.2f}s {lp:7.2f}s {kg / lp:6.2f}x {nt / lp:8.2f}x")
            kg, nt, lp = (statistics.median(figures[k]) for k in ("kg", "kg_nt", "loop"))
            print(f"{name:44} {kg:10.2f}s {nt:11.2f}s {lp:7.2f}s {kg / lp:6.2f}x {nt / lp:8.2f}x")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
