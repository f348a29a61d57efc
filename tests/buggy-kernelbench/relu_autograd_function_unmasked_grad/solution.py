# BUG (value_mismatch): a torch.autograd.Function ReLU whose backward forgets the mask and returns
# the gradient unchanged. Its forward (numpy's maximum against zero) is exact; only the gradient
# check sees the bug.
import numpy as np
import torch
import torch.nn as nn


class ReluFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.from_numpy(np.maximum(x.detach().numpy(), np.float32(0)))

    @staticmethod
    def backward(ctx, grad):
        return grad


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ReluFn.apply(x)
