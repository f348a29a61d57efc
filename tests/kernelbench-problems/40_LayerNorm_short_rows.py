# KernelBench-style level-1 problem: LayerNorm (elementwise affine) over short rows, the last dim of (64, 16).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs Layer Normalization."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(64, 16)]


def get_init_inputs():
    return [(16,)]
