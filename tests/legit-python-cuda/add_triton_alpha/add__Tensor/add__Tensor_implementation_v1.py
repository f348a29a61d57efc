# Honest add.Tensor (self + alpha * other) in Triton: both operands broadcast to the result's shape
# and made contiguous, then one blocked elementwise kernel; alpha is a runtime scalar argument
# (a float for floating dtypes, an int for integer ones). Half precision is computed in float32
# and rounded once, as eager's opmath does.
import torch
import triton
import triton.language as tl


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr, UPCAST: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    if UPCAST:
        y = a.to(tl.float32) + b.to(tl.float32) * alpha
    else:
        y = a + b * alpha
    tl.store(out_ptr + offs, y, mask=mask)


def add__Tensor_kernel_impl(self, other, *, alpha=1):
    if not isinstance(other, torch.Tensor):
        other = torch.tensor(other, dtype=self.dtype, device=self.device)
    dtype = torch.result_type(self, other)
    shape = torch.broadcast_shapes(self.shape, other.shape)
    a = self.to(dtype).expand(shape).contiguous()
    b = other.to(dtype).expand(shape).contiguous()
    out = torch.empty(shape, dtype=dtype, device=self.device)
    n = out.numel()
    if n:
        scalar = float(alpha) if dtype.is_floating_point else int(alpha)
        upcast = dtype in (torch.float16, torch.bfloat16)
        _add[(triton.cdiv(n, 1024),)](a, b, out, scalar, n, BLOCK=1024, UPCAST=upcast)
    return out
