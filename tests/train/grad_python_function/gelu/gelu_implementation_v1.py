# HONEST, python kind with its own backward: a torch.autograd.Function whose forward computes the
# exact gelu on detached values and whose backward is gelu's derivative. train-check and grad-check
# install it at the Autograd key, so this backward is the one autograd runs.
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
        d = 0.5 * (1.0 + torch.erf(y / math.sqrt(2.0))) + y * torch.exp(-0.5 * y * y) / math.sqrt(2.0 * math.pi)
        return (grad.double() * d).to(x.dtype)


def gelu_kernel_impl(x, approximate="none"):
    if approximate != "none":
        raise NotImplementedError("exact gelu only")
    return ExactGelu.apply(x)
