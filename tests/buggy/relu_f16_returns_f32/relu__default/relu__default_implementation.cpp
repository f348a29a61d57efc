// BUG (dtype_mismatch): computes in float for every floating input and returns that float
// tensor, forgetting to convert back: an f16 (or f64) input gets an f32 result. The values are
// right; only the dtype is not the input's.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  if (!at::isFloatingType(self.scalar_type())) {
    at::Tensor x = self.contiguous();
    at::Tensor out = at::empty_like(x);
    AT_DISPATCH_INTEGRAL_TYPES(x.scalar_type(), "relu_int", [&] {
      const scalar_t* in = x.data_ptr<scalar_t>();
      scalar_t* o = out.data_ptr<scalar_t>();
      for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] > 0 ? in[i] : scalar_t(0);
    });
    return out;
  }
  at::Tensor x = self.to(at::kFloat).contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = (in[i] > 0.f || in[i] != in[i]) ? in[i] : 0.f;
  return out;
}
