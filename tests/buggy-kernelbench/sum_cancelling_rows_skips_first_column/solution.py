# BUG (value_mismatch): the row loop stops before column 0 (c >= 1): every row sum misses one 1e4-scale
# term, far beyond what the context-aware tolerance allows on rows that cancel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
torch::Tensor sum_rows_lanes(torch::Tensor x) {
  auto xc = x.contiguous();
  const int64_t rows = xc.size(0), cols = xc.size(1);
  auto out = torch::empty({rows, 1}, xc.options());
  const float* p = xc.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    float lanes[16] = {0.f};
    for (int64_t c = cols - 1; c >= 1; --c) lanes[c % 16] += p[r * cols + c];
    float acc = 0.f;
    for (int k = 15; k >= 0; --k) acc += lanes[k];
    o[r] = acc;
  }
  return out;
}
"""

ext = load_inline(name="sum_rows_lanes", cpp_sources=cpp_source, functions=["sum_rows_lanes"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        assert dim == 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.sum_rows_lanes(x)
