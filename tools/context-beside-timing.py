#!/usr/bin/env python3
"""Whether other processes setting up CUDA beside a timed call move its time.

A batch on one GPU judges many ops at once and times one at a time (docs/batches.md). The open
question is whether a new runner may set its device up (create its CUDA context, allocate its
flush buffer, run one one-element kernel, synchronise: kg-runner's cuda_setup) while another op's
calls are being timed. This script times a few ops the way kernelgate does (fresh inputs on the
device, the L2 flushed by a memset, CUDA events around each call, a host synchronisation between
calls) in blocks that alternate between a quiet GPU and one where DISTURBERS other processes do
that set-up over and over, and prints each op's median and mean per condition and their ratios.

Two kinds of disturber: `runner` (a fresh process per set-up: import torch, context, flush buffer,
one kernel, exit; about the rate a batch starts runners at) and `context` (one process creating
and destroying its primary context in a loop through the driver: a far higher rate, a stress).

usage: context-beside-timing.py [--disturbers 8] [--blocks 6] [--reps 100] [--mode runner|context|both]
Needs PyTorch with CUDA (the GPU machine).
"""
import argparse
import statistics
import subprocess
import sys
import time

import torch

# One runner's set-up, as kg-runner's cuda_setup does it, in a fresh process each time.
RUNNER_ONCE = r"""
import torch
torch.cuda.set_device(0)
l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
torch.empty(1, device="cuda").zero_()
torch.cuda.synchronize()
"""

# Primary context created and destroyed in a loop through the driver, with a buffer and a memset.
CONTEXT_LOOP = r"""
import ctypes, sys
cu = ctypes.CDLL("libcuda.so.1")
def ok(r, what):
    if r != 0:
        sys.exit(f"{what}: CUresult {r}")
ok(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
ok(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
while True:
    ctx = ctypes.c_void_p()
    ok(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
    ok(cu.cuCtxSetCurrent(ctx), "set current")
    p = ctypes.c_uint64()
    ok(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(128 << 20)), "alloc")
    ok(cu.cuMemsetD8_v2(p, ctypes.c_ubyte(0), ctypes.c_size_t(4)), "memset")
    ok(cu.cuCtxSynchronize(), "sync")
    ok(cu.cuMemFree_v2(p), "free")
    ok(cu.cuDevicePrimaryCtxRelease_v2(dev), "release")
"""


class Disturbers:
    def __init__(self, mode, n):
        self.mode, self.n, self.procs, self.setups = mode, n, [], 0

    def __enter__(self):
        if self.mode == "context":
            self.procs = [subprocess.Popen([sys.executable, "-c", CONTEXT_LOOP]) for _ in range(self.n)]
        else:
            loop = "import subprocess, sys\nwhile True:\n    subprocess.run([sys.executable, '-c', %r], check=True)\n" % RUNNER_ONCE
            self.procs = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(self.n)]
        time.sleep(2.0)  # every disturber under way before the block starts
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        time.sleep(0.5)


def ops():
    a = torch.randn(1 << 20, device="cuda")
    m1, m2 = torch.randn(2048, 2048, device="cuda"), torch.randn(2048, 2048, device="cuda")
    h1, h2 = torch.randn(4096, 4096, device="cuda", dtype=torch.float16), torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    big = torch.randn(64 << 20, device="cuda")
    return {
        "relu 1M f32": (torch.relu, [a]),
        "add 64M f32": (lambda x: x + x, [big]),
        "mm 2048 f32": (torch.mm, [m1, m2]),
        "mm 4096 f16": (torch.mm, [h1, h2]),
    }


def time_block(fn, masters, flush, reps):
    out = []
    for i in range(reps + 2):
        args = [m.clone() for m in masters]
        flush.zero_()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(*args)
        e.record()
        torch.cuda.synchronize()
        if i >= 2:
            out.append(s.elapsed_time(e) * 1000.0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--disturbers", type=int, default=8)
    ap.add_argument("--blocks", type=int, default=6, help="blocks per condition, alternating")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--mode", choices=["runner", "context", "both"], default="both")
    a = ap.parse_args()
    torch.cuda.init()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
    table = ops()
    for fn, args in table.values():  # warm every op up
        for _ in range(5):
            fn(*args)
    torch.cuda.synchronize()
    modes = ["runner", "context"] if a.mode == "both" else [a.mode]
    conditions = ["quiet"] + modes
    times = {(c, op): [] for c in conditions for op in table}
    quiet_halves = {(h, op): [] for h in (0, 1) for op in table}  # even and odd blocks: the noise floor
    for b in range(a.blocks):
        for c in conditions:
            if c == "quiet":
                for op, (fn, args) in table.items():
                    t = time_block(fn, args, flush, a.reps)
                    times[(c, op)] += t
                    quiet_halves[(b % 2, op)] += t
            else:
                with Disturbers(c, a.disturbers):
                    for op, (fn, args) in table.items():
                        times[(c, op)] += time_block(fn, args, flush, a.reps)
        print(f"block {b + 1}/{a.blocks} done", flush=True)
    print(f"\n{a.disturbers} disturbers, {a.blocks} blocks x {a.reps} calls per op and condition (µs)")
    worst, floor_worst = {c: 0.0 for c in modes}, 0.0
    for op in table:
        q = times[("quiet", op)]
        floor = statistics.median(quiet_halves[(1, op)]) / statistics.median(quiet_halves[(0, op)]) if a.blocks > 1 else 1.0
        floor_worst = max(floor_worst, abs(floor - 1.0))
        line = (f"{op:<12} quiet median {statistics.median(q):9.1f} mean {statistics.fmean(q):9.1f} p99 {sorted(q)[int(0.99 * len(q)) - 1]:9.1f}"
                f" (odd/even blocks {floor:.3f}x)")
        for c in modes:
            t = times[(c, op)]
            rm, ra = statistics.median(t) / statistics.median(q), statistics.fmean(t) / statistics.fmean(q)
            worst[c] = max(worst[c], rm - 1.0)
            line += f" | {c} median {statistics.median(t):9.1f} ({rm:.3f}x) mean {statistics.fmean(t):9.1f} ({ra:.3f}x) p99 {sorted(t)[int(0.99 * len(t)) - 1]:9.1f}"
        print(line)
    print("largest median slow-down: " + ", ".join(f"{c} {worst[c] * 100:+.2f}%" for c in modes) +
          f" (quiet against quiet, odd/even blocks: up to {floor_worst * 100:.2f}%)")


if __name__ == "__main__":
    main()
