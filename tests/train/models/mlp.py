# A KernelBench-layout problem (no get_batch, no loss): inputs from get_inputs() under a per-step
# seed, trained towards a fixed random target with the mean squared error.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return [64]
