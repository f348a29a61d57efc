# BUGGY backward, python kind: a torch.autograd.Function whose forward is the exact gelu and whose
# backward forgets the x * phi(x) term. The forward is right, so only the gradient shows it, and only
# because grad-check runs this backward (the Autograd key) rather than aten's formula.
import math

import torch


class ExactGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = x.double()
        return (0.5 * y * (1.0 + torch.erf(y / math.sqrt(2.0)))).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        y = x.double()
        d = 0.5 * (1.0 + torch.erf(y / math.sqrt(2.0)))
        return (grad.double() * d).to(x.dtype)


def gelu_kernel_impl(x, approximate="none"):
    if approximate != "none":
        raise NotImplementedError("exact gelu only")
    return ExactGelu.apply(x)
