# Linear + ReLU fused in C++ (load_inline). The floor is a C++ float and the row block an int:
# load_inline's callers pass Python numbers for them.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <algorithm>
torch::Tensor linear_floor(torch::Tensor x, torch::Tensor w, torch::Tensor b, float floor_value, int rows_per_block) {
  auto xc = x.contiguous();
  auto wc = w.contiguous();
  auto bc = b.contiguous();
  const int64_t B = xc.size(0), I = xc.size(1), O = wc.size(0);
  auto y = torch::empty({B, O}, xc.options());
  const float* px = xc.data_ptr<float>();
  const float* pw = wc.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r0 = 0; r0 < B; r0 += rows_per_block)
    for (int64_t r = r0; r < std::min<int64_t>(B, r0 + rows_per_block); ++r)
      for (int64_t o = 0; o < O; ++o) {
        float acc = pb[o];
        for (int64_t i = 0; i < I; ++i) acc += px[r * I + i] * pw[o * I + i];
        py[r * O + o] = acc > floor_value ? acc : floor_value;
      }
  return y;
}
"""

fused = load_inline(name="linear_floor", cpp_sources=cpp_source, functions=["linear_floor"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fused.linear_floor(x, self.linear.weight, self.linear.bias, 0.0, 8)
