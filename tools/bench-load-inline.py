#!/usr/bin/env python3
"""Times PyTorch's load_inline on kernelgate's cuda relu example, for the side-by-side with
kernelgate's own build (issue 7: "PyTorch's load_inline took 56 s there for a trivial relu").

    tools/bench-load-inline.py [--reps N] [--kg-bench build/tests/loader/kg_bench_build]

Each rep builds in a fresh build directory (cold: load_inline's ninja build from scratch, as a
trainer's first use of a kernel), then loads the cached module again (warm). The kernel is
called once on the GPU and checked against torch.relu. With --kg-bench, kernelgate's cuda
build is timed too (kg_bench_build --kinds cuda) and the ratio printed.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "examples", "cuda", "correct", "relu__default", "relu__default_implementation.cu")
DECL = "torch::Tensor relu__default_kernel_impl(const torch::Tensor& self);"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--kg-bench", help="path of kernelgate's kg_bench_build, for the ratio")
    args = ap.parse_args()

    import torch
    from torch.utils.cpp_extension import load_inline

    with open(SOURCE) as f:
        cuda_src = f.read()
    arch = os.environ.get("KERNELGATE_CUDA_ARCH", "sm_90").replace("sm_", "")
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", f"{arch[0]}.{arch[1:]}")
    print(f"torch {torch.__version__}, cuda {torch.version.cuda}, TORCH_CUDA_ARCH_LIST={os.environ['TORCH_CUDA_ARCH_LIST']}")

    cold, warm = [], []
    for rep in range(args.reps):
        build_dir = tempfile.mkdtemp(prefix="kg-load-inline-")
        name = f"kg_relu_bench_{os.getpid()}_{rep}"
        try:
            t0 = time.perf_counter()
            mod = load_inline(name=name, cpp_sources=[DECL], cuda_sources=[cuda_src],
                              functions=["relu__default_kernel_impl"], build_directory=build_dir, verbose=False)
            cold.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            load_inline(name=name, cpp_sources=[DECL], cuda_sources=[cuda_src],
                        functions=["relu__default_kernel_impl"], build_directory=build_dir, verbose=False)
            warm.append(time.perf_counter() - t0)
            if torch.cuda.is_available():
                x = torch.randn(1 << 20, device="cuda")
                assert torch.equal(mod.relu__default_kernel_impl(x), torch.relu(x)), "load_inline relu is wrong"
        finally:
            shutil.rmtree(build_dir, ignore_errors=True)
    print(f"load_inline cold median: {statistics.median(cold):.2f} s   (reps: {', '.join(f'{t:.2f}' for t in cold)})")
    print(f"load_inline warm median: {statistics.median(warm):.3f} s")

    if args.kg_bench:
        out = subprocess.run([args.kg_bench, "--kinds", "cuda", "--headers", "none", "--reps", str(max(3, args.reps))],
                             capture_output=True, text=True)
        print(out.stdout.strip())
        m = re.search(r"^cuda\s+\d+\s+([0-9.]+)\s+([0-9.]+)", out.stdout, re.M)
        if out.returncode != 0 or not m:
            print("kg_bench_build failed:", out.stderr.strip(), file=sys.stderr)
            return 1
        kg_cold, kg_cached = float(m.group(1)), float(m.group(2))
        print(f"ratio load_inline cold / kernelgate cuda cold: {statistics.median(cold) / kg_cold:.1f}x; "
              f"load_inline warm / kernelgate cached: {statistics.median(warm) / kg_cached:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
