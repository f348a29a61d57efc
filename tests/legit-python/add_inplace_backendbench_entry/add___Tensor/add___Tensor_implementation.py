# Honest add_.Tensor under BackendBench's entry name add__kernel_impl: writes into self's own
# memory (a strided numpy view for the transposed sample) and returns self, as the schema says.
import numpy as np


def add__kernel_impl(self, other, alpha=1):
    a = self.numpy()
    with np.errstate(all="ignore"):
        if alpha == 1:
            np.add(a, other.numpy(), out=a)
        else:
            np.add(a, np.multiply(other.numpy(), alpha), out=a)
    return self
