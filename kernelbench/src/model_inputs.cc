// Value families and descriptions of a pair's inputs: see model_inputs.h.
#include "model_inputs.h"

#include "kernelgate/harness.h"

#include <ATen/CPUGeneratorImpl.h>

#include <sstream>

namespace kg::kernelbench {

std::vector<at::Tensor> non_contiguous_copies(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : inputs) {
    if (t.dim() == 0 || t.numel() == 0) {
      out.push_back(t.clone());
      continue;
    }
    std::vector<int64_t> wide = t.sizes().vec();
    wide.back() *= 2;
    at::Tensor buffer = at::zeros(wide, t.options());
    at::Tensor view = buffer.slice(-1, 0, wide.back(), 2);
    view.copy_(t);
    out.push_back(view);
  }
  return out;
}

std::vector<at::Tensor> with_special_values(const std::vector<at::Tensor>& inputs, uint64_t seed, bool* changed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> out;
  *changed = false;
  for (const at::Tensor& t : inputs) {
    if (!t.is_floating_point() || t.numel() == 0) {
      out.push_back(t.clone());
      continue;
    }
    const double tiny = t.scalar_type() == at::kHalf ? 1e-6 : 1e-30;
    // One sign for every large value of a tensor: +1e4 and -1e4 meeting in one sum cancel exactly
    // in one summation order and not in another, which would fail honest reductions.
    const double large = at::rand({1}, gen, at::kFloat).item<float>() < 0.5f ? -1e4 : 1e4;
    const at::Tensor table = at::tensor({0.0, -0.0, large, large, tiny, -tiny}, at::kDouble).to(t.scalar_type());
    const at::Tensor where = at::rand(t.sizes(), gen, at::kFloat) < (1.0 / 16);
    const at::Tensor pick = at::randint(0, 6, t.sizes(), gen, at::kLong);
    out.push_back(at::where(where, table.index_select(0, pick.view({-1})).view(t.sizes()), t).contiguous());
    *changed |= where.any().item<bool>();
  }
  return out;
}

bool all_finite(const std::vector<at::Tensor>& tensors) {
  for (const at::Tensor& t : tensors)
    if (t.is_floating_point() && t.numel() > 0 && !at::isfinite(t).all().item<bool>()) return false;
  return true;
}

std::string describe_inputs(const std::vector<at::Tensor>& inputs) {
  std::ostringstream o;
  o << "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    o << (i ? ", " : "") << "T([";
    for (int64_t d = 0; d < t.dim(); ++d) o << (d ? ", " : "") << t.size(d);
    o << "], " << harness::short_dtype(t.scalar_type());
    if (!t.is_contiguous()) {
      o << ", [";
      for (int64_t d = 0; d < t.dim(); ++d) o << (d ? ", " : "") << t.stride(d);
      o << "]";
    }
    o << ")";
  }
  o << (inputs.size() == 1 ? ",)" : ")");
  return o.str();
}

}  // namespace kg::kernelbench
