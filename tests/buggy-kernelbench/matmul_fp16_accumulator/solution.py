# BUG (value_mismatch): a K-tiled matmul whose accumulator was allocated as float16 (np.half instead of
# np.float32): every tile's float32 partial product is rounded to float16 when added, ~1e-3 relative error.
import numpy as np
import torch
import torch.nn as nn

TILE_K = 32


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        a = np.ascontiguousarray(A.detach().numpy())
        b = np.ascontiguousarray(B.detach().numpy())
        acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.half)  # meant np.float32
        for k0 in range(0, a.shape[1], TILE_K):
            acc += a[:, k0:k0 + TILE_K] @ b[k0:k0 + TILE_K, :]
        return torch.from_numpy(acc.astype(np.float32))
