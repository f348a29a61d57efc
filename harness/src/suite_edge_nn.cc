// Edge generators for the matmul family, convolution, pooling, normalisation layers and
// embedding. Odd sizes (not multiples of a vector width), empty batches and reduction dims,
// transposed and channels-last memory, and special values in every op.
#include "suites.h"

namespace kg::harness::edge {
namespace {

constexpr ValueFamily N = ValueFamily::Normal;
constexpr ValueFamily SP = ValueFamily::Special;
using L = Layout;
using Shape = std::vector<int64_t>;

// NCHW logical shape stored channels-last (NHWC in memory).
TensorArg channels_last(const Shape& s, const std::string& dt) {
  TensorArg t = tensor(s, dt);
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  (void)n;
  t.value.tensor.strides = {h * w * c, 1, w * c, c};
  t.value.tensor.has_strides = true;
  t.non_contiguous = c > 1;
  return t;
}

void matmul_family(Builder& b) {
  const std::vector<std::string> dts = {"f32", "f64", "bf16", "f16", "i64"};
  for (const auto& dt : dts) {
    b.add("mm.default", {tensor({33, 65}, dt), tensor({65, 17}, dt)}, {}, dt + " odd sizes");
    b.add("bmm.default", {tensor({3, 9, 20}, dt), tensor({3, 20, 7}, dt)}, {}, dt);
    b.add("mv.default", {tensor({33, 65}, dt), tensor({65}, dt)}, {}, dt);
    b.add("dot.default", {tensor({257}, dt), tensor({257}, dt)}, {}, dt);
    b.add("addmm.default", {tensor({17}, dt), tensor({33, 65}, dt), tensor({65, 17}, dt)}, {}, dt + " bias row", N, kBroadcast);
    b.add("matmul.default", {tensor({2, 1, 4, 5}, dt), tensor({3, 5, 6}, dt)}, {}, dt + " batch broadcast", N, kBroadcast);
  }
  b.add("mm.default", {tensor({64, 32}, "f32"), tensor({32, 48}, "f32")}, {}, "64x32 @ 32x48");
  b.add("mm.default", {tensor({1, 1}, "f32"), tensor({1, 300}, "f32")}, {}, "1x1 @ 1x300");
  b.add("mm.default", {tensor({5, 0}, "f32"), tensor({0, 4}, "f32")}, {}, "K = 0 (zeros)", N, kEmpty);
  b.add("mm.default", {tensor({0, 3}, "f32"), tensor({3, 4}, "f32")}, {}, "M = 0", N, kEmpty);
  b.add("mm.default", {tensor({40, 24}, "f32", L::Transposed), tensor({24, 16}, "f32")}, {}, "transposed self");
  b.add("mm.default", {tensor({40, 24}, "f32"), tensor({24, 16}, "f32", L::Transposed)}, {}, "transposed mat2");
  b.add("mm.default", {tensor({12, 10}, "f32", L::Strided), tensor({10, 8}, "f32", L::Offset)}, {}, "strided self, offset mat2");
  b.add("mm.default", {tensor({16, 8}, "f32"), tensor({8, 16}, "f32")}, {}, "special f32", SP);
  b.add("mm.default", {tensor({16, 8}, "bf16"), tensor({8, 16}, "bf16")}, {}, "special bf16", SP);
  b.add("mm.default", {tensor({4, 2048}, "f32"), tensor({2048, 4}, "f32")}, {}, "K = 2048");
  b.add("mm.out", {tensor({20, 30}, "f32"), tensor({30, 10}, "f32")}, {{"out", tensor({20, 10}, "f32")}}, "out=");
  b.add("mm.out", {tensor({20, 30}, "f32", L::Transposed), tensor({30, 10}, "f32")}, {{"out", tensor({20, 10}, "f32", L::Transposed)}},
        "out= into a transposed view");
  b.add("bmm.default", {tensor({0, 3, 4}, "f32"), tensor({0, 4, 5}, "f32")}, {}, "empty batch", N, kEmpty);
  b.add("bmm.default", {tensor({4, 16, 8}, "f32", L::Transposed), tensor({4, 8, 12}, "f32", L::Transposed)}, {}, "transposed both");
  b.add("bmm.default", {tensor({4, 6, 8}, "f32", L::Expanded), tensor({4, 8, 5}, "f32")}, {}, "expanded batch (stride 0)");
  b.add("bmm.default", {tensor({2, 8, 8}, "f32"), tensor({2, 8, 8}, "f32")}, {}, "special", SP);
  b.add("addmm.default", {tensor({33, 17}, "f32"), tensor({33, 65}, "f32"), tensor({65, 17}, "f32")}, {{"beta", F(0.5)}, {"alpha", F(2.0)}},
        "full bias, beta 0.5 alpha 2");
  b.add("addmm.default", {tensor({8, 8}, "f32"), tensor({8, 4}, "f32"), tensor({4, 8}, "f32")}, {{"beta", I(0)}},
        "beta 0 ignores NaN and inf in self", SP);
  b.add("addmm.default", {tensor({1, 17}, "f32"), tensor({33, 65}, "f32", L::Transposed), tensor({65, 17}, "f32", L::Transposed)}, {},
        "transposed operands", N, kBroadcast);
  b.add("addmm.default", {tensor({}, "f32"), tensor({6, 4}, "f32"), tensor({4, 5}, "f32")}, {}, "0-d bias", N, kBroadcast);
  b.add("addmm.default", {tensor({16}, "f32"), tensor({12, 8}, "f32"), tensor({8, 16}, "f32")}, {}, "special", SP);
  for (const std::string dt : {"f32", "f64", "bf16"}) {
    b.add("baddbmm.default", {tensor({3, 9, 7}, dt), tensor({3, 9, 20}, dt), tensor({3, 20, 7}, dt)},
          {{"beta", F(0.5)}, {"alpha", F(0.25)}}, dt);
    b.add("addbmm.default", {tensor({9, 7}, dt), tensor({3, 9, 20}, dt), tensor({3, 20, 7}, dt)}, {}, dt);
    b.add("addmv.default", {tensor({33}, dt), tensor({33, 65}, dt), tensor({65}, dt)}, {}, dt);
    b.add("addr.default", {tensor({10, 12}, dt), tensor({10}, dt), tensor({12}, dt)}, {}, dt);
    b.add("linear.default", {tensor({4, 7, 32}, dt), tensor({24, 32}, dt), tensor({24}, dt)}, {}, dt + " with bias");
    b.add("outer.default", {tensor({10}, dt), tensor({12}, dt)}, {}, dt);
    b.add("vdot.default", {tensor({100}, dt), tensor({100}, dt)}, {}, dt);
  }
  b.add("baddbmm.default", {tensor({1, 9, 1}, "f32"), tensor({3, 9, 20}, "f32"), tensor({3, 20, 7}, "f32")}, {}, "broadcast self", N,
        kBroadcast);
  b.add("baddbmm.default", {tensor({2, 4, 4}, "f32"), tensor({2, 4, 6}, "f32"), tensor({2, 6, 4}, "f32")}, {}, "special", SP);
  b.add("mv.default", {tensor({30, 20}, "f32", L::Transposed), tensor({20}, "f32", L::Strided)}, {}, "transposed matrix, strided vector");
  b.add("mv.default", {tensor({0, 5}, "f32"), tensor({5}, "f32")}, {}, "empty", N, kEmpty);
  b.add("mv.default", {tensor({8, 30}, "f32"), tensor({30}, "f32")}, {}, "special", SP);
  b.add("dot.default", {tensor({0}, "f32"), tensor({0}, "f32")}, {}, "empty", N, kEmpty);
  b.add("dot.default", {tensor({50}, "f32", L::Strided), tensor({50}, "f32", L::Offset)}, {}, "strided and offset");
  b.add("dot.default", {tensor({300}, "f32"), tensor({300}, "f32")}, {}, "special", SP);
  b.add("matmul.default", {tensor({7}, "f32"), tensor({7}, "f32")}, {}, "1-d @ 1-d");
  b.add("matmul.default", {tensor({5, 7}, "f32"), tensor({7}, "f32")}, {}, "2-d @ 1-d");
  b.add("matmul.default", {tensor({7}, "f32"), tensor({7, 3}, "f32")}, {}, "1-d @ 2-d");
  b.add("matmul.default", {tensor({2, 3, 8, 16}, "f32", L::Transposed), tensor({16, 4}, "f32")}, {}, "4-d transposed @ 2-d");
  b.add("matmul.default", {tensor({3, 5, 6}, "f32"), tensor({3, 6, 2}, "f32")}, {}, "special", SP);
  b.add("linear.default", {tensor({5, 32}, "f32"), tensor({24, 32}, "f32"), None()}, {}, "no bias");
  b.add("linear.default", {tensor({32}, "f32"), tensor({24, 32}, "f32"), tensor({24}, "f32")}, {}, "1-d input");
  b.add("linear.default", {tensor({0, 32}, "f32"), tensor({24, 32}, "f32"), tensor({24}, "f32")}, {}, "empty batch", N, kEmpty);
  b.add("linear.default", {tensor({6, 32}, "f32", L::Strided), tensor({32, 24}, "f32", L::Transposed), tensor({24}, "f32")}, {},
        "strided input, transposed weight");
  b.add("linear.default", {tensor({6, 32}, "f32"), tensor({24, 32}, "f32"), tensor({24}, "f32")}, {}, "special", SP);
  b.add("addmv.default", {tensor({8}, "f32"), tensor({8, 16}, "f32"), tensor({16}, "f32")}, {{"beta", I(0)}}, "beta 0, special", SP);
  b.add("addr.default", {tensor({1}, "f32"), tensor({10}, "f32"), tensor({12}, "f32")}, {{"alpha", F(-1.0)}}, "broadcast self", N,
        kBroadcast);
  b.add("addr.default", {tensor({10, 12}, "i64"), tensor({10}, "i64"), tensor({12}, "i64")}, {}, "i64");
  b.add("outer.default", {tensor({10}, "f32"), tensor({12}, "f32")}, {}, "special", SP);
  b.add("einsum.default", {S("bij,bjk->bik"), List({tensor({2, 3, 4}, "f32").value, tensor({2, 4, 5}, "f32").value})}, {},
        "batched matmul");
  b.add("einsum.default", {S("ii->i"), List({tensor({6, 6}, "f32").value})}, {}, "diagonal");
  b.add("einsum.default", {S("i,j->ij"), List({tensor({4}, "f64").value, tensor({3}, "f64").value})}, {}, "outer product f64");
}

void convolution_family(Builder& b) {
  // convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
  auto conv = [&](TensorArg in, TensorArg w, Arg bias, Shape stride, Shape pad, Shape dil, bool tr, Shape opad, int64_t groups,
                  const std::string& label, ValueFamily f = N) {
    b.add("convolution.default",
          {std::move(in), std::move(w), std::move(bias), Ints(stride), Ints(pad), Ints(dil), B(tr), Ints(opad), I(groups)}, {}, label, f);
  };
  for (const auto& dt : kFloat)
    conv(tensor({2, 3, 16, 16}, dt), tensor({8, 3, 3, 3}, dt), tensor({8}, dt), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1,
         dt + " 3x3 pad 1");
  conv(tensor({2, 3, 17, 15}, "f32"), tensor({6, 3, 3, 3}, "f32"), None(), {2, 2}, {1, 1}, {1, 1}, false, {0, 0}, 1,
       "stride 2, odd size, no bias");
  conv(tensor({1, 4, 20, 20}, "f32"), tensor({4, 4, 3, 3}, "f32"), tensor({4}, "f32"), {1, 1}, {2, 2}, {2, 2}, false, {0, 0}, 1,
       "dilation 2");
  conv(tensor({2, 4, 10, 10}, "f32"), tensor({6, 2, 3, 3}, "f32"), tensor({6}, "f32"), {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 2,
       "groups 2");
  conv(tensor({2, 8, 12, 12}, "f32"), tensor({8, 1, 3, 3}, "f32"), tensor({8}, "f32"), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 8,
       "depthwise");
  conv(tensor({2, 16, 7, 7}, "f32"), tensor({32, 16, 1, 1}, "f32"), tensor({32}, "f32"), {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1, "1x1");
  conv(tensor({2, 4, 20}, "f32"), tensor({6, 4, 5}, "f32"), tensor({6}, "f32"), {2}, {2}, {1}, false, {0}, 1, "1-d");
  conv(tensor({1, 2, 6, 6, 6}, "f32"), tensor({3, 2, 3, 3, 3}, "f32"), tensor({3}, "f32"), {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false,
       {0, 0, 0}, 1, "3-d");
  conv(tensor({2, 4, 8, 8}, "f32"), tensor({4, 3, 3, 3}, "f32"), tensor({3}, "f32"), {2, 2}, {1, 1}, {1, 1}, true, {1, 1}, 1,
       "transposed, stride 2, output_padding 1");
  conv(tensor({2, 4, 8, 8}, "f32"), tensor({4, 2, 3, 3}, "f32"), None(), {1, 1}, {0, 0}, {1, 1}, true, {0, 0}, 2, "transposed, groups 2");
  conv(channels_last({2, 8, 9, 9}, "f32"), tensor({4, 8, 3, 3}, "f32"), tensor({4}, "f32"), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1,
       "channels-last input");
  conv(tensor({2, 3, 10, 10}, "f32", L::Strided), tensor({5, 3, 3, 3}, "f32", L::Offset), tensor({5}, "f32"), {1, 1}, {0, 0}, {1, 1}, false,
       {0, 0}, 1, "strided input, offset weight");
  conv(tensor({0, 3, 8, 8}, "f32"), tensor({4, 3, 3, 3}, "f32"), tensor({4}, "f32"), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1,
       "empty batch");
  conv(tensor({1, 2, 3, 3}, "f32"), tensor({2, 2, 5, 5}, "f32"), None(), {1, 1}, {2, 2}, {1, 1}, false, {0, 0}, 1,
       "kernel larger than input");
  conv(tensor({2, 3, 8, 8}, "f32"), tensor({4, 3, 3, 3}, "f32"), tensor({4}, "f32"), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1,
       "special f32", SP);
  conv(tensor({2, 3, 8, 8}, "bf16"), tensor({4, 3, 3, 3}, "bf16"), tensor({4}, "bf16"), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1,
       "special bf16", SP);
  conv(tensor({2, 3, 8, 8}, "f64"), tensor({4, 3, 3, 3}, "f64"), tensor({4}, "f64"), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1,
       "special f64", SP);
  for (const std::string dt : {"f32", "f64", "bf16"}) {
    b.add("conv2d.default", {tensor({2, 3, 16, 16}, dt), tensor({8, 3, 3, 3}, dt), tensor({8}, dt), Ints({2, 2}), Ints({1, 1})}, {}, dt);
    b.add("conv1d.default", {tensor({2, 4, 30}, dt), tensor({6, 4, 3}, dt), tensor({6}, dt)}, {}, dt);
    b.add("conv3d.default", {tensor({1, 2, 5, 6, 7}, dt), tensor({3, 2, 3, 3, 3}, dt)}, {}, dt);
    b.add("conv_transpose2d.input",
          {tensor({2, 4, 8, 8}, dt), tensor({4, 3, 3, 3}, dt), tensor({3}, dt), Ints({2, 2}), Ints({1, 1}), Ints({1, 1})}, {},
          dt + " stride 2");
    b.add("conv_transpose1d.default", {tensor({2, 4, 10}, dt), tensor({4, 3, 3}, dt)}, {}, dt);
  }
  b.add("conv2d.default", {tensor({2, 3, 8, 8}, "f32"), tensor({4, 3, 3, 3}, "f32")}, {}, "special", SP);
  b.add("conv2d.default",
        {channels_last({1, 6, 8, 8}, "f32"), tensor({6, 2, 3, 3}, "f32"), None(), Ints({1, 1}), Ints({1, 1}), Ints({1, 1}), I(3)}, {},
        "channels-last, groups 3");
  b.add("conv2d.padding", {tensor({2, 3, 9, 9}, "f32"), tensor({4, 3, 4, 4}, "f32"), None(), Ints({1, 1}), S("same")}, {},
        "padding='same', even kernel");
  b.add("conv2d.padding", {tensor({2, 3, 9, 9}, "f32"), tensor({4, 3, 3, 3}, "f32"), None(), Ints({1, 1}), S("valid")}, {},
        "padding='valid'");
  // convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, output_mask)
  for (const std::string dt : {"f32", "f64"}) {
    b.add("convolution_backward.default",
          {tensor({2, 8, 8, 8}, dt), tensor({2, 3, 16, 16}, dt), tensor({8, 3, 3, 3}, dt), Ints({8}), Ints({2, 2}), Ints({1, 1}),
           Ints({1, 1}), B(false), Ints({0, 0}), I(1), List({B(true), B(true), B(true)})},
          {}, dt + " stride 2, all grads");
  }
  b.add("convolution_backward.default",
        {tensor({2, 6, 8, 8}, "f32"), tensor({2, 4, 10, 10}, "f32"), tensor({6, 2, 3, 3}, "f32"), None(), Ints({1, 1}), Ints({0, 0}),
         Ints({1, 1}), B(false), Ints({0, 0}), I(2), List({B(true), B(true), B(false)})},
        {}, "groups 2, no bias grad");
  b.add("convolution_backward.default",
        {tensor({2, 4, 6, 6}, "f32"), tensor({2, 3, 6, 6}, "f32"), tensor({4, 3, 3, 3}, "f32"), Ints({4}), Ints({1, 1}), Ints({1, 1}),
         Ints({1, 1}), B(false), Ints({0, 0}), I(1), List({B(false), B(true), B(true)})},
        {}, "special, weight and bias grads", SP);
}

void pooling_family(Builder& b) {
  // max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)
  auto mp = [&](const std::string& op, TensorArg in, Shape k, Shape s, Shape p, Shape d, bool ceil, const std::string& label,
                ValueFamily f = N) {
    b.add(op, {std::move(in), Ints(k), Ints(s), Ints(p), Ints(d), B(ceil)}, {}, label, f);
  };
  for (const char* op : {"max_pool2d_with_indices.default", "max_pool2d.default"}) {
    for (const std::string dt : {"f32", "f64", "bf16", "f16", "i64"})
      mp(op, tensor({2, 3, 16, 16}, dt), {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, std::string(dt) + " 3x3 stride 2 pad 1");
    mp(op, tensor({2, 3, 15, 15}, "f32"), {2, 2}, {2, 2}, {0, 0}, {1, 1}, true, "ceil_mode, odd size");
    mp(op, tensor({1, 2, 12, 12}, "f32"), {3, 3}, {1, 1}, {0, 0}, {2, 2}, false, "dilation 2");
    mp(op, tensor({3, 9, 9}, "f32"), {3, 3}, {3, 3}, {0, 0}, {1, 1}, false, "unbatched");
    mp(op, channels_last({2, 8, 10, 10}, "f32"), {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, "channels-last");
    mp(op, tensor({2, 3, 9, 9}, "f32", L::Strided), {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, "strided view");
    mp(op, tensor({2, 3, 8, 8}, "f32"), {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, "special (NaN wins its window)", SP);
    mp(op, tensor({2, 3, 8, 8}, "bf16"), {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, "special bf16", SP);
    mp(op, tensor({0, 3, 8, 8}, "f32"), {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, "empty batch");
  }
  mp("max_pool3d_with_indices.default", tensor({1, 2, 6, 7, 8}, "f32"), {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false, "3-d");
  mp("max_pool3d_with_indices.default", tensor({1, 2, 6, 6, 6}, "f32"), {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true, "3-d special",
     SP);
  b.add("max_pool1d.default", {tensor({2, 4, 20}, "f32"), Ints({3}), Ints({2})}, {}, "1-d");
  b.add("max_pool1d.default", {tensor({2, 4, 20}, "f32"), Ints({3}), Ints({2})}, {}, "1-d special", SP);
  // max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)
  for (const std::string dt : {"f32", "f64"})
    b.add("max_pool2d_with_indices_backward.default",
          {tensor({2, 3, 8, 8}, dt), tensor({2, 3, 16, 16}, dt), Ints({3, 3}), Ints({2, 2}), Ints({1, 1}), Ints({1, 1}), B(false),
           tensor({2, 3, 8, 8}, "i64")},
          {}, dt);
  // avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
  for (const std::string dt : {"f32", "f64", "bf16", "i64"})
    b.add("avg_pool2d.default", {tensor({2, 3, 16, 16}, dt), Ints({3, 3}), Ints({2, 2}), Ints({1, 1})}, {},
          std::string(dt) + " 3x3 stride 2 pad 1");
  b.add("avg_pool2d.default", {tensor({2, 3, 15, 15}, "f32"), Ints({2, 2}), Ints({2, 2}), Ints({0, 0}), B(true), B(false)}, {},
        "ceil_mode, padding not counted");
  b.add("avg_pool2d.default", {tensor({2, 3, 12, 12}, "f32"), Ints({3, 3}), Ints({3, 3}), Ints({1, 1}), B(false), B(true), I(5)}, {},
        "divisor_override 5");
  b.add("avg_pool2d.default", {channels_last({2, 4, 8, 8}, "f32"), Ints({2, 2})}, {}, "channels-last");
  b.add("avg_pool2d.default", {tensor({2, 3, 8, 8}, "f32"), Ints({2, 2})}, {}, "special", SP);
  b.add("avg_pool2d.default", {tensor({0, 3, 8, 8}, "f32"), Ints({2, 2})}, {}, "empty batch");
  b.add("avg_pool2d_backward.default",
        {tensor({2, 3, 8, 8}, "f32"), tensor({2, 3, 16, 16}, "f32"), Ints({3, 3}), Ints({2, 2}), Ints({1, 1}), B(false), B(true), None()},
        {}, "3x3 stride 2 pad 1");
  b.add("avg_pool3d.default", {tensor({1, 2, 6, 6, 6}, "f32"), Ints({2, 2, 2})}, {}, "3-d");
  b.add("avg_pool1d.default", {tensor({2, 4, 20}, "f32"), Ints({4}), Ints({3})}, {}, "1-d");
  for (const char* op : {"_adaptive_avg_pool2d.default", "adaptive_avg_pool2d.default", "adaptive_max_pool2d.default"}) {
    for (const std::string dt : {"f32", "f64", "bf16"})
      b.add(op, {tensor({2, 3, 13, 11}, dt), Ints({4, 5})}, {}, std::string(dt) + " 13x11 to 4x5");
    b.add(op, {tensor({2, 8, 7, 7}, "f32"), Ints({1, 1})}, {}, "global");
    b.add(op, {tensor({2, 3, 5, 5}, "f32"), Ints({7, 7})}, {}, "output larger than input");
    b.add(op, {channels_last({2, 8, 9, 9}, "f32"), Ints({3, 3})}, {}, "channels-last");
    b.add(op, {tensor({3, 9, 9}, "f32"), Ints({2, 2})}, {}, "unbatched");
    b.add(op, {tensor({2, 3, 8, 8}, "f32"), Ints({3, 3})}, {}, "special", SP);
  }
  b.add("_adaptive_avg_pool2d_backward.default", {tensor({2, 3, 4, 5}, "f32"), tensor({2, 3, 13, 11}, "f32")}, {}, "13x11 from 4x5");
  b.add("adaptive_avg_pool1d.default", {tensor({2, 4, 17}, "f32"), Ints({5})}, {}, "1-d");
  b.add("_adaptive_avg_pool3d.default", {tensor({1, 2, 6, 7, 8}, "f32"), Ints({2, 3, 4})}, {}, "3-d");
}

void normalisation_family(Builder& b) {
  // native_layer_norm(input, normalized_shape, weight, bias, eps)
  for (const auto& dt : kFloat) {
    b.add("native_layer_norm.default", {tensor({4, 10, 32}, dt), Ints({32}), tensor({32}, dt), tensor({32}, dt), F(1e-5)}, {}, dt);
    b.add("layer_norm.default", {tensor({4, 10, 32}, dt), Ints({32}), tensor({32}, dt), tensor({32}, dt)}, {}, dt);
  }
  for (const char* op : {"native_layer_norm.default", "layer_norm.default"}) {
    const bool native = std::string(op) == "native_layer_norm.default";
    auto ln = [&](TensorArg in, Shape ns, Arg w, Arg bias, const std::string& label, ValueFamily f = N) {
      std::vector<Arg> args = {std::move(in), Ints(ns), std::move(w), std::move(bias)};
      if (native) args.push_back(F(1e-5));
      b.add(op, std::move(args), {}, label, f);
    };
    ln(tensor({4, 10, 32}, "f32"), {10, 32}, tensor({10, 32}, "f32"), tensor({10, 32}, "f32"), "two normalized dims");
    ln(tensor({6, 33}, "f32"), {33}, None(), None(), "no affine, odd width");
    ln(tensor({6, 33}, "f32", L::Transposed), {33}, tensor({33}, "f32"), tensor({33}, "f32"), "transposed input");
    ln(tensor({5, 16}, "f32", L::Offset), {16}, tensor({16}, "f32", L::Strided), tensor({16}, "f32"), "offset input, strided weight");
    ln(tensor({0, 16}, "f32"), {16}, tensor({16}, "f32"), tensor({16}, "f32"), "empty batch");
    ln(tensor({4, 16}, "f32"), {16}, tensor({16}, "f32"), tensor({16}, "f32"), "special", SP);
    ln(tensor({4, 16}, "bf16"), {16}, tensor({16}, "bf16"), tensor({16}, "bf16"), "special bf16", SP);
    ln(tensor({2, 4100}, "f32"), {4100}, tensor({4100}, "f32"), tensor({4100}, "f32"), "rows of 4100");
  }
  // native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
  b.add("native_layer_norm_backward.default",
        {tensor({4, 10, 32}, "f32"), tensor({4, 10, 32}, "f32"), Ints({32}), tensor({4, 10, 1}, "f32"), tensor({4, 10, 1}, "f32"),
         tensor({32}, "f32"), tensor({32}, "f32"), List({B(true), B(true), B(true)})},
        {}, "all grads");
  // Batch norm: eval mode with running statistics; training mode without them (with them the
  // op updates running_mean/var in place, which its schema does not declare).
  for (const char* op : {"native_batch_norm.default", "batch_norm.default"}) {
    const bool native = std::string(op) == "native_batch_norm.default";
    auto bn = [&](TensorArg in, int64_t c, const std::string& dt, bool training, const std::string& label, ValueFamily f = N) {
      std::vector<Arg> args = {std::move(in), tensor({c}, dt), tensor({c}, dt)};
      if (training) {
        args.push_back(None());
        args.push_back(None());
      } else {
        args.push_back(tensor({c}, dt));
        args.push_back(tensor({c}, dt));
      }
      args.push_back(B(training));
      args.push_back(F(0.1));
      args.push_back(F(1e-5));
      if (!native) args.push_back(B(false));
      b.add(op, std::move(args), {}, label, f);
    };
    for (const std::string dt : {"f32", "f64", "bf16"}) {
      bn(tensor({4, 6, 8, 8}, dt), 6, dt, false, std::string(dt) + " eval");
      bn(tensor({4, 6, 8, 8}, dt), 6, dt, true, std::string(dt) + " training (batch statistics)");
    }
    bn(tensor({8, 10}, "f32"), 10, "f32", true, "2-d input, training");
    bn(tensor({8, 10, 7}, "f32"), 10, "f32", false, "3-d input, eval");
    bn(channels_last({4, 6, 5, 5}, "f32"), 6, "f32", true, "channels-last, training");
    bn(tensor({4, 6, 5, 5}, "f32", L::Strided), 6, "f32", false, "strided input, eval");
    bn(tensor({4, 6, 5, 5}, "f32"), 6, "f32", false, "special, eval", SP);
    bn(tensor({4, 6, 5, 5}, "f32"), 6, "f32", true, "special, training", SP);
  }
  // native_group_norm(input, weight, bias, N, C, HxW, group, eps)
  for (const std::string dt : {"f32", "f64", "bf16"}) {
    b.add("native_group_norm.default", {tensor({2, 6, 5, 5}, dt), tensor({6}, dt), tensor({6}, dt), I(2), I(6), I(25), I(3), F(1e-5)}, {},
          dt);
    b.add("group_norm.default", {tensor({2, 6, 5, 5}, dt), I(3), tensor({6}, dt), tensor({6}, dt)}, {}, dt);
  }
  b.add("native_group_norm.default", {tensor({2, 8, 10}, "f32"), None(), None(), I(2), I(8), I(10), I(8), F(1e-5)}, {},
        "instance-norm like, no affine");
  b.add("native_group_norm.default",
        {tensor({2, 6, 5, 5}, "f32"), tensor({6}, "f32"), tensor({6}, "f32"), I(2), I(6), I(25), I(2), F(1e-5)}, {}, "special", SP);
  b.add("group_norm.default", {channels_last({2, 6, 5, 5}, "f32"), I(2), tensor({6}, "f32"), tensor({6}, "f32")}, {}, "channels-last");
  b.add("group_norm.default", {tensor({0, 6, 3}, "f32"), I(3)}, {}, "empty batch");
  // native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
  b.add("native_group_norm_backward.default",
        {tensor({2, 6, 5, 5}, "f32"), tensor({2, 6, 5, 5}, "f32"), tensor({2, 3}, "f32"), tensor({2, 3}, "f32"), tensor({6}, "f32"), I(2),
         I(6), I(25), I(3), List({B(true), B(true), B(true)})},
        {}, "all grads");
}

void embedding_family(Builder& b) {
  // embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
  for (const auto& dt : kFloat) b.add("embedding.default", {tensor({100, 16}, dt), tensor({4, 7}, "i64")}, {}, dt + " weight");
  b.add("embedding.default", {tensor({100, 16}, "f32"), tensor({4, 7}, "i32")}, {}, "i32 indices");
  b.add("embedding.default", {tensor({100, 16}, "f32"), tensor({4, 7}, "i64"), I(0)}, {}, "padding_idx 0");
  b.add("embedding.default", {tensor({100, 16}, "f32"), tensor({}, "i64")}, {}, "0-d index");
  b.add("embedding.default", {tensor({100, 16}, "f32"), tensor({0}, "i64")}, {}, "no indices");
  b.add("embedding.default", {tensor({50, 12}, "f32", L::Transposed), tensor({30}, "i64")}, {}, "transposed weight");
  b.add("embedding.default", {tensor({50, 12}, "f32", L::Offset), tensor({3, 10}, "i64", L::Transposed)}, {},
        "offset weight, transposed indices");
  b.add("embedding.default", {tensor({50, 12}, "f32"), tensor({40}, "i64")}, {}, "special weight", SP);
  b.add("embedding.default", {tensor({32000, 64}, "f32"), tensor({2, 128}, "i64")}, {}, "vocabulary 32000");
  // embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
  b.add("embedding_dense_backward.default", {tensor({4, 7, 16}, "f32"), tensor({4, 7}, "i64"), I(100), I(-1), B(false)}, {},
        "repeated indices add up");
  b.add("embedding_dense_backward.default", {tensor({4, 7, 16}, "f32"), tensor({4, 7}, "i64"), I(20), I(3), B(true)}, {},
        "padding_idx, scale_grad_by_freq");
  b.add("embedding_dense_backward.default", {tensor({4, 7, 16}, "f64"), tensor({4, 7}, "i64"), I(100), I(-1), B(false)}, {}, "f64");
  // _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset, padding_idx)
  for (int mode : {0, 1, 2}) {
    const std::string m = mode == 0 ? "sum" : mode == 1 ? "mean" : "max";
    b.add("_embedding_bag.default", {tensor({40, 8}, "f32"), tensor({30}, "i64"), tensor({6}, "i64"), B(false), I(mode)}, {}, "mode " + m);
    b.add("embedding_bag.padding_idx",
          {tensor({40, 8}, "f32"), tensor({30}, "i64"), tensor({6}, "i64"), B(false), I(mode), B(false), None(), B(false), None()}, {},
          "mode " + m);
  }
  b.add("_embedding_bag.default",
        {tensor({40, 8}, "f32"), tensor({30}, "i64"), tensor({6}, "i64"), B(false), I(0), B(false), tensor({30}, "f32")}, {},
        "per_sample_weights");
  b.add("_embedding_bag.default", {tensor({40, 8}, "f32"), tensor({30}, "i64"), tensor({6}, "i64"), B(false), I(0)}, {}, "special", SP);
}

}  // namespace

void nn_samples(Builder& b, bool large) {
  if (large) {
    // An embedding table past 2^31 elements (int8 is not an embedding dtype; f16 needs 4.3 GB).
    b.add("index_select.default", {tensor({(int64_t{1} << 21) + 3, 1024}, "i8"), I(0), tensor({64}, "i64")}, {},
          "rows of a 2^31+3072-element i8 table", N, kLarge);
    return;
  }
  matmul_family(b);
  convolution_family(b);
  pooling_family(b);
  normalisation_family(b);
  embedding_family(b);
}

}  // namespace kg::harness::edge
