# Honest add.Tensor: broadcasting by numpy, alpha as the keyword-only argument kg-runner passes
# only when it is not the default, the result dtype from torch.result_type (metadata, no compute).
import numpy as np
import torch


def add__Tensor_kernel_impl(self, other, *, alpha=1):
    a, b = self.numpy(), other.numpy()
    out = torch.empty(np.broadcast_shapes(a.shape, b.shape), dtype=torch.result_type(self, other))
    o = out.numpy()
    with np.errstate(all="ignore"):
        if alpha == 1:
            np.add(a, b, out=o)
        else:
            np.multiply(b, alpha, out=o)
            np.add(a, o, out=o)
    return out
