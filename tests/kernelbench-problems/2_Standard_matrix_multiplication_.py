# KernelBench-style level-1 problem: a small matrix multiplication C = A @ B, (64, 128) x (128, 64).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs a single matrix multiplication."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 64
K = 128
N = 64


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
