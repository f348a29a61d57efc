#include "compare_pass.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstdint>
#include <cstring>

// Built with -ffp-contract=off (harness/CMakeLists.txt): atol + rtol * |e| is a multiply and an
// add, each rounded, as ATen's mul and add kernels compute it; a fused multiply-add would round
// once and could move a verdict at the tolerance's edge.
namespace kg::harness {
namespace {

template <typename T>
bool all_pass(const T* e, const T* a, int64_t n, double atol, double rtol, bool any_nonfinite) {
  for (int64_t i = 0; i < n; ++i) {
    const double ev = static_cast<double>(e[i]), av = static_cast<double>(a[i]);
    const bool e_nan = std::isnan(ev), e_inf = std::isinf(ev);
    const bool e_finite = !e_nan && !e_inf;
    if (e_finite) {
      if (!std::isfinite(av)) return false;  // a NaN or an infinity where a number is expected
      const double bound = rtol * std::fabs(ev);
      if (std::fabs(av - ev) > bound + atol) return false;
      continue;
    }
    if (any_nonfinite && !std::isfinite(av)) continue;  // both non-finite: they agree
    if (e_nan != std::isnan(av)) return false;
    if (ev != av && !(e_nan && std::isnan(av))) return false;  // another infinity, or a number for it
  }
  return true;
}

// Both dense in CPU memory, of one dtype and the same sizes, element i of each at offset i: the memory
// holds the values as the tensors mean them (no conjugate or negative view pending).
bool plain_pair(const at::Tensor& e, const at::Tensor& a) {
  const auto plain = [](const at::Tensor& t) {
    return t.defined() && t.layout() == at::kStrided && t.device().is_cpu() && t.is_contiguous() && !t.is_conj() && !t.is_neg();
  };
  return plain(e) && plain(a) && e.scalar_type() == a.scalar_type() && e.sizes() == a.sizes();
}

}  // namespace

std::optional<bool> all_elements_pass(const at::Tensor& e, const at::Tensor& a, const policy::Tolerance& tol, bool any_nonfinite) {
  if (!plain_pair(e, a)) return std::nullopt;
  const int64_t n = e.numel();
  switch (e.scalar_type()) {
    case at::kDouble: return all_pass(e.data_ptr<double>(), a.data_ptr<double>(), n, tol.atol, tol.rtol, any_nonfinite);
    case at::kFloat: return all_pass(e.data_ptr<float>(), a.data_ptr<float>(), n, tol.atol, tol.rtol, any_nonfinite);
    case at::kHalf: return all_pass(e.data_ptr<c10::Half>(), a.data_ptr<c10::Half>(), n, tol.atol, tol.rtol, any_nonfinite);
    case at::kBFloat16: return all_pass(e.data_ptr<c10::BFloat16>(), a.data_ptr<c10::BFloat16>(), n, tol.atol, tol.rtol, any_nonfinite);
    default: return std::nullopt;
  }
}

bool same_bytes(const at::Tensor& e, const at::Tensor& a) {
  if (!plain_pair(e, a)) return false;
  const size_t n = static_cast<size_t>(e.numel()) * e.element_size();
  return n == 0 || std::memcmp(e.data_ptr(), a.data_ptr(), n) == 0;
}

}  // namespace kg::harness
