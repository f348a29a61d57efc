# KernelBench-style level-2 problem: a Linear layer (with bias) followed by ReLU, batch 32, 128 -> 64.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear (y = x W^T + b) followed by ReLU."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


batch_size = 32
in_features = 128
out_features = 64


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
