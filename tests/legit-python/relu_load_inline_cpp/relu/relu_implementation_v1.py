# Honest relu in BackendBench's layout whose work is C++ built by torch.utils.cpp_extension.load_inline
# at import (cpp_sources, functions=[...]): kernelgate lists the call in a runner of its own, builds
# it in the compile sandbox and stages the library beside the source for the op's runners.
import torch
from torch.utils.cpp_extension import load_inline

source = """
#include <ATen/Dispatch.h>

torch::Tensor relu_impl(torch::Tensor x) {
  torch::Tensor xc = x.contiguous();
  torch::Tensor out = torch::empty_like(xc);
  const int64_t n = xc.numel();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, xc.scalar_type(), "relu_impl", [&] {
    const scalar_t* in = xc.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = (in[i] > scalar_t(0) || in[i] != in[i]) ? in[i] : scalar_t(0);
  });
  return out;
}
"""

ext = load_inline(name="relu_ext", cpp_sources=source, functions=["relu_impl"], verbose=False)


def relu_kernel_impl(x):
    return ext.relu_impl(x)
