#!/usr/bin/env python3
"""Export PyTorch's OpInfo sample inputs as argument specs in the trace format.

For every OpInfo of torch.testing._internal.common_methods_invocations.op_db, every CPU dtype it
supports (among --dtypes) and every sample its sample_inputs function yields, the op (and its
in-place variant, where it has one) is called under a TorchDispatchMode that records the aten
overloads the call reaches. A sample that reaches exactly one aten overload is written as one
call line of that overload: shapes, dtypes and (non-contiguous) strides of the tensors the
overload saw, and its other arguments. Values are never exported: kernelgate draws them.

Identical lines of one overload are merged into one with a count. Runs on PyTorch 1.13 (Debian's)
and 2.x alike:

    python3 tools/export_opinfo.py --out harness/data/opinfo/opinfo-torch$(python3 -c \
        'import torch; print(torch.__version__[:4])').txt

The file starts with '#' comments naming the torch version and the command; the trace parser
skips them.
"""
import argparse
import collections
import contextlib
import datetime
import io
import math
import sys
import types
import unittest
import warnings


def _import_op_db():
    # common_utils imports expecttest only for its TestCase base class and its ACCEPT flag;
    # Debian has no package for it, and op_db does not need it.
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase
        stub.ACCEPT = False
        sys.modules["expecttest"] = stub
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

SHORT = {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
    torch.complex64: "c64", torch.complex128: "c128", torch.int8: "i8", torch.int16: "i16",
    torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8", torch.bool: "b8",
}
if hasattr(torch, "complex32"):
    SHORT[torch.complex32] = "c32"
BY_SHORT = {v: k for k, v in SHORT.items()}

# Calls that carry no computation of their own; a sample that reaches one of these next to a
# real overload still "maps to a single overload".
BOOKKEEPING = {"aten.detach.default", "aten.lift_fresh.default", "aten.lift_fresh_copy.default",
               "aten.alias.default", "aten._local_scalar_dense.default"}


class Unsupported(Exception):
    """A value the trace format cannot carry (a generator, a complex scalar, a sparse tensor)."""


def overload_name(func):
    schema = func._schema
    ns, name = schema.name.split("::", 1)
    return "%s.%s.%s" % (ns, name, schema.overload_name or "default")


def fmt_float(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


def fmt(v):
    if isinstance(v, torch.Tensor):
        if v.layout != torch.strided or v.is_quantized:
            raise Unsupported("non-strided tensor")
        if v.dtype not in SHORT:
            raise Unsupported("dtype %s" % v.dtype)
        shape = list(v.shape)
        s = "T(%s, %s" % (shape, SHORT[v.dtype])
        if not v.is_contiguous() and v.numel() > 1:
            s += ", %s" % list(v.stride())
        return s + ")"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return fmt_float(v)
    if v is None:
        return "None"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, torch.dtype):
        if v not in SHORT:
            raise Unsupported("dtype %s" % v)
        return str(v)
    if isinstance(v, torch.device):
        return "torch.device('%s')" % v.type
    if isinstance(v, (torch.memory_format, torch.layout)):
        return str(v)
    if isinstance(v, (list, tuple)):  # torch.Size is a tuple
        items = [fmt(x) for x in v]
        if isinstance(v, list) or isinstance(v, torch.Size):
            return "[" + ", ".join(items) + "]"
        if len(items) == 1:
            return "(" + items[0] + ",)"
        return "(" + ", ".join(items) + ")"
    if type(v).__name__ in ("SymInt", "SymFloat", "SymBool"):
        return fmt(int(v) if type(v).__name__ == "SymInt" else float(v))
    raise Unsupported(type(v).__name__)


def fmt_spec(args, kwargs):
    a = [fmt(x) for x in args]
    args_s = "(" + a[0] + ",)" if len(a) == 1 else "(" + ", ".join(a) + ")"
    kw = ", ".join("%r: %s" % (k, fmt(v)) for k, v in kwargs.items())
    return "(%s, {%s})" % (args_s, kw)


class Recorder(TorchDispatchMode):
    """Records each aten overload a call reaches, with its argument spec taken before it runs."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            spec = fmt_spec(args, kwargs)
        except Unsupported as e:
            spec = Unsupported(str(e))
        self.calls.append((overload_name(func), spec))
        return func(*args, **kwargs)


def record_one(fn, sample, inplace):
    inp = sample.input
    args = list(sample.args)
    if inplace:
        if not isinstance(inp, torch.Tensor):
            return None
        inp = inp.clone()
    rec = Recorder()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            with rec:
                fn(inp, *args, **sample.kwargs)
        except Exception:
            return None
    real = [c for c in rec.calls if c[0] not in BOOKKEEPING]
    if len(real) != 1 or isinstance(real[0][1], Unsupported):
        return None
    return real[0]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="trace file to write")
    p.add_argument("--dtypes", default="f32,f64,f16,bf16,i64,i32,i16,i8,u8,b8,c64",
                   help="comma-separated short dtype names to sample (default: %(default)s)")
    p.add_argument("--ops", default="", help="comma-separated OpInfo names (default: all)")
    p.add_argument("--max-per-overload", type=int, default=48,
                   help="distinct call lines kept per overload (default: %(default)s)")
    a = p.parse_args()

    op_db = _import_op_db()
    want = [BY_SHORT[d] for d in a.dtypes.split(",") if d in BY_SHORT]
    only = set(x for x in a.ops.split(",") if x)
    torch.manual_seed(0)
    found = collections.OrderedDict()  # overload -> OrderedDict(spec -> count)
    sources = collections.defaultdict(set)  # overload -> OpInfo names
    n_samples = n_single = 0
    for op in op_db:
        if only and op.name not in only:
            continue
        try:
            dtypes = [d for d in want if d in op.supported_dtypes("cpu")]
        except Exception:
            dtypes = [torch.float32]
        variants = [(op.op, False)]
        inplace = op.get_inplace() if hasattr(op, "get_inplace") else None
        if inplace is not None:
            variants.append((inplace, True))
        for dtype in dtypes:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
            except Exception:
                continue
            for sample in samples:
                for fn, is_inplace in variants:
                    n_samples += 1
                    got = record_one(fn, sample, is_inplace)
                    if got is None:
                        continue
                    n_single += 1
                    name, spec = got
                    lines = found.setdefault(name, collections.OrderedDict())
                    if spec in lines or len(lines) < a.max_per_overload:
                        lines[spec] = lines.get(spec, 0) + 1
                        sources[name].add(op.name + ("_" if is_inplace else ""))
        print("%-40s %d overloads so far" % (op.name, len(found)), file=sys.stderr)

    with open(a.out, "w") as f:
        f.write("# OpInfo sample inputs (shapes, dtypes, strides; no values), one aten overload per sample.\n")
        f.write("# Generated by tools/export_opinfo.py with torch %s on %s, %s.\n"
                % (torch.__version__, sys.platform, datetime.datetime.utcnow().strftime("%Y-%m-%d")))
        f.write("# dtypes sampled: %s; %d samples tried, %d reached one overload.\n" % (a.dtypes, n_samples, n_single))
        for name in sorted(found):
            f.write("# from OpInfo: %s\n" % ", ".join(sorted(sources[name])))
            f.write("Operator: %s\n" % name)
            for spec, cnt in found[name].items():
                f.write("cnt: %d, %s\n" % (cnt, spec))
    print("wrote %s: %d overloads" % (a.out, len(found)), file=sys.stderr)


if __name__ == "__main__":
    main()
