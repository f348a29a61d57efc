# HONEST, python kind in BackendBench's layout: the exact gelu from erf, in float64 and back.
import math

import torch


def gelu_kernel_impl(x, approximate="none"):
    assert approximate == "none"
    y = x.double()
    return (0.5 * y * (1.0 + torch.erf(y / math.sqrt(2.0)))).to(x.dtype)
