// HONEST, multi-threaded with ATen's pool: inputs expanded to the broadcast shape and made
// contiguous, then at::parallel_for over the flat range.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>

at::Tensor mul__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  const auto shape = at::infer_size(self.sizes(), other.sizes());
  const auto dtype = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor a = self.expand(shape).to(dtype).contiguous(), b = other.expand(shape).to(dtype).contiguous();
  at::Tensor out = at::empty(shape, self.options().dtype(dtype));
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "mul", [&] {
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = b.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    at::parallel_for(0, out.numel(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = pa[i] * pb[i];
    });
  });
  return out;
}
