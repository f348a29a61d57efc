# BUG (value_mismatch): LayerNorm normalised with the unbiased variance (ddof=1, as torch.var's default) where
# LayerNorm uses the biased one: every output is scaled by sqrt((n - 1) / n), ~3% too small for rows of n = 16
# (on rows of thousands it would hide inside the tolerance of an accumulating op).
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
        var = a.var(axis=axes, keepdims=True, ddof=1)  # should be ddof=0
        y = (a - mean) / np.sqrt(var + self.ln.eps)
        y = y * self.ln.weight.detach().numpy() + self.ln.bias.detach().numpy()
        return torch.from_numpy(np.ascontiguousarray(y, dtype=np.float32))
