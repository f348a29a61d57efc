// The `smoke` suite: a handful of samples per op, seconds to run. Each op has at least one
// special-value sample, and a broadcasting and a non-contiguous sample where the op allows.
#include "kernelgate/harness.h"
#include "suites.h"

namespace kg::harness {
namespace {

constexpr unsigned kBroadcast = static_cast<unsigned>(InputTrait::Broadcasting);
constexpr ValueFamily N = ValueFamily::Normal;
constexpr ValueFamily S = ValueFamily::Special;

const SampleSpec kSmoke[] = {
    {"relu.default", "((T([64, 128], f32),), {})", N, "2-d f32", 0},
    {"relu.default", "((T([1000], f32),), {})", S, "special values", 0},
    {"relu.default", "((T([32, 48], f32, [1, 32]),), {})", N, "transposed view", 0},
    {"relu.default", "((T([], f32),), {})", N, "0-d", 0},
    {"relu.default", "((T([0, 7], f32),), {})", N, "empty", 0},
    {"relu.default", "((T([16, 64], f16),), {})", N, "f16", 0},
    {"relu.default", "((T([4096], f64),), {})", N, "f64", 0},

    {"add.Tensor", "((T([64, 128], f32), T([64, 128], f32)), {})", N, "same shape", 0},
    {"add.Tensor", "((T([8, 1, 32], f32), T([5, 32], f32)), {})", N, "broadcast [8,1,32]+[5,32]", kBroadcast},
    {"add.Tensor", "((T([64, 64], f32, [1, 64]), T([64, 64], f32)), {})", N, "transposed self", 0},
    {"add.Tensor", "((T([1024], f32), T([1024], f32)), {'alpha': 0.5})", N, "alpha=0.5", 0},
    {"add.Tensor", "((T([512], f32), T([512], f32)), {})", S, "special values", 0},
    {"add.Tensor", "((T([33, 17], i64), T([33, 17], i64)), {})", N, "i64", 0},
    {"add.Tensor", "((T([16, 16], f16), T([16], f16)), {})", N, "f16 broadcast row", kBroadcast},

    {"_softmax.default", "((T([32, 128], f32), -1, False), {})", N, "last dim", 0},
    {"_softmax.default", "((T([8, 16, 64], f32), 1, False), {})", N, "middle dim", 0},
    {"_softmax.default", "((T([64, 32], f32, [1, 64]), 1, False), {})", N, "transposed view", 0},
    {"_softmax.default", "((T([16, 50], f32), -1, False), {})", S, "special values", 0},
    {"_softmax.default", "((T([4, 1000], f32), 0, False), {})", N, "first dim", 0},

    {"sum.dim_IntList", "((T([64, 128], f32), [1]), {})", N, "rows", 0},
    {"sum.dim_IntList", "((T([8, 16, 32], f32), [0, 2], True), {})", N, "two dims, keepdim", 0},
    {"sum.dim_IntList", "((T([64, 32], f32, [1, 64]), [0]), {})", N, "transposed view", 0},
    {"sum.dim_IntList", "((T([100, 10], f32), [1]), {})", S, "special values", 0},
    {"sum.dim_IntList", "((T([4096, 4], i32), [0]), {})", N, "i32 promotes to i64", 0},

    {"mm.default", "((T([64, 32], f32), T([32, 48], f32)), {})", N, "64x32 @ 32x48", 0},
    {"mm.default", "((T([128, 64], f32, [1, 128]), T([64, 16], f32)), {})", N, "transposed self", 0},
    {"mm.default", "((T([16, 8], f32), T([8, 16], f32)), {})", S, "special values", 0},
    {"mm.default", "((T([1, 1], f32), T([1, 300], f32)), {})", N, "1x1 @ 1x300", 0},
    {"mm.default", "((T([33, 65], f64), T([65, 17], f64)), {})", N, "f64 odd sizes", 0},

    {"mul.Tensor", "((T([64, 128], f32), T([64, 128], f32)), {})", N, "same shape", 0},
    {"mul.Tensor", "((T([4, 1, 16], f32), T([1, 8, 16], f32)), {})", N, "broadcast both", kBroadcast},
    {"mul.Tensor", "((T([64, 64], f32, [1, 64]), T([64, 64], f32)), {})", N, "transposed self", 0},
    {"mul.Tensor", "((T([256], f32), T([256], f32)), {})", S, "special values", 0},

    {"add_.Tensor", "((T([64, 128], f32), T([64, 128], f32)), {})", N, "in place", 0},
    {"add_.Tensor", "((T([16, 32], f32), T([32], f32)), {'alpha': 2})", N, "in place, broadcast other", kBroadcast},
    {"add_.Tensor", "((T([32, 32], f32, [1, 32]), T([32, 32], f32)), {})", N, "in place on a transposed view", 0},
    {"add_.Tensor", "((T([128], f32), T([128], f32)), {})", S, "special values", 0},
};

}  // namespace

const std::vector<SampleSpec>& smoke_specs() {
  static const std::vector<SampleSpec> v(std::begin(kSmoke), std::end(kSmoke));
  return v;
}

}  // namespace kg::harness
