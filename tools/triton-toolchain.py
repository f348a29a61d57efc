#!/usr/bin/env python3
"""What Triton on this machine needs at run time, for the python kind's Triton support: its
version, where its compilers and launcher builds come from (every subprocess call in its
runtime and NVIDIA backend), and the cache a kernel's first launch writes. Runs one kernel
outside kernelgate with a fresh TRITON_CACHE_DIR and lists what that launch created."""
import inspect
import os
import re
import subprocess
import sys
import sysconfig
import tempfile

import torch
import triton
import triton.language as tl

print("torch", torch.__version__, "triton", triton.__version__, "python", sys.version.split()[0])
print("Python.h:", os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")), sysconfig.get_paths()["include"])
root = os.path.dirname(triton.__file__)
for dirpath, _, files in os.walk(root):
    for f in files:
        if not f.endswith(".py"):
            continue
        path = os.path.join(dirpath, f)
        text = open(path, errors="replace").read()
        for i, line in enumerate(text.splitlines(), 1):
            if re.search(r"subprocess\.|check_call|check_output|os\.system|Popen|ldconfig|shutil\.which|_build\(|compile_module_from_src|TRITON_PTXAS|knobs\.", line) and "import" not in line:
                print(f"{os.path.relpath(path, root)}:{i}: {line.strip()[:160]}")

import triton.runtime.build as build_mod  # noqa: E402
for name in ("_build", "compile_module_from_src"):
    fn = getattr(build_mod, name, None)
    if fn:
        print(f"--- triton.runtime.build.{name}\n" + inspect.getsource(fn)[:3000])
try:
    import triton.backends.nvidia.driver as drv
    for name in ("compile_module_from_src", "libcuda_dirs", "CudaUtils", "CudaLauncher", "make_launcher"):
        obj = getattr(drv, name, None)
        if obj:
            print(f"--- driver.{name}\n" + inspect.getsource(obj)[:2500])
    import triton.backends.nvidia.compiler as comp
    print("--- compiler.make_cubin\n" + inspect.getsource(comp.CUDABackend.make_cubin)[:3500])
except Exception as e:  # noqa: BLE001
    print("backend source:", e)


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(x < 0, 0.0, x), mask=mask)


cache = tempfile.mkdtemp(prefix="triton-cache-")
os.environ["TRITON_CACHE_DIR"] = cache
real_run = subprocess.run
real_check_call = subprocess.check_call
real_check_output = subprocess.check_output


def logged(real, label):
    def call(*a, **k):
        print(f"SUBPROCESS {label}: {a[0] if a else k.get('args')}"[:400])
        return real(*a, **k)
    return call


subprocess.run = logged(real_run, "run")
subprocess.check_call = logged(real_check_call, "check_call")
subprocess.check_output = logged(real_check_output, "check_output")
x = torch.randn(4096, device="cuda")
out = torch.empty_like(x)
_relu[(4,)](x, out, x.numel(), BLOCK=1024)
torch.cuda.synchronize()
print("relu right:", torch.equal(out, torch.relu(x)))
for dirpath, _, files in os.walk(cache):
    for f in files:
        p = os.path.join(dirpath, f)
        print("cache:", os.path.relpath(p, cache), os.path.getsize(p))
