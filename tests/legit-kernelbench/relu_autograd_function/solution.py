# Honest solution with its own backward: a torch.autograd.Function whose forward is numpy's
# maximum against zero (no aten compute operator) and whose backward passes the gradient where the
# input is positive. kernelgate judges its gradients against Model's (ModelAction::Backward),
# since it defines one.
import numpy as np
import torch
import torch.nn as nn


class ReluFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.from_numpy(np.maximum(x.detach().numpy(), np.float32(0)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x > 0).to(grad.dtype)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ReluFn.apply(x)
