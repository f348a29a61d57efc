// BUG (deliberate): the output takes self's shape and `other` is read as b[i % other.numel()],
// which is right when other broadcasts along leading dims only ([16,16] + [16]) and wrong
// otherwise ([8,1,32] + [5,32] must give [8,5,32]).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "add: equal dtypes only");
  at::Tensor out = at::empty(self.sizes(), self.options());
  const int64_t n = self.numel(), m = std::max<int64_t>(other.numel(), 1), dims = self.dim();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "add", [&] {
    const scalar_t* a = self.data_ptr<scalar_t>();
    const scalar_t* b = other.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    const scalar_t k = alpha.to<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t oa = 0, ob = 0, rest = i, rest_b = i % m;
      for (int64_t d = dims - 1; d >= 0; --d) {
        oa += (rest % self.size(d)) * self.stride(d);
        rest /= self.size(d);
      }
      for (int64_t d = other.dim() - 1; d >= 0; --d) {
        ob += (rest_b % other.size(d)) * other.stride(d);
        rest_b /= other.size(d);
      }
      o[i] = a[oa] + k * b[ob];
    }
  });
  return out;
}
