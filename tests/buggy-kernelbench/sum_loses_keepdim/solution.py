# BUG (shape_mismatch): the reduction drops keepdim: returns (16, 32) where Model returns (16, 1, 32).
import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.detach().numpy()
        s = a.sum(axis=self.dim, dtype=np.float64)  # keepdims=True forgotten
        return torch.from_numpy(np.ascontiguousarray(s, dtype=np.float32))
