# KernelBench-style level-1 problem: sum reduction over dimension 1 (keepdim=True) of a (16, 64, 32) tensor.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that sums over the dimension given to the constructor."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 16
dim1 = 64
dim2 = 32
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
