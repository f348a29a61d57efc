# Honest relu that prints, as kernels under development do: print() goes to the runner's stderr,
# so it is neither a result nor an attempt at the result channel.
import numpy as np
import torch

print("relu kernel loaded")
_calls = 0


def relu__default_kernel_impl(self):
    global _calls
    _calls += 1
    if _calls == 1:
        print("first call:", tuple(self.shape), self.dtype)
    out = torch.empty_like(self)
    np.maximum(self.numpy(), 0, out=out.numpy())
    return out
