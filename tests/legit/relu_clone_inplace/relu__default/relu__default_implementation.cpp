// HONEST: copies the input with clone() (an allowed copy, not relu), then zeroes the negative
// entries of the copy in place. The copy keeps the input's layout (preserve format).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "relu", [&] {
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i)
      if (!(o[i] > scalar_t(0) || o[i] != o[i])) o[i] = scalar_t(0);
  });
  return out;
}
