#!/usr/bin/env python3
"""Which part of kernelgate's timing method moves one op's time away from do_bench's.

kernelgate times every call alone: fresh inputs copied from the host, the L2 flushed by a memset,
CUDA events around the call, and a host synchronisation before the next call (docs/verdicts.md,
"Timing"). triton.testing.do_bench queues its calls back to back on the same inputs. This script
times one op (mm f32 2048^3 by default, the case where the two differed) with each ingredient of
kernelgate's method switched off in turn, all in one process, and prints each median against
do_bench's. Needs PyTorch with CUDA and Triton (the GPU machine).

usage: timing-ablation.py [--op mm.default] [--shape 2048,2048,2048] [--dtype f32] [--reps 60]
"""
import argparse
import os
import statistics
import time

import torch

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def inputs(op, shape, dt, device):
    m, k, n = shape
    if op == "mm.default":
        return [torch.randn(m, k, dtype=dt, device=device), torch.randn(k, n, dtype=dt, device=device)]
    return [torch.randn(m, n, dtype=dt, device=device)]


def cudart():
    """The process's libcudart (loaded by torch), for the calls torch does not expose."""
    import ctypes
    import glob
    for name in ["libcudart.so.13", "libcudart.so.12", "libcudart.so"]:
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    for path in glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "**", "libcudart.so*"), recursive=True):
        return ctypes.CDLL(path)
    return None


def method(fn, host, dev_master, flush, reps, fresh="host", sync=True, fill="fill", gap_s=0.0, pre=None):
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stop = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    same = [d.clone() for d in dev_master]
    for i in range(reps + 3):
        k = max(i - 3, 0)
        if fresh == "host":
            args = [h.to("cuda") for h in host]
        elif fresh == "device":
            args = [d.clone() for d in dev_master]
        else:
            args = same
        if sync:
            torch.cuda.synchronize()
        if gap_s:
            time.sleep(gap_s)
        if pre:
            pre()
        if fill == "fill":
            flush.fill_(i & 0xFF)
        elif fill == "zero":
            flush.zero_()
        start[k].record()
        fn(*args)
        stop[k].record()
        if sync:
            stop[k].synchronize()
    torch.cuda.synchronize()
    return statistics.median(start[k].elapsed_time(stop[k]) * 1e-3 for k in range(reps))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", default="mm.default")
    ap.add_argument("--shape", default="2048,2048,2048")
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPES))
    ap.add_argument("--reps", type=int, default=60)
    a = ap.parse_args()
    import triton.testing

    name, overload = a.op.split(".")
    fn = getattr(getattr(torch.ops.aten, name), overload)
    dt = DTYPES[a.dtype]
    shape = [int(x) for x in a.shape.split(",")]
    host = inputs(a.op, shape, dt, "cpu")
    dev = [h.to("cuda") for h in host]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {a.op} {a.shape} {a.dtype}, "
          f"tf32 matmul {torch.backends.cuda.matmul.allow_tf32}")
    with torch.inference_mode():
        db = triton.testing.do_bench(lambda: fn(*dev), warmup=25, rep=200, return_mode="median") * 1e-3
        rows = [
            ("kernelgate's method (host copy, fill, sync)", dict()),
            ("same inputs every call", dict(fresh="same")),
            ("fresh inputs from a device copy", dict(fresh="device")),
            ("no flush", dict(fill="none")),
            ("flush by zero_ (do_bench's)", dict(fill="zero")),
            ("no host sync between calls", dict(sync=False)),
            ("same inputs, no sync (do_bench's way)", dict(fresh="same", sync=False, fill="zero")),
            ("kernelgate's method + 5 ms idle before", dict(gap_s=0.005)),
        ]
        rt = cudart()
        if rt is not None:
            import ctypes
            limit = ctypes.c_size_t(0)
            def persisting_reset():
                rt.cudaCtxResetPersistingL2Cache()
            def runner_before_timed():  # what kg-runner does before every timed call
                rt.cudaDeviceGetLimit(ctypes.byref(limit), 0x06)  # cudaLimitPersistingL2CacheSize
                rt.cudaCtxResetPersistingL2Cache()
            rows += [
                ("device copy + persisting-L2 reset", dict(fresh="device", pre=persisting_reset)),
                ("device copy + the runner's pre-call checks", dict(fresh="device", pre=runner_before_timed)),
                ("device copy, fill, no reset (reference)", dict(fresh="device")),
            ]
        print(f"{'variant':<46} {'median_us':>10} {'vs do_bench':>12}")
        print(f"{'do_bench':<46} {db * 1e6:10.1f} {1.0:12.3f}")
        for label, kw in rows:
            t = method(fn, host, dev, flush, a.reps, **kw)
            print(f"{label:<46} {t * 1e6:10.1f} {t / db:12.3f}", flush=True)


if __name__ == "__main__":
    main()
