// HONEST: pairwise (cascade) summation: blocks of 16 summed sequentially, then halves summed
// recursively, error O(log n). Integers are summed exactly in int64.
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

namespace {
template <typename T, typename Acc>
Acc pairwise(const T* x, int64_t n) {
  if (n <= 16) {
    Acc s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<Acc>(x[i]);
    return s;
  }
  const int64_t h = n / 2;
  return pairwise<T, Acc>(x, h) + pairwise<T, Acc>(x + h, n - h);
}
}  // namespace

at::Tensor sum__dim_IntList_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                        c10::optional<at::ScalarType> dtype) {
  const Plan p = plan(self, dim, keepdim, dtype);
  int64_t outer, inner;
  at::Tensor x = as_rows(self, p, &outer, &inner);
  at::Tensor acc = at::empty({outer}, self.options().dtype(p.out_type));
  AT_DISPATCH_ALL_TYPES(x.scalar_type(), "sum_in", [&] {
    using in_t = scalar_t;
    const in_t* in = x.data_ptr<in_t>();
    AT_DISPATCH_ALL_TYPES(p.out_type, "sum_out", [&] {
      using acc_t = std::conditional_t<std::is_floating_point<scalar_t>::value, double, int64_t>;
      for (int64_t r = 0; r < outer; ++r)
        acc.data_ptr<scalar_t>()[r] = static_cast<scalar_t>(pairwise<in_t, acc_t>(in + r * inner, inner));
    });
  });
  return acc.view(p.shape);
}
