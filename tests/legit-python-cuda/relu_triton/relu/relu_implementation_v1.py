# Honest relu as BackendBench's Triton kernels are written: a 1-D blocked Triton kernel over the
# contiguous input, NaN kept (x > 0 is false for NaN, so NaN goes through the `where` as x).
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.where(x < 0, tl.zeros_like(x), x)
    tl.store(out_ptr + offs, y, mask=mask)


def relu_kernel_impl(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        _relu[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
