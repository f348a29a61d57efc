// HONEST, multi-threaded: the contiguous input is split into chunks, one std::thread each
// (at most 4), all joined before the function returns: no work outlives the call.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <algorithm>
#include <thread>
#include <vector>

at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  const int64_t n = x.numel();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "relu", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(4, n / 1024));
    const int64_t chunk = (n + workers - 1) / workers;
    std::vector<std::thread> pool;
    for (int64_t w = 0; w < workers; ++w)
      pool.emplace_back([=] {
        for (int64_t i = w * chunk; i < std::min(n, (w + 1) * chunk); ++i)
          o[i] = (in[i] > scalar_t(0) || in[i] != in[i]) ? in[i] : scalar_t(0);
      });
    for (auto& t : pool) t.join();
  });
  return out;
}
