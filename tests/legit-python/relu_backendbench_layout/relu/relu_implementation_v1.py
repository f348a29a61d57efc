# Honest relu in BackendBench's layout: folder `relu`, file relu_implementation_v1.py, entry
# relu_kernel_impl(*args, **kwargs). BackendBench (and kernelgate) load the first file in sorted
# order, so relu_implementation_v2.py beside it is never run.
import numpy as np
import torch


def relu_kernel_impl(*args, **kwargs):
    (x,) = args
    out = torch.empty_like(x)
    np.maximum(x.numpy(), 0, out=out.numpy())
    return out
