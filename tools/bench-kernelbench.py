#!/usr/bin/env python3
"""Times `kernelgate eval --problem` on KernelBench pairs, side by side with a KernelBench-style
evaluation of the same files in the same run and, given a KernelBench checkout, with KernelBench's
own eval_kernel_against_ref (docs/kernelbench.md, "Benchmark").

    tools/bench-kernelbench.py --kernelgate build/bin/kernelgate [--python /usr/bin/python3]
                               [--device cpu|cuda] [--kernelbench-src DIR] [--reps N]
                               [PROBLEM SOLUTION]...

Default pairs on cpu: tests/kernelbench-problems/19_ReLU.py with tests/legit-kernelbench/relu_numpy
and with relu_load_inline_cpp (a C++ kernel through load_inline), 2_Standard_matrix_multiplication_.py
with matmul_small_numpy. On cuda: 19_ReLU.py with tests/legit-kernelbench-cuda/relu_cuda_elementwise,
2_Standard_matrix_multiplication_.py with matmul_cuda_shared_tiles (both load_inline cuda_sources).
Every tool starts from empty build caches ($KERNELGATE_CACHE after `kernelgate warmup`, whose
one-time time is printed; $TORCH_EXTENSIONS_DIR; KernelBench's build_dir), so for a load_inline
pair the first rep is a cold build for all of them and is printed as its own row (there
kernelgate's timed eval builds, its --no-timing eval already finds the build cached); the
others are cached. For each pair and rep:
  - kernelgate, timing on: `eval --problem P S [--device cuda]` (a fresh process; both sandboxed
    runners, five samples judged, both forwards timed);
  - kernelgate, `--no-timing`;
  - the KernelBench-style loop: a fresh Python process that imports both files, builds Model and
    ModelNew under one seed (moved to the device), checks 5 fresh get_inputs() draws with allclose
    (atol = rtol = 1e-2), and times 100 calls of ModelNew.forward after 3 warm-up calls
    (perf_counter on cpu, CUDA events on the current stream on cuda). This is KernelBench's loop
    written here, not its code;
  - with --kernelbench-src (cuda only: it asserts CUDA): KernelBench's own eval_kernel_against_ref
    (src/kernelbench/eval.py of the checkout) in a fresh Python process on the two files' text,
    as KernelBench's scripts call it (5 correctness trials, 100 timed trials with CUDA events,
    the reference timed too), with a build_dir of its own per pair.
Prints each figure (median over reps) and the ratios kernelgate / loop and kernelgate / KernelBench
(wall time of the whole process each). Exit status 1 when an evaluation did not pass.
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
DEFAULT_PAIRS = {
    "cpu": [
        ("kernelbench-problems/19_ReLU.py", "legit-kernelbench/relu_numpy/solution.py"),
        ("kernelbench-problems/19_ReLU.py", "legit-kernelbench/relu_load_inline_cpp/solution.py"),
        ("kernelbench-problems/2_Standard_matrix_multiplication_.py", "legit-kernelbench/matmul_small_numpy/solution.py"),
    ],
    "cuda": [
        ("kernelbench-problems/19_ReLU.py", "legit-kernelbench-cuda/relu_cuda_elementwise/solution.py"),
        ("kernelbench-problems/2_Standard_matrix_multiplication_.py", "legit-kernelbench-cuda/matmul_cuda_shared_tiles/solution.py"),
    ],
}

LOOP = r"""
import importlib.util, sys, time, torch
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
p, s = load(sys.argv[1], "problem"), load(sys.argv[2], "solution")
device = sys.argv[3]
def inputs():
    return [t.to(device) if isinstance(t, torch.Tensor) else t for t in p.get_inputs()]
def timed_call(x):
    if device == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(); new(*x); end.record(); torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3
    t = time.perf_counter(); new(*x); return time.perf_counter() - t
init = p.get_init_inputs()
torch.manual_seed(42)
ref = p.Model(*init).to(device)
torch.manual_seed(42)
new = s.ModelNew(*init).to(device)
with torch.no_grad():
    for trial in range(5):
        torch.manual_seed(1000 + trial)
        x = inputs()
        if not torch.allclose(ref(*x), new(*x), atol=1e-2, rtol=1e-2):
            print("incorrect"); sys.exit(1)
    x = inputs()
    for _ in range(3):
        new(*x)
    times = [timed_call(x) for _ in range(100)]
print("correct", sorted(times)[50])
"""

KERNELBENCH = r"""
import copy, importlib, os, sys, types
src, problem, solution, build_dir = sys.argv[1:5]

# KernelBench's package imports these at module level for its LLM clients, progress bars, .env
# files, HTTP and result records. eval_kernel_against_ref needs none of them except pydantic's
# BaseModel (its KernelExecResult), so each one this Python lacks is stubbed, BaseModel by a class
# that keeps its fields; the result line names the stubs.
class BaseModel:
    def __init__(self, **fields):
        for name in getattr(type(self), "__annotations__", {}):
            setattr(self, name, copy.copy(getattr(type(self), name, None)))
        self.__dict__.update(fields)

stubbed = []
for name, attrs in (("dotenv", {"load_dotenv": lambda *a, **k: False}), ("tqdm", {"tqdm": lambda it=None, *a, **k: it}),
                    ("openai", {"OpenAI": None}), ("litellm", {"completion": None}), ("requests", {}),
                    ("pydantic", {"BaseModel": BaseModel})):
    try:
        importlib.import_module(name)
    except ImportError:
        sys.modules[name] = types.ModuleType(name)
        sys.modules[name].__dict__.update(attrs)
        stubbed.append(name)

sys.path.insert(0, os.path.join(src, "src"))
import torch
from kernelbench.eval import eval_kernel_against_ref
with open(problem) as f:
    ref_src = f.read()
with open(solution) as f:
    new_src = f.read()
r = eval_kernel_against_ref(ref_src, new_src, num_correct_trials=5, num_perf_trials=100, measure_performance=True,
                            timing_method="cuda_event", build_dir=build_dir, device=torch.device("cuda:0"))
print("kernelbench:", "correct" if r.compiled and r.correctness else "incorrect", r.runtime, r.ref_runtime,
      ",".join(stubbed) or "none")
"""


def timed(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return time.perf_counter() - t, r


def kernelbench_line(stdout):
    lines = [l for l in stdout.splitlines() if l.startswith("kernelbench: ")]
    return lines[-1].split() if lines else []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernelgate", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--kernelbench-src", metavar="DIR", help="a checkout of KernelBench: adds its eval_kernel_against_ref")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("pairs", nargs="*", help="PROBLEM SOLUTION ...")
    a = ap.parse_args()
    if len(a.pairs) % 2:
        ap.error("pairs come as PROBLEM SOLUTION")
    kb_src = a.kernelbench_src and os.path.abspath(a.kernelbench_src)
    if kb_src and a.device != "cuda":
        ap.error("KernelBench's eval_kernel_against_ref asserts CUDA: --kernelbench-src needs --device cuda")
    if kb_src and not os.path.isfile(os.path.join(kb_src, "src", "kernelbench", "eval.py")):
        ap.error(f"{kb_src} has no src/kernelbench/eval.py")
    pairs = list(zip(a.pairs[::2], a.pairs[1::2])) or [
        (os.path.join(TESTS, p), os.path.join(TESTS, s)) for p, s in DEFAULT_PAIRS[a.device]]
    device_args = ["--device", "cuda"] if a.device == "cuda" else []
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        loop = os.path.join(tmp, "loop.py")
        with open(loop, "w") as f:
            f.write(LOOP)
        kb_eval = os.path.join(tmp, "kernelbench_eval.py")
        with open(kb_eval, "w") as f:
            f.write(KERNELBENCH)
        os.environ["KERNELGATE_CACHE"] = os.path.join(tmp, "kernelgate-cache")
        os.environ["TORCH_EXTENSIONS_DIR"] = os.path.join(tmp, "torch-extensions")
        if a.device == "cuda":
            # load_inline builds for the architecture kernelgate builds for.
            arch = os.environ.get("KERNELGATE_CUDA_ARCH", "sm_90").replace("sm_", "")
            os.environ.setdefault("TORCH_CUDA_ARCH_LIST", f"{arch[0]}.{arch[1:]}")
        s, r = timed([a.kernelgate, "warmup", "--kind", a.device])
        print(f"kernelgate warmup --kind {a.device} (once per machine and toolchain): {s:.2f}s")
        names = [os.path.basename(p) + " + " + os.path.basename(os.path.dirname(s)) for p, s in pairs]
        width = max(len(n) for n in names) + len(" (cold)")
        header = f"{'pair':{width}} {'kernelgate':>11} {'--no-timing':>12} {'loop':>8} {'ratio':>7} {'ratio nt':>9}"
        if kb_src:
            header += f" {'KernelBench':>12} {'ratio KB':>8} {'ratio nt KB':>11}"
        print(header)
        stubs = None
        for n, (name, (problem, solution)) in enumerate(zip(names, pairs)):
            figures = {"kg": [], "kg_nt": [], "loop": [], "kb": []}
            with open(solution) as f:
                builds = "load_inline" in f.read()
            kb_build = os.path.join(tmp, f"kernelbench-build-{n}")
            for rep in range(a.reps + (1 if builds else 0)):
                out = os.path.join(tmp, f"out-{rep}")
                for key, extra in (("kg", []), ("kg_nt", ["--no-timing"])):
                    s, r = timed([a.kernelgate, "eval", "--problem", problem, solution, "--out", out, "--quiet"] + device_args + extra)
                    if r.returncode != 0:
                        failed = True
                        print(f"kernelgate did not pass {problem} / {solution} (exit {r.returncode}):\n{r.stdout[-2000:]}")
                    figures[key].append(s)
                s, r = timed([a.python, loop, problem, solution, a.device])
                last = r.stdout.strip().splitlines()[-1:] or [""]  # torch may warn first (no CUDA runtime)
                if r.returncode != 0 or not last[0].startswith("correct"):
                    failed = True
                    print(f"the loop did not pass {problem} / {solution}:\n{r.stdout[-2000:]}")
                figures["loop"].append(s)
                if kb_src:
                    s, r = timed([a.python, kb_eval, kb_src, problem, solution, kb_build])
                    result = kernelbench_line(r.stdout)
                    if r.returncode != 0 or result[1:2] != ["correct"]:
                        failed = True
                        print(f"KernelBench's eval_kernel_against_ref did not pass {problem} / {solution}:\n{r.stdout[-3000:]}")
                    else:
                        stubs = result[4]
                    figures["kb"].append(s)
            if builds:
                # Rep 0 built the extension (kernelgate: in its first eval; the others: in their first run).
                print_row(name + " (cold)", width, {k: v.pop(0) for k, v in figures.items() if v})
            print_row(name, width, {k: statistics.median(v) for k, v in figures.items() if v})
        if stubs:
            print(f"KernelBench's modules imported with these packages stubbed: {stubs}")
    return 1 if failed else 0


def print_row(name, width, f):
    kg, nt, lp = f["kg"], f["kg_nt"], f["loop"]
    line = f"{name:{width}} {kg:10.2f}s {nt:11.2f}s {lp:7.2f}s {kg / lp:6.2f}x {nt / lp:8.2f}x"
    if "kb" in f:
        line += f" {f['kb']:11.2f}s {kg / f['kb']:7.2f}x {nt / f['kb']:10.2f}x"
    print(line)


if __name__ == "__main__":
    sys.exit(main())
