# Honest _softmax (dim, half_to_float) in Triton: the reduced dimension moved last and made
# contiguous, one program per row computing max, exp and sum in float32, the result moved back.
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.where(mask, tl.exp(x), 0.0)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * n_cols + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def _softmax__default_kernel_impl(self, dim, half_to_float):
    out_dtype = torch.float32 if half_to_float else self.dtype
    if self.dim() == 0:
        return torch.ones((), dtype=out_dtype, device=self.device)
    dim = dim % self.dim()
    x = self.movedim(dim, -1).contiguous()
    out = torch.empty(x.shape, dtype=out_dtype, device=self.device)
    n_cols = x.shape[-1]
    rows = x.numel() // n_cols if n_cols else 0
    if rows and n_cols:
        _softmax_rows[(rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out.movedim(-1, dim)
