#include "compare_pass.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Built with -ffp-contract=off (harness/CMakeLists.txt): atol + rtol * |e| is a multiply and an
// add, each rounded, as ATen's mul and add kernels compute it; a fused multiply-add would round
// once and could move a verdict at the tolerance's edge.
namespace kg::harness {
namespace {

template <typename T>
bool each_passes(const T* e, const T* a, int64_t n, double atol, double rtol, bool any_nonfinite) {
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

// Whether every element of a block is a finite answer within the tolerance of a finite expected
// value: |a - e| <= atol + rtol * |e| with |a| and |e| at most the largest double, tested without
// a branch per element (a NaN or an infinity on either side fails one of the comparisons). Where
// this holds, each_passes holds; where not, each_passes decides (non-finite values that agree, or
// a failure). x86-64's SSE2 tests two lanes at a time; the compiler does not vectorise this loop
// itself (its 64-bit lane masks need SSE4.1).
constexpr int64_t kBlock = 256;

bool block_within(const double* e, const double* a, double atol, double rtol) {
#if defined(__SSE2__)
  const __m128d abs_mask = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffffLL));
  const __m128d max = _mm_set1_pd(std::numeric_limits<double>::max());
  const __m128d vatol = _mm_set1_pd(atol), vrtol = _mm_set1_pd(rtol);
  __m128d ok = _mm_castsi128_pd(_mm_set1_epi64x(-1));
  for (int64_t k = 0; k < kBlock; k += 2) {
    const __m128d ev = _mm_loadu_pd(e + k), av = _mm_loadu_pd(a + k);
    const __m128d abs_e = _mm_and_pd(ev, abs_mask), abs_a = _mm_and_pd(av, abs_mask);
    const __m128d diff = _mm_and_pd(_mm_sub_pd(av, ev), abs_mask);
    const __m128d bound = _mm_add_pd(_mm_mul_pd(vrtol, abs_e), vatol);
    ok = _mm_and_pd(ok, _mm_and_pd(_mm_cmple_pd(diff, bound), _mm_and_pd(_mm_cmple_pd(abs_a, max), _mm_cmple_pd(abs_e, max))));
  }
  return _mm_movemask_pd(ok) == 3;
#else
  bool ok = true;
  for (int64_t k = 0; k < kBlock; ++k) {
    const double abs_e = std::fabs(e[k]);
    ok &= std::fabs(a[k] - e[k]) <= rtol * abs_e + atol && std::fabs(a[k]) <= std::numeric_limits<double>::max() &&
          abs_e <= std::numeric_limits<double>::max();
  }
  return ok;
#endif
}

template <typename T>
bool all_pass(const T* e, const T* a, int64_t n, double atol, double rtol, bool any_nonfinite) {
  alignas(16) double eb[kBlock], ab[kBlock];
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    const double* ed;
    const double* ad;
    if constexpr (std::is_same_v<T, double>) {
      ed = e + i;
      ad = a + i;
    } else {
      for (int64_t k = 0; k < kBlock; ++k) {
        eb[k] = static_cast<double>(e[i + k]);
        ab[k] = static_cast<double>(a[i + k]);
      }
      ed = eb;
      ad = ab;
    }
    if (!block_within(ed, ad, atol, rtol) && !each_passes(e + i, a + i, kBlock, atol, rtol, any_nonfinite)) return false;
  }
  return each_passes(e + i, a + i, n - i, atol, rtol, any_nonfinite);
}

// Both dense in CPU memory, of one dtype and the same sizes, element i of each at offset i: the memory
// holds the values as the tensors mean them (no conjugate or negative view pending).
bool plain_pair(const at::Tensor& e, const at::Tensor& a) {
  const auto plain = [](const at::Tensor& t) {
    return t.defined() && t.layout() == at::kStrided && t.device().is_cpu() && t.is_contiguous() && !t.is_conj() && !t.is_neg();
  };
  return plain(e) && plain(a) && e.scalar_type() == a.scalar_type() && e.sizes() == a.sizes();
}

// The pass on both tensors' memory: by blocks, or (`one_by_one`) element by element.
template <typename T>
bool run_pass(const at::Tensor& e, const at::Tensor& a, const policy::Tolerance& tol, bool any_nonfinite, bool one_by_one) {
  const T* ep = e.data_ptr<T>();
  const T* ap = a.data_ptr<T>();
  return one_by_one ? each_passes(ep, ap, e.numel(), tol.atol, tol.rtol, any_nonfinite)
                    : all_pass(ep, ap, e.numel(), tol.atol, tol.rtol, any_nonfinite);
}

std::optional<bool> dispatch(const at::Tensor& e, const at::Tensor& a, const policy::Tolerance& tol, bool any_nonfinite, bool one_by_one) {
  if (!plain_pair(e, a)) return std::nullopt;
  switch (e.scalar_type()) {
    case at::kDouble: return run_pass<double>(e, a, tol, any_nonfinite, one_by_one);
    case at::kFloat: return run_pass<float>(e, a, tol, any_nonfinite, one_by_one);
    case at::kHalf: return run_pass<c10::Half>(e, a, tol, any_nonfinite, one_by_one);
    case at::kBFloat16: return run_pass<c10::BFloat16>(e, a, tol, any_nonfinite, one_by_one);
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<bool> all_elements_pass(const at::Tensor& e, const at::Tensor& a, const policy::Tolerance& tol, bool any_nonfinite) {
  return dispatch(e, a, tol, any_nonfinite, false);
}

std::optional<bool> all_elements_pass_one_by_one(const at::Tensor& e, const at::Tensor& a, const policy::Tolerance& tol,
                                                 bool any_nonfinite) {
  return dispatch(e, a, tol, any_nonfinite, true);
}

bool same_bytes(const at::Tensor& e, const at::Tensor& a) {
  if (!plain_pair(e, a)) return false;
  const size_t n = static_cast<size_t>(e.numel()) * e.element_size();
  return n == 0 || std::memcmp(e.data_ptr(), a.data_ptr(), n) == 0;
}

}  // namespace kg::harness
