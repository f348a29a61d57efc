# Honest mul.Tensor: both operands broadcast by numpy into a fresh output tensor.
import numpy as np
import torch


def mul__Tensor_kernel_impl(self, other):
    a, b = self.numpy(), other.numpy()
    out = torch.empty(np.broadcast_shapes(a.shape, b.shape), dtype=torch.result_type(self, other))
    with np.errstate(all="ignore"):
        np.multiply(a, b, out=out.numpy())
    return out
