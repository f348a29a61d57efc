// HONEST: published kernels read the version counter (tensor._version()) of their inputs before
// and after the computation to check that nothing modified them in place meanwhile, and of the
// output they wrote through the ATen API. The counter exists on every ordinary tensor (only
// inference tensors have none), so the kernel must be handed ordinary tensors.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  const auto version_before = self._version();
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  const auto out_version = out._version();
  const int64_t n = x.numel();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "relu", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = (in[i] > scalar_t(0) || in[i] != in[i]) ? in[i] : scalar_t(0);
  });
  TORCH_CHECK(self._version() == version_before, "relu: the input was modified during the call");
  TORCH_CHECK(out._version() == out_version, "relu: the output was modified behind the kernel's back");
  return out;
}
