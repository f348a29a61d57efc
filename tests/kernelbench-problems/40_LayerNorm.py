# KernelBench-style level-1 problem: LayerNorm (elementwise affine) over the last three dims of (4, 8, 16, 16).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs Layer Normalization."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 4
features = 8
dim1 = 16
dim2 = 16


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [(features, dim1, dim2)]
