# KernelBench-style level-1 problem: softmax over the last dimension of a (16, 512) tensor.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs a softmax activation over dim=-1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


batch_size = 16
dim = 512


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
