# KernelBench level 1 problem 47 (sum over a dimension) with rows whose values cancel: each row of
# 1e4-scale values has its mean taken out, so a row's sum is small next to its terms and any two
# honest summation orders differ by more than atol (the context-aware tolerance's case).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Sums over one dimension, keeping it."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 16
dim1 = 4096
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1) * 1e4
    return [x - x.mean(dim=1, keepdim=True)]


def get_init_inputs():
    return [reduce_dim]
