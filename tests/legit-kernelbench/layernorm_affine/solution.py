# Honest CPU solution: LayerNorm with elementwise affine in numpy (float64 statistics, biased variance,
# eps from the holder nn.LayerNorm, whose weight and bias kernelgate overwrites with Model's).
import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)  # parameter holder only

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.detach().numpy().astype(np.float64)
        axes = tuple(range(a.ndim - len(self.ln.normalized_shape), a.ndim))
        mean = a.mean(axis=axes, keepdims=True)
        var = ((a - mean) ** 2).mean(axis=axes, keepdims=True)  # biased, as LayerNorm
        y = (a - mean) / np.sqrt(var + self.ln.eps)
        y = y * self.ln.weight.detach().numpy() + self.ln.bias.detach().numpy()
        return torch.from_numpy(np.ascontiguousarray(y, dtype=np.float32))
