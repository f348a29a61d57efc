#!/usr/bin/env python3
"""What a CUDA context's life costs when many processes set one up at once, per phase.

Every runner kernelgate starts on a GPU creates a context, allocates its flush buffer, runs one
small piece of device work and, when its op is judged, exits (the context is torn down). On the
H200 those steps serialise in the driver: 16 runners at once took 2.4 s each to prepare
(tests/loader/bench_runner_start.cc). This script times the steps through the driver API alone
(no PyTorch), K processes at once, under a few environment variants, so that what costs can be
told apart from what does not:

  init      cuInit
  context   cuDevicePrimaryCtxRetain + cuCtxSetCurrent
  alloc     cuMemAlloc of the flush buffer (256 MiB)
  work      cuMemsetD8 of it + cuCtxSynchronize
  teardown  cuDevicePrimaryCtxRelease (the context destroyed)
  exit      from the end of teardown to the process's exit as the parent saw it

usage: context-cost.py [--at-once 1,8,16] [--rounds 2] [--variants default,connections1,...]
Needs a GPU and its driver (libcuda.so.1).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import ctypes, json, os, sys, time
cu = ctypes.CDLL("libcuda.so.1")
def ok(r, what):
    if r != 0:
        sys.exit(f"{what}: CUresult {r}")
go = float(sys.argv[1])
while time.time() < go:
    time.sleep(0.001)
t = [time.perf_counter()]
ok(cu.cuInit(0), "cuInit"); t.append(time.perf_counter())
dev = ctypes.c_int(); ok(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
ok(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain"); ok(cu.cuCtxSetCurrent(ctx), "set current"); t.append(time.perf_counter())
p = ctypes.c_uint64(); n = 256 << 20
ok(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)), "alloc"); t.append(time.perf_counter())
ok(cu.cuMemsetD8_v2(p, ctypes.c_ubyte(0), ctypes.c_size_t(n)), "memset"); ok(cu.cuCtxSynchronize(), "sync"); t.append(time.perf_counter())
ok(cu.cuDevicePrimaryCtxRelease_v2(dev), "release"); t.append(time.perf_counter())
print(json.dumps({"phases": [b - a for a, b in zip(t, t[1:])], "end": time.time()}), flush=True)
"""

PHASES = ["init", "context", "alloc", "work", "teardown"]

VARIANTS = {
    "default": {},
    "connections1": {"CUDA_DEVICE_MAX_CONNECTIONS": "1"},
    "connections2": {"CUDA_DEVICE_MAX_CONNECTIONS": "2"},
    "eager-modules": {"CUDA_MODULE_LOADING": "EAGER"},
    "no-cache": {"CUDA_CACHE_DISABLE": "1"},
}


def run(k, env):
    go = time.time() + 0.5 + 0.02 * k
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, repr(go)], env=env, stdout=subprocess.PIPE, text=True) for _ in range(k)]
    rows = []
    for p in procs:
        out, _ = p.communicate()
        done = time.time()
        if p.returncode != 0:
            raise SystemExit(f"a child failed ({p.returncode})")
        row = json.loads(out)
        row["exit"] = max(0.0, done - row["end"])
        rows.append(row)
    return rows, time.time() - go


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--at-once", default="1,8,16")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    a = ap.parse_args()
    counts = [int(x) for x in a.at_once.split(",")]
    print(f"{'variant':<14} {'at once':>7} " + " ".join(f"{p:>9}" for p in PHASES + ["exit"]) + f" {'contexts/s':>11}")
    for name in a.variants.split(","):
        env = dict(os.environ)
        env.update(VARIANTS[name])
        for k in counts:
            rows, wall = [], 0.0
            for _ in range(a.rounds):
                r, w = run(k, env)
                rows += r
                wall += w
            means = [statistics.fmean(r["phases"][i] for r in rows) for i in range(len(PHASES))]
            means.append(statistics.fmean(r["exit"] for r in rows))
            print(f"{name:<14} {k:>7} " + " ".join(f"{m:9.3f}" for m in means) + f" {len(rows) / wall:11.2f}", flush=True)


if __name__ == "__main__":
    main()
