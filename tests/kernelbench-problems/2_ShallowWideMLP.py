# KernelBench-style level-3 problem: a whole model, a 2-layer MLP (Linear, ReLU, Linear), 64 -> 128 -> 16.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-layer perceptron with one hidden layer."""

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.network = nn.Sequential(
            nn.Linear(input_size, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, output_size),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


batch_size = 8
input_size = 64
hidden_size = 128
output_size = 16


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
