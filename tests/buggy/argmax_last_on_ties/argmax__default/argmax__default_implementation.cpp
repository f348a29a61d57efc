// BUG (value_mismatch): the scan keeps the best with `>=`, so on ties it returns the LAST
// maximal index; PyTorch documents the first. Integer rows of 1000 values in [-100, 100] tie
// on their maximum in most rows.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor argmax__default_kernel_impl(const at::Tensor& self, c10::optional<int64_t> dim, bool keepdim) {
  TORCH_CHECK(dim.has_value() && self.dim() == 2 && !keepdim, "row-wise argmax of a matrix only");
  const int64_t d = *dim < 0 ? *dim + 2 : *dim;
  at::Tensor x = (d == 1 ? self : self.t()).contiguous();
  const int64_t rows = x.size(0), len = x.size(1);
  at::Tensor out = at::empty({rows}, self.options().dtype(at::kLong));
  int64_t* o = out.data_ptr<int64_t>();
  AT_DISPATCH_ALL_TYPES(x.scalar_type(), "argmax", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best = 0;
      for (int64_t k = 1; k < len; ++k)
        if (in[r * len + k] >= in[r * len + best]) best = k;
      o[r] = best;
    }
  });
  return out;
}
