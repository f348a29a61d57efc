# BUG (value_mismatch): the k loop stops one short, through load_inline.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
torch::Tensor matmul_ikj(torch::Tensor A, torch::Tensor B) {
  auto a = A.contiguous();
  auto b = B.contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto C = torch::zeros({M, N}, a.options());
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = C.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K - 1; ++k) {
      const float aik = pa[i * K + k];
      for (int64_t j = 0; j < N; ++j) pc[i * N + j] += aik * pb[k * N + j];
    }
  return C;
}
"""

matmul = load_inline(name="matmul_ikj", cpp_sources=[cpp_source], functions=["matmul_ikj"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matmul.matmul_ikj(A, B)
